"""pyqtgraph's private parts that the panels use or override, in one place.

The live window writes a curve's data where PlotDataItem.setData would (a third of a
frame's Python work at m = 10^3), stamps dots through pyqtgraph's PrimitiveArray, draws
legend symbols with its drawSymbol, and overrides three private hooks. Each use here says
what it needs; when an upgrade removes it, the use falls back to pyqtgraph's public path
(the panels are then only slower) and tests/plots/test_pg_compat.py fails, so the upgrade
is noticed. SPARSITY_GUI_PLAIN_PYQTGRAPH=1 turns every fast path off.

Tested with pyqtgraph 0.13.7 and 0.14 (pyproject.toml bounds it below 0.15)."""

from __future__ import annotations

import os

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

TESTED_PYQTGRAPH = ("0.13.7", "0.14")  # the oldest and newest versions these touches are tested on
OFF_SWITCH = "SPARSITY_GUI_PLAIN_PYQTGRAPH"

try:  # PlotDataItem's data record (0.13.7-0.14)
    from pyqtgraph.graphicsItems.PlotDataItem import PlotDataset
except ImportError:
    PlotDataset = None
try:  # an array of Qt structs drawn in one call (the dots' fragments)
    from pyqtgraph.Qt.internals import PrimitiveArray
except ImportError:
    PrimitiveArray = None
try:  # the legend's symbol for a Marks item
    from pyqtgraph.graphicsItems.ScatterPlotItem import drawSymbol
except ImportError:
    drawSymbol = None

# private methods that our subclasses override: a rename upstream would leave the
# override dead without a word (class, method, the subclass that relies on it)
OVERRIDDEN = (
    ("AxisItem", "_updateLabel", "plots/axes.Axis: the title set only when its text changes"),
    ("LegendItem", "_addItemToLayout", "plots/legend.LegendRow: entries flow into rows"),
    ("LegendItem", "_removeItemFromLayout", "plots/legend.LegendRow: rows emptied"),
)

# private attributes read or written (owner, attribute)
USED = (
    ("PlotDataItem", "_getDisplayDataset"),
    ("PlotDataItem", "_datasetMapped"),
    ("PlotDataItem", "_datasetDisplay"),
    ("PlotDataItem", "_dataset"),
    ("PlotCurveItem", "_boundsCache"),
    ("AxisItem", "_adjustSize"),
)


def _instance_has(owner: str, attr: str) -> bool:
    """Whether a fresh pyqtgraph ``owner`` has ``attr`` (instance attributes included)."""
    cls = getattr(pg, owner)
    if hasattr(cls, attr):
        return True
    try:
        return hasattr(cls(), attr)
    except Exception:  # noqa: BLE001 - a constructor that changed: the attribute is not known there
        return False


def touches() -> dict[str, bool]:
    """Every private name used here and whether this pyqtgraph has it (the guard test,
    docs/figures.md)."""
    found = {
        "pyqtgraph.graphicsItems.PlotDataItem.PlotDataset": PlotDataset is not None,
        "pyqtgraph.Qt.internals.PrimitiveArray": PrimitiveArray is not None,
        "pyqtgraph.graphicsItems.ScatterPlotItem.drawSymbol": drawSymbol is not None,
    }
    for owner, attr, _why in OVERRIDDEN:
        found[f"pyqtgraph.{owner}.{attr}"] = hasattr(getattr(pg, owner), attr)
    for owner, attr in USED:
        found[f"pyqtgraph.{owner}.{attr}"] = _instance_has(owner, attr)
    return found


def enabled() -> bool:
    """Whether the fast paths may be used (read each time: a test or a user may set it)."""
    return os.environ.get(OFF_SWITCH) != "1"


_FAST_CURVES = PlotDataset is not None and all(
    hasattr(pg.PlotDataItem, name) for name in ("_getDisplayDataset", "informViewBoundsChanged")
)


def fast_curves() -> bool:
    return _FAST_CURVES and enabled()


def fast_dots() -> bool:
    return PrimitiveArray is not None and enabled()


# PlotDataItem's style options and their names on its curve (PlotDataItem.updateItems)
_CURVE_STYLE = (
    ("pen", "pen"),
    ("shadowPen", "shadowPen"),
    ("fillLevel", "fillLevel"),
    ("fillOutline", "fillOutline"),
    ("fillBrush", "brush"),
    ("antialias", "antialias"),
)

# PlotDataItem options under which it draws its data as they are (no transform but log10)
_TRANSFORMS = (
    "subtractMeanMode",
    "fftMode",
    "derivativeMode",
    "phasemapMode",
    "clipToView",
    "autoDownsample",
)


def put_curve_data(item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray, finite: bool) -> bool:
    """Leave on ``item`` what setData(x, y) would, for a plain line (no symbol, no
    transform but a log axis), skipping its type checks, finiteness scans and style
    updates; False (nothing done) where that is not known to be the same. ``finite``: no
    NaN in x or y (else NaN rows, in both, are the breaks of a curve made with
    connect="finite")."""
    opts = item.opts
    if (
        not fast_curves()
        or len(x) == 0
        or opts["symbol"] is not None
        or opts["stepMode"]
        or opts["downsample"] != 1
        or isinstance(opts["connect"], np.ndarray)
        or any(opts[name] for name in _TRANSFORMS)
    ):
        return False
    # what setData would leave: the data, their log10 where an axis is logarithmic (a
    # value <= 0 becomes a gap), the display data made from them (pyqtgraph's limit on
    # far off-screen values)
    item._dataset = PlotDataset(x, y, finite, finite)
    mapped = PlotDataset(x, y, finite, finite)
    if True in opts["logMode"]:
        mapped.applyLogMapping(opts["logMode"])
    gaps = bool(mapped.containsNonfinite)
    bounds = None
    if not gaps:
        # the data's bounds, which pyqtgraph works out twice more (nanmin and nanmax, per
        # axis, for the display data's range limit and for the curve's bounding rect:
        # about 80 µs a curve, 20 curves a frame), once, from data known finite
        bounds = (float(mapped.x.min()), float(mapped.x.max()), float(mapped.y.min()), float(mapped.y.max()))
        corners = QtCore.QPointF(bounds[0], bounds[2]), QtCore.QPointF(bounds[1], bounds[3])
        mapped._dataRect = QtCore.QRectF(*corners)
    item._datasetMapped = mapped
    item._datasetDisplay = None
    shown = item._getDisplayDataset()
    curve = item.curve
    # the item's style too, as setData hands it over: an item that never had data through
    # setData has never given its curve its pen (the curve's own default, white, is
    # invisible on the panels' white background)
    _put_on_curve(
        curve, shown.x, shown.y, gaps, {name: opts[key] for key, name in _CURVE_STYLE if key in opts}
    )
    if (
        bounds is not None
        and isinstance(getattr(curve, "_boundsCache", None), list)
        and curve.opts["fillLevel"] is None
        and all(_cosmetic(curve.opts[p]) for p in ("pen", "shadowPen"))
    ):
        if shown.y is not mapped.y:  # clipped to pyqtgraph's limit around the view
            bounds = (*bounds[:2], float(shown.y.min()), float(shown.y.max()))
        # a cosmetic pen adds its width in pixels to the bounding rect, not here
        curve._boundsCache = [
            [(1.0, None), bounds[:2]],
            [(1.0, None), bounds[2:]],
        ]
    if not item.curve.isVisible():
        item.curve.show()
    item.informViewBoundsChanged()  # an auto-ranged view (a user's 'A') refits
    return True


# what PlotCurveItem.updateData empties when the data change (0.13.7: _renderSegmentList;
# 0.14: _lineSegmentsRendered)
_CURVE_CACHES = (
    ("path", None),
    ("fillPath", None),
    ("_fillPathList", None),
    ("_mouseShape", None),
    ("_renderSegmentList", None),
    ("_lineSegmentsRendered", False),
)


def _put_on_curve(curve: pg.PlotCurveItem, x: np.ndarray, y: np.ndarray, gaps: bool, style: dict) -> None:
    """What PlotCurveItem.setData(x=x, y=y, connect=..., skipFiniteCheck=..., **style)
    leaves, for 1-D float arrays: the style set only where it changed (setPen makes a
    new pen, and each setter invalidates the bounds), no argument checks, and no
    sigPlotChanged (pyqtgraph listens to it only in OpenGL mode, which no panel uses)."""
    copts = curve.opts
    for name, value in style.items():
        if name in ("pen", "shadowPen", "brush"):
            if value is None or copts[name] is None:
                changed = value is not copts[name]
            else:
                changed = copts[name] != value
            if changed:
                {"pen": curve.setPen, "shadowPen": curve.setShadowPen, "brush": curve.setBrush}[name](value)
        elif name == "fillLevel":
            if copts[name] != value:
                curve.setFillLevel(value)
        else:
            copts[name] = value
    curve.yData = y
    curve.xData = x
    curve.invalidateBounds()
    curve.prepareGeometryChange()
    curve.informViewBoundsChanged()
    for name, empty in _CURVE_CACHES:
        if hasattr(curve, name):
            setattr(curve, name, empty)
    copts["connect"] = "finite" if gaps else "all"
    copts["skipFiniteCheck"] = not gaps
    curve.update()


def _cosmetic(pen) -> bool:
    """Whether a curve's pen adds nothing to its data bounds (none, or cosmetic)."""
    return pen is None or pen.isCosmetic() or pen.style() == QtCore.Qt.PenStyle.NoPen


def unclipped_data_rect(item: pg.PlotDataItem) -> QtCore.QRectF | None:
    """The bounds of the data ``item`` shows, when it shows them unclipped (pyqtgraph's
    display data are its mapped data); None when that is not known."""
    if not fast_curves():
        return None
    mapped = getattr(item, "_datasetMapped", None)
    shown = getattr(item, "_datasetDisplay", None)
    if mapped is None or shown is None or shown.y is not mapped.y:
        return None
    return mapped.dataRect()


def note_view_range_changed(item: pg.PlotDataItem, changed) -> None:
    """What PlotDataItem.viewRangeChanged records for the next display data it makes
    (getData, an export) when it does not set its data again."""
    if changed is None or changed[0]:
        item.setProperty("xViewRangeWasChanged", True)
    if changed is None or changed[1]:
        item.setProperty("yViewRangeWasChanged", True)


def adjust_axis_size(axis: pg.AxisItem) -> None:
    """Fit the axis to its title and tick labels, as pyqtgraph does after a title change."""
    if hasattr(axis, "_adjustSize"):
        axis._adjustSize()
    else:
        axis.updateGeometry()


def refresh_axis_label(axis: pg.AxisItem) -> None:
    """Set the axis title again from its labelString (after that method was replaced)."""
    if hasattr(axis, "_updateLabel"):
        axis._updateLabel()
    else:
        axis.label.setHtml(axis.labelString())
        adjust_axis_size(axis)
        axis.update()


def draw_symbol(painter: QtGui.QPainter, symbol: str, size: float, pen, brush) -> None:
    """One of pyqtgraph's symbols, ``size`` px, centred on the painter's origin."""
    if drawSymbol is not None and enabled():
        drawSymbol(painter, symbol, size, pen, brush)
        return
    path = QtGui.QTransform.fromScale(size, size).map(pg.graphicsItems.ScatterPlotItem.Symbols[symbol])
    painter.setPen(pen)
    painter.setBrush(brush)
    painter.drawPath(path)
