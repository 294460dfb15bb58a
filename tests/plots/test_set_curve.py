"""set_curve's fast path writes a live curve's data without PlotDataItem.setData: what the
curve then holds, draws and reports as its bounds must be what setData leaves, for every
kind of data a panel gives it (the reference here is pyqtgraph's own setData on a twin)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from sparsity_gui.plots.curves import ClipAwareCurve, finite_xy, set_broken_curve, set_curve

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
    assert fast.curve.getPath() == reference.curve.getPath()  # what is drawn
    assert fast.dataRect() == reference.dataRect()
    # the mapped data's rect (set_curve hands it over; the twin works it out)
    rects = [None if d is None else d.dataRect() for d in (fast._datasetMapped, reference._datasetMapped)]
    assert rects[0] == rects[1]
    assert fast.curve.isVisible() == reference.curve.isVisible()
    # drawn in the item's pen (a curve never set through setData had pyqtgraph's white)
    assert fast.curve.opts["pen"] == reference.curve.opts["pen"] == pg.mkPen(fast.opts["pen"])


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


def _broken_reference(x, y, steps, positive):
    """The rows a broken curve draws, worked out row by row: finite (and positive) rows,
    with a NaN row where ``steps`` jumps: it differs from the previous kept row's at the
    same x, or between two kept stretches where it stays constant (a ramp, steps that
    change on every row, is one curve)."""
    kept = [
        (xi, yi, si)
        for xi, yi, si in zip(x, y, steps, strict=True)
        if np.isfinite(xi) and np.isfinite(yi) and not (positive and yi <= 0)
    ]
    xs, ys = [], []
    for i, (xi, yi, si) in enumerate(kept):
        if i > 0 and si != kept[i - 1][2]:
            same_x = xi == kept[i - 1][0]
            flat_before = i < 2 or kept[i - 2][2] == kept[i - 1][2]
            flat_after = i + 1 >= len(kept) or kept[i + 1][2] == si
            if same_x or (flat_before and flat_after):
                xs.append(np.nan)
                ys.append(np.nan)
        xs.append(xi)
        ys.append(yi)
    return np.array(xs, float), np.array(ys, float)


THREE = np.where(X < 10, 1.0, np.where(X < 30, 2.0, 3.0))
BROKEN = {
    "no change": (X, np.sin(X) + 2.0, np.ones_like(X), (False, False), False),
    "two changes": (X, np.sin(X) + 2.0, THREE, (False, False), False),
    "log y, a change and gaps at y <= 0": (X, np.sin(X), np.where(X < 25, 1.0, 2.0), (False, True), True),
    # a warm-up: λ rises on every row, then stays; then a jump sampled twice at one instant
    "a ramp, then a jump at a repeated instant": (
        np.concatenate([X[:30], X[29:]]),
        np.concatenate([np.sin(X[:30]), np.sin(X[29:]) + 1.0]) + 2.0,
        np.concatenate([np.minimum(X[:30], 10.0), np.full(X.size - 29, 20.0)]),
        (False, False),
        False,
    ),
    "non-finite rows at a change": (
        X,
        np.where(np.abs(X - 20) < 1, np.nan, X),
        np.where(X < 20, 1.0, 2.0),
        (False, False),
        False,
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_curve_leaves_what_set_data_leaves(qtbot, name):
    x, y, steps, log, positive = BROKEN[name]
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    pen = pg.mkPen("#d62728", width=1)
    fast, reference = (
        widget.getPlotItem().plot(pen=pen, connect="finite"),
        widget.getPlotItem().plot(pen=pen, connect="finite"),
    )
    for item in (fast, reference):
        item.setLogMode(*log)
    for scale in (1.0, 2.0):
        set_broken_curve(fast, x * scale, y * scale, steps, positive)
        reference.setData(*_broken_reference(x * scale, y * scale, steps, positive), connect="finite")
        _same(fast, reference)
        cuts = int(np.count_nonzero(np.isnan(fast.getOriginalDataset()[0])))
        assert cuts == int(np.count_nonzero(np.isnan(reference.getOriginalDataset()[0])))


def test_a_static_curve_is_set_again_on_a_range_change_only_where_pyqtgraph_clips(qtbot):
    """A pinned run's curve keeps its data when the y range moves (pyqtgraph re-set every
    curve's data then), and shows what a plain curve shows in every range, including a zoom
    so deep that pyqtgraph clips the values far outside the view, and back out."""
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    widget.show()
    plot = widget.getPlotItem()
    pen = pg.mkPen("#1f77b4", width=1)
    static, plain = ClipAwareCurve(pen=pen), pg.PlotDataItem(pen=pen)
    for item in (static, plain):
        plot.addItem(item)
        set_curve(item, X, np.sin(X))
    sets = []
    set_data = static.curve.setData
    static.curve.setData = lambda *a, **k: (sets.append(1), set_data(*a, **k))[1]
    view = plot.getViewBox()

    def shows_the_same():
        for got, want in zip(static.getData(), plain.getData(), strict=True):
            np.testing.assert_array_equal(got, want)
        for got, want in zip(static.curve.getData(), plain.curve.getData(), strict=True):
            np.testing.assert_array_equal(got, want)

    for lo, hi in ((-2.0, 2.0), (-0.5, 3.0), (0.1, 0.2)):
        view.setYRange(lo, hi, padding=0)
        qtbot.wait(1)
    assert sets == []
    shows_the_same()
    # 2 high against 1e-8: more than 2 x dynamicRangeHyst x dynamicRangeLimit view heights
    hyst, limit = static.opts["dynamicRangeHyst"], static.opts["dynamicRangeLimit"]
    assert 2 * hyst * limit * 1e-8 < 2.0
    view.setYRange(0.0, 1e-8, padding=0)
    qtbot.wait(1)
    assert sets, "a zoom that clips sets the curve again"
    assert static.curve.getData()[1].max() < 1.0  # clipped, as the plain curve is
    shows_the_same()
    view.setYRange(-2.0, 2.0, padding=0)
    qtbot.wait(1)
    shows_the_same()
    np.testing.assert_array_equal(static.curve.getData()[1], np.sin(X))
