"""Pinned runs drawn on a panel, behind the live run: each pinned curve in its live
curve's colour, faded, with a dash pattern of its own per pin, and one legend entry per
pinned run (a grey sample of its dashes, named by the parameters that differ).

A panel opts in by mixing in `PinnablePanel` (before its LivePanel base) and listing its
`PinCurve`s; the window calls `show_pins` when the pins or their names change. Pinned
curves are plain plot items: the view's auto-range includes them, and a reset of the live
run leaves them alone. They are painted, all of a plot's together, by one `PinCanvas`
that Qt keeps as a pixmap until a pin or the view changes: the live run's frames blit it.

A series of snapshots (a pinned run with ``marks="points"``: File → Compare with
checkpoints…) is drawn as hollow circles in the live curve's colour, over the live run's
curves (it is what the live run is compared with), its legend sample a circle."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.pins import PinnedRun, pin_dashes
from sparsity_gui.plots.base import LIVE_WIDTH
from sparsity_gui.plots.curves import ClipAwareCurve, set_curve
from sparsity_gui.plots.legend import RowSample

PIN_ALPHA = 110  # of 255: faded behind the live curves
PIN_Z = -2  # behind the live curves, in front of the change markers
POINTS_Z = 5  # a series' snapshots: over the live curves
POINT_SIZE = 7  # px


def pin_pen(colour: str, number: int, alpha: int = PIN_ALPHA) -> QtGui.QPen:
    """A pinned curve's pen: the live colour with ``alpha``, the pin's own dashes."""
    c = pg.mkColor(colour)
    c.setAlpha(alpha)
    p = pg.mkPen(c, width=LIVE_WIDTH)
    p.setCosmetic(True)
    p.setDashPattern(list(pin_dashes(number)))
    return p


def point_pen(colour: str) -> QtGui.QPen:
    """The outline of a snapshot's circle: the live colour, opaque."""
    p = pg.mkPen(pg.mkColor(colour), width=1.5)
    p.setCosmetic(True)
    return p


def points_item(colour: str) -> ClipAwareCurve:
    """A series' snapshots on one curve: hollow circles, no line."""
    item = ClipAwareCurve(
        pen=None, symbol="o", symbolSize=POINT_SIZE, symbolPen=point_pen(colour), symbolBrush=None
    )
    item.setZValue(POINTS_Z)
    return item


LABEL_CHARS = 44  # a pin's legend text longer than this is cut (at 1366x768 it ran off the panel)


def shown_label(label: str) -> str:
    """A pin's name as its legend entry shows it: cut with … past LABEL_CHARS."""
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1].rstrip(" ,") + "…"


class PinSample(RowSample):
    """A pinned run's legend sample: one short line in each of its curves' pens (the
    panel's sub-plots too), so that the sample looks like what it names."""

    def __init__(self, pens: list[QtGui.QPen], points: bool = False):
        item = pg.PlotDataItem(pen=pens[0])
        super().__init__(item)
        self.pens = list(pens)
        self.points = points  # a series of snapshots: a circle per pen

    def paint(self, p, *args) -> None:
        height = self.height() or 20.0
        for k, pen in enumerate(self.pens):
            y = height * (k + 1) / (len(self.pens) + 1)
            p.setPen(pen)
            if self.points:
                p.setBrush(QtCore.Qt.BrushStyle.NoBrush)
                r = POINT_SIZE / 2
                p.drawEllipse(QtCore.QPointF(10 + 6 * (k - (len(self.pens) - 1) / 2), y), r, r)
            else:
                p.drawLine(QtCore.QPointF(0, y), QtCore.QPointF(20, y))


# Qt's pixmap cache holds the item caches (the axes', the legends', the pin canvases'); its
# default 10 MiB evicts some of them every frame once a window has six panels with pins
# (each canvas a panel's data area: about 0.7 MiB at 1600x1000), and an evicted cache is
# painted again in full
PIXMAP_CACHE_KIB = 64 * 1024


class PinCanvas(pg.GraphicsObject):
    """The pinned curves of one plot, painted as one cached item. Each pinned curve stays
    a plot item of its own (its data, pens, bounds and clipping are pyqtgraph's, the ranges
    and the tests read them) but paints nothing itself (ItemHasNoContents); this item
    paints them all, in pin order, through their own paint, into a pixmap that Qt keeps
    (DeviceCoordinateCache) until a pin is drawn anew or the view moves or resizes. Painting
    the eight pins of each panel every frame was most of the paint time with pins (about
    70 dashed curves a frame: bench_gui.py --profile "1000, 8 pins")."""

    def __init__(self):
        super().__init__()
        self.curves: list[pg.PlotDataItem] = []
        self._bounds: QtCore.QRectF | None = None
        self.setZValue(PIN_Z)
        self.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if QtGui.QPixmapCache.cacheLimit() < PIXMAP_CACHE_KIB:
            QtGui.QPixmapCache.setCacheLimit(PIXMAP_CACHE_KIB)

    def add(self, item: pg.PlotDataItem) -> None:
        item.curve.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        self.curves.append(item)
        self.changed()

    def remove(self, item: pg.PlotDataItem) -> None:
        self.curves.remove(item)
        self.changed()

    def changed(self) -> None:
        """A pinned curve's data or pen changed: paint the pixmap again."""
        self.prepareGeometryChange()
        self._bounds = None
        self.update()

    def viewTransformChanged(self) -> None:
        super().viewTransformChanged()
        self.changed()  # the curves' bounds are padded in pixels

    def boundingRect(self) -> QtCore.QRectF:
        if self._bounds is None:
            rect = QtCore.QRectF()
            for item in self.curves:
                curve = item.curve
                if item.isVisible() and curve.isVisible():
                    rect = rect.united(curve.mapRectToItem(self, curve.boundingRect()))
            self._bounds = rect
        return QtCore.QRectF(self._bounds)

    def paint(self, painter, option, widget=None) -> None:
        for item in self.curves:
            curve = item.curve
            if not (item.isVisible() and curve.isVisible()):
                continue
            transform, ok = curve.itemTransform(self)
            painter.save()
            if ok:
                painter.setTransform(transform, True)
            curve.paint(painter, option, widget)
            painter.restore()


@dataclass
class PinCurve:
    """One curve drawn per pinned run: on ``plot``, from the pinned rows by ``xy``, with
    y > 0 only when ``positive()`` (a log axis)."""

    plot: pg.PlotItem
    colour: str
    xy: Callable[[PinnedRun], tuple[np.ndarray, np.ndarray]]
    positive: Callable[[], bool] = lambda: False
    # where the curve's y range starts counting (ranges.settled_y_bounds), or None
    settled: Callable[[PinnedRun], float] | None = None


class PinLayer:
    """The plot items of a panel's pinned runs (created when a run is pinned, removed with
    it) and their legend entries on ``legend_plot``."""

    def __init__(self, curves: list[PinCurve], legend_plot: pg.PlotItem | None):
        self.curves = curves
        self.legend_plot = legend_plot
        self.pins: dict[int, PinnedRun] = {}
        self.items: dict[int, list[pg.PlotDataItem]] = {}
        self.samples: dict[int, pg.PlotDataItem] = {}
        self.labels: dict[int, str] = {}
        self.canvases: dict[int, PinCanvas] = {}  # id(plot) -> its pinned lines' canvas

    def canvas(self, plot: pg.PlotItem) -> PinCanvas:
        canvas = self.canvases.get(id(plot))
        if canvas is None:
            canvas = self.canvases[id(plot)] = PinCanvas()
            plot.addItem(canvas, ignoreBounds=True)
        return canvas

    @property
    def legend(self):
        return None if self.legend_plot is None else self.legend_plot.legend

    def show(self, pins: list[PinnedRun], labels: dict[int, str]) -> bool:
        """Draw these pins, so named; returns whether a pin was added or removed (a new
        name alone draws nothing new)."""
        wanted = {p.number: p for p in pins}
        changed = False
        for number in list(self.pins):
            if wanted.get(number) is not self.pins[number]:
                self._drop(number)
                changed = True
        for number, pin in wanted.items():
            label = labels.get(number, f"pin {number}")
            if number not in self.pins:
                self._add(pin, label)
                changed = True
            elif label != self.labels[number]:  # text layout is slow: only on change
                self.labels[number] = label
                if self.legend is not None:
                    self.legend.set_label(self.samples[number].item, shown_label(label))
        return changed

    def _add(self, pin: PinnedRun, label: str) -> None:
        items = []
        points = pin.marks == "points"
        for curve in self.curves:
            if points:
                item = points_item(curve.colour)
            else:
                item = ClipAwareCurve(pen=pin_pen(curve.colour, pin.number))
                item.setZValue(PIN_Z)
            curve.plot.addItem(item)
            if not points:
                self.canvas(curve.plot).add(item)
            items.append(item)
        self.pins[pin.number] = pin
        self.items[pin.number] = items
        self.labels[pin.number] = label
        if self.legend is not None:
            pens = [point_pen(c.colour) for c in self.curves] if points else [i.opts["pen"] for i in items]
            sample = PinSample(pens, points)
            self.samples[pin.number] = sample
            self.legend.addItem(sample, shown_label(label))
        self._draw(pin.number)

    def _drop(self, number: int) -> None:
        for curve, item in zip(self.curves, self.items.pop(number), strict=True):
            curve.plot.removeItem(item)
            canvas = self.canvases.get(id(curve.plot))
            if canvas is not None and item in canvas.curves:
                canvas.remove(item)
        sample = self.samples.pop(number, None)
        if sample is not None and self.legend is not None:
            self.legend.removeItem(sample.item)
        del self.pins[number]
        del self.labels[number]

    def _draw(self, number: int) -> None:
        pin = self.pins[number]
        for curve, item in zip(self.curves, self.items[number], strict=True):
            with np.errstate(divide="ignore", invalid="ignore"):
                x, y = curve.xy(pin)
            set_curve(item, x, y, positive=curve.positive())
            if curve.settled is not None:
                item.settled_from = curve.settled(pin)
            canvas = self.canvases.get(id(curve.plot))
            if canvas is not None and item in canvas.curves:
                canvas.changed()

    def redraw(self) -> None:
        for number in self.pins:
            self._draw(number)


class PinnablePanel:
    """Mixed into a LivePanel (listed before it): pinned runs drawn from `pin_curves`."""

    _pin_layer: PinLayer | None = None
    # the time axes follow the live run alone (pinned runs drawn where they fall), or
    # hold every pinned run too (a pin to t = 620 would squeeze a live run at t = 8)
    follow_live = True

    def set_follow_live(self, follow: bool) -> None:
        self.follow_live = follow
        self._force_range = True

    def range_items(self, plot: pg.PlotItem) -> list | None:
        if not (self.follow_live and plot in self.time_plots and self._pin_layer and self._pin_layer.items):
            return None
        pinned = {id(item) for items in self._pin_layer.items.values() for item in items}
        return [item for item in plot.vb.addedItems if id(item) not in pinned]

    def pin_curves(self) -> list[PinCurve]:
        """The curves a pinned run adds to this panel (none: the panel shows no pins)."""
        return []

    def show_pins(self, pins: list[PinnedRun], labels: dict[int, str]) -> None:
        """Draw these pinned runs (and no others), named by ``labels`` (number -> text)."""
        if self._pin_layer is None:
            curves = self.pin_curves()
            if not curves:
                return
            legend_plot = next((c.plot for c in curves if c.plot.legend is not None), None)
            self._pin_layer = PinLayer(curves, legend_plot)
        # a live change of λ renames the pins (every panel, mid-drag): only a pin added or
        # removed refits the ranges (45 ms a rename over seven panels, measured)
        if self._pin_layer.show(list(pins), labels):
            self._force_range = True  # fit the pinned curves in (a user's zoom is kept)
            self._manage_ranges()

    @property
    def pinned_items(self) -> dict[int, list[pg.PlotDataItem]]:
        """Pin number -> its plot items on this panel (tests and exports read them)."""
        return {} if self._pin_layer is None else dict(self._pin_layer.items)

    @property
    def pin_labels(self) -> dict[int, str]:
        return {} if self._pin_layer is None else dict(self._pin_layer.labels)

    def redraw(self) -> None:
        if self._pin_layer is not None:
            self._pin_layer.redraw()  # a toggle (log axis, w = 1/‖W‖₁) changed what is drawn
        super().redraw()
