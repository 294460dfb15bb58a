"""One model of a sweep's cells when it varies more than m (core/interference/axes.py),
drawn by both its live panels (plots/interference/grid.py) and its exported figures
(figures/interference/grid.py):

- which figures draw the grid (`grid_figures`): the curves, and the heatmap with two
  varied options;
- where each cell sits (`GridLayout`): the first varied option across, the combinations
  of the others down (a series each, named in full), n²/(4m) per cell;
- what a readout says per cell (`GridCells`): the runs of each cell and their median,
  10/90 % quantiles, mean and SD over seeds (core/cells.CellTable, sweep.json's numbers),
  whether the values want a log scale, and the text written in each cell.

Any column of READOUTS (axes.py) is a readout here: a new one needs its entry there, and
here only when it is drawn on a log scale (LOG_READOUTS) or names its runs without a
value otherwise than "without a value" (MISSING_TEXT). Qt-free, matplotlib-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from sparsity_gui.core.cells import CellTable
from sparsity_gui.core.interference.axes import (
    DEFAULT_READOUT,
    KNOT_AXES,
    TEXT_AXES,
    check_readout,
    fixed_settings,
    readout_values,
    row_value,
    setting_text,
    value_text,
)
from sparsity_gui.core.text import plural

CURVES, HEATMAP = "curves", "heatmap"
BAND = "10–90 % of seeds"
CELL_TEXT_MAX = 120  # cells beyond which a heatmap writes no value in them
# readouts drawn on a log scale when their medians span a decade or more
LOG_READOUTS = ("steps_to_sparse",)
# how a readout names its runs without a value (a run that never became sparse)
MISSING_TEXT = {"steps_to_sparse": "never sparse"}


def grid_figures(spec: Any) -> tuple[str, ...]:
    """The figures a sweep of ``spec`` draws as a grid: none for m alone (its count
    against m), the curves when it varies another option, the heatmap too with exactly two."""
    varied = spec.varied
    if not varied or varied == ("m",):
        return ()
    return (CURVES, HEATMAP) if len(varied) == 2 else (CURVES,)


def missing_text(readout: str) -> str:
    return MISSING_TEXT.get(readout, "without a value")


def spans_a_decade(values: Any) -> bool:
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return bool(v.size and v.min() > 0 and v.max() / v.min() >= 10)


def cell_text(v: float) -> str:
    """A cell's value, short: whole numbers below 10^5 as they are (936 steps), others
    with three significant digits (0.81, 1.2e+05) unless that would round a number of
    hundreds (137.5 is 138)."""
    if abs(v) < 1e5 and abs(v - round(v)) < 1e-9 * max(1.0, abs(v)):
        return f"{v:.0f}"
    if 100 <= abs(v) < 1e5:
        return f"{v:.0f}"
    return f"{v:.3g}"


def fixed_text(spec: Any, math: bool = False) -> str:
    """The settings every run of ``spec`` shares, n first and the seeds last; ``math``:
    n and m in matplotlib's mathtext, as a figure's title says them."""
    n = f"$n = {spec.base.n}$" if math else f"n = {spec.base.n}"
    parts = [f"${text}$" if math and axis == "m" else text for axis, text in fixed_settings(spec)]
    return " · ".join([n, *parts, plural(spec.seeds, "seed")])


@dataclass(frozen=True)
class GridLayout:
    """Where each cell of a sweep sits: the first varied option across (its values as
    rows keep them, in the plan's order), the combinations of the others down, and
    n²/(4m) per cell. Computed once per sweep (each cell's run is built)."""

    x_axis: str
    others: tuple[str, ...]
    x_values: tuple
    combos: tuple[tuple, ...]
    predicted: np.ndarray  # (combos, x)
    planned_runs: int

    @classmethod
    def of(cls, spec: Any) -> GridLayout:
        varied = list(spec.varied) or ["m"]
        x_axis, others = varied[0], tuple(varied[1:])
        x_values: dict = {}
        combos: dict = {}
        predicted: dict[tuple, float] = {}
        cells = spec.cells()
        for cell in cells:
            run = spec.run_of(cell, spec.base.seed)
            x = row_value(run, x_axis)
            combo = tuple(row_value(run, a) for a in others)
            x_values.setdefault(x, None)
            combos.setdefault(combo, None)
            predicted[(combo, x)] = run.prediction
        pred = np.array([[predicted.get((c, x), np.nan) for x in x_values] for c in combos], float)
        return cls(x_axis, others, tuple(x_values), tuple(combos), pred, len(cells) * spec.seeds)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.combos), len(self.x_values))

    @property
    def x_numeric(self) -> bool:
        """Whether the x values are numbers (else categories: an optimizer, a schedule)."""
        return self.x_axis not in TEXT_AXES and self.x_axis not in KNOT_AXES

    @property
    def x_log(self) -> bool:
        """Whether the x axis is logarithmic: numbers spanning a decade or more."""
        return self.x_numeric and len(self.x_values) > 1 and spans_a_decade([float(v) for v in self.x_values])

    def x_labels(self) -> list[str]:
        return [value_text(self.x_axis, v) for v in self.x_values]

    def y_labels(self) -> list[str]:
        """The heatmap's rows: the second varied option's values ([""] without one)."""
        return [value_text(self.others[0], c[0]) for c in self.combos] if self.others else [""]

    def series_labels(self) -> list[str]:
        """Each combination named in full, "" for the one series of a single varied option,
        each setting as a pin's name writes it (its row): "optimizer = adamw", "l1 =
        1.0e-3, optimizer = adamw"."""

        def name(combo: tuple) -> str:
            return ", ".join(setting_text(a, v) for a, v in zip(self.others, combo, strict=True))

        return [name(c) for c in self.combos]

    @cached_property
    def _index(self) -> tuple[dict, dict]:
        return {v: i for i, v in enumerate(self.x_values)}, {c: i for i, c in enumerate(self.combos)}

    def place(self, row: Any) -> tuple[int, int] | None:
        """A row's cell (series, x), None for a row outside the plan."""
        x_index, s_index = self._index
        x = x_index.get(getattr(row, self.x_axis))
        s = s_index.get(tuple(getattr(row, a) for a in self.others))
        return None if x is None or s is None else (s, x)


@dataclass(frozen=True)
class GridCells:
    """A readout per cell of a sweep (its ``layout``): ``table`` holds each cell's runs and
    their statistics over seeds; ``without_value`` counts the finished runs with no value
    of the readout (never sparse) among all ``rows``."""

    layout: GridLayout
    readout: str
    table: CellTable
    without_value: int
    rows: int

    # the layout's and the table's parts by name, as both views read them
    x_axis = property(lambda self: self.layout.x_axis)
    others = property(lambda self: self.layout.others)
    x_values = property(lambda self: self.layout.x_values)
    combos = property(lambda self: self.layout.combos)
    predicted = property(lambda self: self.layout.predicted)
    runs = property(lambda self: self.table.runs)
    median = property(lambda self: self.table.median)
    p10 = property(lambda self: self.table.p10)
    p90 = property(lambda self: self.table.p90)

    @property
    def value_log(self) -> bool:
        """Whether the readout's values are drawn on a log scale: a LOG_READOUTS whose
        medians span a decade or more."""
        return self.readout in LOG_READOUTS and spans_a_decade(self.median)

    @property
    def missing(self) -> str:
        return missing_text(self.readout)

    @property
    def hatched(self) -> np.ndarray:
        """The cells with runs but no value (never sparse): grey, hatched."""
        return (self.runs > 0) & ~np.isfinite(self.median)

    def texts(self) -> list[list[str]]:
        """The text written in each cell, (series, x): its median, short (cell_text), ""
        without one; none at all past CELL_TEXT_MAX cells."""
        if self.median.size > CELL_TEXT_MAX:
            return [[""] * self.median.shape[1] for _ in self.median]
        return [[cell_text(float(v)) if np.isfinite(v) else "" for v in row] for row in self.median]


def grid_cells(layout: GridLayout, rows: Sequence[Any], readout: str = DEFAULT_READOUT) -> GridCells:
    """The cells of a sweep (its ``layout``) with the ``readout`` of ``rows`` (SweepRows)
    summarised (see GridCells); a row whose cell is not in the plan is left out."""
    readout = check_readout(readout)
    rows = list(rows)
    values = readout_values(rows, readout) if rows else np.zeros(0)
    table = CellTable.of([layout.place(r) for r in rows], values, layout.shape)
    return GridCells(layout, readout, table, int(np.count_nonzero(~np.isfinite(values))), len(rows))
