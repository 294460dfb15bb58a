"""What every panel shares: `Panel` (a titled plot area with toggles, managed axis
ranges, cached legends and vertical change markers), the live pens and the colours.

Both models' panels and the sweep figure derive from `Panel`. Each panel creates its plot
items once and, per frame, only calls setData on them with arrays from a snapshot."""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.plots.axes import axes
from sparsity_gui.plots.legend import add_legend_row, tight_text
from sparsity_gui.plots.markers import ChangeMarkers
from sparsity_gui.plots.ticks import (
    integer_tick_values,
    log_tick_strings,
    log_tick_values,
    scale_label,
    whole_number_strings,
)

# Colours (matplotlib's tab10, familiar from papers)
BLUE, ORANGE, GREEN, RED, PURPLE, GREY, PINK = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#7f7f7f",
    "#e377c2",
)


# Live pens are 1 px: wider cosmetic pens take Qt's slow stroking path (3-15x slower
# per frame, measured). Width 0 is Qt's 1 px line, drawn alike, but pyqtgraph then pads
# no curve's bounding rect by the pen (a pixel-size computation per curve per frame:
# about 1 ms of a frame's 21 at m = 10^3, paired replays). Exported figures are
# matplotlib's, with their own widths.
LIVE_WIDTH = 0


def pen(color: str, style=QtCore.Qt.PenStyle.SolidLine) -> pg.QtGui.QPen:
    """A live pen: 1 px, cosmetic; emphasis comes from colour and dash, not width."""
    p = pg.mkPen(color, width=LIVE_WIDTH)
    p.setStyle(style)
    p.setCosmetic(True)
    return p


DASH = QtCore.Qt.PenStyle.DashLine


DOT = QtCore.Qt.PenStyle.DotLine


def _bounds_with(bounds, extras):
    """childrenBounds() widened to hold the extra values per axis."""
    out = []
    for axis in (0, 1):
        b = bounds[axis]
        vals = [v for v in extras[axis] if math.isfinite(v)]
        if b is not None and (b[0] is None or b[1] is None):
            b = None
        if vals:
            lo, hi = min(vals), max(vals)
            b = (lo, hi) if b is None else (min(b[0], lo), max(b[1], hi))
        out.append(b)
    return out


def settled_y_bounds(plot: pg.PlotItem, t0: float, items: list | None = None) -> tuple[float, float] | None:
    """The y extent (view coordinates) of what the plot's data items (or those of
    ``items``) draw at x >= t0, or None when nothing is drawn there yet."""
    lo, hi = math.inf, -math.inf
    for item in plot.listDataItems():
        if not item.isVisible() or (items is not None and item not in items):
            continue
        x, y = item.getData()
        if x is None or y is None or len(x) == 0:
            continue
        keep = (x >= t0) & np.isfinite(y)
        if keep.any():
            lo, hi = min(lo, float(y[keep].min())), max(hi, float(y[keep].max()))
    return (lo, hi) if lo <= hi else None


def transient_band(plot: pg.PlotItem, t_end: float, label: str = "") -> None:
    """A light band over 0 <= t < t_end, named by ``label`` just right of it (inside the
    view however narrow the band is)."""
    band = pg.LinearRegionItem((0.0, t_end), movable=False, brush=pg.mkBrush(0, 0, 0, 16), pen=pg.mkPen(None))
    band.setZValue(-10)
    plot.addItem(band, ignoreBounds=True)
    if label:
        edge = pg.InfiniteLine(
            pos=t_end,
            angle=90,
            pen=pg.mkPen(None),
            label=label,
            labelOpts={"position": 0.92, "color": GREY, "anchors": [(0, 0), (0, 0)]},
        )
        edge.setZValue(-9)
        plot.addItem(edge, ignoreBounds=True)


ROOM_AHEAD = 0.25  # of the data's span: room left past the side the data left a range by


def nice_ceiling(x: float) -> float:
    """The smallest of 1, 2 and 5 x 10^k that is >= x (> 0)."""
    k = math.floor(math.log10(x))
    for step in (1.0, 2.0, 5.0, 10.0):
        top = step * 10.0**k
        if top >= x * (1.0 - 1e-12):
            return top
    return 10.0 ** (k + 1)


LOOK_AHEAD_S = 1.0  # a growing time axis holds at least this many wall seconds of the run


class RunPace:
    """How fast a live run's t goes: simulated time per wall second over its last half
    second of frames (0 until its frames span a tenth of a second: two frames a few ms
    apart, around a jump of t, gave a pace that squeezed the run into the left of every
    time panel)."""

    WINDOW_S = 0.5
    LEAST_S = 0.1

    def __init__(self) -> None:
        self._samples: list[tuple[float, float]] = []  # (wall s, t), oldest first

    def reset(self) -> None:
        self._samples.clear()

    def add(self, wall: float, t: float) -> None:
        if not math.isfinite(t):
            return
        samples = self._samples
        if samples and (t < samples[-1][1] or wall <= samples[-1][0]):
            samples.clear()  # t went back (a restart) or the clock did not move
        samples.append((wall, t))
        while len(samples) > 2 and wall - samples[1][0] >= self.WINDOW_S:
            samples.pop(0)

    @property
    def per_second(self) -> float:
        if len(self._samples) < 2:
            return 0.0
        (w0, t0), (w1, t1) = self._samples[0], self._samples[-1]
        return (t1 - t0) / (w1 - w0) if w1 - w0 >= self.LEAST_S else 0.0


STACKED_AXIS_WIDTH = 60  # px of both left axes of a stacked pair: tick labels of 5 characters
LINEAR_LEVELS = 1  # a linear axis draws and labels its major and minor ticks (pyqtgraph: up to 2)
AXIS_TITLE_MARGIN = 2.5  # ... an axis title's: its descenders clear of the legend below


class Panel(QtWidgets.QFrame):
    """A titled plot area with a row of toggles, axis ranges that move only when the data
    leave them, and cached legends. Subclasses fill `self.plots` with `add_plot`."""

    title = ""
    claim = ""  # which claim of the note this panel lets you check (tooltip, README)

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName(type(self).__name__)
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(0)
        self.toggles = QtWidgets.QHBoxLayout()
        self.toggles.setContentsMargins(6, 0, 6, 0)
        self.toggles.addStretch(1)
        self.graphics = pg.GraphicsLayoutWidget()
        # on the right, room for half the last tick label of the x axis (pyqtgraph lets it
        # pass the plot's edge by up to 15 px; with less it was cut off at 1366x768)
        self.graphics.ci.setContentsMargins(4, 2, 16, 2)
        self.graphics.ci.setSpacing(2)  # Qt's default 6 px between stacked plots and legends
        layout.addWidget(self.graphics, 1)
        layout.addLayout(self.toggles)
        self.setToolTip(self.claim)
        self.plots: list[pg.PlotItem] = []
        self.time_plots: list[pg.PlotItem] = []
        self._user_zoomed: set[pg.PlotItem] = set()
        self._force_range = True  # the next ranges are set whatever the data
        self._settled = False  # the run shown is paused or finished (update_from)
        # plot -> t: its y range is set by the data at t >= this (after a transient)
        self.settled_after: dict[pg.PlotItem, float] = {}

    def add_plot(
        self,
        row: int,
        title: str | None,
        x_label: str,
        y_label: str,
        time_axis: bool = False,
        legend: bool = True,
    ) -> pg.PlotItem:
        plot = self.graphics.addPlot(row=row, col=0, title=title, axisItems=axes())
        # Qt's text items pad their text by 4 px on every side: 8 px of each title, axis
        # title and legend row that a 1366x768 screen needs for the data
        tight_text(plot.titleLabel.item)
        plot.titleLabel.updateMin()
        for name in ("left", "bottom"):
            tight_text(plot.getAxis(name).label, AXIS_TITLE_MARGIN)
        plot.setLabel("bottom", x_label)
        plot.setLabel("left", y_label)
        plot.showGrid(x=True, y=True, alpha=0.25)
        # The grid makes each axis item span the whole plot, so every curve update would
        # repaint the axis text; a cached pixmap is redrawn only when the axis changes.
        for name in ("left", "bottom", "top", "right"):
            axis = plot.getAxis(name)
            axis.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if legend:
            add_legend_row(plot)
        plot.vb.disableAutoRange()
        plot.vb.sigRangeChangedManually.connect(lambda *_a, p=plot: self._user_zoomed.add(p))
        plot.vb.sigStateChanged.connect(lambda _vb, p=plot: self._auto_requested(p))
        self.plots.append(plot)
        if time_axis:
            self.time_plots.append(plot)
            # pyqtgraph lines up x-linked views that share a screen column pixel by pixel:
            # with left axes of different widths, a panel's t = 0 sat a few px off its left
            # edge (t from -0.25 at launch). One width: every time axis starts where it should
            plot.getAxis("left").setWidth(STACKED_AXIS_WIDTH)
        return plot

    def stack(self, upper: pg.PlotItem, lower: pg.PlotItem) -> None:
        """``upper`` above ``lower`` on one time axis (linked): the upper plot's x axis keeps
        its grid but not its tick labels and title (the lower one's say it), and the upper
        plot's legend moves under the lower plot, so that the two data areas get the
        panel's height (at 1366x768 the legends between them had left 24-41 px each)."""
        lower.setXLink(upper)
        for plot in (upper, lower):  # one width: the data areas line up, no label over ticks
            plot.getAxis("left").setWidth(STACKED_AXIS_WIDTH)
        axis = upper.getAxis("bottom")
        axis.setStyle(showValues=False)
        axis.showLabel(False)
        axis.setHeight(4)
        legend = upper.legend
        if legend is not None:
            upper.layout.removeItem(legend)
            upper.layout.setRowFixedHeight(4, 0)
            row = self.graphics.ci.layout.rowCount()
            self.graphics.ci.addItem(legend, row=row, col=0)
            self.graphics.ci.layout.setAlignment(legend, QtCore.Qt.AlignmentFlag.AlignHCenter)
            self.graphics.ci.layout.setRowStretchFactor(row, 0)
            lower.geometryChanged.connect(lambda p=lower, lg=legend: lg.fit_width(p.width() - 4))

    TITLE_POINTS = (11, 10, 9, 8)  # pyqtgraph's title size, then smaller in a narrow panel

    def fit_titles(self) -> None:
        """Each plot's title in the largest of TITLE_POINTS that fits the panel's width (a
        1366-pixel screen leaves panels too narrow for the longer titles at 11 pt)."""
        changed = False
        for plot in self.plots:
            label = plot.titleLabel
            if not label.text or not label.isVisible():
                continue
            # the title sits above the view box, right of the left axis; its width (the
            # label's minimum) scales with the font size
            left = plot.getAxis("left")
            room = self.graphics.width() - 24 - (left.width() if left.isVisible() else 0)
            shown = float(str(label.opts.get("size", "11pt")).removesuffix("pt"))
            width_per_point = label.minimumWidth() / shown
            points = next(
                (p for p in self.TITLE_POINTS if p * width_per_point <= room), self.TITLE_POINTS[-1]
            )
            size = f"{points}pt"
            if label.opts.get("size") != size:
                label.setText(label.text, size=size)
                changed = True
            height = math.ceil(label.minimumHeight())
            if plot.layout.rowMinimumHeight(0) != height:  # pyqtgraph fixes it at 30 px
                plot.layout.setRowFixedHeight(0, height)
                changed = True
        if changed:  # lay out again now (a layout wider than the view stays clipped)
            for plot in self.plots:
                plot.layout.activate()
            self.graphics.ci.layout.activate()
            self.graphics.ci.setGeometry(self.graphics.range)

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_titles()

    def add_toggle(self, text: str, tooltip: str, checked: bool = False) -> QtWidgets.QCheckBox:
        box = QtWidgets.QCheckBox(text)
        box.setToolTip(tooltip)
        box.setChecked(checked)
        box.toggled.connect(self._toggled)
        self.toggles.insertWidget(self.toggles.count() - 1, box)
        return box

    @QtCore.Slot(bool)
    def _toggled(self, _checked: bool) -> None:
        self.apply_toggles()
        self.sync_tick_text()
        self.reset_ranges()
        self.redraw()

    def apply_toggles(self) -> None:
        pass

    def redraw(self) -> None:
        """Draw again what is shown (after a toggle)."""

    # --- ranges ------------------------------------------------------------------------
    # pyqtgraph's auto-range moves the axes a little on every frame, and re-laying out
    # the tick text of every axis is what makes a frame slow (20 fps against 58 at
    # m = 10^3, measured with benchmarks/bench_gui.py). Instead a range only changes when
    # the data leave it (or fill less than half of it), with a margin. A user's zoom is
    # left alone until the 'A' button asks for auto-range again.
    def reset_ranges(self) -> None:
        self._user_zoomed.clear()
        self._force_range = True

    @property
    def range_due(self) -> bool:
        """The next frame must check the ranges, whoever's turn it is: a new run, a toggle,
        the 'A' button, or data that have left the view (data_left_view)."""
        return self._force_range or self.data_left_view()

    def data_left_view(self) -> bool:
        """Whether what was drawn last lies outside a view (cheap: a panel knows its
        extremes); panels whose data grow fast (the largest weights) say so."""
        return False

    def _auto_requested(self, plot: pg.PlotItem) -> None:
        """The 'A' button (or the context menu) asked for auto-range: take it back."""
        if any(plot.vb.state["autoRange"]):
            self._user_zoomed.discard(plot)
            plot.vb.disableAutoRange()
            self._force_range = True

    def _manage_ranges(self) -> bool:
        force = self._force_range
        self._force_range = False
        changed = False
        for plot in self.plots:
            if plot in self._user_zoomed:
                continue
            vb = plot.vb
            items = self.range_items(plot)
            bounds = vb.childrenBounds(items=items)
            if plot in self.settled_after:
                settled = settled_y_bounds(plot, self.settled_after[plot], items)
                bounds = [bounds[0], settled or bounds[1]]
            bounds = _bounds_with(bounds, self.range_extras(plot))
            current = vb.viewRange()
            target = {}
            for axis, key in ((0, "xRange"), (1, "yRange")):
                if axis == 0 and vb.linkedView(vb.XAxis) is not None:
                    continue  # the linked master decides the shared time axis
                want = self._range_for(plot, axis, bounds[axis], current[axis], force)
                if want is not None:
                    target[key] = want
            if target:
                vb.setRange(padding=0, **target)
                changed = True
        return changed

    def range_items(self, plot: pg.PlotItem) -> list | None:
        """The items whose data set the plot's ranges (None: all that have bounds)."""
        return None

    def range_extras(self, plot: pg.PlotItem) -> tuple[list[float], list[float]]:
        """Values (in view coordinates: log10 on a log axis) that the x and y ranges must
        hold besides the data, e.g. a horizontal line that is not a data item."""
        return [], []

    def _range_for(self, plot: pg.PlotItem, axis: int, bounds, current, force: bool):
        """Where one axis should move (lo, hi), or None to leave it: only when the data
        leave the range or fill less than half of it (or when forced), with a margin."""
        lo, hi = bounds if bounds is not None else (None, None)
        if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
            return None
        clo, chi = current
        span = hi - lo
        if span <= 0 and axis == 0 and plot in self.time_plots:
            lo, hi = lo, lo + 1.0  # one instant (t = 0): time runs forward from it
            span = hi - lo
        elif span <= 0:
            span = abs(hi) if hi != 0 else 1.0
            lo, hi = lo - 0.5 * span, hi + 0.5 * span
            span = hi - lo
        below, above = lo < clo, hi > chi
        room = self._label_room(plot, axis, span)
        pad = max(0.06 * span, room)
        if self._steps_ahead(plot, axis):
            # a linear time axis: while the run goes on its top moves in 1-2-5 steps (a few
            # re-layouts a decade); once it stops, the axis ends where the run does (a run
            # finished at t = 500 had filled half of an axis stepped to 1000)
            top = hi + pad if self._settled else self._range_top(plot, axis, hi, span, pad)
            # while it runs the top only grows (the pace ahead varies: 100, 200, 100)
            if not (force or below or above or (self._settled and top < chi)):
                return None
            return lo - pad, top
        if not (force or below or above or span < 0.5 * (chi - clo)):
            return None
        # data that left the range keep going that way (a decay, a rising θ): room ahead
        # on that side, so that the axis is re-laid out every few seconds, not every turn
        ahead = max(pad, ROOM_AHEAD * span)
        bottom = lo - (ahead if below and not force else pad)
        top = self._range_top(plot, axis, hi, span, ahead if above and not force else pad)
        if room > 0:
            # a decade just inside an end has its label cut by the edge, and pyqtgraph
            # drops it (m' from 8 to 1000 shown from 10^0.8: no 10^1, in 1 of 5 runs)
            if 0 < math.ceil(bottom) - bottom < room:
                bottom = math.ceil(bottom) - room
            if 0 < top - math.floor(top) < room:
                top = math.floor(top) + room
        return bottom, top

    def _steps_ahead(self, plot: pg.PlotItem, axis: int) -> bool:
        """Whether this axis is a linear time axis (its top moves in 1-2-5 steps)."""
        return axis == 0 and plot in self.time_plots and not plot.getAxis("bottom").logMode

    @staticmethod
    def _label_room(plot: pg.PlotItem, axis: int, span: float) -> float:
        """On a vertical log axis, the margin (view units) past the data that holds half a
        tick label: pyqtgraph drops a label that sticks out of a gridded axis, and the
        decade at the data's top or bottom went unlabelled (m' from 7 to 1000: one label)."""
        item = plot.getAxis("left")
        if axis != 1 or not item.logMode:
            return 0.0
        label = pg.QtGui.QFontMetricsF(item.style["tickFont"] or pg.QtGui.QFont()).height()
        px = plot.vb.height()
        if px <= 2 * label:
            return 0.0
        return 0.6 * label * span / (px - 1.2 * label)

    # simulated time per wall second of the run drawn (LivePanel measures it)
    pace_per_second = 0.0

    def _range_top(self, plot: pg.PlotItem, axis: int, hi: float, span: float, pad: float) -> float:
        # a growing time axis gets room ahead, to the next 1, 2 or 5 x 10^k: it (and with it
        # every linked panel's axis) is re-laid out three times a decade of t, not per frame;
        # and room for the next second of the run at least: a step re-lays out every time
        # axis in one frame (a 40-60 ms frame), and in a run's first second the steps 1, 2,
        # 5, 10, 20, 50 came a few frames apart
        if self._steps_ahead(plot, axis) and hi + pad > 0:
            return nice_ceiling(max(hi + pad, hi + LOOK_AHEAD_S * self.pace_per_second))
        return hi + pad

    def sync_tick_text(self) -> None:
        """Log axes get readable labels whatever they span (log_tick_values)."""
        for plot in self.plots:
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                # log: see log_tick_values. Linear: ticks, grid lines and labels at two
                # levels (major and minor), not pyqtgraph's three. Its finest level (about
                # 50 ticks on a time axis) never fits its labels on these panels, and
                # measuring them and working out its grid lines was half the cost of an
                # axis's repaint (1.2 -> 0.6 ms; every time axis repaints in the frame the
                # shared time axis steps). tests/ui/note/test_live_window.py checks labels
                if axis.logMode:
                    axis.setStyle(maxTextLevel=0)
                else:
                    levels = min(axis.style["maxTickLevel"], LINEAR_LEVELS)  # (a panel may ask fewer)
                    axis.setStyle(maxTextLevel=LINEAR_LEVELS, maxTickLevel=levels)
                if not hasattr(axis, "_linear_si_prefix"):
                    axis._linear_si_prefix = axis.autoSIPrefix  # the panel's choice, kept for linear
                    axis.tickStrings = log_tick_strings(axis, axis.tickStrings)
                    axis.tickValues = log_tick_values(axis, axis.tickValues)
                    if getattr(axis, "whole_numbers", False):
                        axis.tickValues = integer_tick_values(axis, axis.tickValues)
                        linear = axis.tickStrings
                        whole = whole_number_strings(linear)
                        axis.tickStrings = lambda v, sc, sp, a=axis, lin=linear, wh=whole: (
                            lin(v, sc, sp) if a.logMode else wh(v, sc, sp)
                        )
                    axis.labelString = scale_label(axis)
                    axis._updateLabel()
                # 10⁻⁸ labelled "(x1e+09)" reads worse than 10¹ on a log axis
                axis.enableAutoSIPrefix(axis._linear_si_prefix and not axis.logMode)

    def settle_tick_text(self) -> None:
        """Lay the axes out for the labels of their current ranges before a figure is
        rendered: pyqtgraph measures an axis's labels only as it paints it and widens the
        axis in a later layout pass, and until then drops the labels that do not fit (10²
        where 1 fitted)."""

        def sizes():
            return [
                (axis.textWidth, axis.textHeight, axis.geometry().size())
                for plot in self.plots
                for axis in (plot.getAxis("left"), plot.getAxis("bottom"))
            ]

        for _ in range(4):  # a wider axis narrows the view and may change its labels
            before = sizes()
            self.graphics.grab()  # paints the axes: they measure their labels
            QtWidgets.QApplication.sendPostedEvents()  # and the layout makes room
            if sizes() == before:
                return

    def cache_legends(self) -> None:
        """Legends sit over the curves and are repainted with them; their text is
        static, so paint them from cached pixmaps."""
        for plot in self.plots:
            if plot.legend is None:
                continue
            stack = [plot.legend]
            while stack:
                item = stack.pop()
                item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
                stack.extend(item.childItems())


class LivePanel(Panel):
    """A panel that draws a model's snapshots, frame after frame: `draw` puts one on the
    plot items, and vertical markers show where a parameter was changed during the run
    (`change_markers`, per model)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.last = None  # the snapshot drawn last
        self._run_id = None
        self._markers: list[tuple[pg.PlotItem, ChangeMarkers]] = []  # one item a time plot
        self._drawn: tuple[tuple[float, str], ...] = ()  # the (x, label) drawn on each time plot
        self._legends_cached = False
        self.pace = RunPace()

    @property
    def pace_per_second(self) -> float:
        return self.pace.per_second

    @property
    def run_drawn(self):
        """The id of the run this panel draws (None before its first snapshot)."""
        return self._run_id

    def redraw(self) -> None:
        if self.last is not None:
            self.update_from(self.last)

    def update_from(self, snap, ranges: bool = True) -> bool:
        """Draw a snapshot; with ranges=False the axis ranges wait for a later frame.
        Returns whether an axis range changed."""
        if snap.run_id != self._run_id:
            self._run_id = snap.run_id
            self._clear_markers()
            self.reset_ranges()
            self.pace.reset()
        self.last = snap
        # a paused or finished run is looked at, not followed: its time axes hug it
        self._settled = getattr(snap, "state", "running") != "running"
        if self._settled:
            self.pace.reset()  # (a pause stops the clock: the run's pace starts over)
        else:
            self.pace.add(time.perf_counter(), getattr(snap, "t", math.nan))
        if not self._legends_cached:
            self._legends_cached = True
            self.cache_legends()
            self.sync_tick_text()
        self.draw(snap)
        self._mark_changes(snap)
        # data that left the view on this frame are fitted on this frame (a frame late was
        # a quarter of a second at 4 fps)
        return self._manage_ranges() if ranges or self.data_left_view() else False

    def draw(self, snap) -> None:
        raise NotImplementedError

    def data_left_view(self) -> bool:
        """The newest point of a time plot's curve lies outside its view: the ranges are
        checked this frame (between turns, at a few frames a second under load, the run
        ran off the right of the time panels and the L1 decay off their bottom). Cheap: a
        time series grows at its end, so only each curve's last point is looked at."""
        for plot in self.time_plots:
            if plot in self._user_zoomed:
                continue
            (x0, x1), (y0, y1) = plot.vb.viewRange()
            items = self.range_items(plot)  # not the pinned runs, while following the live one
            for item in plot.listDataItems() if items is None else items:
                if not isinstance(item, pg.PlotDataItem):
                    continue
                x, y = item.curve.xData, item.curve.yData
                if not item.isVisible() or x is None or y is None or len(x) == 0:
                    continue
                if not (x0 <= x[-1] <= x1) or (math.isfinite(y[-1]) and not y0 <= y[-1] <= y1):
                    return True
        return False

    # --- vertical markers where a parameter changed during the run ------------------------
    def change_markers(self, snap) -> list[tuple[float, str]]:
        """Every live change of this run so far, as (x, label), oldest first."""
        return []

    def _clear_markers(self) -> None:
        for _plot, markers in self._markers:
            markers.set_markers(())
        self._drawn = ()

    def _mark_changes(self, snap) -> None:
        if not self.time_plots:
            return
        markers = tuple(self.change_markers(snap))
        if markers == self._drawn:
            return
        if not self._markers:
            for plot in self.time_plots:
                item = ChangeMarkers(pen(GREY, DASH), GREY)
                item.setZValue(-5)
                plot.addItem(item, ignoreBounds=True)
                self._markers.append((plot, item))
        for _plot, item in self._markers:
            item.set_markers(markers)  # a near change merged into the last moves it
        self._drawn = markers

    @property
    def marker_count(self) -> int:
        """Change markers drawn (per time plot)."""
        return len(self._drawn)
