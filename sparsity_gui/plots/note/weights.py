"""The note's panels of the weights themselves: |W_k| sorted by |W_k(0)| against the
threshold, the tracked weights crossing the threshold, and the sparsity force on each weight."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from sparsity_gui.core.note.metrics import COL, COLUMNS, falls_below
from sparsity_gui.core.note.runner import Snapshot
from sparsity_gui.core.note.simulation import shown_tracked
from sparsity_gui.plots.base import BLUE, DASH, DOT, GREEN, GREY, ORANGE, PURPLE, RED, pen
from sparsity_gui.plots.curves import CurveBundle, Dots, Symbols, add_curve, set_broken_curve, set_curve
from sparsity_gui.plots.note.panel import NotePanel
from sparsity_gui.plots.pins import PinCurve
from sparsity_gui.plots.ticks import whole_number_axis

N_COLS = len(COLUMNS)

_VIRIDIS = pg.colormap.get("viridis")


def rank_colour(position: float) -> str:
    """A tracked weight's colour: viridis from dark (the largest initial weight, 0) to green
    (the smallest tracked, 1), stopping short of its pale yellow end."""
    return _VIRIDIS.map(0.8 * position, mode="qcolor").name()


def sci_count(n: int) -> str:
    """A count in a legend: 300 or 1,000 as it is, a round 10^5 or 10^7 as 10⁵, 10⁷."""
    if n >= 10**4 and n == 10 ** round(math.log10(n)):
        return "10" + str(round(math.log10(n))).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{n:,}"


def _dot_when_alone(curve: pg.PlotDataItem, points: int) -> None:
    """A line through one point draws nothing: the last weight alive gets a dot."""
    symbol = "o" if points == 1 else None
    if curve.opts["symbol"] != symbol:
        pen_colour = curve.opts["pen"].color()
        curve.setSymbol(symbol)
        curve.setSymbolPen(None)
        curve.setSymbolBrush(pg.mkBrush(pen_colour))
        curve.setSymbolSize(7)


class SortedWeightsPanel(NotePanel):
    title = "Weights, sorted"
    claim = (
        "Weights above the threshold θ grow and those below it shrink (exact, at every "
        "instant); θ ≈ 1/‖W‖₁ once the two pushes balance and ‖W‖² ≈ 1, which needs "
        "λ‖W‖₁ ≤ 1/4 (the note's balance condition)."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(
            0, "Sorted weights |W<sub>k</sub>| vs threshold θ", "rank k (by |W(0)|)", "|W<sub>k</sub>|"
        )
        self.growing = add_curve(p, pen=pen(BLUE), name="growing (|W<sub>k</sub>| &gt; θ)")
        self.shrinking = add_curve(p, pen=pen(ORANGE), name="shrinking (|W<sub>k</sub>| &lt; θ)")
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
        self._top_drawn = -math.inf  # the largest weight drawn (view coordinates)
        whole_number_axis(p.getAxis("bottom"))
        self.plot = p

    def range_extras(self, plot: pg.PlotItem) -> tuple[list[float], list[float]]:
        """θ and the balance prediction are lines, not data: the y range holds them too
        (at t = 0, θ can lie above every weight)."""
        lines = (self.theta_line, self.balance_line)
        return [], [line.value() for line in lines if line.isVisible()]

    def data_left_view(self) -> bool:
        """The largest weight grows fastest early in a run: above the view's top, the
        ranges are checked this frame (it ran out of the top at launch)."""
        return self._top_drawn > self.plot.vb.viewRange()[1][1]

    def _range_top(self, plot: pg.PlotItem, axis: int, hi: float, span: float, pad: float) -> float:
        # room above for the growing weights: fewer re-layouts of the axis
        return hi + (max(0.15 * span, pad) if axis == 1 else pad)

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
        for curve, count in ((self.growing, int(above.sum())), (self.shrinking, int(below.sum()))):
            _dot_when_alone(curve, count)
        log_y = self.log_y.isChecked()
        top = float(a[alive].max()) if alive.any() else -math.inf
        self._top_drawn = math.log10(top) if log_y and top > 0 else (top if not log_y else -math.inf)
        self._set_hline(self.theta_line, theta, log_y)
        self._set_hline(self.balance_line, 1.0 / snap.norm1 if snap.norm1 > 0 else math.nan, log_y)

    @staticmethod
    def _set_hline(line: pg.InfiniteLine, value: float, log_y: bool) -> None:
        ok = math.isfinite(value) and (value > 0 or not log_y)
        line.setVisible(ok)
        if ok:
            line.setValue(math.log10(value) if log_y else value)


class ThresholdPanel(NotePanel):
    title = "Threshold crossing"
    claim = (
        "While θ(t) rises, a weight that falls below it keeps shrinking and dies. θ = λ/(1−‖W‖²) "
        "rises exactly while (1−‖W‖²)‖W‖² ≥ λ‖W‖₁, and keeps rising once that holds while λ stays. "
        "When θ falls (that push short at the start, as when ‖W(0)‖² ≥ 1 or λ‖W(0)‖₁ is near 1/4; "
        "after λ is lowered, or raised past it) weights below it can grow again."
    )

    def __init__(self, parent=None, tracked: int = 8):
        super().__init__(parent)
        p = self.add_plot(
            0,
            "Tracked weights |W<sub>k</sub>|(t) and θ(t)",
            "t",
            "|W<sub>k</sub>|",
            time_axis=True,
        )
        # θ in black, dashed: no tracked weight shares its look (they are coloured by rank)
        self.theta_curve = add_curve(p, pen=pen("k", DASH), name="θ(t)")
        self.tracked = CurveBundle()  # the tracked weights, coloured by rank
        p.addItem(self.tracked)
        self.below_marks = Symbols("t", 9, pen("k"))
        self.death_marks = Symbols("x", 9, pen("k"), brush="k")
        p.addItem(self.below_marks)
        p.addItem(self.death_marks)
        p.legend.addItem(self.below_marks, "falls below θ")
        p.legend.addItem(self.death_marks, "dies")
        # the key of the tracked weights: one entry, its sample the largest weight's colour
        self.key_sample = pg.PlotDataItem(pen=pen(rank_colour(0.0)))
        p.legend.addItem(self.key_sample, "|W_k|, initial rank")
        self._key = ""
        self._coloured = 0  # how many curves the rank colours were last spread over
        self.plot = p
        q = self.add_plot(1, None, "t", "m' (nonzero)", time_axis=True, legend=False)
        q.setLogMode(y=True)
        self.stack(p, q)
        self.nonzero_curve = add_curve(q, pen=pen(GREEN), stepMode=None)
        self.graphics.ci.layout.setRowStretchFactor(0, 2)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)
        self.nonzero_plot = q
        self.count = QtWidgets.QSpinBox()
        self.count.setRange(1, 16)
        self.count.setValue(tracked)
        self.count.setPrefix("tracked: ")
        self.count.setToolTip(
            "How many weights to follow, chosen log-uniformly across the initial ranks "
            "(rank 1, the largest, is always one of them)"
        )
        self.count.valueChanged.connect(lambda _v: self.redraw())
        self.toggles.insertWidget(self.toggles.count() - 1, self.count)
        self.log_y = self.add_toggle("log y", "Logarithmic |W_k| axis")
        self._marks: tuple = ()

    def pin_curves(self) -> list[PinCurve]:
        return [
            PinCurve(self.plot, "k", lambda p: (p.column("t"), p.column("theta")), self.log_y.isChecked),
            PinCurve(self.nonzero_plot, GREEN, lambda p: (p.column("t"), p.column("nonzero")), lambda: True),
        ]

    def apply_toggles(self) -> None:
        self.plot.setLogMode(y=self.log_y.isChecked())

    def data_left_view(self) -> bool:
        """LivePanel's check, and the tracked weights' (one item, not data items)."""
        if super().data_left_view():
            return True
        return self.plot not in self._user_zoomed and self.tracked.left_view(self.plot.vb.viewRect())

    def shown_tracked(self, snap: Snapshot) -> np.ndarray:
        """Indices (into the tracked list) of the weights drawn: spread over all tracked."""
        return shown_tracked(len(snap.tracked_ranks), self.count.value())

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        t = h[:, COL["t"]]
        log_y = self.log_y.isChecked()
        set_broken_curve(self.theta_curve, t, h[:, COL["theta"]], h[:, COL["lam"]], positive=log_y)
        shown = self.shown_tracked(snap)
        if len(shown) != self._coloured:  # dark for the largest initial weight, lighter down the ranks
            self._coloured = len(shown)
            self.tracked.set_pens(pen(rank_colour(i / max(len(shown) - 1, 1))) for i in range(len(shown)))
        ranks = snap.tracked_ranks[shown] + 1 if len(shown) else []
        key = (
            f"|W_k| by initial rank, {int(ranks[0])} (dark) … {sci_count(int(ranks[-1]))}"
            if len(ranks)
            else "|W_k|"
        )
        if key != self._key:  # text layout is slow: only on change
            self._key = key
            self.plot.legend.set_label(self.key_sample, key)
        below_x, below_y, dead_x, dead_y = [], [], [], []
        theta = h[:, COL["theta"]]
        ys = h[:, N_COLS + shown]  # rows x shown weights
        self.tracked.setData(t, ys)  # (its log mode is the plot's: positive values on log y)
        if len(shown):
            # every fall below theta of a weight still alive (outside the note's regime a
            # weight may rise above theta and fall back, more than once)
            rows, cols = falls_below(ys, theta)
            below_x = t[rows].tolist()
            below_y = ys[rows, cols].tolist()
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


class ForcePanel(NotePanel):
    title = "Sparsity force"
    claim = (
        "d|W_k|/dt = (1-‖W‖²)(|W_k| - θ): a line in |W_k| with slope 1-‖W‖², crossing zero "
        "at θ: every nonzero weight sits on it (equation (1) of the note)."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(
            0,
            "Sparsity force d|W<sub>k</sub>|/dt vs |W<sub>k</sub>|",
            "|W<sub>k</sub>|",
            "d|W<sub>k</sub>|/dt",
        )
        self.line = add_curve(p, pen=pen(GREY), name="(1-‖W‖²)(|W<sub>k</sub>| - θ)")
        self.up = Dots(BLUE, size=5)
        self.down = Dots(ORANGE, size=5)
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
        self._extent = (-math.inf, -math.inf)  # the largest |W_k| and force drawn

    def range_extras(self, plot: pg.PlotItem) -> tuple[list[float], list[float]]:
        """θ is a line, not data: the x range holds it (the legend lists it)."""
        return ([self.theta_line.value()] if self.theta_line.isVisible() else []), []

    def data_left_view(self) -> bool:
        (_x0, x1), (_y0, y1) = self.plot.vb.viewRange()
        return self._extent[0] > x1 or self._extent[1] > y1

    def draw(self, snap: Snapshot) -> None:
        a = snap.sorted_abs
        alive = a > 0
        a = a[alive]
        force = snap.s * a - snap.lam
        a_max = float(a.max()) if a.size else 1.0
        xs = np.array([0.0, a_max * 1.05])
        self.line.setData(xs, snap.s * xs - snap.lam, skipFiniteCheck=True)
        grow = force > 0
        self._extent = (a_max * 1.05, float(force.max()) if force.size else -math.inf)
        self.up.setData(a[grow], force[grow])
        self.down.setData(a[~grow], force[~grow])
        ok = math.isfinite(snap.theta)
        self.theta_line.setVisible(ok)
        if ok:
            self.theta_line.setValue(snap.theta)
