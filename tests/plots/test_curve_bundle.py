"""CurveBundle (the tracked weights, one item) against what it replaces: one PlotDataItem
a curve, set through set_curve, in the same pens: the same pixels on screen on linear and
log y axes, with non-finite and non-positive values, through data changes and zooms; the
same data bounds for the ranges."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore
from screen_pixels import screen_rgb, white_plot

from sparsity_gui.plots.base import pen
from sparsity_gui.plots.curves import CurveBundle, add_curve, set_curve

COLOURS = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725", "#d62728"]


def _plot(qtbot, log_y: bool) -> tuple[pg.PlotWidget, pg.PlotItem]:
    widget, plot = white_plot(qtbot, 420, 300, left_axis_width=40)
    plot.setLogMode(y=log_y)
    return widget, plot


_image = screen_rgb


def _weights(seed: int, rows: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Decaying curves with the awkward values: zeros once dead, a NaN row, an inf."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 50, rows)
    ys = np.exp(-np.outer(t, rng.uniform(0.01, 0.2, len(COLOURS)))) * rng.uniform(0.2, 1.0, len(COLOURS))
    ys[rows // 2 :, 1] = 0.0  # a weight that died
    ys[10, 2] = np.nan
    ys[20, 3] = np.inf
    ys[30:40, 4] = -0.01  # below zero: not on a log axis
    return t, ys


def _pair(qtbot, log_y: bool):
    """The bundle in one plot, a PlotDataItem a curve in another, the same view."""
    w1, p1 = _plot(qtbot, log_y)
    bundle = CurveBundle()
    p1.addItem(bundle)
    bundle.set_pens(pen(c) for c in COLOURS)
    w2, p2 = _plot(qtbot, log_y)
    items = [add_curve(p2, pen=pen(c)) for c in COLOURS]
    return (w1, p1, bundle), (w2, p2, items)


def _set(bundle, items, t, ys, log_y):
    bundle.setData(t, ys)
    for item, y in zip(items, ys.T, strict=True):
        set_curve(item, t, y, positive=log_y)


@pytest.mark.parametrize("log_y", [False, True])
def test_it_draws_what_a_plotdataitem_a_curve_draws(qtbot, log_y):
    (w1, p1, bundle), (w2, p2, items) = _pair(qtbot, log_y)
    for step, seed in enumerate((1, 2, 3)):  # data change; a zoom in between
        t, ys = _weights(seed, rows=200 + 50 * step)
        _set(bundle, items, t, ys, log_y)
        lo, hi = (-3.0, 0.1) if log_y else (-0.05, 1.05)
        for plot in (p1, p2):
            plot.setXRange(0, 50 / (step + 1), padding=0)
            plot.setYRange(lo, hi, padding=0)
        ours, theirs = _image(w1), _image(w2)
        assert (ours != 255).any(axis=2).sum() > 500, "curves drawn"
        np.testing.assert_array_equal(ours, theirs)
        # new data in the same view (a frame): nothing of the old left behind
        _set(bundle, items, t, ys * 0.3, log_y)
        np.testing.assert_array_equal(_image(w1), _image(w2))
    # the same bounds, for the ranges
    for axis in (0, 1):
        want = [item.dataBounds(axis) for item in items]
        lo, hi = min(b[0] for b in want), max(b[1] for b in want)
        assert bundle.dataBounds(axis) == pytest.approx((lo, hi), rel=1e-12)
    # and the same points, as given and as drawn
    for k, item in enumerate(items):
        x, y = item.getData()
        np.testing.assert_array_equal(bundle.view_data(k)[0], x)
        np.testing.assert_allclose(bundle.view_data(k)[1], y, rtol=1e-15)


def test_log_mode_follows_the_plot_and_newest_points_are_checked_against_the_view(qtbot):
    (w1, p1, bundle), (w2, p2, items) = _pair(qtbot, log_y=False)
    t, ys = _weights(4)
    _set(bundle, items, t, ys, log_y=False)
    for plot in (p1, p2):
        plot.setLogMode(y=True)
    for item, y in zip(items, ys.T, strict=True):  # (the panel sets its curves again)
        set_curve(item, t, y, positive=True)
    for plot in (p1, p2):
        plot.setXRange(0, 50, padding=0)
        plot.setYRange(-3, 0.1, padding=0)
    np.testing.assert_array_equal(_image(w1), _image(w2))
    inside = QtCore.QRectF(QtCore.QPointF(-1, -20), QtCore.QPointF(60, 1))
    assert not bundle.left_view(inside)
    assert bundle.left_view(
        QtCore.QRectF(QtCore.QPointF(-1, -20), QtCore.QPointF(40, 1))
    )  # t = 50 is right of it
    bundle.setData(np.zeros(0), np.zeros((0, 3)))  # a run with no rows yet (or failed)
    assert bundle.curve_count == 3 and bundle.dataBounds(1) == (None, None) and bundle.boundingRect().isNull()
    bundle.setData(t, np.zeros((len(t), 0)))  # no curves: nothing drawn, nothing left behind
    for item in items:
        item.setData([], [])
    assert bundle.curve_count == 0 and bundle.dataBounds(0) == (None, None) and bundle.boundingRect().isNull()
    np.testing.assert_array_equal(_image(w1), _image(w2))
