"""A grid's cells, whichever model's: each run placed in its cell, a series down by an x
value across, and each cell's runs summarised over seeds (cell_stats: the numbers
sweep.json and scaling.json hold). A model says where its runs sit
(core/interference/cells.py for a sweep, core/note/scaling.py for the scaling grid); its
live panels and its exported figures both draw this one table. Qt-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# what a cell holds of its runs' values, each a (series, x) array (NaN without a value)
STATISTICS = ("median", "p10", "p90", "mean", "std")


def cell_stats(values: Any) -> dict[str, Any]:
    """A cell's runs summarised: the runs with a value, the median and the 10 and 90 %
    quantiles (numpy's linear interpolation), the mean and the sample standard deviation
    (0 for one run); None (JSON's null) where no run has a value."""
    v = np.asarray(values, float)
    ok = v[np.isfinite(v)]
    if not ok.size:
        return {"runs_with_value": 0, **dict.fromkeys(STATISTICS)}
    return {
        "runs_with_value": int(ok.size),
        "median": float(np.median(ok)),
        "p10": float(np.quantile(ok, 0.1)),
        "p90": float(np.quantile(ok, 0.9)),
        "mean": float(ok.mean()),
        "std": float(ok.std(ddof=1)) if ok.size > 1 else 0.0,
    }


@dataclass(frozen=True)
class CellTable:
    """Per cell of a grid, (series, x): the runs in it, those with a value, and the
    STATISTICS of their values over seeds (NaN where no run has one)."""

    runs: np.ndarray  # ints
    with_value: np.ndarray  # ints
    median: np.ndarray
    p10: np.ndarray
    p90: np.ndarray
    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def of(
        cls,
        places: Sequence[tuple[int, int] | None],
        values: Sequence[float] | np.ndarray,
        shape: tuple[int, int],
    ) -> CellTable:
        """The table of runs whose cells are ``places`` ((series, x) indices, None for a
        run outside the grid) and whose values are ``values`` (NaN: none)."""
        members: dict[tuple[int, int], list[float]] = {}
        for place, value in zip(places, values, strict=True):
            if place is not None:
                members.setdefault(place, []).append(float(value))
        runs = np.zeros(shape, int)
        with_value = np.zeros(shape, int)
        stats = {name: np.full(shape, np.nan) for name in STATISTICS}
        for place, vals in members.items():
            runs[place] = len(vals)
            summary = cell_stats(vals)
            with_value[place] = summary["runs_with_value"]
            if summary["runs_with_value"]:
                for name in STATISTICS:
                    stats[name][place] = summary[name]
        return cls(runs, with_value, **stats)

    @property
    def shape(self) -> tuple[int, int]:
        return self.runs.shape
