"""Dots (the Sparsity force panel's weights) against what a user sees: each dot drawn
round, in its colour, where its (x, y) maps on screen, the size of pyqtgraph's scatter
symbol; none left behind when the dots move or the view zooms; the legend's swatch a dot
of the same colour."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore
from screen_pixels import near, screen_rgb, white_plot

from sparsity_gui.plots.curves import Dots

COLOR = "#1f77b4"
X = np.array([0.1, 0.2, 0.25, 0.5, 0.52, 0.8])


def _plot(qtbot) -> tuple[pg.PlotWidget, pg.PlotItem]:
    widget, plot = white_plot(qtbot)
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(-0.2, 1.2, padding=0)
    return widget, plot


_image = screen_rgb
_coloured = near  # pixels (rows, columns) within a small distance of a colour


def _on_screen(widget: pg.PlotWidget, item, x: float, y: float) -> tuple[int, int]:
    point = widget.mapFromScene(item.mapToScene(QtCore.QPointF(x, y)))
    return point.x(), point.y()


def test_each_dot_is_drawn_round_where_its_data_map(qtbot):
    widget, plot = _plot(qtbot)
    dots = Dots(COLOR, size=5)
    plot.addItem(dots)
    dots.setData(X, X)
    mask = _coloured(_image(widget), COLOR)
    for x in X:
        col, row = _on_screen(widget, dots, x, x)
        # its middle in the colour (the rim is blended with the background)
        assert mask[row, col] and mask[row - 1 : row + 2, col - 1 : col + 2].sum() >= 7, f"no dot at {x}"
        assert not mask[row - 5 : row + 6, col + 5].any() or x in (0.5, 0.52)  # 5 px off: none
        blob = mask[row - 4 : row + 5, col - 4 : col + 5]
        rows, cols = np.nonzero(blob)
        # round: as tall as wide, 4-6 px across (a 5 px dot, edges antialiased)
        if x not in (0.5, 0.52):  # those two touch
            assert 4 <= np.ptp(rows) + 1 <= 6 and 4 <= np.ptp(cols) + 1 <= 6
            assert abs(np.ptp(rows) - np.ptp(cols)) <= 1


def test_each_dot_is_centred_within_a_fifth_of_a_pixel_of_where_its_data_map(qtbot):
    """Dots are stamped from pre-drawn dots on whole pixels: their sub-pixel offsets must
    still put each dot's middle where its (x, y) lands, as a dot drawn there would be."""
    widget, plot = _plot(qtbot)
    dots = Dots("#000000", size=5)
    plot.addItem(dots)
    rng = np.random.default_rng(11)
    x = np.linspace(0.05, 0.95, 12) + rng.uniform(-0.01, 0.01, 12)  # at least 15 px apart
    y = rng.uniform(0.0, 1.0, 12)
    dots.setData(x, y)
    ink = 765 - _image(widget).sum(axis=2)  # how dark each pixel is
    to_view = widget.viewportTransform()
    for xi, yi in zip(x, y, strict=True):
        where = to_view.map(dots.mapToScene(QtCore.QPointF(xi, yi)))  # in pixels, unrounded
        col, row = int(where.x()), int(where.y())
        window = ink[row - 5 : row + 6, col - 5 : col + 6].astype(float)
        rows, cols = np.mgrid[row - 5 : row + 6, col - 5 : col + 6] + 0.5  # pixel middles
        assert window.sum() > 0, f"no dot at ({xi}, {yi})"
        middle = ((window * cols).sum() / window.sum(), (window * rows).sum() / window.sum())
        assert abs(middle[0] - where.x()) <= 0.2 and abs(middle[1] - where.y()) <= 0.2, (middle, where)


def test_a_dot_covers_what_pyqtgraphs_scatter_symbol_of_the_same_size_covers(qtbot):
    widget, plot = _plot(qtbot)
    dots = Dots(COLOR, size=5)
    scatter = pg.ScatterPlotItem(size=5, pen=None, brush=pg.mkBrush("#ff7f0e"))
    plot.addItem(dots)
    plot.addItem(scatter)
    dots.setData([0.3], [0.5])
    scatter.setData([0.7], [0.5])
    image = _image(widget)
    ours, theirs = _coloured(image, COLOR).sum(), _coloured(image, "#ff7f0e").sum()
    assert theirs > 0 and 0.6 * theirs <= ours <= 1.6 * theirs


def test_no_dot_is_left_behind_when_they_move_or_the_view_zooms(qtbot):
    widget, plot = _plot(qtbot)
    dots = Dots(COLOR, size=5)
    plot.addItem(dots)
    rng = np.random.default_rng(5)
    for step in range(12):  # frames: dots moving, some at the view's edges
        x = np.concatenate([rng.random(40), [0.0, 1.0]])
        dots.setData(x, 1.2 * x**2 - 0.2)
        if step % 4 == 3:
            plot.setXRange(0, 1.0 + 0.1 * step, padding=0)
        _image(widget)
    drawn = _image(widget)
    fresh_widget, fresh_plot = _plot(qtbot)  # the last frame, drawn once
    fresh_plot.setXRange(*plot.vb.viewRange()[0], padding=0)
    fresh = Dots(COLOR, size=5)
    fresh_plot.addItem(fresh)
    fresh.setData(*dots.getData())
    np.testing.assert_array_equal(_coloured(drawn, COLOR), _coloured(_image(fresh_widget), COLOR))


def test_its_data_bounds_and_bounding_rect_hold_every_dot_whole(qtbot):
    widget, plot = _plot(qtbot)
    dots = Dots(COLOR, size=5)
    plot.addItem(dots)
    dots.setData(np.array([0.2, np.nan, 0.6, np.inf]), np.array([0.1, 0.3, 0.9, 0.2]))
    x, y = dots.getData()
    np.testing.assert_array_equal(x, [0.2, 0.6])  # only the finite rows
    np.testing.assert_array_equal(y, [0.1, 0.9])
    assert dots.dataBounds(0) == (0.2, 0.6) and dots.dataBounds(1) == (0.1, 0.9)
    _image(widget)
    for zoom in (1.0, 4.0):  # the dots' radius in data units changes with the view
        plot.setXRange(0.5 - 0.5 / zoom, 0.5 + 0.5 / zoom, padding=0)
        _image(widget)
        box = widget.mapFromScene(dots.mapToScene(dots.boundingRect())).boundingRect()
        for xi, yi in zip(x, y, strict=True):
            col, row = _on_screen(widget, dots, xi, yi)
            assert box.adjusted(2, 2, -2, -2).contains(QtCore.QPoint(col, row))  # and its 2.5 px radius


def test_dots_far_outside_the_view_draw_nothing_there_and_fail_nothing(qtbot):
    widget, plot = _plot(qtbot)
    dots = Dots(COLOR, size=5)
    plot.addItem(dots)
    dots.setData(np.array([0.5, 1e15, -1e300, 0.5]), np.array([0.5, 0.5, 0.5, 1e200]))
    mask = _coloured(_image(widget), COLOR)
    col, row = _on_screen(widget, dots, 0.5, 0.5)
    assert mask[row, col] and mask.sum() <= 40  # the one dot in view, nothing else


def test_no_dots_draw_nothing_and_fail_nothing(qtbot):
    widget, plot = _plot(qtbot)
    dots = Dots(COLOR, size=5)
    plot.addItem(dots)
    dots.setData(X, X)
    _image(widget)
    dots.setData(np.zeros(0), np.zeros(0))
    assert not _coloured(_image(widget), COLOR).any()
    assert dots.dataBounds(0) == (None, None) and dots.boundingRect().isNull()


@pytest.mark.parametrize("color", [COLOR, "#ff7f0e"])
def test_the_legend_shows_a_dot_of_its_colour(qtbot, color):
    widget, plot = _plot(qtbot)
    legend = plot.addLegend()
    dots = Dots(color, size=5)
    plot.addItem(dots)
    legend.addItem(dots, "weights")
    dots.setData(X, X)
    image = _image(widget)
    sample = legend.items[0][0]
    box = widget.mapFromScene(sample.sceneBoundingRect()).boundingRect()
    swatch = _coloured(image[box.top() : box.bottom() + 1, box.left() : box.right() + 1], color)
    rows, cols = np.nonzero(swatch)
    assert swatch.sum() >= 9  # a dot, not a line: as tall as wide
    assert abs(np.ptp(rows) - np.ptp(cols)) <= 1 and np.ptp(cols) <= 7
