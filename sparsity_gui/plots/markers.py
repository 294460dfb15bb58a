"""`ChangeMarkers`: the vertical lines, each with its label, that show on a time plot
where a parameter was changed during the run, all of one plot in one item."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

GAP = 2.0  # px between a marker's line and its label
MARGIN = 3.0  # px between a label's end and the top of the view


class ChangeMarkers(pg.GraphicsObject):
    """Dashed vertical lines at x, over the view's whole height, each labelled along its
    left side, the label's end hanging from the top (never clipped, never struck through
    by its line). One item for all of a plot's markers: as pyqtgraph InfiniteLines with
    their TextItem labels, two Python items a marker, each recomputing its bounds and
    label transform on every range change and painting itself every frame, a run with
    15 live changes of λ drew at half its frame rate (bench_gui.py's λ-drag case).
    The labels are rendered once, as pixmaps. Linear x axes only."""

    def __init__(self, pen: QtGui.QPen, color: str):
        super().__init__()
        self._pen = QtGui.QPen(pen)
        self._pen.setCosmetic(True)
        self._color = QtGui.QColor(color)
        self.markers: tuple[tuple[float, str], ...] = ()
        self._xs = np.zeros(0)  # the markers' x, for paint
        self._labels: dict[tuple[str, float], QtGui.QPixmap] = {}
        self._bounds: QtCore.QRectF | None = None

    def set_markers(self, markers) -> None:
        """The (x, label) drawn, oldest first."""
        markers = tuple((float(x), str(label)) for x, label in markers)
        if markers == self.markers:
            return
        self.markers = markers
        self._xs = np.array([x for x, _label in markers], dtype=float)
        texts = {label for _x, label in markers}
        self._labels = {key: pixmap for key, pixmap in self._labels.items() if key[0] in texts}
        self.update()

    def positions(self) -> list[float]:
        return [x for x, _label in self.markers]

    def labels(self) -> list[str]:
        return [label for _x, label in self.markers]

    # --- what pyqtgraph and Qt ask of an item (added with ignoreBounds: no data bounds) ---
    def viewTransformChanged(self) -> None:
        super().viewTransformChanged()
        self._bounds = None  # the view moved: so did the lines' top and bottom
        self.prepareGeometryChange()

    def boundingRect(self) -> QtCore.QRectF:
        if self._bounds is None:
            view = self.getViewBox()
            self._bounds = QtCore.QRectF() if view is None else QtCore.QRectF(view.viewRect())
        return QtCore.QRectF(self._bounds)

    def paint(self, painter, *args) -> None:
        if not self.markers:
            return
        view = self.boundingRect()
        if not view.isValid():
            return
        # in device pixels, as the labels are: a line 1 px, labels unscaled
        to_device = painter.transform()
        corners = to_device.mapRect(view)
        top, bottom = corners.top(), corners.bottom()
        left, right = corners.left(), corners.right()
        painter.resetTransform()
        painter.setPen(self._pen)
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        # where each line lands, worked out for all at once (a drag of the λ slider leaves
        # dozens of markers, painted on every frame)
        at = to_device.m11() * self._xs + to_device.m21() * view.top() + to_device.dx()
        shown = np.flatnonzero((at >= left - 0.5) & (at <= right + 0.5))
        if not shown.size:
            return
        lines = np.round(at[shown]) + 0.5  # crisp 1 px lines
        painter.drawLines([QtCore.QLineF(px, top, px, bottom) for px in lines.tolist()])
        for k, px in zip(shown.tolist(), lines.tolist(), strict=True):
            pixmap = self._label(self.markers[k][1], ratio)
            painter.drawPixmap(QtCore.QPointF(px - GAP - pixmap.width() / ratio, top + MARGIN), pixmap)

    def _label(self, text: str, ratio: float) -> QtGui.QPixmap:
        """``text`` turned to read upwards, its bottom to the right, on a clear ground."""
        key = (text, ratio)
        pixmap = self._labels.get(key)
        if pixmap is None:
            font = QtGui.QFont()
            metrics = QtGui.QFontMetricsF(font)
            length, height = metrics.horizontalAdvance(text), metrics.height()
            pixmap = QtGui.QPixmap(math.ceil(height * ratio), math.ceil(length * ratio))
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(QtCore.Qt.GlobalColor.transparent)
            p = QtGui.QPainter(pixmap)
            p.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing)
            p.setFont(font)
            p.setPen(self._color)
            # text reading upwards: its baseline runs up the pixmap, its descent to the right
            p.translate(height - metrics.descent(), length)
            p.rotate(-90)
            p.drawText(QtCore.QPointF(0.0, 0.0), text)
            p.end()
            self._labels[key] = pixmap
        return pixmap
