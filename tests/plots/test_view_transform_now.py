"""A panel's views take a new range at once (plots/base._transform_now), not at the start of
the next paint as pyqtgraph does: a step of a shared time axis paints each view once, and
what it paints is what pyqtgraph's own path paints: the same pixels, the same transform,
the same item data."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from screen_pixels import screen_rgb

from sparsity_gui.plots.base import BLUE, ORANGE, Panel, _transform_now, pen
from sparsity_gui.plots.curves import add_curve, set_curve


class CountedPanel(Panel):
    """Two time plots on one (linked) time axis, as the note's stacked panels, with the
    paint events of its view counted."""

    def __init__(self, lazy: bool):
        super().__init__()
        self.upper = self.add_plot(0, "upper", "t", "y", time_axis=True)
        self.lower = self.add_plot(1, None, "t", "z", time_axis=True, legend=False)
        self.stack(self.upper, self.lower)
        t = np.linspace(0.0, 10.0, 400)
        self.curves = [
            add_curve(self.upper, pen=pen(BLUE), name="sin"),
            add_curve(self.lower, pen=pen(ORANGE)),
        ]
        set_curve(self.curves[0], t, np.sin(t))
        set_curve(self.curves[1], t, np.exp(-t))
        for plot in self.plots:
            plot.vb.setRange(xRange=(0, 10), yRange=(-1.1, 1.1), padding=0)
            if lazy:  # pyqtgraph's own path: the transform set as the next paint begins
                plot.vb.sigRangeChanged.disconnect(_transform_now)
        self.paints = 0
        inner = self.graphics.paintEvent

        def counted(event, inner=inner):
            self.paints += 1
            inner(event)

        self.graphics.paintEvent = counted


def _shown(qtbot, lazy: bool) -> CountedPanel:
    panel = CountedPanel(lazy)
    qtbot.addWidget(panel)
    panel.resize(460, 360)
    panel.show()
    qtbot.waitExposed(panel)
    screen_rgb(panel.graphics)
    return panel


def _settle() -> None:
    for _ in range(4):
        pg.QtWidgets.QApplication.processEvents()


STEPS = [(0, 20), (0, 10), (0, 50), (-2, 50), (0, 100)]


def test_a_step_of_the_time_axis_paints_each_view_once_and_as_pyqtgraph_does(qtbot):
    ours, lazy = _shown(qtbot, lazy=False), _shown(qtbot, lazy=True)
    for lo, hi in STEPS:
        for panel in (ours, lazy):
            _settle()
            panel.paints = 0
            panel.upper.vb.setXRange(lo, hi, padding=0)  # the lower plot follows (linked)
            _settle()
        assert ours.paints == 1, (lo, hi)
        assert lazy.paints >= 1
        for a, b in zip(ours.plots, lazy.plots, strict=True):
            assert a.vb.viewRange() == b.vb.viewRange()
            assert a.vb.childGroup.transform() == b.vb.childGroup.transform()
        for a, b in zip(ours.curves, lazy.curves, strict=True):
            np.testing.assert_array_equal(np.array(a.getData()), np.array(b.getData()))
        np.testing.assert_array_equal(screen_rgb(ours.graphics), screen_rgb(lazy.graphics))


def test_a_y_range_change_puts_the_transform_on_the_items_before_any_paint(qtbot):
    panel = _shown(qtbot, lazy=False)
    vb = panel.lower.vb
    vb.setYRange(0.0, 0.5, padding=0)
    ours = vb.childGroup.transform()
    vb._matrixNeedsUpdate = True  # what pyqtgraph's own path would set at the next paint
    vb.updateMatrix()
    assert vb.childGroup.transform() == ours
    # a point of the curve lands where the new range puts it
    point = vb.mapViewToScene(pg.QtCore.QPointF(5.0, 0.25))
    box = vb.sceneBoundingRect()
    assert abs(point.y() - (box.top() + box.height() / 2)) < 1.0
