"""The six live plots. Each panel creates its plot items once and, per frame, only
calls setData on them with arrays taken from a Snapshot."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.note.runner import Snapshot
from sparsity_gui.core.note.metrics import COL, COLUMNS

# Colours (matplotlib's tab10, familiar from papers)
BLUE, ORANGE, GREEN, RED, PURPLE, GREY, PINK = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#7f7f7f", "#e377c2")
N_COLS = len(COLUMNS)


# Live pens are width 1: wider cosmetic pens take Qt's slow stroking path (3-15x slower
# per frame, GUIDE.md). Exports scale the width up (see figures.py).
LIVE_WIDTH = 1


def pen(color: str, style=QtCore.Qt.PenStyle.SolidLine) -> "pg.QtGui.QPen":
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


def _decade_tick_strings(axis, tick_strings):
    """pyqtgraph labels every 2..9 x 10^k tick of a log axis spanning a couple of decades
    (they overlap); keep the decades' labels when there are many ticks."""

    def strings(values, scale, spacing):
        out = tick_strings(values, scale, spacing)
        if axis.logMode and len(values) > 6:
            return [text if abs(v - round(v)) < 1e-9 else "" for v, text in zip(values, out)]
        return out

    return strings


class Panel(QtWidgets.QFrame):
    """A titled plot area with a row of toggles. Subclasses fill `self.plots`."""

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
        self.graphics.ci.setContentsMargins(4, 4, 8, 4)
        layout.addWidget(self.graphics, 1)
        layout.addLayout(self.toggles)
        self.setToolTip(self.claim)
        self.plots: list[pg.PlotItem] = []
        self.time_plots: list[pg.PlotItem] = []
        self._lam_lines: list[tuple[pg.PlotItem, pg.InfiniteLine]] = []
        self._lam_marked = 0
        self._run_id = None
        self.last: Snapshot | None = None
        self._user_zoomed: set[pg.PlotItem] = set()

    def add_plot(self, row: int, title: str | None, x_label: str, y_label: str,
                 time_axis: bool = False, legend: bool = True,
                 legend_left: bool = False) -> pg.PlotItem:
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
            plot.addLegend(offset=(8, 8) if legend_left else (-8, 8), labelTextSize="8pt",
                           brush=pg.mkBrush(255, 255, 255, 170))
        plot.vb.disableAutoRange()
        plot.vb.sigRangeChangedManually.connect(lambda *_a, p=plot: self._user_zoomed.add(p))
        plot.vb.sigStateChanged.connect(lambda _vb, p=plot: self._auto_requested(p))
        self.plots.append(plot)
        if time_axis:
            self.time_plots.append(plot)
        return plot

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
        if self.last is not None:
            self.update_from(self.last)

    def apply_toggles(self) -> None:
        pass

    def update_from(self, snap: Snapshot, ranges: bool = True) -> bool:
        """Draw a snapshot; with ranges=False the axis ranges wait for a later frame.
        Returns whether an axis range changed."""
        if snap.run_id != self._run_id:
            self._run_id = snap.run_id
            self._clear_lam_markers()
            self.reset_ranges()
        self.last = snap
        if not self._legends_cached:
            self._legends_cached = True
            self.cache_legends()
            self.sync_tick_text()
        self.draw(snap)
        self._mark_lam_changes(snap)
        return self._manage_ranges() if ranges else False

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

    _force_range = True
    _legends_cached = False

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
        if span <= 0:
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

    def draw(self, snap: Snapshot) -> None:
        raise NotImplementedError

    def sync_tick_text(self) -> None:
        """Log axes label decades only (otherwise 2·10^k … 9·10^k pile up)."""
        for plot in self.plots:
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setStyle(maxTextLevel=0 if axis.logMode else 2)
                if not hasattr(axis, "_decade_labels"):
                    axis._decade_labels = True
                    axis.tickStrings = _decade_tick_strings(axis, axis.tickStrings)

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

    # vertical markers where lam changed during the run
    def _clear_lam_markers(self) -> None:
        for plot, line in self._lam_lines:
            plot.removeItem(line)
        self._lam_lines.clear()
        self._lam_marked = 1  # the first entry is the run's starting lam

    def _mark_lam_changes(self, snap: Snapshot) -> None:
        if not self.time_plots:
            return
        while self._lam_marked < len(snap.lam_changes):
            change = snap.lam_changes[self._lam_marked]
            for plot in self.time_plots:
                line = pg.InfiniteLine(pos=change.t, angle=90, pen=pen(GREY, DASH),
                                       label=f"λ={change.lam:.3g}",
                                       labelOpts={"position": 0.93, "color": GREY, "rotateAxis": (1, 0)})
                line.setZValue(-5)
                plot.addItem(line, ignoreBounds=True)
                self._lam_lines.append((plot, line))
            self._lam_marked += 1

    @property
    def lam_marker_count(self) -> int:
        return len(self._lam_lines) // max(len(self.time_plots), 1)


class SortedWeightsPanel(Panel):
    title = "Weights, sorted"
    claim = ("Weights above the threshold θ grow and the rest shrink and die; θ ≈ 1/‖W‖₁ once "
             "the two pushes balance (the note's balance condition).")

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "Sorted weights |W<sub>k</sub>| vs threshold θ", "rank k (by |W(0)|)", "|W<sub>k</sub>|")
        self.growing = p.plot(pen=pen(BLUE), name="growing (|W<sub>k</sub>| &gt; θ)")
        self.shrinking = p.plot(pen=pen(ORANGE), name="shrinking (|W<sub>k</sub>| &lt; θ)")
        # no text labels on lines that move every frame (re-rendering text is slow): the
        # legend names them
        self.theta_line = pg.InfiniteLine(angle=0, pen=pen(RED))
        self.balance_line = pg.InfiniteLine(angle=0, pen=pen(PURPLE, DASH))
        p.addItem(self.theta_line, ignoreBounds=True)
        p.addItem(self.balance_line, ignoreBounds=True)
        p.legend.addItem(pg.PlotDataItem(pen=pen(RED)), "θ = λ/(1-‖W‖²)")
        p.legend.addItem(pg.PlotDataItem(pen=pen(PURPLE, DASH)), "balance prediction 1/‖W‖₁")
        self.log_y = self.add_toggle("log y", "Logarithmic |W_k| axis (dead weights are not drawn)")
        self.log_x = self.add_toggle("log rank", "Logarithmic rank axis")
        self.plot = p

    def apply_toggles(self) -> None:
        self.plot.setLogMode(x=self.log_x.isChecked(), y=self.log_y.isChecked())

    def draw(self, snap: Snapshot) -> None:
        ranks = snap.ranks.astype(float) + 1.0  # 1-based ranks (log axis friendly)
        a = snap.sorted_abs
        theta = snap.theta
        alive = a > 0
        above = alive & (a >= theta) if math.isfinite(theta) else np.zeros_like(alive)
        below = alive & ~above
        # each colour is drawn where it applies, joined at the crossing
        if above.any() and below.any():
            first_below = int(np.argmax(below))
            above = above.copy()
            above[first_below] = True
        set_curve(self.growing, ranks[above], a[above])
        set_curve(self.shrinking, ranks[below], a[below])
        log_y = self.log_y.isChecked()
        self._set_hline(self.theta_line, theta, log_y)
        self._set_hline(self.balance_line, 1.0 / snap.norm1 if snap.norm1 > 0 else math.nan, log_y)

    @staticmethod
    def _set_hline(line: pg.InfiniteLine, value: float, log_y: bool) -> None:
        ok = math.isfinite(value) and (value > 0 or not log_y)
        line.setVisible(ok)
        if ok:
            line.setValue(math.log10(value) if log_y else value)


class ThresholdPanel(Panel):
    title = "Threshold crossing"
    claim = ("A weight shrinks from the moment it falls below θ(t) and dies soon after; θ rises "
             "as W gets sparser until one weight is left.")

    def __init__(self, parent=None, tracked: int = 8):
        super().__init__(parent)
        p = self.add_plot(0, "Tracked weights |W<sub>k</sub>|(t) and θ(t)", "t", "|W<sub>k</sub>|",
                          time_axis=True, legend_left=True)
        self.theta_curve = p.plot(pen=pen(RED), name="θ(t)")
        self.curves: list[pg.PlotDataItem] = []
        self.below_marks = pg.ScatterPlotItem(symbol="t", size=9, pen=pen(RED), brush=None)
        self.death_marks = pg.ScatterPlotItem(symbol="x", size=9, pen=pen("k"), brush="k")
        p.addItem(self.below_marks)
        p.addItem(self.death_marks)
        p.legend.addItem(self.below_marks, "falls below θ")
        p.legend.addItem(self.death_marks, "dies")
        self.plot = p
        q = self.add_plot(1, None, "t", "m' (nonzero)", time_axis=True, legend=False)
        q.setLogMode(y=True)
        q.setXLink(p)
        self.nonzero_curve = q.plot(pen=pen(GREEN), stepMode=None)
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)
        self.nonzero_plot = q
        self.count = QtWidgets.QSpinBox()
        self.count.setRange(1, 16)
        self.count.setValue(tracked)
        self.count.setPrefix("tracked: ")
        self.count.setToolTip("How many weights to follow, chosen log-uniformly across the initial ranks "
                              "(rank 1, the largest, is always one of them)")
        self.count.valueChanged.connect(lambda _v: self.last is not None and self.update_from(self.last))
        self.toggles.insertWidget(self.toggles.count() - 1, self.count)
        self.log_y = self.add_toggle("log y", "Logarithmic |W_k| axis")
        self._marks: tuple = ()

    def apply_toggles(self) -> None:
        self.plot.setLogMode(y=self.log_y.isChecked())

    def shown_tracked(self, snap: Snapshot) -> np.ndarray:
        """Indices (into the tracked list) of the weights drawn: spread over all tracked."""
        n = len(snap.tracked_ranks)
        k = min(self.count.value(), n)
        if k <= 0:
            return np.zeros(0, dtype=int)
        return np.unique(np.round(np.linspace(0, n - 1, k)).astype(int))

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        t = h[:, COL["t"]]
        log_y = self.log_y.isChecked()
        set_curve(self.theta_curve, t, h[:, COL["theta"]], positive=log_y)
        shown = self.shown_tracked(snap)
        while len(self.curves) < len(shown):
            i = len(self.curves)
            self.curves.append(self.plot.plot(pen=pen(pg.intColor(i, hues=9, values=1, maxValue=200).name())))
        below_x, below_y, dead_x, dead_y = [], [], [], []
        theta = h[:, COL["theta"]]
        for curve in self.curves[len(shown):]:
            curve.setData([], [])
        if len(shown):
            ys = h[:, N_COLS + shown]  # rows x shown weights
            for curve, y in zip(self.curves, ys.T):
                set_curve(curve, t, y, positive=log_y)
            # first recorded instant below theta while still alive (for weights that
            # started above it)
            below = (ys < theta[:, None]) & (ys > 0) & (ys[0] >= theta[0])[None, :]
            has = below.any(axis=0)
            first = below.argmax(axis=0)
            cols = np.flatnonzero(has)
            below_x = t[first[cols]].tolist()
            below_y = ys[first[cols], cols].tolist()
            td = snap.tracked_death_t[shown]
            for col in np.flatnonzero(np.isfinite(td)):
                dead_x.append(float(td[col]))
                if log_y:
                    alive_rows = np.flatnonzero(ys[:, col] > 0)
                    dead_y.append(float(ys[alive_rows[-1], col]) if alive_rows.size else 1.0)
                else:
                    dead_y.append(0.0)
        if log_y:
            below_y = [math.log10(v) for v in below_y]
            dead_y = [math.log10(v) if v > 0 else 0.0 for v in dead_y]
        marks = (tuple(below_x), tuple(below_y), tuple(dead_x), tuple(dead_y))
        if marks != self._marks:  # scatter items are slow to rebuild: only on change
            self._marks = marks
            self.below_marks.setData(below_x, below_y)
            self.death_marks.setData(dead_x, dead_y)
        set_curve(self.nonzero_curve, t, h[:, COL["nonzero"]], positive=True)


class BalancePanel(Panel):
    title = "Norm balance"
    claim = ("Feature benefit (1-‖W‖²)‖W‖² and regularization λ‖W‖₁ push ‖W‖² up and down; "
             "after a short transient they balance (ratio → 1).")

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "Pushes on ‖W‖²", "t", "push", time_axis=True)
        self.feature = p.plot(pen=pen(BLUE), name="feature benefit (1-‖W‖²)‖W‖²")
        self.reg = p.plot(pen=pen(ORANGE, DASH), name="regularization λ‖W‖₁")
        self.plot = p
        q = self.add_plot(1, None, "t", "ratio", time_axis=True, legend=True)
        q.setXLink(p)
        self.ratio = q.plot(pen=pen(PURPLE), name="feature / regularization")
        one = pg.InfiniteLine(pos=1.0, angle=0, pen=pen(GREY, DOT))
        q.addItem(one, ignoreBounds=True)
        self.ratio_plot = q
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 2)
        self.log_y = self.add_toggle("log y", "Logarithmic push axis")

    def apply_toggles(self) -> None:
        self.plot.setLogMode(y=self.log_y.isChecked())

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        t = h[:, COL["t"]]
        f = h[:, COL["feature_push"]]
        r = h[:, COL["reg_push"]]
        log_y = self.log_y.isChecked()
        set_curve(self.feature, t, f, positive=log_y)
        set_curve(self.reg, t, r, positive=log_y)
        with np.errstate(divide="ignore", invalid="ignore"):
            set_curve(self.ratio, t, f / r)


class DecayPanel(Panel):
    title = "L1 decay"
    claim = ("‖W‖₁ ≈ 1/(w(0) + c·λt): the typical nonzero weight w = 1/‖W‖₁ grows linearly "
             "in λt with c = Θ(1).")

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "‖W‖₁(t) and the note's law", "t", "‖W‖₁", time_axis=True)
        self.measured = p.plot(pen=pen(BLUE), name="‖W‖₁")
        self.law = p.plot(pen=pen(RED, DASH), name="1/(w(0) + c·λt)")
        self.plot = p
        self.show_w = self.add_toggle("show w = 1/‖W‖₁", "Plot w = 1/‖W‖₁ instead: a straight line in theory")
        self.log_x = self.add_toggle("log t", "Logarithmic time axis")
        self.log_y = self.add_toggle("log y", "Logarithmic value axis", checked=True)
        self._names: tuple[str, str] = ("", "")
        self.apply_toggles()

    def apply_toggles(self) -> None:
        self.plot.setLogMode(x=self.log_x.isChecked(), y=self.log_y.isChecked())
        self.plot.setLabel("left", "w = 1/‖W‖₁" if self.show_w.isChecked() else "‖W‖₁")

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        t = h[:, COL["t"]]
        l1 = h[:, COL["norm1"]]
        lam_t = h[:, COL["lam_t"]]
        c = snap.fitted_c
        w0 = h[0, COL["w"]] if h.shape[0] else math.nan
        fit_w = w0 + (c if math.isfinite(c) else math.nan) * lam_t
        show_w = self.show_w.isChecked()
        positive = self.log_x.isChecked() or self.log_y.isChecked()
        if self.log_x.isChecked():
            keep = t > 0
            t, l1, fit_w = t[keep], l1[keep], fit_w[keep]
        with np.errstate(divide="ignore", invalid="ignore"):
            if show_w:
                set_curve(self.measured, t, 1.0 / l1, positive=positive)
                set_curve(self.law, t, fit_w, positive=positive)
            else:
                set_curve(self.measured, t, l1, positive=positive)
                set_curve(self.law, t, 1.0 / fit_w, positive=positive)
        name_m = "w = 1/‖W‖₁" if show_w else "‖W‖₁"
        name_l = f"w(0) + c·λt, c = {c:.3f}" if show_w else f"1/(w(0) + c·λt), c = {c:.3f}"
        if (name_m, name_l) != self._names:  # text layout is slow: only on change
            self._names = (name_m, name_l)
            legend = self.plot.legend
            legend.getLabel(self.measured).setText(name_m)
            legend.getLabel(self.law).setText(name_l)


class RelVarPanel(Panel):
    title = "Relative variance"
    claim = ("The relative variance of the nonzero weights stays Θ(1), between the bounds "
             "computed from W(0) (red), close to the idealized bounds (pink) until m' is small.")

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "Relative variance Var[X]/E[X]²", "t", "relative variance", time_axis=True)
        # colours as in the note's figure: the run in orange between red bounds, the
        # idealized bounds pink and dashed; the run is drawn on top
        self.rv = p.plot(pen=pen(ORANGE), name="run")
        self.rv.setZValue(10)
        faint_red = "#e06666"
        self.lo = p.plot(pen=pen(faint_red), name="bounds from W(0)")
        self.hi = p.plot(pen=pen(faint_red))
        self.ilo = p.plot(pen=pen(PINK, DASH), name="idealized bounds")
        self.ihi = p.plot(pen=pen(PINK, DASH))
        self.plot = p
        self.log_x = self.add_toggle("log t", "Logarithmic time axis")

    def apply_toggles(self) -> None:
        self.plot.setLogMode(x=self.log_x.isChecked())

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        t = h[:, COL["t"]]
        if self.log_x.isChecked():
            keep = t > 0
            h, t = h[keep], t[keep]
        set_curve(self.rv, t, h[:, COL["rel_var"]])
        set_curve(self.lo, t, h[:, COL["rel_var_lo"]])
        set_curve(self.hi, t, h[:, COL["rel_var_hi"]])
        set_curve(self.ilo, t, h[:, COL["rel_var_ideal_lo"]])
        set_curve(self.ihi, t, h[:, COL["rel_var_ideal_hi"]])


class ForcePanel(Panel):
    title = "Sparsity force"
    claim = ("d|W_k|/dt = (1-‖W‖²)(|W_k| - θ): a line in |W_k| with slope 1-‖W‖², crossing zero "
             "at θ: every nonzero weight sits on it (equation (1) of the note).")

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "Sparsity force d|W<sub>k</sub>|/dt vs |W<sub>k</sub>|", "|W<sub>k</sub>|",
                          "d|W<sub>k</sub>|/dt", legend_left=True)
        self.line = p.plot(pen=pen(GREY), name="(1-‖W‖²)(|W<sub>k</sub>| - θ)")
        self.up = pg.ScatterPlotItem(size=5, pen=None, brush=pg.mkBrush(BLUE))
        self.down = pg.ScatterPlotItem(size=5, pen=None, brush=pg.mkBrush(ORANGE))
        p.addItem(self.up)
        p.addItem(self.down)
        p.legend.addItem(self.up, "growing weights")
        p.legend.addItem(self.down, "shrinking weights")
        zero = pg.InfiniteLine(pos=0.0, angle=0, pen=pen(GREY, DOT))
        p.addItem(zero, ignoreBounds=True)
        self.theta_line = pg.InfiniteLine(angle=90, pen=pen(RED, DASH))
        p.addItem(self.theta_line, ignoreBounds=True)
        p.legend.addItem(pg.PlotDataItem(pen=pen(RED, DASH)), "θ (zero crossing)")
        self.plot = p

    def draw(self, snap: Snapshot) -> None:
        a = snap.sorted_abs
        alive = a > 0
        a = a[alive]
        force = snap.s * a - snap.lam
        a_max = float(a.max()) if a.size else 1.0
        xs = np.array([0.0, a_max * 1.05])
        self.line.setData(xs, snap.s * xs - snap.lam, skipFiniteCheck=True)
        grow = force > 0
        self.up.setData(a[grow], force[grow])
        self.down.setData(a[~grow], force[~grow])
        ok = math.isfinite(snap.theta)
        self.theta_line.setVisible(ok)
        if ok:
            self.theta_line.setValue(snap.theta)


PANEL_TYPES = (SortedWeightsPanel, ThresholdPanel, BalancePanel, DecayPanel, RelVarPanel, ForcePanel)
