"""Legends under their plots: LegendRow flows its entries into rows as wide as the data
area (never over the data), its text the size of the tick labels, and scales with the
rest of an export."""

from __future__ import annotations

import pyqtgraph as pg
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.plots import pg_compat
from sparsity_gui.plots.curves import Marks


def tick_text_size(plot: pg.PlotItem) -> str:
    """The size of the plot's tick labels as CSS ('9pt'): the legend's text matches it."""
    axis = plot.getAxis("bottom")
    font = axis.style.get("tickFont") or axis.font()
    if font.pointSizeF() > 0:
        return f"{font.pointSizeF():g}pt"
    return f"{font.pixelSize()}px"


TEXT_MARGIN = 1.0  # px around a title's, axis title's or legend label's text


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
        if isinstance(self.item, Marks) and self.item.isVisible():
            # marks, not a line: the symbol alone (pyqtgraph's sample draws its pen as a
            # line through it for any item but a ScatterPlotItem)
            opts = self.item.opts
            p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            p.translate(10, 10)
            pen, brush = pg.mkPen(opts["pen"]), pg.mkBrush(opts["brush"])
            pg_compat.draw_symbol(p, opts["symbol"], opts["size"], pen, brush)
            return
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
            # Qt's removeAt does not delete a layout: each relayout (every rename of a pin
            # at a live λ change) left its rows' layouts behind, 4-6 MB a minute with pins
            shiboken6.delete(line)
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
