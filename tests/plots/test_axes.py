"""Axis (its bounding rect kept between changes, its title set only when its text
changes) against pyqtgraph's AxisItem: the same
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
    ("a title with units", lambda w, p: p.setLabel("bottom", "time", units="s")),
    ("an SI prefix", lambda w, p: p.setXRange(0, 2e-6, padding=0)),
    ("the prefix gone", lambda w, p: p.setXRange(0, 8, padding=0)),
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


def test_its_title_is_set_again_only_when_its_text_changes(qtbot):
    """pyqtgraph sets an axis title's HTML on every range change; ours only when the text
    (with its SI prefix) changes, and then it says what pyqtgraph's says."""
    (w1, p1), (w2, p2) = _plot(qtbot, ours=True), _plot(qtbot, ours=False)
    for p in (p1, p2):
        p.setLabel("bottom", "time", units="s")
    title = p1.getAxis("bottom").label
    sets = []
    title.document().contentsChanged.connect(lambda: sets.append(1))
    for k in range(10):  # within one prefix: the text stays
        for p in (p1, p2):
            p.setXRange(0, 3 + k, padding=0)
    assert not sets
    for high, prefix in ((2e-6, "µs"), (5e-3, "ms"), (7.0, "(s)")):
        for p in (p1, p2):
            p.setXRange(0, high, padding=0)
        assert prefix in title.toPlainText()
        assert title.toPlainText() == p2.getAxis("bottom").label.toPlainText()
    assert sets  # the prefix changed it
    np.testing.assert_array_equal(_image(w1), _image(w2))
