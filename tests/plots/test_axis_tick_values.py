"""Axis.tickValues (plots/axes.py, pyqtgraph's without np.isclose's overhead) gives exactly
the tick levels of pyqtgraph's AxisItem.tickValues: the same spacings and the same values,
float for float, over ranges of every size and sign, reversed ranges, scaled and log axes
and the panels' two tick levels."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from sparsity_gui.plots.axes import Axis


def _pair(side: str, log: bool, scale: float, levels: int | None) -> tuple[Axis, pg.AxisItem]:
    ours, theirs = Axis(side), pg.AxisItem(side)
    for axis in (ours, theirs):
        axis.setLogMode(log)
        axis.setScale(scale)
        if levels is not None:
            axis.setStyle(maxTickLevel=levels)
    return ours, theirs


def _ranges(rng: np.random.Generator, count: int) -> list[tuple[float, float, float]]:
    """(lo, hi, size px): a random centre and span over 24 decades, either order."""
    out = [(0.0, 1.0, 300.0), (0.0, 1000.0, 250.0), (-5.0, 5.0, 80.0), (2.0, 2.0 + 1e-9, 400.0)]
    for _ in range(count):
        span = 10.0 ** rng.uniform(-12, 12)
        centre = rng.normal() * span * 10.0 ** rng.uniform(-2, 3)
        lo, hi = centre - span / 2, centre + span / 2
        if rng.random() < 0.2:
            lo, hi = hi, lo
        out.append((lo, hi, float(rng.uniform(20, 1200))))
    return out


@pytest.mark.parametrize("side", ["bottom", "left"])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-3])
@pytest.mark.parametrize("levels", [None, 1])
def test_tick_values_are_pyqtgraphs(qapp, side, log, scale, levels):
    ours, theirs = _pair(side, log, scale, levels)
    rng = np.random.default_rng([len(side), int(log), int(scale == 1.0), levels or 0])  # a fixed seed a case
    ranges = _ranges(rng, 150)
    if log:  # a log axis's range is in decades
        ranges = [(lo % 40 - 20, lo % 40 - 20 + min(abs(hi - lo), 30) + 0.01, px) for lo, hi, px in ranges]
    for lo, hi, size in ranges:
        want = theirs.tickValues(lo, hi, size)
        got = ours.tickValues(lo, hi, size)
        assert got == want, (lo, hi, size)
        assert any(values for _spacing, values in want) or size < 100 or log
