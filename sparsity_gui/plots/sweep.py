"""The sweep's figure: polysemantic neurons against m, as in Lecomte et al. (2023).

Each run is a faint point, the mean over seeds per m a dot with +-1 standard deviation
error bars, and the paper's estimate n^2/(4m) a dashed line over the swept m. Used live by
the GUI (rows arrive one run at a time) and headless by `sparsity-gui sweep` (through
plots.figures.sweep_figure_files). A plain Panel: it draws rows, not snapshots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

from sparsity_gui.core.interference.sweep import SweepRow, summarize
from sparsity_gui.core.text import plural
from sparsity_gui.plots.base import BLUE, DASH, RED, Panel, pen, set_curve

RUN_BRUSH = (31, 119, 180, 90)  # BLUE, faint: overlapping seeds show as darker points
LABEL_COLOR = "#333333"


def log_ticks(lo: float, hi: float, values: Sequence[float] = ()) -> list[float]:
    """Labelled values for a log axis whose data span [lo, hi]: the given values when there
    are a few (the swept m), else 1-2-5 steps (decades only over more than three decades);
    decades further out, for a zoomed-out view."""
    if 1 <= len(values) <= 8:
        return sorted(float(v) for v in values)
    if not (lo > 0 and hi >= lo and math.isfinite(hi)):
        return []
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    mult = (1.0,) if k1 - k0 > 3 else (1.0, 2.0, 5.0)
    inside = [c * 10.0**k for k in range(k0, k1 + 1) for c in mult if lo <= c * 10.0**k <= hi]
    outside = [10.0**k for k in range(k0 - 6, k1 + 7) if not lo <= 10.0**k <= hi]
    return sorted(inside + outside)


def _tick_text(v: float) -> str:
    return f"{v:g}" if 1e-3 <= v < 1e6 else f"{v:.0e}"


class SweepPanel(Panel):
    """The count-against-m figure. Call ``show_rows`` with all rows so far (any number,
    also none) whenever they change; it redraws everything from them."""

    title = "Polysemantic neurons against m"
    claim = (
        "n features trained on m neurons leave about n²/(4m) neurons polysemantic (Lecomte "
        "et al. 2023, incidental polysemanticity): a line of slope -1 on log-log axes; the "
        "features that share a neuron have opposite signs."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, self.title, "m (neurons)", "polysemantic neurons")
        # a figure meant for papers: a legend as legible as the tick labels
        p.legend.opts["labelTextSize"] = "10pt"
        self.plot = p
        self.prediction = p.plot(pen=pen(RED, DASH), name="prediction n²/(4m)")
        self.runs = p.plot(
            pen=None,
            symbol="o",
            symbolSize=6,
            symbolPen=None,
            symbolBrush=pg.mkBrush(*RUN_BRUSH),
            name="runs",
        )
        self.error_bars = pg.ErrorBarItem(pen=pen(BLUE))
        p.addItem(self.error_bars)
        self.means = p.plot(
            pen=None,
            symbol="o",
            symbolSize=7,
            symbolPen=pen(BLUE),
            symbolBrush=pg.mkBrush(BLUE),
            name="mean ± 1 std over seeds (sample std)",
        )
        self.means.setZValue(5)
        # a second line under the plot: the collisions' signs (the paper's other claim)
        self.note = self.graphics.addLabel("", row=1, col=0, size="8pt", color=LABEL_COLOR)
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.log_axes = self.add_toggle(
            "log axes",
            "Log-log axes (runs with no polysemantic neuron cannot be drawn on them: the legend counts them)",
            checked=True,
        )
        self.rows: list[SweepRow] = []
        self.n: int | None = None
        self.m_values: tuple[int, ...] = ()
        self.zero_runs = 0
        self.summary = None  # the SweepSummary drawn (None without rows)
        self._runs_label = ""
        self.apply_toggles()
        self._draw()

    # --- API ------------------------------------------------------------------------------
    def show_rows(
        self, rows: Sequence[SweepRow], n: int | None = None, m_values: Sequence[int] | None = None
    ) -> None:
        """Draw these rows (all of them, not just new ones). ``n`` and ``m_values`` (the
        sweep's plan) let the prediction line span the whole sweep before its runs end."""
        self.rows = list(rows)
        if n is None and self.rows:
            n = self.rows[0].n
        self.n = int(n) if n is not None else None
        self.m_values = tuple(sorted({int(m) for m in m_values})) if m_values else ()
        self._draw()

    # --- drawing --------------------------------------------------------------------------
    def apply_toggles(self) -> None:
        log = self.log_axes.isChecked()
        self.plot.setLogMode(x=log, y=log)

    @QtCore.Slot(bool)
    def _toggled(self, _checked: bool) -> None:
        self.apply_toggles()
        self.reset_ranges()
        self._draw()

    def _set_ticks(self, all_m: list[int], ys: np.ndarray, log: bool) -> None:
        """pyqtgraph labels only the decades of a log axis, and a sweep spans about one:
        label the swept m and 1-2-5 steps of the counts instead."""
        bottom, left = self.plot.getAxis("bottom"), self.plot.getAxis("left")
        if not log:
            bottom.setTicks(None)
            left.setTicks(None)
            return
        xt = log_ticks(min(all_m), max(all_m), all_m) if all_m else []
        ys = ys[np.isfinite(ys) & (ys > 0)]
        yt = log_ticks(float(ys.min()) / 2.0, float(ys.max()) * 2.0) if ys.size else []
        bottom.setTicks([[(math.log10(v), _tick_text(v)) for v in xt], []] if xt else None)
        left.setTicks([[(math.log10(v), _tick_text(v)) for v in yt], []] if yt else None)

    def _draw(self) -> None:
        log = self.log_axes.isChecked()
        rows = self.rows
        n = self.n
        ms = np.array([r.m for r in rows], dtype=float)
        counts = np.array([r.polysemantic for r in rows], dtype=float)
        all_m = sorted(set(self.m_values) | {int(m) for m in ms})

        # the prediction, over the swept m (a single m gets a short stretch around it)
        if n is not None and all_m:
            lo, hi = float(all_m[0]), float(all_m[-1])
            if lo == hi:
                lo, hi = lo / math.sqrt(2.0), hi * math.sqrt(2.0)
            x = np.geomspace(lo, hi, 64)
            self.prediction.setData(x, n * n / (4.0 * x))
        else:
            self.prediction.setData([], [])

        set_curve(self.runs, ms, counts, positive=log)
        self.zero_runs = int(np.count_nonzero(counts == 0))

        if rows:
            s = summarize(rows)
            self.summary = s
            self._draw_bars(s.m, s.mean, s.std, counts, log)
            set_curve(self.means, s.m, s.mean, positive=log)
            opposite, same = s.opposite_pairs, s.same_pairs
        else:
            self.summary = None
            self.error_bars.setData(x=None, y=None, top=None, bottom=None)
            self.means.setData([], [])
            opposite = same = 0

        # legend and the note under the plot: text only when it changes (layout is slow)
        if log and self.zero_runs:
            runs_label = f"runs ({self.zero_runs} of {len(rows)} with none: not shown on log axes)"
        else:
            runs_label = f"runs ({len(rows)})" if rows else "runs"
        if runs_label != self._runs_label:
            self._runs_label = runs_label
            self.plot.legend.set_label(self.runs, runs_label)
        if rows:
            seeds = len({r.seed for r in rows})
            note = (
                f"colliding pairs (features active on the same neuron): {opposite} of opposite "
                f"sign, {same} of equal sign · {plural(len(rows), 'run')}, "
                f"{plural(len(all_m), 'value')} of m, {plural(seeds, 'seed')}"
            )
            unsettled = sum(not r.settled for r in rows)
            if unsettled:  # stopped too early: the counts were still changing
                note += f" · {unsettled} of {plural(len(rows), 'run')} not settled: train longer"
        elif n is not None:
            note = "no runs yet"
        else:
            note = ""
        if note != self.note.text:
            self.note.setText(note, color=LABEL_COLOR)
        title = self.title if n is None else f"{self.title} (n = {n})"
        if self.plot.titleLabel.text != title:
            self.plot.setTitle(title)

        _, pred_y = self.prediction.getOriginalDataset()
        ys = np.concatenate(
            [
                counts,
                np.asarray(pred_y if pred_y is not None else [], float),
                self.summary.mean if self.summary is not None else [],
            ]
        )
        self._set_ticks(all_m, ys, log)
        self._force_range = True
        self._manage_ranges()

    def _draw_bars(self, m, mean, std, counts, log: bool) -> None:
        """Mean +- std per m. ErrorBarItem has no log mode: on log axes its coordinates are
        the log10 of the values, and a bar reaching zero or below ends under the lowest
        point drawn (it cannot reach zero)."""
        if log:
            keep = mean > 0
            m, mean, std = m[keep], mean[keep], std[keep]
            if not m.size:
                self.error_bars.setData(x=None, y=None, top=None, bottom=None)
                return
            shown = np.concatenate([counts[counts > 0], mean])
            floor = 0.5 * float(shown.min())
            low = np.where(mean - std > 0, mean - std, floor)
            y = np.log10(mean)
            top = np.log10(mean + std) - y
            bottom = y - np.log10(np.minimum(low, mean))
            x = np.log10(m)
            beam = 0.04
        else:
            x, y, top, bottom = m, mean, std, std
            span = float(m.max() - m.min()) if m.size > 1 else float(m.max())
            beam = 0.02 * span
        self.error_bars.setData(
            x=np.asarray(x, float),
            y=np.asarray(y, float),
            top=np.asarray(top, float),
            bottom=np.asarray(bottom, float),
            beam=beam,
        )
