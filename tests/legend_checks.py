"""Legends never cover data: the check used by tests/plots/test_legends.py and
tests/ui/note/test_export_artefacts.py on real panels."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from sparsity_gui.plots.curves import CurveBundle, Marks
from sparsity_gui.plots.legend import LegendRow, tick_text_size


def drawn_points(item) -> list[QtCore.QPointF]:
    """Scene positions of the points an item draws (up to 400 of each, evenly spread)."""
    if isinstance(item, CurveBundle):
        return [pt for k in range(item.curve_count) for pt in drawn_points_of(item, *item.view_data(k))]
    if isinstance(item, (pg.PlotDataItem, Marks)):
        x, y = item.getData()
    elif isinstance(item, pg.ScatterPlotItem):
        x, y = item.data["x"], item.data["y"]
    elif isinstance(item, pg.ErrorBarItem):
        x, y = item.opts["x"], item.opts["y"]
    else:
        return []
    return drawn_points_of(item, x, y)


def drawn_points_of(item, x, y) -> list[QtCore.QPointF]:
    """Scene positions of up to 400 of the points (x, y), in ``item``'s coordinates."""
    if x is None or y is None or len(x) == 0:
        return []
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    pick = np.unique(np.linspace(0, len(x) - 1, min(len(x), 400)).astype(int)) if len(x) else []
    return [item.mapToScene(QtCore.QPointF(x[i], y[i])) for i in pick]


def check_legends_clear_of_data(panel) -> int:
    """Every legend lies outside its plot's data area, holds no drawn point, is shown whole
    in the panel's view and has the tick labels' text size. Returns the legends checked.
    The panel is painted first: a view box maps its data to the screen with the range it
    had at its last paint, so between a range change and the paint the mapping is stale."""
    QtWidgets.QApplication.processEvents()
    panel.graphics.grab()
    view = QtCore.QRectF(panel.graphics.viewport().rect())  # scene = view coordinates
    checked = 0
    for plot in panel.plots:
        legend = plot.legend
        if legend is None or not legend.items:
            continue
        assert isinstance(legend, LegendRow)
        box = legend.sceneBoundingRect()
        area = plot.vb.sceneBoundingRect()
        assert not box.intersects(area), f"{panel.title}: legend {box} over the data area {area}"
        points = [pt for item in plot.vb.addedItems for pt in drawn_points(item) if area.contains(pt)]
        assert points, f"{panel.title}: nothing drawn"
        assert not any(box.contains(pt) for pt in points), f"{panel.title}: a point under the legend"
        assert view.contains(box), f"{panel.title}: legend {box} cut off by the view {view}"
        for _sample, label in legend.items:
            assert box.contains(label.sceneBoundingRect()), f"{panel.title}: {label.text!r} outside its box"
            assert label.opts["size"] == tick_text_size(plot)
        checked += 1
    return checked
