"""What every panel shares: `Panel` (a titled plot area with toggles, managed axis
ranges, cached legends and vertical change markers), the live pens and the colours.

Both models' panels and the sweep figure derive from `Panel`. Each panel creates its plot
items once and, per frame, only calls setData on them with arrays from a snapshot."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.PlotDataItem import PlotDataset
from PySide6 import QtCore, QtGui, QtWidgets

# Colours (matplotlib's tab10, familiar from papers)
BLUE, ORANGE, GREEN, RED, PURPLE, GREY, PINK = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#7f7f7f",
    "#e377c2",
)


# Live pens are width 1: wider cosmetic pens take Qt's slow stroking path (3-15x slower
# per frame, measured). Exports scale the width up (plots/render.py).
LIVE_WIDTH = 1


def pen(color: str, style=QtCore.Qt.PenStyle.SolidLine) -> pg.QtGui.QPen:
    """A live pen: 1 px, cosmetic; emphasis comes from colour and dash, not width."""
    p = pg.mkPen(color, width=LIVE_WIDTH)
    p.setStyle(style)
    p.setCosmetic(True)
    return p


DASH = QtCore.Qt.PenStyle.DashLine


DOT = QtCore.Qt.PenStyle.DotLine


def finite_xy(x: np.ndarray, y: np.ndarray, positive: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Rows where both are finite (and y > 0 when a log axis will show them)."""
    keep = np.isfinite(x) & np.isfinite(y)
    if positive:
        keep &= y > 0
    return np.ascontiguousarray(x[keep]), np.ascontiguousarray(y[keep])


# PlotDataItem options under which it draws its data as they are (no transform but log10)
_TRANSFORMS = (
    "subtractMeanMode",
    "fftMode",
    "derivativeMode",
    "phasemapMode",
    "clipToView",
    "autoDownsample",
)


def set_curve(item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray, positive: bool = False) -> None:
    """Put finite data on a live curve, every frame: for a plain line (no symbol, no
    transform but a log axis) straight into its curve, skipping PlotDataItem.setData's
    type checks, finiteness scans and style updates (about 28 calls a frame: a third of
    the Python work of a frame at m = 10^3, measured with bench_gui.py --profile)."""
    x, y = finite_xy(np.asarray(x, float), np.asarray(y, float), positive)
    opts = item.opts
    if (
        len(x) == 0
        or opts["symbol"] is not None
        or opts["stepMode"]
        or opts["downsample"] != 1
        or isinstance(opts["connect"], np.ndarray)
        or any(opts[name] for name in _TRANSFORMS)
    ):
        item.setData(x, y, skipFiniteCheck=True)
        return
    # what setData would leave: the data, their log10 where an axis is logarithmic (a
    # value <= 0 becomes a gap), the display data made from them (pyqtgraph's limit on
    # far off-screen values), all known finite
    item._dataset = PlotDataset(x, y, True, True)
    mapped = PlotDataset(x, y, True, True)
    if True in opts["logMode"]:
        mapped.applyLogMapping(opts["logMode"])
    item._datasetMapped = mapped
    item._datasetDisplay = None
    shown = item._getDisplayDataset()
    gaps = bool(mapped.containsNonfinite)
    item.curve.setData(x=shown.x, y=shown.y, connect="finite" if gaps else "all", skipFiniteCheck=not gaps)
    if not item.curve.isVisible():
        item.curve.show()
    item.informViewBoundsChanged()  # an auto-ranged view (a user's 'A') refits


def set_broken_curve(
    item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray, steps: np.ndarray, positive: bool = False
) -> None:
    """A curve broken where ``steps`` changes from one row to the next (e.g. lam): a value
    that jumps there (θ = λ/(1-‖W‖²)) is not joined by a steep segment, which reads as a
    spike. Needs the item made with connect="finite"."""
    x, y, steps = (np.asarray(a, float) for a in (x, y, steps))
    keep = np.isfinite(x) & np.isfinite(y)
    if positive:
        keep &= y > 0
    x, y, steps = x[keep], y[keep], steps[keep]
    cuts = np.flatnonzero(steps[1:] != steps[:-1]) + 1
    if cuts.size:
        x = np.insert(x, cuts, np.nan)
        y = np.insert(y, cuts, np.nan)
    item.setData(np.ascontiguousarray(x), np.ascontiguousarray(y), connect="finite")


LABEL_PITCH = 1.8  # least distance between the centres of two log-axis labels, in label sizes
TIGHT_PITCH = 1.1  # ... on an axis too short for three labels at LABEL_PITCH
MINOR_PITCH = 2.0  # least px between two unlabelled grid lines (2..9 x 10^k)


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(k: int) -> str:
    return "10" + str(k).translate(SUPERSCRIPT)


def _log_text(x: float, pyqtgraph_text) -> str:
    """Plain numbers where they are short (20, 0.05, 1.4, 3000), else pyqtgraph's 2·10⁻⁵
    (never 3e+03: one number format on every axis)."""
    mantissa = x / 10.0 ** math.floor(math.log10(x))
    if 1 <= x < 1e4 and abs(x - round(x)) < 1e-9 * x:
        return f"{round(x)}"
    if 1e-3 <= x < 1e4 or abs(mantissa - round(mantissa)) > 1e-6:
        return f"{x:.3g}"
    return pyqtgraph_text(x)


def _whole_number_strings(tick_strings):
    """The labels of a linear axis of counts (ranks): 50,000 and 2·10⁶, never 2e+06."""

    def strings(values, scale, spacing):
        out = []
        for v in values:
            n = round(v * scale)
            if abs(n) < 10**6:
                out.append(f"{n:,}")
            else:
                k = math.floor(math.log10(abs(n)))
                m = n / 10**k
                out.append(f"{m:g}·{power_of_ten(k)}" if abs(m - round(m, 1)) < 1e-9 else f"{n:.2e}")
        return out

    return strings


def _scale_label(axis):
    """An axis title's scale as ×10⁻³ (pyqtgraph's (x0.001) beside (x1e-06) elsewhere)."""
    plain = axis.labelString

    def label() -> str:
        scale = axis.autoSIPrefixScale
        if axis.labelUnits or not axis.autoSIPrefix or scale == 1.0:
            return plain()
        k = round(-math.log10(scale))
        style = ";".join(f"{key}: {value}" for key, value in axis.labelStyle.items())
        return f"<span style='{style}'>{axis.labelText} (×{power_of_ten(k)})</span>"

    return label


def _log_tick_strings(axis, tick_strings):
    """The labels of a log axis (the values of the first level of _log_tick_values):
    pyqtgraph's 1, 10², 0.01 for decades; plain numbers (20, 50, 1.4) among other values."""

    def strings(values, scale, spacing):
        if not axis.logMode or all(abs(v - round(v)) < 1e-9 for v in values):
            return tick_strings(values, scale, spacing)
        return [
            _log_text(10.0**v, lambda x: tick_strings([math.log10(x)], scale, spacing)[0]) for v in values
        ]

    return strings


def log_axis_levels(
    lo: float, hi: float, size: float, extent: float, minor: bool, inset: float = 0.5
) -> list:
    """Tick levels [(spacing, values)] of a log axis showing 10^lo .. 10^hi on `size` px, for
    labels `extent` px long along the axis. The first level is what gets a label: values at
    least LABEL_PITCH extents apart (TIGHT_PITCH where that leaves fewer than three) and half
    an extent inside the ends (``inset``: pyqtgraph drops a label that sticks out). The second, if
    `minor`, is unlabelled grid lines at 2..9 x 10^k.

    Three decades or more inside: the decades, or every 2nd, 5th, 10th... where they would
    crowd, with no grid line at the others. Fewer: 1, 2 and 5 times a power of ten, or where
    that makes fewer than three labels or crowds them (over a decade or more) 1, 2, 3 and 5,
    or 1 and 3; below a decade with fewer than two of 1, 2 and 5 (1.1 to 1.9, say): 3 to 6
    evenly spaced values of 1, 2 or 5 times a power of ten."""
    best: list = []
    for pitch in (LABEL_PITCH * extent, TIGHT_PITCH * extent):
        levels = _log_levels(lo, hi, size, extent, pitch, minor, inset)
        if not best or len(levels[0][1]) > len(best[0][1]):
            best = levels
        if len(best[0][1]) >= 3:
            break
    return best


def _log_levels(
    lo: float, hi: float, size: float, extent: float, pitch_px: float, minor: bool, inset: float = 0.5
) -> list:
    """log_axis_levels for labels at least `pitch_px` apart."""
    px_per_decade = size / (hi - lo)
    pitch = pitch_px / px_per_decade  # in decades
    a, b = lo + inset * extent / px_per_decade, hi - inset * extent / px_per_decade  # a label fits

    def inside(mantissas, lo=a, hi=b) -> list[float]:
        out = (k + math.log10(m) for k in range(math.floor(lo) - 1, math.ceil(hi) + 1) for m in mantissas)
        return [v for v in out if lo - 1e-9 <= v <= hi + 1e-9]

    def levels(labelled, spacing, unlabelled=()) -> list:
        grid = inside(unlabelled, lo, hi)
        if minor and grid and math.log10(10 / 9) * px_per_decade >= MINOR_PITCH:
            return [(spacing, labelled), (None, grid)]
        return [(spacing, labelled)]

    fewer: list = []  # two labels that fit, if nothing gives three
    if len(inside((1,))) < 3:
        for mantissas, gap in (
            ((1, 2, 5), math.log10(2)),
            ((1, 2, 3, 5), math.log10(1.5)),
            ((1, 3), math.log10(3)),
        ):
            values = inside(mantissas)
            unlabelled = [m for m in range(2, 10) if m not in mantissas]
            if len(values) >= 3 and gap >= pitch:
                return levels(values, gap, unlabelled)
            if hi - lo < 1:
                if len(values) >= 2:
                    return levels(values, gap, unlabelled)
                return [_evenly_spaced(10.0**a, 10.0**b)]
            if len(values) == 2 and gap >= pitch and not fewer:
                fewer = levels(values, gap, unlabelled)
    step = next(s * 10**n for n in range(400) for s in (1, 2, 5) if s * 10**n >= pitch)
    decades = [float(k) for k in range(math.ceil(a - 1e-9), math.floor(b + 1e-9) + 1) if k % step == 0]
    if fewer and len(decades) < 2:
        return fewer
    return levels(decades, float(step), range(2, 10) if step == 1 else ())


def _evenly_spaced(a: float, b: float) -> tuple[float, list[float]]:
    """3 to 6 values of a..b, evenly spaced by 1, 2 or 5 times a power of ten (in log10)."""
    if not 0 < a < b:
        return (1.0, [])
    top = math.floor(math.log10(b - a))
    step = min(
        (m * 10.0**k for k in range(top - 2, top + 1) for m in (1, 2, 5) if (b - a) / (m * 10.0**k) <= 6),
        default=b - a,
    )
    first = math.ceil(a / step - 1e-9) * step
    count = int((b - first) / step + 1e-9) + 1
    return (math.log10(1 + step / a), [math.log10(first + i * step) for i in range(count)])


def _log_tick_values(axis, tick_values):
    """A log axis's ticks from log_axis_levels, its labels spaced by their size (pyqtgraph
    labels every 2..9 x 10^k tick, which pile up; over many decades it puts every other
    decade in a second level that may lose its labels; and 1.1 to 1.9 gets no tick)."""

    def values(lo, hi, size):
        if not axis.logMode or hi == lo or size <= 0:
            return tick_values(lo, hi, size)
        metrics = pg.QtGui.QFontMetricsF(axis.style["tickFont"] or pg.QtGui.QFont())
        vertical = axis.orientation in ("left", "right")
        extent = metrics.height() if vertical else metrics.horizontalAdvance("0.005")
        lo, hi = sorted((lo, hi))
        return log_axis_levels(lo, hi, size, extent, axis.style["maxTickLevel"] >= 1)

    return values


def log_ticks(lo: float, hi: float, values: Sequence[float] = ()) -> list[float]:
    """Labelled values for a log axis whose data span [lo, hi]: the given values when there
    are a few (the swept m), else 1-2-5 steps (decades only over more than three decades);
    decades further out, for a zoomed-out view."""
    if 1 <= len(values) <= 8:
        return sorted(float(v) for v in values)
    if not (lo > 0 and hi >= lo and math.isfinite(hi)):
        return []
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    mult = (1.0,) if k1 - k0 > 3 else (1.0, 2.0, 5.0)
    inside = [c * 10.0**k for k in range(k0, k1 + 1) for c in mult if lo <= c * 10.0**k <= hi]
    outside = [10.0**k for k in range(k0 - 6, k1 + 7) if not lo <= 10.0**k <= hi]
    return sorted(inside + outside)


def tick_text(v: float) -> str:
    return f"{v:g}" if 1e-3 <= v < 1e6 else f"{v:.0e}"


def _bounds_with(bounds, extras):
    """childrenBounds() widened to hold the extra values per axis."""
    out = []
    for axis in (0, 1):
        b = bounds[axis]
        vals = [v for v in extras[axis] if math.isfinite(v)]
        if b is not None and (b[0] is None or b[1] is None):
            b = None
        if vals:
            lo, hi = min(vals), max(vals)
            b = (lo, hi) if b is None else (min(b[0], lo), max(b[1], hi))
        out.append(b)
    return out


def settled_y_bounds(plot: pg.PlotItem, t0: float, items: list | None = None) -> tuple[float, float] | None:
    """The y extent (view coordinates) of what the plot's data items (or those of
    ``items``) draw at x >= t0, or None when nothing is drawn there yet."""
    lo, hi = math.inf, -math.inf
    for item in plot.listDataItems():
        if not item.isVisible() or (items is not None and item not in items):
            continue
        x, y = item.getData()
        if x is None or y is None or len(x) == 0:
            continue
        keep = (x >= t0) & np.isfinite(y)
        if keep.any():
            lo, hi = min(lo, float(y[keep].min())), max(hi, float(y[keep].max()))
    return (lo, hi) if lo <= hi else None


def transient_band(plot: pg.PlotItem, t_end: float, label: str = "") -> None:
    """A light band over 0 <= t < t_end, named by ``label`` just right of it (inside the
    view however narrow the band is)."""
    band = pg.LinearRegionItem((0.0, t_end), movable=False, brush=pg.mkBrush(0, 0, 0, 16), pen=pg.mkPen(None))
    band.setZValue(-10)
    plot.addItem(band, ignoreBounds=True)
    if label:
        edge = pg.InfiniteLine(
            pos=t_end,
            angle=90,
            pen=pg.mkPen(None),
            label=label,
            labelOpts={"position": 0.92, "color": GREY, "anchors": [(0, 0), (0, 0)]},
        )
        edge.setZValue(-9)
        plot.addItem(edge, ignoreBounds=True)


def tick_text_size(plot: pg.PlotItem) -> str:
    """The size of the plot's tick labels as CSS ('9pt'): the legend's text matches it."""
    axis = plot.getAxis("bottom")
    font = axis.style.get("tickFont") or axis.font()
    if font.pointSizeF() > 0:
        return f"{font.pointSizeF():g}pt"
    return f"{font.pixelSize()}px"


STACKED_AXIS_WIDTH = 60  # px of both left axes of a stacked pair: tick labels of 5 characters
TEXT_MARGIN = 1.0  # px around a title's, axis title's or legend label's text


AXIS_TITLE_MARGIN = 2.5  # ... an axis title's: its descenders clear of the legend below


def tight_text(item: QtWidgets.QGraphicsTextItem, margin: float = TEXT_MARGIN) -> None:
    """A text item padded by ``margin`` px, not Qt's 4 px."""
    item.document().setDocumentMargin(margin)


class RowSample(pg.ItemSample):
    """pyqtgraph's legend sample, as tall as its row (pyqtgraph's is a 20 px square, which
    left a row of text 4 px shorter overlapping the next row), its line or symbol drawn at
    the row's middle."""

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(0, 0, 20, self.height() or 20)

    def paint(self, p, *args) -> None:
        p.translate(0, ((self.height() or 20) - 20) / 2)
        super().paint(p, *args)


class LegendRow(pg.LegendItem):
    """A legend under its plot's x axis, never over the data: its entries flow into rows
    as text does, each row holding as many entries as the data area's width has room for
    (recomputed when the plot is resized or a label changes), so that a long entry takes a
    row of its own and the short ones share rows; its text the size of the tick labels.

    pyqtgraph's LegendItem ignores the view's transformations, so an export at scale 2
    drew it at half the size of everything else; this one is drawn in scene coordinates
    and scales with the rest."""

    GAP = 12.0  # px between two entries of a row

    def __init__(self, text_size: str):
        super().__init__(
            offset=None, labelTextSize=text_size, horSpacing=4, verSpacing=0, sampleType=RowSample
        )
        self.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations, False)
        # never wider than its entries, and never forcing the plot wider than the panel: the
        # width it gets decides its rows (fit_width)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Maximum, QtWidgets.QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(0)
        self.layout.setContentsMargins(2, 1, 2, 1)
        self.available = 400.0  # px of width for the entries (the data area's width)
        self.rows: list[list[int]] = []  # indices into self.items, row by row
        self.columns = 1  # the most entries in a row
        self._lines: list[QtWidgets.QGraphicsLinearLayout] = []

    def fit_width(self, width: float) -> None:
        """Lay the entries out again for a data area ``width`` px wide."""
        self.available = max(float(width), 1.0)
        self.relayout()

    def set_label(self, item, text: str) -> None:
        """Change an entry's text (and re-flow the rows if its new width needs it)."""
        label = self.getLabel(item)
        if label is not None and label.text != text:
            label.setText(text)  # its cell grows or shrinks with it (Qt's layout request)
            if not self.relayout():  # a new arrangement only when the rows change
                for line in self._lines:  # else the row's width, now
                    line.invalidate()
                self.updateGeometry()

    def entry_width(self, sample, label) -> float:
        sample_width = max(sample.minimumWidth(), sample.preferredWidth())
        return sample_width + self.layout.horizontalSpacing() + label.minimumWidth()

    def _wrap(self, label, width: float) -> bool:
        """Wrap a label's text at ``width`` px (-1: unwrapped); returns whether it changed."""
        if label.item.textWidth() == width:
            return False
        label.item.setTextWidth(width)
        label.updateMin()
        return True

    def rows_that_fit(self) -> tuple[list[list[int]], bool]:
        """The entries, in order, packed into rows no wider than the space available, and
        whether a label's wrapping changed. An entry wider than a whole row (the L1 law's
        constants and deviation, a long pin name) wraps its text onto more lines, in the
        rest of the current row if that is wide enough, instead of running off the panel."""
        left, _top, right, _bottom = self.layout.getContentsMargins()
        room = self.available - left - right
        rows: list[list[int]] = []
        width = 0.0
        changed = False
        for i, (sample, label) in enumerate(self.items):
            if label.item.textWidth() >= 0:
                changed |= self._wrap(label, -1)  # its whole width, to see if it fits now
            w = self.entry_width(sample, label)
            if rows and width + self.GAP + w <= room:
                rows[-1].append(i)
                width += self.GAP + w
                continue
            if w > room:  # too wide for any row: wrapped
                sample_width = w - label.minimumWidth()
                rest = room - width - self.GAP if rows else 0.0
                if rest >= 0.45 * room:
                    changed |= self._wrap(label, max(rest - sample_width, 40.0))
                    rows[-1].append(i)
                    width = room
                    continue
                changed |= self._wrap(label, max(room - sample_width, 40.0))
                w = self.entry_width(sample, label)
            rows.append([i])
            width = w
        return rows, changed

    def _clear_layout(self) -> None:
        layout = self.layout
        for i in range(layout.count() - 1, -1, -1):
            layout.removeAt(i)
        for line in self._lines:
            for j in range(line.count() - 1, -1, -1):
                line.removeAt(j)
        self._lines = []

    def relayout(self, force: bool = False) -> bool:
        """Flow the entries into rows again if their arrangement changes (or ``force``);
        returns whether it did."""
        rows, wrapped = self.rows_that_fit()
        if rows == self.rows and not force and not wrapped:
            return False
        self.rows = rows
        self.columns = max((len(r) for r in rows), default=1)
        self.columnCount = self.columns
        self._clear_layout()
        for r, row in enumerate(rows):
            line = QtWidgets.QGraphicsLinearLayout(QtCore.Qt.Orientation.Horizontal)
            line.setContentsMargins(0, 0, 0, 0)
            line.setSpacing(self.layout.horizontalSpacing())
            for k, i in enumerate(row):
                sample, label = self.items[i]
                line.addItem(sample)
                line.setAlignment(sample, QtCore.Qt.AlignmentFlag.AlignVCenter)
                line.addItem(label)
                if k < len(row) - 1:
                    line.setItemSpacing(2 * k + 1, self.GAP)
            line.addStretch(1)
            self.layout.addItem(line, r, 0)
            self._lines.append(line)
        self.rowCount = max(1, len(rows))
        self.layout.invalidate()
        self.updateGeometry()
        refit_to_views(self)
        return True

    # pyqtgraph's own placement: one column, then a fixed count; ours flows with the width
    def _addItemToLayout(self, sample, label) -> None:
        tight_text(label.item)
        label.updateMin()
        # pyqtgraph's samples are 20 px squares: a row as tall as the text is enough
        sample.setMaximumHeight(label.minimumHeight())
        self.relayout(force=True)

    def _removeItemFromLayout(self, *items) -> None:
        self._clear_layout()  # the entries are in the rows' layouts, not in self.layout
        self.rows = []
        for item in items:
            item.close()
            scene = item.scene()
            if scene:
                scene.removeItem(item)

    def removeItem(self, item) -> None:
        super().removeItem(item)
        self.relayout(force=True)

    def clear(self) -> None:
        super().clear()
        self.relayout(force=True)

    def updateSize(self) -> None:
        # the plot's layout sizes and places it (pyqtgraph's version sets a free geometry)
        self.updateGeometry()

    def setColumnCount(self, columnCount) -> None:  # the width decides
        self.relayout(force=True)


def refit_to_views(item: QtWidgets.QGraphicsItem) -> None:
    """Fit the central layout of the views showing ``item`` to their viewport again: a
    layout grown past the view while an item was wider (a legend in one row, a long
    line of text) does not shrink back by itself, and its right part would be cut off."""
    # lay the enclosing layouts out now (Qt would on a later event: an export drawn
    # before then would show the old arrangement)
    parent = item.parentWidget() if isinstance(item, QtWidgets.QGraphicsWidget) else None
    while parent is not None:
        layout = QtWidgets.QGraphicsWidget.layout(parent)  # pyqtgraph shadows .layout
        if layout is not None:
            layout.activate()
        parent = parent.parentWidget()
    scene = item.scene()
    for view in scene.views() if scene is not None else ():
        central = getattr(view, "centralWidget", None)
        if central is not None and getattr(view, "range", None) is not None:
            central.setGeometry(view.range)


def add_legend_row(plot: pg.PlotItem) -> LegendRow:
    """A LegendRow under the plot's x axis, as the plot's legend (plot(name=...) adds to it)."""
    legend = LegendRow(tick_text_size(plot))
    plot.layout.addItem(legend, 4, 0, 1, 3)  # under the y axis too: the plot's whole width
    plot.layout.setAlignment(legend, QtCore.Qt.AlignmentFlag.AlignHCenter)
    plot.layout.setRowStretchFactor(4, 0)
    _fit_legend_to(plot, legend)
    return legend


def _fit_legend_to(plot: pg.PlotItem, legend: LegendRow) -> None:
    plot.legend = legend
    plot.geometryChanged.connect(lambda p=plot, lg=legend: lg.fit_width(p.width() - 4))


def _integer_tick_values(axis, tick_values):
    """An axis of whole numbers (ranks) gets ticks at whole numbers only: pyqtgraph's
    fractional levels are dropped, and a range holding fewer than two of its ticks gets
    every whole number in it (up to 10)."""

    def whole(v: float) -> bool:
        x = 10.0**v if axis.logMode else v
        return abs(x - round(x)) < 1e-6 * max(1.0, abs(x))

    def values(lo, hi, size):
        levels = []
        for spacing, vals in tick_values(lo, hi, size):
            if not axis.logMode and spacing < 1.0:
                continue
            kept = [v for v in vals if whole(v)]
            if kept:
                levels.append((spacing, kept))
        if sum(lo <= v <= hi for _s, vals in levels for v in vals) < 2:
            a, b = (10.0**lo, 10.0**hi) if axis.logMode else (lo, hi)
            ks = range(max(math.ceil(a - 1e-9), 1 if axis.logMode else -(10**9)), math.floor(b + 1e-9) + 1)
            if 1 <= len(ks) <= 10:
                levels = [(1.0, [math.log10(k) if axis.logMode else float(k) for k in ks])]
        return levels

    return values


def whole_number_axis(axis: pg.AxisItem) -> None:
    """Mark an axis as counting things (ranks): Panel.sync_tick_text gives it whole ticks."""
    axis.whole_numbers = True


class Panel(QtWidgets.QFrame):
    """A titled plot area with a row of toggles, axis ranges that move only when the data
    leave them, and cached legends. Subclasses fill `self.plots` with `add_plot`."""

    title = ""
    claim = ""  # which claim of the note this panel lets you check (tooltip, README)

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName(type(self).__name__)
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(0)
        self.toggles = QtWidgets.QHBoxLayout()
        self.toggles.setContentsMargins(6, 0, 6, 0)
        self.toggles.addStretch(1)
        self.graphics = pg.GraphicsLayoutWidget()
        # on the right, room for half the last tick label of the x axis (pyqtgraph lets it
        # pass the plot's edge by up to 15 px; with less it was cut off at 1366x768)
        self.graphics.ci.setContentsMargins(4, 2, 16, 2)
        self.graphics.ci.setSpacing(2)  # Qt's default 6 px between stacked plots and legends
        layout.addWidget(self.graphics, 1)
        layout.addLayout(self.toggles)
        self.setToolTip(self.claim)
        self.plots: list[pg.PlotItem] = []
        self.time_plots: list[pg.PlotItem] = []
        self._user_zoomed: set[pg.PlotItem] = set()
        self._force_range = True  # the next ranges are set whatever the data
        # plot -> t: its y range is set by the data at t >= this (after a transient)
        self.settled_after: dict[pg.PlotItem, float] = {}

    def add_plot(
        self,
        row: int,
        title: str | None,
        x_label: str,
        y_label: str,
        time_axis: bool = False,
        legend: bool = True,
    ) -> pg.PlotItem:
        plot = self.graphics.addPlot(row=row, col=0, title=title)
        # Qt's text items pad their text by 4 px on every side: 8 px of each title, axis
        # title and legend row that a 1366x768 screen needs for the data
        tight_text(plot.titleLabel.item)
        plot.titleLabel.updateMin()
        for name in ("left", "bottom"):
            tight_text(plot.getAxis(name).label, AXIS_TITLE_MARGIN)
        plot.setLabel("bottom", x_label)
        plot.setLabel("left", y_label)
        plot.showGrid(x=True, y=True, alpha=0.25)
        # The grid makes each axis item span the whole plot, so every curve update would
        # repaint the axis text; a cached pixmap is redrawn only when the axis changes.
        for name in ("left", "bottom", "top", "right"):
            axis = plot.getAxis(name)
            axis.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if legend:
            add_legend_row(plot)
        plot.vb.disableAutoRange()
        plot.vb.sigRangeChangedManually.connect(lambda *_a, p=plot: self._user_zoomed.add(p))
        plot.vb.sigStateChanged.connect(lambda _vb, p=plot: self._auto_requested(p))
        self.plots.append(plot)
        if time_axis:
            self.time_plots.append(plot)
        return plot

    def stack(self, upper: pg.PlotItem, lower: pg.PlotItem) -> None:
        """``upper`` above ``lower`` on one time axis (linked): the upper plot's x axis keeps
        its grid but not its tick labels and title (the lower one's say it), and the upper
        plot's legend moves under the lower plot, so that the two data areas get the
        panel's height (at 1366x768 the legends between them had left 24-41 px each)."""
        lower.setXLink(upper)
        for plot in (upper, lower):  # one width: the data areas line up, no label over ticks
            plot.getAxis("left").setWidth(STACKED_AXIS_WIDTH)
        axis = upper.getAxis("bottom")
        axis.setStyle(showValues=False)
        axis.showLabel(False)
        axis.setHeight(4)
        legend = upper.legend
        if legend is not None:
            upper.layout.removeItem(legend)
            upper.layout.setRowFixedHeight(4, 0)
            row = self.graphics.ci.layout.rowCount()
            self.graphics.ci.addItem(legend, row=row, col=0)
            self.graphics.ci.layout.setAlignment(legend, QtCore.Qt.AlignmentFlag.AlignHCenter)
            self.graphics.ci.layout.setRowStretchFactor(row, 0)
            lower.geometryChanged.connect(lambda p=lower, lg=legend: lg.fit_width(p.width() - 4))

    TITLE_POINTS = (11, 10, 9, 8)  # pyqtgraph's title size, then smaller in a narrow panel

    def fit_titles(self) -> None:
        """Each plot's title in the largest of TITLE_POINTS that fits the panel's width (a
        1366-pixel screen leaves panels too narrow for the longer titles at 11 pt)."""
        changed = False
        for plot in self.plots:
            label = plot.titleLabel
            if not label.text or not label.isVisible():
                continue
            # the title sits above the view box, right of the left axis; its width (the
            # label's minimum) scales with the font size
            left = plot.getAxis("left")
            room = self.graphics.width() - 24 - (left.width() if left.isVisible() else 0)
            shown = float(str(label.opts.get("size", "11pt")).removesuffix("pt"))
            width_per_point = label.minimumWidth() / shown
            points = next(
                (p for p in self.TITLE_POINTS if p * width_per_point <= room), self.TITLE_POINTS[-1]
            )
            size = f"{points}pt"
            if label.opts.get("size") != size:
                label.setText(label.text, size=size)
                changed = True
            height = math.ceil(label.minimumHeight())
            if plot.layout.rowMinimumHeight(0) != height:  # pyqtgraph fixes it at 30 px
                plot.layout.setRowFixedHeight(0, height)
                changed = True
        if changed:  # lay out again now (a layout wider than the view stays clipped)
            for plot in self.plots:
                plot.layout.activate()
            self.graphics.ci.layout.activate()
            self.graphics.ci.setGeometry(self.graphics.range)

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_titles()

    def add_toggle(self, text: str, tooltip: str, checked: bool = False) -> QtWidgets.QCheckBox:
        box = QtWidgets.QCheckBox(text)
        box.setToolTip(tooltip)
        box.setChecked(checked)
        box.toggled.connect(self._toggled)
        self.toggles.insertWidget(self.toggles.count() - 1, box)
        return box

    @QtCore.Slot(bool)
    def _toggled(self, _checked: bool) -> None:
        self.apply_toggles()
        self.sync_tick_text()
        self.reset_ranges()
        self.redraw()

    def apply_toggles(self) -> None:
        pass

    def redraw(self) -> None:
        """Draw again what is shown (after a toggle)."""

    # --- ranges ------------------------------------------------------------------------
    # pyqtgraph's auto-range moves the axes a little on every frame, and re-laying out
    # the tick text of every axis is what makes a frame slow (20 fps against 58 at
    # m = 10^3, measured with benchmarks/bench_gui.py). Instead a range only changes when
    # the data leave it (or fill less than half of it), with a margin. A user's zoom is
    # left alone until the 'A' button asks for auto-range again.
    def reset_ranges(self) -> None:
        self._user_zoomed.clear()
        self._force_range = True

    @property
    def range_due(self) -> bool:
        """The next frame must check the ranges, whoever's turn it is: a new run, a toggle,
        the 'A' button, or data that have left the view (data_left_view)."""
        return self._force_range or self.data_left_view()

    def data_left_view(self) -> bool:
        """Whether what was drawn last lies outside a view (cheap: a panel knows its
        extremes); panels whose data grow fast (the largest weights) say so."""
        return False

    def _auto_requested(self, plot: pg.PlotItem) -> None:
        """The 'A' button (or the context menu) asked for auto-range: take it back."""
        if any(plot.vb.state["autoRange"]):
            self._user_zoomed.discard(plot)
            plot.vb.disableAutoRange()
            self._force_range = True

    def _manage_ranges(self) -> bool:
        force = self._force_range
        self._force_range = False
        changed = False
        for plot in self.plots:
            if plot in self._user_zoomed:
                continue
            vb = plot.vb
            items = self.range_items(plot)
            bounds = vb.childrenBounds(items=items)
            if plot in self.settled_after:
                settled = settled_y_bounds(plot, self.settled_after[plot], items)
                bounds = [bounds[0], settled or bounds[1]]
            bounds = _bounds_with(bounds, self.range_extras(plot))
            current = vb.viewRange()
            target = {}
            for axis, key in ((0, "xRange"), (1, "yRange")):
                if axis == 0 and vb.linkedView(vb.XAxis) is not None:
                    continue  # the linked master decides the shared time axis
                want = self._range_for(plot, axis, bounds[axis], current[axis], force)
                if want is not None:
                    target[key] = want
            if target:
                vb.setRange(padding=0, **target)
                changed = True
        return changed

    def range_items(self, plot: pg.PlotItem) -> list | None:
        """The items whose data set the plot's ranges (None: all that have bounds)."""
        return None

    def range_extras(self, plot: pg.PlotItem) -> tuple[list[float], list[float]]:
        """Values (in view coordinates: log10 on a log axis) that the x and y ranges must
        hold besides the data, e.g. a horizontal line that is not a data item."""
        return [], []

    def _range_for(self, plot: pg.PlotItem, axis: int, bounds, current, force: bool):
        """Where one axis should move (lo, hi), or None to leave it: only when the data
        leave the range or fill less than half of it (or when forced), with a margin."""
        lo, hi = bounds if bounds is not None else (None, None)
        if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
            return None
        clo, chi = current
        span = hi - lo
        if span <= 0 and axis == 0 and plot in self.time_plots:
            lo, hi = lo, lo + 1.0  # one instant (t = 0): time runs forward from it
            span = hi - lo
        elif span <= 0:
            span = abs(hi) if hi != 0 else 1.0
            lo, hi = lo - 0.5 * span, hi + 0.5 * span
            span = hi - lo
        if not (force or lo < clo or hi > chi or span < 0.5 * (chi - clo)):
            return None
        pad = max(0.06 * span, self._label_room(plot, axis, span))
        return lo - pad, self._range_top(plot, axis, hi, span, pad)

    @staticmethod
    def _label_room(plot: pg.PlotItem, axis: int, span: float) -> float:
        """On a vertical log axis, the margin (view units) past the data that holds half a
        tick label: pyqtgraph drops a label that sticks out of a gridded axis, and the
        decade at the data's top or bottom went unlabelled (m' from 7 to 1000: one label)."""
        item = plot.getAxis("left")
        if axis != 1 or not item.logMode:
            return 0.0
        label = pg.QtGui.QFontMetricsF(item.style["tickFont"] or pg.QtGui.QFont()).height()
        px = plot.vb.height()
        if px <= 2 * label:
            return 0.0
        return 0.6 * label * span / (px - 1.2 * label)

    def _range_top(self, plot: pg.PlotItem, axis: int, hi: float, span: float, pad: float) -> float:
        # a growing time axis gets room ahead, so it (and with it every linked panel's
        # axis) is re-laid out a few times per run, not per frame
        return hi + (0.3 * span if axis == 0 and self.time_plots else pad)

    def sync_tick_text(self) -> None:
        """Log axes get readable labels whatever they span (_log_tick_values)."""
        for plot in self.plots:
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setStyle(maxTextLevel=0 if axis.logMode else 2)  # log: see _log_tick_values
                if not hasattr(axis, "_linear_si_prefix"):
                    axis._linear_si_prefix = axis.autoSIPrefix  # the panel's choice, kept for linear
                    axis.tickStrings = _log_tick_strings(axis, axis.tickStrings)
                    axis.tickValues = _log_tick_values(axis, axis.tickValues)
                    if getattr(axis, "whole_numbers", False):
                        axis.tickValues = _integer_tick_values(axis, axis.tickValues)
                        linear = axis.tickStrings
                        whole = _whole_number_strings(linear)
                        axis.tickStrings = lambda v, sc, sp, a=axis, lin=linear, wh=whole: (
                            lin(v, sc, sp) if a.logMode else wh(v, sc, sp)
                        )
                    axis.labelString = _scale_label(axis)
                    axis._updateLabel()
                # 10⁻⁸ labelled "(x1e+09)" reads worse than 10¹ on a log axis
                axis.enableAutoSIPrefix(axis._linear_si_prefix and not axis.logMode)

    def settle_tick_text(self) -> None:
        """Lay the axes out for the labels of their current ranges before a figure is
        rendered: pyqtgraph measures an axis's labels only as it paints it and widens the
        axis in a later layout pass, and until then drops the labels that do not fit (10²
        where 1 fitted)."""

        def sizes():
            return [
                (axis.textWidth, axis.textHeight, axis.geometry().size())
                for plot in self.plots
                for axis in (plot.getAxis("left"), plot.getAxis("bottom"))
            ]

        for _ in range(4):  # a wider axis narrows the view and may change its labels
            before = sizes()
            self.graphics.grab()  # paints the axes: they measure their labels
            QtWidgets.QApplication.sendPostedEvents()  # and the layout makes room
            if sizes() == before:
                return

    def cache_legends(self) -> None:
        """Legends sit over the curves and are repainted with them; their text is
        static, so paint them from cached pixmaps."""
        for plot in self.plots:
            if plot.legend is None:
                continue
            stack = [plot.legend]
            while stack:
                item = stack.pop()
                item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
                stack.extend(item.childItems())


class LivePanel(Panel):
    """A panel that draws a model's snapshots, frame after frame: `draw` puts one on the
    plot items, and vertical markers show where a parameter was changed during the run
    (`change_markers`, per model)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.last = None  # the snapshot drawn last
        self._run_id = None
        self._markers: list[tuple[pg.PlotItem, pg.InfiniteLine]] = []
        self._drawn: tuple[tuple[float, str], ...] = ()  # the (x, label) drawn on each time plot
        self._legends_cached = False

    def redraw(self) -> None:
        if self.last is not None:
            self.update_from(self.last)

    def update_from(self, snap, ranges: bool = True) -> bool:
        """Draw a snapshot; with ranges=False the axis ranges wait for a later frame.
        Returns whether an axis range changed."""
        if snap.run_id != self._run_id:
            self._run_id = snap.run_id
            self._clear_markers()
            self.reset_ranges()
        self.last = snap
        if not self._legends_cached:
            self._legends_cached = True
            self.cache_legends()
            self.sync_tick_text()
        self.draw(snap)
        self._mark_changes(snap)
        # data that left the view on this frame are fitted on this frame (a frame late was
        # a quarter of a second at 4 fps)
        return self._manage_ranges() if ranges or self.data_left_view() else False

    def draw(self, snap) -> None:
        raise NotImplementedError

    def data_left_view(self) -> bool:
        """The newest point of a time plot's curve lies outside its view: the ranges are
        checked this frame (between turns, at a few frames a second under load, the run
        ran off the right of the time panels and the L1 decay off their bottom). Cheap: a
        time series grows at its end, so only each curve's last point is looked at."""
        for plot in self.time_plots:
            if plot in self._user_zoomed:
                continue
            (x0, x1), (y0, y1) = plot.vb.viewRange()
            items = self.range_items(plot)  # not the pinned runs, while following the live one
            for item in plot.listDataItems() if items is None else items:
                if not isinstance(item, pg.PlotDataItem):
                    continue
                x, y = item.curve.xData, item.curve.yData
                if not item.isVisible() or x is None or y is None or len(x) == 0:
                    continue
                if not (x0 <= x[-1] <= x1) or (math.isfinite(y[-1]) and not y0 <= y[-1] <= y1):
                    return True
        return False

    # --- vertical markers where a parameter changed during the run ------------------------
    def change_markers(self, snap) -> list[tuple[float, str]]:
        """Every live change of this run so far, as (x, label), oldest first."""
        return []

    def _clear_markers(self) -> None:
        for plot, line in self._markers:
            plot.removeItem(line)
        self._markers.clear()
        self._drawn: tuple[tuple[float, str], ...] = ()

    def _mark_changes(self, snap) -> None:
        if not self.time_plots:
            return
        markers = tuple(self.change_markers(snap))
        if markers[: len(self._drawn)] != self._drawn:  # a near change merged into the last
            self._clear_markers()
        for x, label in markers[len(self._drawn) :]:
            for plot in self.time_plots:
                # the label hangs down from the top, beside the line: never clipped
                line = pg.InfiniteLine(
                    pos=x,
                    angle=90,
                    pen=pen(GREY, DASH),
                    label=label,
                    labelOpts={
                        "position": 0.97,
                        "color": GREY,
                        "rotateAxis": (1, 0),
                        "anchors": [(1, 0.5), (1, 0.5)],
                    },
                )
                line.setZValue(-5)
                plot.addItem(line, ignoreBounds=True)
                self._markers.append((plot, line))
        self._drawn = markers

    @property
    def marker_count(self) -> int:
        """Change markers drawn (per time plot)."""
        return len(self._drawn)
