"""What a plot widget shows, as pixels: the plot and the screen grab that the tests of
items drawn on screen (tests/plots: dots, symbols, markers, curve bundles, axes) share."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets


def white_plot(
    qtbot, width: int = 500, height: int = 320, left_axis_width: int | None = None, **widget_options
) -> tuple[pg.PlotWidget, pg.PlotItem]:
    """A shown PlotWidget on white; with ``left_axis_width``, the view's place fixed
    whatever the tick labels (two plots then map data to the same pixels)."""
    widget = pg.PlotWidget(background="w", **widget_options)
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    plot = widget.getPlotItem()
    if left_axis_width is not None:
        plot.getAxis("left").setWidth(left_axis_width)
    return widget, plot


def screen_rgb(widget: QtWidgets.QWidget, whole: bool = False) -> np.ndarray:
    """The viewport's (``whole``: the widget's) pixels once the pending layout and paint
    are done, as rows x columns x (R, G, B) ints."""
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    source = widget if whole else widget.viewport()
    image = source.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    return pixels[:, : image.width(), 2::-1].astype(int)  # (B, G, R, A) in memory


def near(rgb: np.ndarray, color: str, distance: int = 60) -> np.ndarray:
    """A mask of the pixels within ``distance`` (summed over R, G, B) of ``color``."""
    want = np.array(QtGui.QColor(color).getRgb()[:3])
    return np.abs(rgb - want).sum(axis=2) < distance
