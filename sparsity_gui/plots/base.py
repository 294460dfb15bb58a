"""What every panel shares: `Panel` (a titled plot area with toggles, managed axis
ranges, cached legends and vertical change markers), the live pens and the colours.

Both models' panels and the sweep figure derive from `Panel`. Each panel creates its plot
items once and, per frame, only calls setData on them with arrays from a snapshot."""

from __future__ import annotations

import math
import time

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.plots import pg_compat
from sparsity_gui.plots.axes import plot_parts
from sparsity_gui.plots.legend import add_legend_row, tight_text
from sparsity_gui.plots.markers import ChangeMarkers
from sparsity_gui.plots.ranges import ManagedRanges, RunPace
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


STACKED_AXIS_WIDTH = 60  # px of both left axes of a stacked pair: tick labels of 5 characters
LINEAR_LEVELS = 1  # a linear axis draws and labels its major and minor ticks (pyqtgraph: up to 2)
AXIS_TITLE_MARGIN = 2.5  # ... an axis title's: its descenders clear of the legend below


COST_WEIGHT = 0.2  # of the newest measurement in a panel's running paint cost


class PanelView(pg.GraphicsLayoutWidget):
    """A panel's plots: pyqtgraph's layout widget that measures its paint events (wall ms,
    a running mean: on a loaded machine a panel costs what it costs) and calls ``painted``
    after each: the window counts the frames that reach the screen by it."""

    paint_ms = 0.0
    painted = None  # a callable of no arguments, or None

    def paintEvent(self, event) -> None:
        start = time.perf_counter()
        try:
            super().paintEvent(event)
        finally:
            ms = 1000 * (time.perf_counter() - start)
            self.paint_ms += COST_WEIGHT * (ms - self.paint_ms)
            if self.painted is not None:
                self.painted()


def _transform_now(view: pg.ViewBox, *_args) -> None:
    """A view's new range put on its items now, not as pyqtgraph does it, at the start of
    the next paint event: the items that moves then ask Qt for another paint of the whole
    view after that one, the same picture drawn twice (a step of the shared time axis painted
    each of the four time panels twice: 35 ms of GUI CPU against 30)."""
    view.updateMatrix()


class Panel(ManagedRanges, QtWidgets.QFrame):
    """A titled plot area with a row of toggles, axis ranges that move only when the data
    leave them, and cached legends. Subclasses fill `self.plots` with `add_plot`."""

    title = ""
    claim = ""  # which claim of the note this panel lets you check (tooltip, docs/guide.md)
    # a panel whose drawing is heavy (many points, markers): a running run's frame over the
    # window's paint budget leaves it for the next frame (ui/window.LiveWindow.paint_panels)
    STAGGERED = False

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
        self.graphics = PanelView()
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
        plot = self.graphics.addPlot(row=row, col=0, title=title, **plot_parts())
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
        plot.vb.sigRangeChanged.connect(_transform_now)
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
                    pg_compat.refresh_axis_label(axis)
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
        self._stale = False  # what last was drawn with changed (a toggle): draw it again
        self._ranged = False  # last was drawn with its ranges checked
        self.update_ms = 0.0  # running mean of update_from's wall ms

    @property
    def paint_cost_ms(self) -> float:
        """What a frame of this panel costs: putting a snapshot on its items and painting
        its view (running means, wall ms)."""
        return self.update_ms + self.graphics.paint_ms

    @property
    def pace_per_second(self) -> float:
        return self.pace.per_second

    @property
    def run_drawn(self):
        """The id of the run this panel draws (None before its first snapshot)."""
        return self._run_id

    def redraw(self) -> None:
        if self.last is not None:
            self._stale = True
            self.update_from(self.last)

    def update_from(self, snap, ranges: bool = True) -> bool:
        """Draw a snapshot; with ranges=False the axis ranges wait for a later frame.
        Returns whether an axis range changed. The snapshot drawn last, drawn as it was
        (nothing toggled, its ranges checked if asked for), is not drawn again: its items
        keep their data and Qt does not repaint them."""
        if (
            snap is self.last
            and not self._stale
            and not self._force_range
            and (self._ranged or not ranges)
            and snap.run_id == self._run_id
        ):
            return False
        start = time.perf_counter()
        try:
            return self._update_from(snap, ranges)
        finally:
            ms = 1000 * (time.perf_counter() - start)
            self.update_ms += COST_WEIGHT * (ms - self.update_ms)

    def _update_from(self, snap, ranges: bool) -> bool:
        self._stale = False
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
        self._ranged = ranges or self.data_left_view()
        return self._manage_ranges() if self._ranged else False

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
