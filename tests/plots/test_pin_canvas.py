"""PinCanvas: a plot's pinned curves painted as one cached item draw exactly what the
curves draw themselves, and are not painted again while only the live curves change."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtWidgets

from sparsity_gui.plots.base import pen
from sparsity_gui.plots.curves import add_curve, set_curve
from sparsity_gui.plots.pins import PinCanvas, pin_pen


def _plot(qtbot):
    view = pg.GraphicsLayoutWidget()
    view.resize(420, 300)
    qtbot.addWidget(view)
    plot = view.addPlot()
    plot.vb.disableAutoRange()
    plot.setRange(xRange=(0, 10), yRange=(-1.5, 1.5), padding=0)
    view.show()
    return view, plot


def _pins(plot, n: int = 4) -> list:
    t = np.linspace(0, 10, 3000)
    items = []
    for k in range(n):
        item = add_curve(plot, pen=pin_pen("#1f77b4", k + 1))
        set_curve(item, t, np.sin(t + k) * (1 - 0.1 * k))
        items.append(item)
    return items


def assert_same_image(a: np.ndarray, b: np.ndarray) -> None:
    """Equal but for rounding: a faded pen blended into the cache's transparent pixmap and
    the pixmap onto the view lands within 1 of 255 of blending it onto the view at once."""
    assert np.abs(a.astype(int) - b.astype(int)).max() <= 1
    assert (a != b).mean() < 1e-3


def _pixels(view) -> np.ndarray:
    image = view.grab().toImage().convertToFormat(pg.QtGui.QImage.Format.Format_RGB32)
    ptr = image.constBits()
    return np.frombuffer(ptr, np.uint8, image.sizeInBytes()).reshape(image.height(), -1).copy()


def test_the_canvas_draws_what_the_curves_draw(qtbot):
    view, plot = _plot(qtbot)
    items = _pins(plot)
    live = add_curve(plot, pen=pen("#d62728"))
    set_curve(live, np.linspace(0, 5, 50), np.linspace(-1, 1, 50))
    plain = _pixels(view)
    canvas = PinCanvas()
    plot.addItem(canvas, ignoreBounds=True)
    for item in items:
        canvas.add(item)
    cached = _pixels(view)
    assert (plain != 255).sum() > 5000  # the curves are there
    assert_same_image(cached, plain)
    # and after the view moves (the pixmap made anew)
    plot.setRange(xRange=(2, 8), yRange=(-1, 1), padding=0)
    moved_cached = _pixels(view)
    for item in items:
        canvas.remove(item)
        item.curve.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, False)
    assert_same_image(moved_cached, _pixels(view))


@pytest.mark.parametrize("moves", [False, True])
def test_pins_are_painted_again_only_when_the_view_moves(qtbot, moves):
    view, plot = _plot(qtbot)
    canvas = PinCanvas()
    plot.addItem(canvas, ignoreBounds=True)
    for item in _pins(plot):
        canvas.add(item)
    painted = []
    paint = canvas.paint
    canvas.paint = lambda *a: (painted.append(1), paint(*a))
    live = add_curve(plot, pen=pen("#d62728"))
    view.grab()
    painted.clear()
    for k in range(5):  # live frames
        set_curve(live, np.linspace(0, 5 + k, 50), np.linspace(-1, 1, 50))
        if moves:
            plot.setRange(xRange=(0, 11 + k), padding=0)
        view.grab()
    assert len(painted) == (5 if moves else 0)


def test_a_pin_has_the_same_dashes_on_screen_and_in_a_figure():
    """One dash table for both models' pins: the live pen's pattern (in pen widths) is the
    figure's line's (in line widths), and the eight pins a board holds look apart."""
    from matplotlib.figure import Figure

    from sparsity_gui.core.pins import MAX_PINS
    from sparsity_gui.figures.draw import pin_line
    from sparsity_gui.figures.layout import _look

    ax = Figure().add_subplot()
    patterns = []
    for number in range(1, MAX_PINS + 1):
        live = tuple(pin_pen("#1f77b4", number).dashPattern())
        line = pin_line(ax, [0.0, 1.0], [0.0, 1.0], "C0", number)
        drawn = _look(line)[1]  # unscaled: in line widths, as the pen's are in pen widths
        assert drawn == pytest.approx(live), number
        assert len(live) % 2 == 0 and all(d > 0 for d in live)
        patterns.append(live)
    assert len(set(patterns)) == MAX_PINS
    assert tuple(pin_pen("#1f77b4", MAX_PINS + 1).dashPattern()) == patterns[0]
