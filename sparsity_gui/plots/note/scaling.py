"""The scaling figures of the note's model: lam*T (time to one weight left), the fitted decay
constant c and the relative-variance plateau, each against m on a log axis, one curve per
lam. Each run is a faint point; the mean over seeds a dot on the curve with +-1 sample
standard deviation error bars. The curves of different lam are set apart by a few hundredths
of a decade so that their bars do not hide each other.

Used live by the note window's scaling tab (rows arrive one run at a time); the exported
figures are matplotlib's (figures/note/scaling.py). Plain Panels: they draw rows, not snapshots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg

from sparsity_gui.core.note.scaling import ScalingRow, scaling_cells
from sparsity_gui.core.text import plural
from sparsity_gui.plots.base import DASH, GREY, Panel, pen
from sparsity_gui.plots.curves import set_curve
from sparsity_gui.plots.ticks import log_ticks

LABEL_COLOR = "#333333"
NOTE_COLOR = "#777777"  # the line under the plot: legible on the live (black) and print (white) backgrounds
LEGEND_SIZE = "9pt"  # as large as the tick labels in an exported figure
DODGE_DECADES = 0.025  # horizontal offset between the curves of neighbouring lam
_VIRIDIS = pg.colormap.get("viridis")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
RV_HALF_NORMAL = math.pi / 2.0 - 1.0  # Var/E^2 of a half-normal: RV of W(0) for large m


def power_text(v: float) -> str:
    """10³ for a power of ten, 2·10⁻³ for a multiple of one, else the shortest %g."""
    if v > 0 and math.isfinite(v):
        k = math.floor(math.log10(v) + 1e-12)
        mantissa = v / 10.0**k
        if abs(mantissa - round(mantissa)) < 1e-9 and abs(k) >= 2:
            head = "" if round(mantissa) == 1 else f"{round(mantissa)}·"
            return f"{head}10{str(k).translate(_SUPERSCRIPT)}"
    return f"{v:g}"


def lam_colour(index: int, count: int) -> str:
    """viridis from dark (smallest lam) to green (largest), short of its pale yellow end."""
    position = 0.0 if count <= 1 else index / (count - 1)
    return _VIRIDIS.map(0.85 * position, mode="qcolor").name()


@dataclass
class LamCurve:
    """The items of one lam: each run (faint), the means joined by a line, the means in the
    note's regime (filled) and outside it (hollow), and the error bars."""

    runs: pg.PlotDataItem
    line: pg.PlotDataItem
    means: pg.PlotDataItem
    outside: pg.PlotDataItem
    bars: pg.ErrorBarItem

    def items(self) -> tuple:
        return (self.runs, self.line, self.means, self.outside, self.bars)


class ScalingPanel(Panel):
    """One column of the scaling rows against m, one curve per lam. Call ``show_rows`` with
    all rows so far (any number, also none); it redraws everything from them."""

    column = ""
    y_label = ""
    log_y = False  # the y axis's default

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, self.title, "m (weights)", self.y_label)
        p.legend.opts["labelTextSize"] = LEGEND_SIZE  # a figure meant for papers
        p.legend.opts["labelTextColor"] = pg.mkColor(LABEL_COLOR)  # on its pale box, live too
        p.getAxis("left").enableAutoSIPrefix(False)  # RV of 0.45 is 0.45, not 450 (x0.001)
        for name in ("left", "bottom"):
            p.getAxis(name).setStyle(maxTickLevel=0)  # grid lines at the labelled values only
        self.plot = p
        self.note = self.graphics.addLabel("", row=1, col=0, size="8pt", color=NOTE_COLOR)
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.reference: pg.InfiniteLine | None = None
        self.reference_value = math.nan
        self.rows: list[ScalingRow] = []
        self.m_values: tuple[int, ...] = ()
        self.lam_values: tuple[float, ...] = ()
        self.curves: dict[float, LamCurve] = {}
        self.drawn: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # lam: (m, mean, std)
        self.outside_cells = 0
        self.add_reference()
        self.log_axis = self.add_toggle(
            "log y", "Logarithmic y axis (λ·T and c span decades once λ‖W(0)‖₁ exceeds 1)", checked=self.log_y
        )
        self.apply_toggles()
        self.sync_tick_text()
        self._draw()

    def add_reference(self) -> None:
        """A horizontal reference line, if the quantity has one."""

    # --- API ------------------------------------------------------------------------------
    def show_rows(
        self,
        rows: Sequence[ScalingRow],
        m_values: Sequence[int] | None = None,
        lam_values: Sequence[float] | None = None,
    ) -> None:
        """Draw these rows (all of them). ``m_values`` and ``lam_values`` (the grid's plan)
        fix the axis ticks and the legend before the runs end."""
        self.rows = list(rows)
        ms = {int(m) for m in (m_values or ())} | {r.m for r in self.rows}
        lams = {float(lam) for lam in (lam_values or ())} | {r.lam for r in self.rows}
        self.m_values = tuple(sorted(ms))
        lams = tuple(sorted(lams))
        if lams != self.lam_values:
            self._make_curves(lams)
        self._draw()

    # --- drawing --------------------------------------------------------------------------
    def apply_toggles(self) -> None:
        log = self.log_axis.isChecked()
        self.plot.setLogMode(x=True, y=log)
        if self.reference is not None:
            self.reference.setValue(math.log10(self.reference_value) if log else self.reference_value)

    def redraw(self) -> None:
        self._draw()

    def _make_curves(self, lams: tuple[float, ...]) -> None:
        for curve in self.curves.values():
            for item in curve.items():
                self.plot.removeItem(item)
        self.curves = {}
        self.lam_values = lams
        for i, lam in enumerate(lams):
            colour = lam_colour(i, len(lams))
            qc = pg.mkColor(colour)
            runs = self.plot.plot(
                pen=None,
                symbol="o",
                symbolSize=5,
                symbolPen=None,
                symbolBrush=pg.mkBrush(qc.red(), qc.green(), qc.blue(), 110),
            )
            bars = pg.ErrorBarItem(pen=pen(colour))
            self.plot.addItem(bars)
            line = self.plot.plot(pen=pen(colour))
            means = self.plot.plot(
                pen=None,
                symbol="o",
                symbolSize=8,
                symbolPen=pen(colour),
                symbolBrush=pg.mkBrush(colour),
                name=f"λ = {power_text(lam)}",
            )
            outside = self.plot.plot(
                pen=None, symbol="o", symbolSize=8, symbolPen=pen(colour), symbolBrush=pg.mkBrush(None)
            )
            # the legend draws its sample from the scatter's own pen and brush, which an item
            # gets only with its first data: before the first run all λ showed one colour
            means.scatter.setPen(pen(colour))
            means.scatter.setBrush(pg.mkBrush(colour))
            for item in (line, means, outside):
                item.setZValue(5)
            self.curves[lam] = LamCurve(runs, line, means, outside, bars)

    def _dodge(self, index: int) -> float:
        return (index - (len(self.lam_values) - 1) / 2.0) * DODGE_DECADES

    def _draw(self) -> None:
        log = self.log_axis.isChecked()
        cells = scaling_cells(self.rows, self.column, self.m_values, self.lam_values)
        swept = np.array(cells.m_values, dtype=float)
        self.drawn = {}
        shown = np.array([getattr(r, self.column) for r in self.rows], dtype=float)
        shown = shown[np.isfinite(shown) & (shown > 0)] if log else shown[np.isfinite(shown)]
        floor = 0.5 * float(shown.min()) if shown.size else 1.0  # where a bar reaching 0 ends
        self.outside_cells = 0
        for i, lam in enumerate(cells.lam_values):
            curve = self.curves[lam]
            dodge = self._dodge(i)
            shift = 10.0**dodge
            mine = [r for r in self.rows if r.lam == lam]
            rm = np.array([r.m for r in mine], dtype=float)
            ry = np.array([getattr(r, self.column) for r in mine], dtype=float)
            set_curve(curve.runs, rm * shift, ry, positive=log)
            ran = cells.table.runs[i] > 0  # the cells of this lam with runs: mean +- SD over seeds
            cm, cy, cs = swept[ran], cells.table.mean[i][ran], cells.table.std[i][ran]
            out = ~cells.regime[i][ran]
            self.outside_cells += int(out.sum())
            set_curve(curve.line, cm * shift, cy, positive=log)
            set_curve(curve.means, cm[~out] * shift, cy[~out], positive=log)
            set_curve(curve.outside, cm[out] * shift, cy[out], positive=log)
            self._draw_bars(curve.bars, cm, cy, cs, dodge, log, floor)
            self.drawn[lam] = (cm, cy, cs)
        self._set_ticks()
        seeds = sorted({r.seed for r in self.rows})
        if self.rows:
            text = (
                f"{plural(len(self.rows), 'run')} ({len(self.m_values)} m × {len(self.lam_values)} λ × "
                f"{plural(len(seeds), 'seed')}); bars: ± 1 sample SD over seeds"
            )
            if self.outside_cells:
                text += (
                    "<br>hollow: λ‖W(0)‖₁ > 1/4, no balance possible at the start (outside the note's regime)"
                )
        else:
            text = "no runs yet"
        if text != self.note.text:
            self.note.setText(text, color=NOTE_COLOR)
            # a long note must not widen the plot past a narrow panel (it would be cut off)
            self.note.setMinimumWidth(0)
        self._force_range = True
        self._manage_ranges()

    @staticmethod
    def _draw_bars(bars, m, mean, std, dodge: float, log: bool, floor: float) -> None:
        """Mean +- std. ErrorBarItem has no log mode: its coordinates are log10 of the
        values on a log axis, and there a bar reaching zero or below ends at ``floor``."""
        keep = np.isfinite(mean) & np.isfinite(std)
        if log:
            keep &= mean > 0
        m, mean, std = m[keep], mean[keep], std[keep]
        if not m.size:
            bars.setData(x=None, y=None, top=None, bottom=None)
            return
        x = np.log10(m) + dodge
        if log:
            y = np.log10(mean)
            top = np.log10(mean + std) - y
            low = np.where(mean - std > 0, mean - std, np.minimum(floor, mean))
            bottom = y - np.log10(low)
        else:
            y, top, bottom = mean, std, std
        bars.setData(x=x, y=y, top=top, bottom=bottom, beam=0.6 * DODGE_DECADES)

    def _set_ticks(self) -> None:
        """Label the swept m (or the decades), as powers of ten."""
        ms = self.m_values
        bottom = self.plot.getAxis("bottom")
        xt = log_ticks(min(ms), max(ms), ms) if ms else []
        bottom.setTicks([[(math.log10(v), power_text(v)) for v in xt], []] if xt else None)

    def _range_for(self, plot, axis, bounds, current, force):
        # a single m would give a zero-width axis: half a decade either side
        if axis == 0 and bounds is not None and bounds[0] is not None and bounds[1] - bounds[0] < 0.2:
            mid = 0.5 * (bounds[0] + bounds[1])
            return (mid - 0.5, mid + 0.5)
        return super()._range_for(plot, axis, bounds, current, force)


class LamTPanel(ScalingPanel):
    title = "Time to one weight left, λ·T, against m"
    column = "lam_t_one"
    log_y = True
    y_label = "λ·T (T: one weight left)"
    claim = "Full sparsity takes Θ(1/λ): λ·T stays of order 1 across m and λ."


class DecayConstantPanel(ScalingPanel):
    title = "Fitted decay constant, bulk c, against m"
    column = "fitted_c_bulk"  # the constant to quote (docs/guide.md, "What the numbers mean")
    log_y = True
    y_label = "bulk c in 1/‖W‖₁ ≈ 1/‖W(0)‖₁ + c·λt (m′ ≥ 10)"
    claim = (
        "‖W‖₁ = 1/Θ(1/√m + λt) in the note's regime (λ‖W(0)‖₁ ≤ 1/4, filled): the bulk c, "
        "fitted over m′ ≥ 10, the bulk decay the note describes and the constant to quote; "
        "fitted_c (m′ ≥ 2, scaling.csv) is dominated by the few-survivor phase."
    )


class RelVarPanel(ScalingPanel):
    title = "Relative variance plateau against m"
    column = "rel_var_mean"
    y_label = "Var[X]/E[X]², mean while m′ ≥ 2"
    claim = (
        "The relative variance of the surviving weights stays Θ(1) while they die; W(0) "
        "half-normal starts it at π/2 − 1."
    )

    def add_reference(self) -> None:
        self.reference_value = RV_HALF_NORMAL
        self.reference = pg.InfiniteLine(
            pos=RV_HALF_NORMAL,
            angle=0,
            pen=pen(GREY, DASH),
            label="π/2 − 1 (W(0))",
            labelOpts={"position": 0.04, "color": GREY, "anchors": [(0, 1), (0, 1)]},
        )
        self.plot.addItem(self.reference)


SCALING_PANEL_TYPES = (LamTPanel, DecayConstantPanel, RelVarPanel)
