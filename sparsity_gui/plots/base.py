"""What every panel shares: `Panel` (a titled plot area with toggles, managed axis
ranges, cached legends and vertical change markers), the live pens and the colours.

Both models' panels and the sweep figure derive from `Panel`. Each panel creates its plot
items once and, per frame, only calls setData on them with arrays from a snapshot."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

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


# Live pens are width 1: wider cosmetic pens take Qt's slow stroking path (3-15x slower
# per frame, measured). Exports scale the width up (plots/render.py).
LIVE_WIDTH = 1


def pen(color: str, style=QtCore.Qt.PenStyle.SolidLine) -> pg.QtGui.QPen:
    """A live pen: 1 px, cosmetic; emphasis comes from colour and dash, not width."""
    p = pg.mkPen(color, width=LIVE_WIDTH)
    p.setStyle(style)
    p.setCosmetic(True)
    return p


DASH = QtCore.Qt.PenStyle.DashLine


DOT = QtCore.Qt.PenStyle.DotLine


def finite_xy(x: np.ndarray, y: np.ndarray, positive: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Rows where both are finite (and y > 0 when a log axis will show them)."""
    keep = np.isfinite(x) & np.isfinite(y)
    if positive:
        keep &= y > 0
    return np.ascontiguousarray(x[keep]), np.ascontiguousarray(y[keep])


def set_curve(item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray, positive: bool = False) -> None:
    x, y = finite_xy(np.asarray(x, float), np.asarray(y, float), positive)
    item.setData(x, y, skipFiniteCheck=True)


def _log_tick_strings(axis, tick_strings):
    """Readable labels on a log axis: over a decade or more, the decades only (pyqtgraph
    labels every 2..9 x 10^k tick, and they pile up); within less than a decade, which may
    hold no decade at all, 1, 2 and 5 times a power of ten."""

    def strings(values, scale, spacing):
        out = tick_strings(values, scale, spacing)
        if not axis.logMode:
            return out
        lo, hi = axis.range
        if hi - lo >= 1.0:
            keep = [abs(v - round(v)) < 1e-9 for v in values]
        else:  # plain numbers read best here: 20, 50, 1.4
            out = [f"{10**v:.3g}" for v in values]
            keep = [round(10 ** (v - math.floor(v + 1e-9)), 6) in (1.0, 2.0, 5.0) for v in values]
            if sum(keep) < 2:  # a narrow range (see _log_tick_values): every tick it made
                keep = [True] * len(values)
        return [text if k else "" for k, text in zip(keep, out, strict=True)]

    return strings


def _log_tick_values(axis, tick_values):
    """A log axis narrower than the gap between pyqtgraph's ticks (1.1 to 1.9, say, where it
    has none) gets 3 to 6 evenly spaced values of 1, 2 or 5 times a power of ten."""

    def values(lo, hi, size):
        levels = tick_values(lo, hi, size)
        if not axis.logMode or hi - lo >= 1.0:
            return levels
        inside = [v for _spacing, vals in levels for v in vals if lo <= v <= hi]
        if len(inside) >= 2:
            return levels
        a, b = 10.0**lo, 10.0**hi
        for step in sorted(
            m * 10.0**k
            for k in range(math.floor(math.log10(b - a)) - 2, math.floor(math.log10(b - a)) + 1)
            for m in (1, 2, 5)
        ):
            if (b - a) / step <= 6:
                first = math.ceil(a / step) * step
                ticks = [first + i * step for i in range(int((b - first) / step) + 1)]
                return [(math.log10(1 + step / a), [math.log10(x) for x in ticks if x > 0])]
        return levels

    return values


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
        self.graphics.ci.setContentsMargins(4, 4, 16, 4)
        layout.addWidget(self.graphics, 1)
        layout.addLayout(self.toggles)
        self.setToolTip(self.claim)
        self.plots: list[pg.PlotItem] = []
        self.time_plots: list[pg.PlotItem] = []
        self._user_zoomed: set[pg.PlotItem] = set()
        self._force_range = True  # the next ranges are set whatever the data

    def add_plot(
        self,
        row: int,
        title: str | None,
        x_label: str,
        y_label: str,
        time_axis: bool = False,
        legend: bool = True,
        legend_left: bool = False,
    ) -> pg.PlotItem:
        plot = self.graphics.addPlot(row=row, col=0, title=title)
        plot.setLabel("bottom", x_label)
        plot.setLabel("left", y_label)
        plot.showGrid(x=True, y=True, alpha=0.25)
        # The grid makes each axis item span the whole plot, so every curve update would
        # repaint the axis text; a cached pixmap is redrawn only when the axis changes.
        for name in ("left", "bottom", "top", "right"):
            axis = plot.getAxis(name)
            axis.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if legend:
            # in the corner the data leave empty; translucent so nothing is hidden
            plot.addLegend(
                offset=(8, 8) if legend_left else (-8, 8),
                labelTextSize="8pt",
                brush=pg.mkBrush(255, 255, 255, 170),
            )
        plot.vb.disableAutoRange()
        plot.vb.sigRangeChangedManually.connect(lambda *_a, p=plot: self._user_zoomed.add(p))
        plot.vb.sigStateChanged.connect(lambda _vb, p=plot: self._auto_requested(p))
        self.plots.append(plot)
        if time_axis:
            self.time_plots.append(plot)
        return plot

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
            bounds = vb.childrenBounds()
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
        if not (force or lo < clo or hi > chi or span < 0.5 * (chi - clo)):
            return None
        pad = 0.06 * span
        return lo - pad, self._range_top(plot, axis, hi, span, pad)

    def _range_top(self, plot: pg.PlotItem, axis: int, hi: float, span: float, pad: float) -> float:
        # a growing time axis gets room ahead, so it (and with it every linked panel's
        # axis) is re-laid out a few times per run, not per frame
        return hi + (0.3 * span if axis == 0 and self.time_plots else pad)

    def sync_tick_text(self) -> None:
        """Log axes get readable labels whatever they span (_log_tick_strings)."""
        for plot in self.plots:
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setStyle(maxTextLevel=1 if axis.logMode else 2)
                if not hasattr(axis, "_log_labels"):
                    axis._log_labels = True
                    axis.tickStrings = _log_tick_strings(axis, axis.tickStrings)
                    axis.tickValues = _log_tick_values(axis, axis.tickValues)

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
        self._markers: list[tuple[pg.PlotItem, pg.InfiniteLine]] = []
        self._drawn: tuple[tuple[float, str], ...] = ()  # the (x, label) drawn on each time plot
        self._legends_cached = False

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
        self.last = snap
        if not self._legends_cached:
            self._legends_cached = True
            self.cache_legends()
            self.sync_tick_text()
        self.draw(snap)
        self._mark_changes(snap)
        return self._manage_ranges() if ranges else False

    def draw(self, snap) -> None:
        raise NotImplementedError

    # --- vertical markers where a parameter changed during the run ------------------------
    def change_markers(self, snap) -> list[tuple[float, str]]:
        """Every live change of this run so far, as (x, label), oldest first."""
        return []

    def _clear_markers(self) -> None:
        for plot, line in self._markers:
            plot.removeItem(line)
        self._markers.clear()
        self._drawn: tuple[tuple[float, str], ...] = ()

    def _mark_changes(self, snap) -> None:
        if not self.time_plots:
            return
        markers = tuple(self.change_markers(snap))
        if markers[: len(self._drawn)] != self._drawn:  # a near change merged into the last
            self._clear_markers()
        for x, label in markers[len(self._drawn) :]:
            for plot in self.time_plots:
                # the label hangs down from the top, beside the line: never clipped
                line = pg.InfiniteLine(
                    pos=x,
                    angle=90,
                    pen=pen(GREY, DASH),
                    label=label,
                    labelOpts={
                        "position": 0.97,
                        "color": GREY,
                        "rotateAxis": (1, 0),
                        "anchors": [(1, 0.5), (1, 0.5)],
                    },
                )
                line.setZValue(-5)
                plot.addItem(line, ignoreBounds=True)
                self._markers.append((plot, line))
        self._drawn = markers

    @property
    def marker_count(self) -> int:
        """Change markers drawn (per time plot)."""
        return len(self._drawn)
