"""The sweep's figure: polysemantic neurons against m, as in Lecomte et al. (2023).

Each run is a faint point, the mean over seeds per m a larger square joined by a line, with
+-1 standard deviation error bars (capped where the bound is real; on log axes a lower
bound at or below zero is cut at the axis and marked with an open triangle instead), and
the paper's estimate n^2/(4m) a dashed line over the swept m. Under the plot: the
settings, what the bars are, the fitted log-log slope beside the prediction's -1, the
colliding pairs, and, for a sweep cut short, how many runs and which m it holds. Used live by
the GUI (rows arrive one run at a time); the exported figure is matplotlib's (figures/interference/sweep.py).
A plain Panel: it draws rows, not snapshots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

from sparsity_gui.core.interference.axes import rows_settings
from sparsity_gui.core.interference.sweep import BARS, PREDICTED_SLOPE, SweepRow, summarize
from sparsity_gui.core.text import plural
from sparsity_gui.plots.base import DASH, DOT, RED, Panel, pen
from sparsity_gui.plots.curves import set_curve
from sparsity_gui.plots.legend import refit_to_views, tick_text_size
from sparsity_gui.plots.ticks import log_ticks, tick_text

RUN_BRUSH = (31, 119, 180, 90)  # BLUE, faint: overlapping seeds show as darker points
LABEL_COLOR = "#333333"
MEAN_COLOR = "#0b3d6b"  # the means: a darker blue than the runs' points


def minus(text: str) -> str:
    """A number's text with a typographic minus sign."""
    return text.replace("-", "−")


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
        for side in ("left", "bottom"):  # counts: no unit prefix ("(x0.001)" on 0 … 0.004)
            p.getAxis(side).enableAutoSIPrefix(False)
        self.plot = p
        self.prediction = p.plot(pen=pen(RED, DASH), name="prediction n²/(4m), slope −1")
        self.runs = p.plot(
            pen=None,
            symbol="o",
            symbolSize=6,
            symbolPen=None,
            symbolBrush=pg.mkBrush(*RUN_BRUSH),
            name="runs",
        )
        # the bars: upper halves and real lower bounds capped; a lower bound at or below
        # zero (log axes) uncapped, down to the axis, ending in an open triangle
        self.upper_bars = pg.ErrorBarItem(pen=pen(MEAN_COLOR))
        self.lower_bars = pg.ErrorBarItem(pen=pen(MEAN_COLOR))
        self.open_bars = pg.ErrorBarItem(pen=pen(MEAN_COLOR, DOT))
        for item in (self.upper_bars, self.lower_bars, self.open_bars):
            p.addItem(item)
        self.means = p.plot(
            pen=pen(MEAN_COLOR),
            symbol="s",
            symbolSize=10,
            symbolPen=pg.mkPen("w", width=1),
            symbolBrush=pg.mkBrush(MEAN_COLOR),
            name="mean over seeds ± 1 SD",
        )
        self.means.setZValue(5)
        self.open_ends = pg.ScatterPlotItem(
            symbol="t", size=11, pen=pen(MEAN_COLOR), brush=pg.mkBrush(255, 255, 255)
        )
        self.open_ends.setZValue(6)
        p.addItem(self.open_ends)
        self._open_entry = False  # the open triangle's legend entry, only when one is drawn
        # under the plot: settings, bars, slope, collisions, completeness
        self.note = self.graphics.addLabel("", row=1, col=0, size=tick_text_size(p), color=LABEL_COLOR)
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.log_axes = self.add_toggle(
            "log axes",
            "Log-log axes (runs with no polysemantic neuron cannot be drawn on them: the legend counts them)",
            checked=True,
        )
        self.rows: list[SweepRow] = []
        self.n: int | None = None
        self.m_values: tuple[int, ...] = ()
        self.planned_runs: int | None = None
        self.cancelled = False
        self.open_m: np.ndarray = np.zeros(0)  # the m whose lower bar reaches <= 0 (log axes)
        self.zero_runs = 0
        self.summary = None  # the SweepSummary drawn (None without rows)
        self._runs_label = ""
        self.apply_toggles()
        self._draw()

    # --- API ------------------------------------------------------------------------------
    def show_rows(
        self,
        rows: Sequence[SweepRow],
        n: int | None = None,
        m_values: Sequence[int] | None = None,
        planned_runs: int | None = None,
        cancelled: bool = False,
    ) -> None:
        """Draw these rows (all of them, not just new ones). ``n`` and ``m_values`` (the
        sweep's plan) let the prediction line span the whole sweep before its runs end;
        with ``planned_runs`` the figure says when it holds fewer runs than planned (and
        with ``cancelled``, that the sweep was stopped)."""
        self.rows = list(rows)
        self.planned_runs = planned_runs
        self.cancelled = cancelled
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
        bottom.setTicks([[(math.log10(v), tick_text(v)) for v in xt], []] if xt else None)
        left.setTicks([[(math.log10(v), tick_text(v)) for v in yt], []] if yt else None)

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
        else:
            self.summary = None
            self._draw_bars(np.zeros(0), np.zeros(0), np.zeros(0), counts, log)
            self.means.setData([], [])

        # legend and the note under the plot: text only when it changes (layout is slow)
        if log and self.zero_runs:
            runs_label = f"runs ({self.zero_runs} of {len(rows)} at zero: not shown)"
        else:
            runs_label = f"runs ({len(rows)})" if rows else "runs"
        if runs_label != self._runs_label:
            self._runs_label = runs_label
            self.plot.legend.set_label(self.runs, runs_label)
        note = self.note_html(n)
        if note != self.note.text:
            self.note.setText(note, color=LABEL_COLOR)
            self.note.item.setTextWidth(-1)  # wrapped again at the panel's width
            self._wrap_note()
        self._legend_open_entry(bool(self.open_m.size))
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
        the log10 of the values. A lower bound mean - std <= 0 has no place on a log axis:
        its bar is cut where the axis ends (under the lowest point drawn), uncapped and
        dotted, and ends in an open triangle: 'goes further down'."""
        empty = dict(x=None, y=None, top=None, bottom=None)
        self.open_m = np.zeros(0)
        if log:
            keep = mean > 0
            m, mean, std = m[keep], mean[keep], std[keep]
        if not m.size:
            for item in (self.upper_bars, self.lower_bars, self.open_bars):
                item.setData(**empty)
            self.open_ends.setData([], [])
            return
        if log:
            x, y = np.log10(m), np.log10(mean)
            top = np.log10(mean + std) - y
            real = mean - std > 0
            shown = np.concatenate([counts[counts > 0], mean])
            floor = 0.5 * float(shown.min())
            bottom = np.where(real, y - np.log10(np.where(real, mean - std, 1.0)), y - np.log10(floor))
            beam = 0.04
        else:
            x, y, top, bottom = m, mean, std, std
            real = np.ones(m.shape, bool)
            span = float(m.max() - m.min()) if m.size > 1 else float(m.max())
            beam = 0.02 * span
        x, y, top, bottom = (np.asarray(a, float) for a in (x, y, top, bottom))
        self.upper_bars.setData(x=x, y=y, top=top, bottom=None, beam=beam)
        if real.any():
            self.lower_bars.setData(x=x[real], y=y[real], top=None, bottom=bottom[real], beam=beam)
        else:
            self.lower_bars.setData(**empty)
        if (~real).any():
            self.open_bars.setData(x=x[~real], y=y[~real], top=None, bottom=bottom[~real], beam=0.0)
            self.open_ends.setData(x[~real], (y - bottom)[~real])
            self.open_m = np.asarray(m[~real], float)
        else:
            self.open_bars.setData(**empty)
            self.open_ends.setData([], [])

    def _legend_open_entry(self, wanted: bool) -> None:
        """The open triangle's legend entry, present only when one is drawn."""
        if wanted == self._open_entry:
            return
        self._open_entry = wanted
        if wanted:
            self.plot.legend.addItem(self.open_ends, "mean − SD ≤ 0: bar cut at the axis")
        else:
            self.plot.legend.removeItem(self.open_ends)

    # --- the text under the plot ------------------------------------------------------------
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._wrap_note()

    def _wrap_note(self) -> None:
        """The text under the plot wraps at the panel's width (a long line would widen the
        plot past the panel and be cut off)."""
        width = max(self.graphics.viewport().width() - 16, 100)
        item = self.note.item
        if item.textWidth() != width:
            item.setTextWidth(width)
            self.note.updateMin()
            refit_to_views(self.note)

    def settings_text(self) -> str:
        """The settings of the rows drawn, as the settings table names them (rows_settings:
        several values joined by '/'), and the seeds per m."""
        seeds = len({r.seed for r in self.rows})
        return " · ".join([*rows_settings(self.rows), f"{plural(seeds, 'seed')} per m"])

    def slope_text(self) -> str:
        s = self.summary
        if s is None or not math.isfinite(s.slope):
            return f"log-log slope: too few m with runs to fit · n²/(4m): {minus(f'{PREDICTED_SLOPE:g}')}"
        return (
            f"fitted log-log slope of the means: {minus(f'{s.slope:.2f}')} (least squares over "
            f"{plural(s.slope_points, 'value')} of m) · n²/(4m): {minus(f'{PREDICTED_SLOPE:g}')}"
        )

    def note_html(self, n: int | None) -> str:
        """The lines under the plot (HTML: lines joined by <br>)."""
        rows = self.rows
        if not rows:
            return "no runs yet" if n is not None else ""
        s = self.summary
        ms = sorted({r.m for r in rows})
        lines = [
            f"{self.settings_text()} · bars: {BARS}",
            self.slope_text(),
            f"colliding pairs (features active on the same neuron): {s.opposite_pairs} of opposite "
            f"sign, {s.same_pairs} of equal sign · {plural(len(rows), 'run')}, "
            f"{plural(len(ms), 'value')} of m",
        ]
        unsettled = sum(not r.settled for r in rows)
        if unsettled:  # stopped too early: the counts were still changing
            lines[-1] += f" · {unsettled} of {plural(len(rows), 'run')} not settled: train longer"
        if self.planned_runs is not None and len(rows) < self.planned_runs:
            missing = [m for m in self.m_values if m not in set(ms)]
            why = "cancelled" if self.cancelled else "incomplete"
            text = (
                f"{why.upper()}: {len(rows)} of {self.planned_runs} planned runs; "
                f"m with runs: {', '.join(str(m) for m in ms)}"
            )
            if missing:
                text += f" (none yet at m = {', '.join(str(m) for m in missing)})"
            lines.append(f"<span style='color: {RED}'>{text}</span>")
        return "<br>".join(lines)
