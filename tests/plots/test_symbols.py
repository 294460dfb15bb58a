"""Symbols (the Threshold crossing panel's ▽ and × marks) against what a user sees: each
mark where its (x, y) maps, the shape and size of pyqtgraph's scatter symbol drawn with
the same pen; none left behind when they move; the legend's swatch the symbol."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore
from screen_pixels import screen_rgb, white_plot

from sparsity_gui.plots.base import pen
from sparsity_gui.plots.curves import Symbols
from sparsity_gui.plots.legend import LegendRow

INK = "#1f77b4"


def _plot(qtbot) -> tuple[pg.PlotWidget, pg.PlotItem]:
    widget, plot = white_plot(qtbot, left_axis_width=40)
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(0, 1, padding=0)
    return widget, plot


def _inked(widget: pg.PlotWidget) -> np.ndarray:
    """Pixels near INK (antialiased rims included), as a mask."""
    rgb = screen_rgb(widget)
    return (rgb[..., 2] - rgb[..., 0] > 40) & (rgb[..., 2] > 100)  # bluish


def _around(mask: np.ndarray, widget, item, x: float, y: float, r: int = 8) -> np.ndarray:
    point = widget.mapFromScene(item.mapToScene(QtCore.QPointF(x, y)))
    return mask[point.y() - r : point.y() + r + 1, point.x() - r : point.x() + r + 1]


@pytest.mark.parametrize("symbol, brush", [("t", None), ("x", INK)])
def test_each_mark_is_pyqtgraphs_symbol_where_its_data_map(qtbot, symbol, brush):
    widget, plot = _plot(qtbot)
    ours = Symbols(symbol, 9, pen(INK), brush=brush)
    theirs = pg.ScatterPlotItem(symbol=symbol, size=9, pen=pen(INK), brush=brush)
    plot.addItem(ours)
    plot.addItem(theirs)
    ours.setData([0.25, 0.5], [0.5, 0.25])
    theirs.setData([0.75], [0.5])
    mask = _inked(widget)
    reference = _around(mask, widget, theirs, 0.75, 0.5)
    assert reference.sum() >= 10
    for x, y in ((0.25, 0.5), (0.5, 0.25)):
        mark = _around(mask, widget, ours, x, y)
        overlap = (mark & reference).sum() / (mark | reference).sum()
        assert overlap >= 0.5, f"{symbol} at ({x}, {y}): overlap {overlap:.2f} with pyqtgraph's"
    if symbol == "t":  # ▽: wide at the top, a point at the bottom
        rows = np.flatnonzero(mark.any(axis=1))
        top, bottom = mark[rows[0]].sum(), mark[rows[-1]].sum()
        assert top > 2 * bottom


def test_no_mark_is_left_behind_when_they_move(qtbot):
    widget, plot = _plot(qtbot)
    marks = Symbols("x", 9, pen(INK), brush=INK)
    plot.addItem(marks)
    rng = np.random.default_rng(3)
    for step in range(8):
        marks.setData(rng.random(5), rng.random(5))
        if step == 4:
            plot.setXRange(0, 2, padding=0)
        _inked(widget)
    drawn = _inked(widget)
    widget2, plot2 = _plot(qtbot)
    plot2.setXRange(0, 2, padding=0)
    fresh = Symbols("x", 9, pen(INK), brush=INK)
    plot2.addItem(fresh)
    fresh.setData(*marks.getData())
    assert drawn.any() and np.array_equal(drawn, _inked(widget2))


def test_the_legend_shows_the_symbol(qtbot):
    widget, plot = _plot(qtbot)
    legend = LegendRow("9pt")  # the panels' legend
    legend.setParentItem(plot)
    marks = Symbols("t", 9, pen(INK))
    plot.addItem(marks)
    legend.addItem(marks, "falls below θ")
    marks.setData([0.5], [0.5])
    mask = _inked(widget)
    sample = legend.items[0][0]
    box = widget.mapFromScene(sample.sceneBoundingRect()).boundingRect()
    swatch = mask[box.top() : box.bottom() + 1, box.left() : box.right() + 1]
    rows = np.flatnonzero(swatch.any(axis=1))
    assert swatch.sum() >= 8 and swatch[rows[0]].sum() > swatch[rows[-1]].sum()  # ▽
    cols = np.flatnonzero(swatch.any(axis=0))
    assert np.ptp(cols) <= 10, "the symbol alone, no line through it"
