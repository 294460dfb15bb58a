"""set_curve's fast path writes a live curve's data without PlotDataItem.setData: what the
curve then holds, draws and reports as its bounds must be what setData leaves, for every
kind of data a panel gives it (the reference here is pyqtgraph's own setData on a twin)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from sparsity_gui.plots.curves import finite_xy, set_curve

rng = np.random.default_rng(3)
X = np.linspace(0.0, 50.0, 400)
CASES = {
    "plain": (X, np.sin(X), (False, False), False),
    "log x and y": (X + 1.0, np.exp(-X / 10.0), (True, True), True),
    "log y, gaps at y <= 0": (X, np.sin(X), (False, True), False),
    "non-finite rows": (np.where(X > 30, np.nan, X), np.where(X < 5, np.inf, X**2), (False, False), False),
    "far off-screen values": (X, np.where(X > 40, 1e300, X), (False, False), False),
    "one point": (X[:1], X[:1] + 2.0, (False, False), False),
    "unsorted x": (rng.permutation(X), X, (False, False), False),
}


def _twins(plot: pg.PlotItem, log: tuple[bool, bool]) -> tuple[pg.PlotDataItem, pg.PlotDataItem]:
    pen = pg.mkPen("#1f77b4", width=1)
    twins = plot.plot(pen=pen), plot.plot(pen=pen)
    for item in twins:
        item.setLogMode(*log)
    return twins


def _same(fast: pg.PlotDataItem, reference: pg.PlotDataItem) -> None:
    for got, want in zip(fast.getData(), reference.getData(), strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(fast.curve.getData(), reference.curve.getData(), strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(fast.getOriginalDataset(), reference.getOriginalDataset(), strict=True):
        np.testing.assert_array_equal(got, want)
    for axis in (0, 1):
        assert fast.dataBounds(axis) == reference.dataBounds(axis)
        # the curve's own bounds (set_curve hands them over; the twin works them out)
        assert fast.curve.dataBounds(axis) == reference.curve.dataBounds(axis)
    assert fast.curve.boundingRect() == reference.curve.boundingRect()
    assert fast.dataRect() == reference.dataRect()
    assert fast.curve.isVisible() == reference.curve.isVisible()


@pytest.mark.parametrize("name", list(CASES))
def test_the_fast_path_leaves_what_set_data_leaves(qtbot, name):
    x, y, log, positive = CASES[name]
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    fast, reference = _twins(widget.getPlotItem(), log)
    for scale in (1.0, 2.0):  # a first frame, then the next one over it
        set_curve(fast, x * scale, y * scale, positive)
        reference.setData(*finite_xy(x * scale, y * scale, positive))
        _same(fast, reference)
    widget.getPlotItem().getViewBox().autoRange()
    view = widget.getPlotItem().getViewBox()
    bounds = view.childrenBounds()
    assert all(np.isfinite(v) for pair in bounds if pair is not None for v in pair)


def test_a_curve_emptied_then_filled_again(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    fast, reference = _twins(widget.getPlotItem(), (False, False))
    for x, y in ((X, X), (X[:0], X[:0]), (X[:10], X[:10] ** 2)):
        set_curve(fast, x, y)
        reference.setData(x, y)
        _same(fast, reference)
