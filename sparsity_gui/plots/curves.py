"""The panels' curves (`add_curve`: not set again by pyqtgraph each time a range moves)
and their data: only their finite points (only positive ones on a log axis), set through
pyqtgraph's fast path where its internals are known (`set_curve`), and curves broken
where their quantity jumps (`set_broken_curve`)."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from sparsity_gui.core.points import broken_xy, finite_xy
from sparsity_gui.plots import pg_compat


def set_curve(item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray, positive: bool = False) -> None:
    """Put finite data on a live curve, every frame: for a plain line (no symbol, no
    transform but a log axis) straight into its curve, skipping PlotDataItem.setData's
    type checks, finiteness scans and style updates (about 28 calls a frame: a third of
    the Python work of a frame at m = 10^3, measured with bench_gui.py --profile)."""
    x, y = finite_xy(np.asarray(x, float), np.asarray(y, float), positive)
    _put_data(item, x, y, finite=True)


def _put_data(item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray, finite: bool) -> None:
    """set_curve's and set_broken_curve's data: through pyqtgraph's fast path where its
    internals are known (plots/pg_compat.py), else setData. ``finite``: no NaN in x or y
    (else NaN rows, in both, are the breaks of a curve made with connect="finite")."""
    if not pg_compat.put_curve_data(item, x, y, finite):
        item.setData(x, y, skipFiniteCheck=finite, **({} if finite else {"connect": "finite"}))


def set_broken_curve(
    item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray, steps: np.ndarray, positive: bool = False
) -> None:
    """A curve broken where ``steps`` changes from one row to the next (e.g. lam): a value
    that jumps there (θ = λ/(1-‖W‖²)) is not joined by a steep segment, which reads as a
    spike. Needs the item made with connect="finite"."""
    x, y = broken_xy(x, y, steps, positive)
    _put_data(item, x, y, finite=not np.isnan(x).any())


class ClipAwareCurve(pg.PlotDataItem):
    """A curve that pyqtgraph does not set again on each change of its view's y range.
    pyqtgraph re-sets every curve's data then (pens, path, bounds), to clip the values more
    than ``dynamicRangeLimit`` view heights away (Qt draws such lines badly): on a frame in
    which a range moves, every curve of the plot again, the live ones (set anew each frame
    anyway) and the pinned runs' alike. This one is set again only when that clipping is
    or may become needed (a y-range change of every plot of the note's window with 8
    pinned runs: 3.2 ms against 7.5, `bench_gui.py --range-change 20`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # (an attribute, not a method: pyqtgraph connects the curve's view to it later)
        self.curve.viewTransformChanged = self._curve_view_changed

    def _curve_view_changed(self) -> None:
        """pyqtgraph forgets a curve's bounds whenever its view's range moves, for the pen's
        padding in pixels, and works them out again from its data (nanmin and nanmax, both
        axes, every curve of every plot that moved: 8 % of a step of the shared time axis).
        The live pens pad nothing (width 0): the bounds in data coordinates stay as they are."""
        curve = self.curve
        if curve.pixelPadding() > 0:
            pg.PlotCurveItem.viewTransformChanged(curve)

    def viewRangeChanged(self, vb=None, ranges=None, changed=None) -> None:
        if not self._clipped_as_before():
            super().viewRangeChanged(vb, ranges, changed)
            return
        pg_compat.note_view_range_changed(self, changed)

    def _clipped_as_before(self) -> bool:
        """Whether the data shown are the data, unclipped, and stay so in the new range."""
        opts = self.opts
        view = self.getViewBox()
        if opts["clipToView"] or opts["autoDownsample"] or opts["dynamicRangeLimit"] is None or view is None:
            return False
        rect = pg_compat.unclipped_data_rect(self)
        height = view.viewRect().height()
        if rect is None or not height > 0:
            return False
        # pyqtgraph clips only data taller than this many view heights
        return rect.height() <= 2 * opts["dynamicRangeHyst"] * opts["dynamicRangeLimit"] * height


def add_curve(plot: pg.PlotItem, **opts) -> ClipAwareCurve:
    """A ClipAwareCurve on ``plot``, as ``plot.plot(**opts)`` makes a PlotDataItem (in the
    legend when ``name`` is given)."""
    item = ClipAwareCurve(**opts)
    plot.addItem(item)
    return item


class Marks(pg.GraphicsObject):
    """Marks of ``size`` px at (x, y), drawn in device pixels (a mark keeps its shape
    under the view's unequal x and y scales) by the subclass's paint; bounds padded by
    the marks' radius. Linear axes only."""

    def __init__(self, opts: dict):
        super().__init__()
        self.opts = opts  # what pyqtgraph's legend sample reads: pen, brush, symbol, size
        self.x = self.y = np.zeros(0)
        self._points = QtGui.QPolygonF()
        self._data_rect = QtCore.QRectF()
        self._bounds: QtCore.QRectF | None = None

    def setData(self, x, y) -> None:
        """Marks at the finite (x, y) rows."""
        self.prepareGeometryChange()
        self.x, self.y = finite_xy(np.asarray(x, float), np.asarray(y, float))
        # (pyqtgraph's conversion fails on no points)
        self._points = pg.functions.arrayToQPolygonF(self.x, self.y) if self.x.size else QtGui.QPolygonF()
        self._data_rect = self._points.boundingRect()  # the data's bounds, for both uses
        self._bounds = None
        self.informViewBoundsChanged()
        self.update()

    def getData(self) -> tuple[np.ndarray, np.ndarray]:
        return self.x, self.y

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):
        if not self.x.size:
            return (None, None)
        r = self._data_rect
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())

    def viewTransformChanged(self) -> None:
        super().viewTransformChanged()
        self._bounds = None  # the marks' radius, in data units, changed
        self.prepareGeometryChange()

    def boundingRect(self) -> QtCore.QRectF:
        if self._bounds is None:
            if not self.x.size:
                self._bounds = QtCore.QRectF()
            else:
                px, py = self.pixelVectors()
                pad = self.opts["size"] / 2 + 1
                dx = pad * px.length() if px is not None else 0.0
                dy = pad * py.length() if py is not None else 0.0
                self._bounds = self._data_rect.adjusted(-dx, -dy, dx, dy)
        return QtCore.QRectF(self._bounds)

    def _device_points(self, painter) -> QtGui.QPolygonF:
        """The points in device pixels, the painter reset to draw there."""
        points = painter.transform().map(self._points)
        painter.resetTransform()
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)  # as pyqtgraph's symbols
        return points


class Dots(Marks):
    """Round dots of one colour, ``size`` px across, at (x, y): a scatter of thousands of
    points set anew every frame, stamped from one pre-drawn dot in one call
    (QPainter.drawPixmapFragments, as pyqtgraph's ScatterPlotItem draws from its atlas).
    pyqtgraph's ScatterPlotItem builds a record per point on each setData (2.6 ms of a
    21 ms frame for the Sparsity force panel's two at m = 10^3); drawing the points with a
    round 5 px pen (drawPoints) rasterised each dot anew: 3.2 ms for 2,500 dots, against
    0.4 ms stamped. The legend draws it as a dot."""

    def __init__(self, color, size: float = 5.0):
        super().__init__({"pen": None, "brush": pg.mkBrush(color), "symbol": "o", "size": size})
        self._pen = QtGui.QPen(QtGui.QColor(color), size)
        self._pen.setCosmetic(True)  # size px on screen, whatever the view's scale
        self._pen.setCapStyle(QtCore.Qt.PenCapStyle.RoundCap)
        self._stamp: QtGui.QPixmap | None = None  # the dots, for the device's pixel ratio
        # (pyqtgraph's array of Qt structs; without it the dots are drawn by the round pen)
        self._fragments = (
            pg_compat.PrimitiveArray(QtGui.QPainter.PixmapFragment, 10) if pg_compat.fast_dots() else None
        )

    STEPS = 4  # a dot lands within 1/8 px of its place: stamps for 4 x 4 sub-pixel offsets

    def _stamps_for(self, ratio: float) -> QtGui.QPixmap:
        """The dot drawn by the round pen STEPS x STEPS times, cell (i, j) of ``side`` px with
        its middle at ``corner + ((i + 0.5) / STEPS, (j + 0.5) / STEPS)``, in device pixels."""
        if self._stamp is None or self._stamp.devicePixelRatio() != ratio:
            side = math.ceil(ratio * self.opts["size"]) + 4
            side += 1 - side % 2
            stamps = QtGui.QPixmap(side * self.STEPS, side * self.STEPS)
            stamps.fill(QtCore.Qt.GlobalColor.transparent)
            painter = QtGui.QPainter(stamps)
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            dot = QtGui.QPen(self._pen)
            dot.setWidthF(ratio * self.opts["size"])
            painter.setPen(dot)
            corner = side // 2
            for i in range(self.STEPS):
                for j in range(self.STEPS):
                    painter.drawPoint(
                        QtCore.QPointF(
                            i * side + corner + (i + 0.5) / self.STEPS,
                            j * side + corner + (j + 0.5) / self.STEPS,
                        )
                    )
            painter.end()
            stamps.setDevicePixelRatio(ratio)  # remembered; the fragments scale by 1/ratio
            self._stamp = stamps
        return self._stamp

    def paint(self, painter, *args) -> None:
        n = self.x.size
        if not n:
            return
        if self._fragments is None:
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            painter.setPen(self._pen)
            painter.drawPoints(self._points)
            return
        # where the dots' middles land in device pixels (the views neither rotate nor shear)
        t = painter.transform()
        painter.resetTransform()
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        stamps = self._stamps_for(ratio)
        side = stamps.width() // self.STEPS
        corner = side // 2
        fragments = self._fragments
        fragments.resize(n)
        f = fragments.ndarray()
        for axis, (a, b, c) in enumerate(((t.m11(), t.m21(), t.dx()), (t.m12(), t.m22(), t.dy()))):
            # (far outside the view, as pyqtgraph's scatter: Qt's raster engine overflows)
            at = np.clip(ratio * (a * self.x + b * self.y + c), -(2.0**30), 2.0**30)
            whole = np.floor(at)
            cell = np.minimum((self.STEPS * (at - whole)).astype(np.int64), self.STEPS - 1)
            # the cell's top-left on a whole pixel: Qt does not round it
            f[:, axis] = (whole - corner + side / 2) / ratio
            f[:, 2 + axis] = cell * side
        f[:, 4:10] = (side, side, 1 / ratio, 1 / ratio, 0.0, 1.0)
        painter.drawPixmapFragments(*fragments.drawargs(), stamps)


class Symbols(Marks):
    """A few marks of one of pyqtgraph's symbols ("t": ▽, "x": ×, ...), ``size`` px, at
    (x, y), drawn as one path. As a ScatterPlotItem, a handful of static marks cost
    about 0.2 ms of every frame they were repainted in (its per-point bookkeeping in
    Python), for two of them about 4 % of a frame at m = 10^3 (py-spy, replay)."""

    def __init__(self, symbol: str, size: float, pen: QtGui.QPen, brush=None):
        brush = pg.mkBrush(brush) if brush is not None else None
        super().__init__({"pen": pen, "brush": brush, "symbol": symbol, "size": size})
        self._symbol = QtGui.QTransform.fromScale(size, size).map(
            pg.graphicsItems.ScatterPlotItem.Symbols[symbol]
        )
        self._pen = QtGui.QPen(pen)
        self._brush = brush if brush is not None else QtGui.QBrush(QtCore.Qt.BrushStyle.NoBrush)

    def paint(self, painter, *args) -> None:
        path = QtGui.QPainterPath()
        for point in self._device_points(painter):
            path.addPath(self._symbol.translated(point))
        painter.setPen(self._pen)
        painter.setBrush(self._brush)
        painter.drawPath(path)


class CurveBundle(pg.GraphicsObject):
    """Several curves over one x, each in its own pen, set and drawn as one item: the
    Threshold crossing panel's tracked weights (8 by default, up to 16). As one
    PlotDataItem each, every curve cost its own setData, paint and bounds callbacks
    every frame (taking the panel from 8 curves to 1 saved 1.5 ms of a 13 ms frame at
    m = 10^3, replay). Draws what PlotDataItems with the same pens draw: the finite
    points (the positive ones on a log y axis), joined, in cosmetic pens (no bounds
    padding: the live pens are width 0)."""

    def __init__(self):
        super().__init__()
        self.pens: list[QtGui.QPen] = []
        self._source: tuple[np.ndarray, np.ndarray] | None = None  # (x, ys) as last set
        self._data: list[tuple[np.ndarray, np.ndarray]] = []  # each curve's finite (x, y)
        self._paths: list[QtGui.QPainterPath] = []
        self._rect: QtCore.QRectF | None = None  # the drawn points' bounds (view coordinates)
        self._log_y = False

    def set_pens(self, pens) -> None:
        """Curve k drawn in pens[k]."""
        self.pens = [QtGui.QPen(p) for p in pens]
        self.update()

    def setLogMode(self, x_mode: bool, y_mode: bool) -> None:
        """A log y axis (called by the plot, as for its data items): log10 of the
        positive values drawn. Log x is not supported (no time axis is logarithmic)."""
        if bool(y_mode) != self._log_y:
            self._log_y = bool(y_mode)
            if self._source is not None:
                self.setData(*self._source)

    def setData(self, x: np.ndarray, ys: np.ndarray) -> None:
        """Curve k is (x, ys[:, k])."""
        self.prepareGeometryChange()
        x = np.asarray(x, float)
        ys = np.asarray(ys, float)
        if ys.ndim == 1:
            ys = ys[:, None]
        self._source = (x, ys)
        self._data, self._paths = [], []
        lo, hi = [math.inf, math.inf], [-math.inf, -math.inf]
        for k in range(ys.shape[1]):
            cx, cy = finite_xy(x, ys[:, k], positive=self._log_y)
            self._data.append((cx, cy))
            if not cx.size:
                self._paths.append(QtGui.QPainterPath())
                continue
            vy = np.log10(cy) if self._log_y else cy
            self._paths.append(pg.functions.arrayToQPath(cx, vy, connect="all", finiteCheck=False))
            lo = [min(lo[0], float(cx.min())), min(lo[1], float(vy.min()))]
            hi = [max(hi[0], float(cx.max())), max(hi[1], float(vy.max()))]
        self._rect = QtCore.QRectF(QtCore.QPointF(*lo), QtCore.QPointF(*hi)) if lo[0] <= hi[0] else None
        self.informViewBoundsChanged()
        self.update()

    def getData(self, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Curve k's finite points, as given (not log10)."""
        return self._data[k] if k < len(self._data) else (np.zeros(0), np.zeros(0))

    def view_data(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Curve k's points as drawn (view coordinates: log10 of y on a log axis)."""
        x, y = self.getData(k)
        return x, (np.log10(y) if self._log_y else y)

    @property
    def curve_count(self) -> int:
        return len(self._data)

    def left_view(self, view: QtCore.QRectF) -> bool:
        """Whether a curve's newest point lies outside ``view`` (view coordinates)."""
        for cx, cy in self._data:
            if cx.size:
                y = math.log10(cy[-1]) if self._log_y else cy[-1]
                if not (view.left() <= cx[-1] <= view.right() and view.top() <= y <= view.bottom()):
                    return True
        return False

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):
        r = self._rect
        if r is None:
            return (None, None)
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF() if self._rect is None else QtCore.QRectF(self._rect)

    def paint(self, painter, *args) -> None:
        for pen, path in zip(self.pens, self._paths, strict=False):
            painter.setPen(pen)
            painter.drawPath(path)
