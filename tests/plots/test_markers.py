"""ChangeMarkers (where a parameter changed during the run) against what a user sees: each
line over the view's whole height at its x, its label beside it and not struck through,
hanging from the top; nothing drawn outside the view or left behind when the view moves.
(One item for all of a plot's markers in the live window: tests/ui/note/test_note_window.py.)"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore
from screen_pixels import screen_rgb, white_plot

from sparsity_gui.plots.base import DASH, pen
from sparsity_gui.plots.markers import ChangeMarkers

RED = "#d62728"


def _plot(qtbot) -> tuple[pg.PlotWidget, pg.PlotItem, ChangeMarkers]:
    widget, plot = white_plot(qtbot, left_axis_width=40)
    plot.showGrid(x=False, y=False)
    plot.setXRange(0, 100, padding=0)
    plot.setYRange(0, 1, padding=0)
    markers = ChangeMarkers(pen(RED, DASH), RED)
    plot.addItem(markers, ignoreBounds=True)
    return widget, plot, markers


def _red(widget: pg.PlotWidget) -> np.ndarray:
    """The viewport's pixels near RED (the rims of antialiased text included), as a mask."""
    rgb = screen_rgb(widget)
    # reddish: red well above green and blue, however light (text rims blend with white)
    return (rgb[..., 0] - rgb[..., 1] > 40) & (rgb[..., 0] - rgb[..., 2] > 40)


def _view_rect(widget: pg.PlotWidget, plot: pg.PlotItem) -> QtCore.QRect:
    """The view's rectangle on screen (viewport pixels)."""
    return widget.mapFromScene(plot.vb.sceneBoundingRect()).boundingRect()


def _in_view(widget: pg.PlotWidget, plot: pg.PlotItem) -> np.ndarray:
    """_red over the view's rectangle only (axes widen as their labels change)."""
    mask = _red(widget)  # (laid out first)
    view = _view_rect(widget, plot)
    return mask[view.top() : view.bottom() + 1, view.left() : view.right() + 1]


def _column(widget: pg.PlotWidget, plot: pg.PlotItem, x: float) -> int:
    return widget.mapFromScene(plot.vb.mapViewToScene(QtCore.QPointF(x, 0.5))).x()


def test_each_line_spans_the_view_with_its_label_beside_it(qtbot):
    widget, plot, markers = _plot(qtbot)
    markers.set_markers([(30.0, "λ = 2.0e-3"), (70.0, "λ = 1.0e-3")])
    mask = _red(widget)
    view = _view_rect(widget, plot)
    height = view.height()
    for x in (30.0, 70.0):
        col = _column(widget, plot, x)
        line = mask[view.top() : view.bottom(), col - 1 : col + 2].any(axis=1)
        # dashed: on for most of the view's height, from its top to its bottom
        assert line.mean() > 0.4, f"no line at x = {x}"
        assert line[: height // 10].any() and line[-height // 10 :].any()
        # the label: left of the line, its end near the top, not on the line's right
        label = mask[view.top() : view.bottom(), col - 20 : col - 2]
        rows = np.flatnonzero(label.any(axis=1))
        assert rows.size, f"no label left of x = {x}"
        assert rows[0] < 10, "the label hangs from the top of the view"
        assert 40 < rows[-1] - rows[0] < height / 2, "a label of ten characters, along the line"
        right = mask[view.top() : view.bottom(), col + 2 : col + 12]
        assert not right.any(), "nothing right of the line: the label is beside it, not across it"


def test_markers_outside_the_view_are_not_drawn_and_labels_stay_inside(qtbot):
    widget, plot, markers = _plot(qtbot)
    # one past the right edge, one so near the left edge that its label would cross the axis
    markers.set_markers([(150.0, "λ = 9.9e-1"), (0.5, "λ = 1.0e-3")])
    mask = _red(widget)
    view = _view_rect(widget, plot)
    outside = mask.copy()
    outside[view.top() : view.bottom() + 1, view.left() : view.right() + 1] = False
    assert not outside.any(), "drawn outside the view (over the axis)"
    inside = mask[view.top() : view.bottom(), view.left() : view.right()]
    assert inside.any(axis=0).sum() <= 4, "only the left edge's line (and a sliver of its label)"


def test_nothing_is_left_behind_when_the_view_moves(qtbot):
    widget, plot, markers = _plot(qtbot)
    markers.set_markers([(30.0, "λ = 2.0e-3"), (70.0, "λ = 1.0e-3")])
    _red(widget)
    for lo, hi in ((10, 60), (-50, 200), (20, 90)):
        plot.setXRange(lo, hi, padding=0)
        _red(widget)
    moved = _in_view(widget, plot)
    # the same markers drawn once, straight into that range
    widget2, plot2, markers2 = _plot(qtbot)
    plot2.setXRange(20, 90, padding=0)
    markers2.set_markers([(30.0, "λ = 2.0e-3"), (70.0, "λ = 1.0e-3")])
    assert moved.any() and np.array_equal(moved, _in_view(widget2, plot2))


def test_a_repaint_of_part_of_the_view_keeps_the_lines_whole(qtbot):
    """Qt repaints only the region of an item that changed, and every item whose bounds
    meet it: the markers' bounds must follow the view, or a curve moving near the top of
    a view zoomed out since leaves a gap in the lines."""
    widget, plot, markers = _plot(qtbot)
    markers.set_markers([(30.0, "λ = 2.0e-3"), (70.0, "λ = 1.0e-3")])
    _red(widget)
    plot.setYRange(0, 10, padding=0)
    curve = plot.plot([0, 100], [8, 8], pen=pg.mkPen("k", width=9))
    _red(widget)
    curve.setData([0, 100], [6, 6])
    repainted = _in_view(widget, plot)
    widget2, plot2, markers2 = _plot(qtbot)
    plot2.setYRange(0, 10, padding=0)
    plot2.plot([0, 100], [6, 6], pen=pg.mkPen("k", width=9))
    markers2.set_markers([(30.0, "λ = 2.0e-3"), (70.0, "λ = 1.0e-3")])
    assert repainted.any() and np.array_equal(repainted, _in_view(widget2, plot2))


def test_a_merged_change_moves_its_marker_and_clearing_removes_all(qtbot):
    widget, plot, markers = _plot(qtbot)
    markers.set_markers([(30.0, "λ = 2.0e-3")])
    first = _red(widget)
    markers.set_markers([(45.0, "λ = 3.0e-3")])  # a near change merged into the last one
    moved = _red(widget)
    col30, col45 = _column(widget, plot, 30.0), _column(widget, plot, 45.0)
    assert first[:, col30].any() and not moved[:, col30 - 1 : col30 + 2].any()
    assert moved[:, col45].any()
    assert markers.labels() == ["λ = 3.0e-3"] and markers.positions() == [45.0]
    markers.set_markers(())
    assert not _red(widget).any()
