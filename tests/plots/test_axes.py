"""Axis (its bounding rect kept between changes) against pyqtgraph's AxisItem: the same
pixels on screen through everything that moves an axis or its grid (range changes, a
resize, a wider axis, the grid off and on, a longer tick, a log axis), cached as the
panels cache their axes."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtWidgets
from screen_pixels import screen_rgb, white_plot

from sparsity_gui.plots.axes import Axis, axes


def _plot(qtbot, ours: bool) -> tuple[pg.PlotWidget, pg.PlotItem]:
    widget, plot = white_plot(qtbot, 420, 300, axisItems=axes() if ours else None)
    plot.showGrid(x=True, y=True, alpha=0.25)
    for side in ("left", "bottom", "top", "right"):
        plot.getAxis(side).setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
    plot.plot(np.linspace(0, 10, 50), np.sin(np.linspace(0, 10, 50)), pen=pg.mkPen("#1f77b4"))
    return widget, plot


def _image(widget: pg.PlotWidget) -> np.ndarray:
    return screen_rgb(widget, whole=True)  # the axes too


STEPS = [
    ("a range change", lambda w, p: p.setXRange(2, 7, padding=0)),
    ("a y range change", lambda w, p: p.setYRange(-3, 3, padding=0)),
    ("a resize", lambda w, p: w.resize(500, 340)),
    ("a wider left axis", lambda w, p: p.getAxis("left").setWidth(70)),
    ("a new axis title", lambda w, p: p.setLabel("left", "a much longer axis title")),
    ("the grid off", lambda w, p: p.showGrid(x=False, y=False)),
    ("the grid on", lambda w, p: p.showGrid(x=True, y=True, alpha=0.5)),
    ("ticks out", lambda w, p: p.getAxis("bottom").setStyle(tickLength=-8)),
    ("a log y axis", lambda w, p: p.setLogMode(y=True)),
    ("a smaller window", lambda w, p: w.resize(380, 260)),
]


@pytest.mark.parametrize("upto", range(1, len(STEPS) + 1), ids=[s[0] for s in STEPS])
def test_it_draws_what_pyqtgraphs_axis_draws(qtbot, upto):
    (w1, p1), (w2, p2) = _plot(qtbot, ours=True), _plot(qtbot, ours=False)
    assert isinstance(p1.getAxis("left"), Axis) and not isinstance(p2.getAxis("left"), Axis)
    for name, step in STEPS[:upto]:
        for w, p in ((w1, p1), (w2, p2)):
            step(w, p)
            _image(w)  # each step drawn: the next is a repaint over it
        for side in ("left", "bottom"):  # the kept rect is the one pyqtgraph works out now
            axis = p1.getAxis(side)
            assert axis.boundingRect() == pg.AxisItem.boundingRect(axis), f"{side} after {name}"
    np.testing.assert_array_equal(_image(w1), _image(w2))
