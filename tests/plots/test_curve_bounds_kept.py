"""A live curve (plots/curves.ClipAwareCurve) keeps its bounds when its view's range moves
(pyqtgraph works them out again from the data each time, for a pen padding that width-0
pens do not have): after every kind of view change its bounding rect is the one pyqtgraph
works out afresh, and it draws the pixels pyqtgraph's own PlotDataItem draws."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from screen_pixels import screen_rgb, white_plot

from sparsity_gui.plots.base import BLUE, pen
from sparsity_gui.plots.curves import ClipAwareCurve, add_curve, set_curve

T = np.linspace(0.0, 10.0, 300)
Y = np.exp(-0.3 * T) * (1.5 + np.sin(3 * T))

STEPS = [
    ("x range", lambda w, p: p.setXRange(2, 7, padding=0)),
    ("y range", lambda w, p: p.setYRange(-0.5, 3, padding=0)),
    ("both", lambda w, p: p.setRange(xRange=(0, 20), yRange=(0.1, 1.0), padding=0)),
    ("a resize", lambda w, p: w.resize(520, 340)),
    ("log y", lambda w, p: p.setLogMode(y=True)),
    ("log y range", lambda w, p: p.setYRange(-2, 1, padding=0)),
    ("linear again", lambda w, p: p.setLogMode(y=False)),
    ("a smaller window", lambda w, p: w.resize(360, 260)),
]


def _plot(qtbot, ours: bool, width: float = 0) -> tuple[pg.PlotWidget, pg.PlotItem, pg.PlotDataItem]:
    widget, plot = white_plot(qtbot, 420, 300, left_axis_width=50)
    plot.vb.disableAutoRange()
    plot.setRange(xRange=(0, 10), yRange=(0, 3), padding=0)
    p = pen(BLUE)
    p.setWidthF(width)
    if ours:
        item = add_curve(plot, pen=p)
        set_curve(item, T, Y, positive=True)
    else:
        item = plot.plot(T, Y, pen=p)
    screen_rgb(widget)
    return widget, plot, item


def _fresh_rect(curve: pg.PlotCurveItem):
    """The bounding rect pyqtgraph works out with nothing cached."""
    curve.invalidateBounds()
    return curve.boundingRect()


@pytest.mark.parametrize("upto", range(1, len(STEPS) + 1), ids=[s[0] for s in STEPS])
def test_bounds_kept_are_pyqtgraphs_and_the_pixels_too(qtbot, upto):
    (w1, p1, ours), (w2, p2, theirs) = _plot(qtbot, ours=True), _plot(qtbot, ours=False)
    assert isinstance(ours, ClipAwareCurve) and not isinstance(theirs, ClipAwareCurve)
    for name, step in STEPS[:upto]:
        for w, p in ((w1, p1), (w2, p2)):
            step(w, p)
            screen_rgb(w)  # each step drawn: the next is a repaint over it
        kept = ours.curve.boundingRect()
        assert kept == _fresh_rect(ours.curve), name
        assert kept == theirs.curve.boundingRect(), name
    np.testing.assert_array_equal(np.array(ours.getData()), np.array(theirs.getData()))
    np.testing.assert_array_equal(screen_rgb(w1), screen_rgb(w2))


def test_a_pen_that_pads_by_pixels_still_gets_its_bounds_anew(qtbot):
    """A cosmetic pen wider than 0 pads the bounds by its width in pixels: a zoom changes
    them in data units, and they are worked out again as pyqtgraph does."""
    widget, plot, item = _plot(qtbot, ours=True, width=4)
    before = item.curve.boundingRect()
    plot.setRange(xRange=(0, 100), yRange=(0, 30), padding=0)  # 10x the data units a pixel
    screen_rgb(widget)
    after = item.curve.boundingRect()
    assert after == _fresh_rect(item.curve)
    assert after.width() > before.width()
