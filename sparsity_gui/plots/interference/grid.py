"""A sweep's live panels when it varies more than m (core/interference/axes.py): the
chosen readout's median over seeds as a heatmap over two varied options (HeatmapPanel),
or as curves against the first varied option, one per combination of the others, each
with its 10-90 % band over seeds (CurvesPanel). A sweep over m alone keeps its
count-against-m panel (plots/interference/sweep.py); `panel_kind` says which.

Like SweepPanel they draw rows, not snapshots: ``show_grid(spec, rows, readout)`` with
every row so far, whenever they change. What they draw (where each cell sits, its
statistics over seeds, its text) is core's cell model, core/interference/cells.py, which
the exported figures (figures/interference/grid.py) draw too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from sparsity_gui.core.interference.axes import (
    AXIS_LABELS,
    DEFAULT_READOUT,
    READOUTS,
    check_readout,
)
from sparsity_gui.core.interference.cells import (
    BAND,
    CURVES,
    HEATMAP,
    GridCells,
    GridLayout,
    fixed_text,
    grid_cells,
    grid_figures,
)
from sparsity_gui.core.text import plural
from sparsity_gui.plots.base import DASH, GREY, RED, Panel, pen
from sparsity_gui.plots.legend import refit_to_views, tick_text_size
from sparsity_gui.plots.ticks import log_ticks, tick_text

SWEEP = "sweep"
LABEL_COLOR = "#333333"
MISSING_COLOR = "#d9d9d9"  # a cell whose runs have no value (never sparse): grey, hatched
# the series' colours: matplotlib's tab10, as the exported figures'
COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)

# the names figures give in mathtext, as plain text for Qt
PLAIN_AXIS_LABELS = {"m": "m (neurons)", "sigma": "σ of W(0)", "noise_sigma": "noise σ"}
PLAIN_READOUTS = {"sum_w4": "mean Σₖ W_ik⁴"}


def axis_label(axis: str) -> str:
    return PLAIN_AXIS_LABELS.get(axis, AXIS_LABELS[axis])


def readout_label(readout: str) -> str:
    return PLAIN_READOUTS.get(readout, READOUTS[readout])


def panel_kind(spec) -> str:
    """The panel a sweep of ``spec`` is drawn on: the count against m for a sweep over m
    alone (or nothing), the heatmap for two varied options, else the curves (the first of
    the figures it exports, core/interference/cells.grid_figures)."""
    figures = grid_figures(spec)
    if not figures:
        return SWEEP
    return HEATMAP if HEATMAP in figures else CURVES


class GridPanel(Panel):
    """What the heatmap and the curves share: one plot, the lines under it (the settings,
    what is not drawn, a grid cut short in red) and the readout drawn."""

    def __init__(self, title: str, legend: bool, parent=None):
        super().__init__(parent)
        self.plot = self.add_plot(0, title, "", "", legend=legend)
        self.note = self.graphics.addLabel(
            "", row=1, col=0, size=tick_text_size(self.plot), color=LABEL_COLOR
        )
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.spec = None
        self.rows: list = []
        self.readout = DEFAULT_READOUT
        self.cells: GridCells | None = None
        self.placement: GridLayout | None = None
        self._layout_of = None  # the spec whose layout that is
        self.cancelled = False
        self.preview = False
        self.value_log = False

    def show_grid(
        self,
        spec,
        rows: Sequence[Any],
        readout: str = DEFAULT_READOUT,
        cancelled: bool = False,
        preview: bool = False,
    ) -> None:
        """Draw ``rows`` (all of them so far) of the sweep ``spec``: the ``readout``'s
        median over seeds per cell; ``cancelled``: the sweep was stopped; ``preview``: a
        plan not run yet (or just started), whose runs are not missing."""
        self.spec = spec
        self.rows = list(rows)
        self.readout = check_readout(readout)
        self.cancelled = cancelled
        self.preview = preview
        if spec is not self._layout_of:  # a new sweep: where its cells sit
            self._layout_of, self.placement = spec, GridLayout.of(spec)
        self.cells = grid_cells(self.placement, self.rows, self.readout)
        self.value_log = self.cells.value_log  # as the figures: steps to sparsity spanning a decade
        self.draw()
        self.set_note()

    def draw(self) -> None:
        raise NotImplementedError

    def extra_lines(self) -> list[str]:
        return []

    # --- the text under the plot --------------------------------------------------------------
    def note_lines(self) -> list[str]:
        spec, cells = self.spec, self.cells
        planned = cells.layout.planned_runs
        lines = [fixed_text(spec), *self.extra_lines()]
        if cells.without_value:
            lines.append(f"{cells.without_value} of {plural(cells.rows, 'run')} {cells.missing}")
        if self.preview and not cells.rows:
            lines.append(f"{plural(planned, 'run')} planned, none finished yet")
        elif cells.rows < planned:
            why = "cancelled" if self.cancelled else "incomplete"
            text = f"{why.upper()}: {cells.rows} of {planned} planned runs"
            lines.append(f"<span style='color: {RED}'>{text}</span>")
        return lines

    def set_note(self) -> None:
        note = "<br>".join(self.note_lines())
        if note != self.note.text:
            self.note.setText(note, color=LABEL_COLOR)
            self.note.item.setTextWidth(-1)
            self._wrap_note()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._wrap_note()

    def showEvent(self, event) -> None:
        """Drawn while hidden (a page of the tab not shown), the view had no size yet: the
        text wraps, and the title fits, at the one it has now."""
        super().showEvent(event)
        self.layout().activate()
        self._wrap_note()
        self.fit_titles()

    def _wrap_note(self) -> None:
        """The text under the plot wraps at the panel's width."""
        width = max(self.graphics.viewport().width() - 24, 100)  # the layout's margins: 4 + 16
        item = self.note.item
        if item.textWidth() != width:
            item.setTextWidth(width)
            self.note.updateMin()
            refit_to_views(self.note)

    def set_title(self, title: str) -> None:
        if self.plot.titleLabel.text != title:
            self.plot.setTitle(title, size=self.plot.titleLabel.opts.get("size", "11pt"))
            self.fit_titles()


class MissingCells(pg.GraphicsObject):
    """Cells whose runs have no value of the readout: light grey, hatched (drawn in device
    pixels, so the hatching keeps its spacing at any size)."""

    def __init__(self):
        super().__init__()
        self.cells: list[tuple[int, int]] = []  # (x, y) indices
        self._rect = QtCore.QRectF()

    def set_cells(self, cells: list[tuple[int, int]]) -> None:
        self.prepareGeometryChange()
        self.cells = list(cells)
        if self.cells:
            xs = [c[0] for c in self.cells]
            ys = [c[1] for c in self.cells]
            self._rect = QtCore.QRectF(
                min(xs) - 0.5, min(ys) - 0.5, max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
            )
        else:
            self._rect = QtCore.QRectF()
        self.update()

    def boundingRect(self) -> QtCore.QRectF:
        return self._rect

    def paint(self, p, *_args) -> None:
        if not self.cells:
            return
        to_device = p.transform()
        p.save()
        p.resetTransform()
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        hatch = QtGui.QBrush(QtGui.QColor("#8c8c8c"), QtCore.Qt.BrushStyle.BDiagPattern)
        for x, y in self.cells:
            rect = to_device.mapRect(QtCore.QRectF(x - 0.5, y - 0.5, 1.0, 1.0))
            p.fillRect(rect, QtGui.QColor(MISSING_COLOR))
            p.fillRect(rect, hatch)
        p.restore()


class HeatmapPanel(GridPanel):
    """The readout's median over seeds for every pair of the two varied options: a cell
    per pair, its value written in it, the colour bar beside; a cell whose runs have no
    value (never sparse) grey and hatched, one with no run finished yet left blank."""

    title = "Readout over the two varied options"
    claim = (
        "The median over seeds of the readout chosen in the Sweep tab, for every pair of "
        "the two options the sweep varies (the first across, the second up). Grey, hatched: "
        "the cell's runs have no value (never sparse); blank: no run finished yet."
    )

    def __init__(self, parent=None):
        super().__init__(self.title, legend=False, parent=parent)
        p = self.plot
        p.showGrid(x=False, y=False)
        p.setMouseEnabled(x=False, y=False)
        p.hideButtons()
        self.cmap = pg.colormap.get("viridis")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(self.cmap)
        p.addItem(self.image)
        self.missing = MissingCells()
        self.missing.setZValue(2)
        p.addItem(self.missing)
        self.colorbar = pg.ColorBarItem(
            values=(0.0, 1.0), colorMap=self.cmap, interactive=False, width=14, colorMapMenu=False
        )
        self.colorbar.setImageItem(self.image, insert_in=p)
        self.colorbar.axis.setWidth(None)  # wide enough for its label too
        self.texts: list[pg.TextItem] = []
        self.grid = np.zeros((0, 0))  # the medians drawn, (y, x): NaN without a value
        self.levels = (0.0, 1.0)  # the colour bar's range, in the readout's units
        self._shape: tuple[int, int] | None = None

    def draw(self) -> None:
        cells = self.cells
        x_axis, y_axis = cells.x_axis, cells.others[0]
        grid = cells.median
        self.grid = grid
        ny, nx = grid.shape
        finite = grid[np.isfinite(grid)]
        log = self.value_log and finite.size > 0 and finite.min() > 0
        shown = np.log10(grid) if log else grid
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
        else:
            lo, hi = 0.0, 1.0
        if hi <= lo:  # one value: a range around it
            pad = 0.5 if lo == 0 else abs(lo) * 0.1
            lo, hi = (lo / 2, lo * 2) if log else (lo - pad, hi + pad)
        self.levels = (lo, hi)
        levels = (math.log10(lo), math.log10(hi)) if log else (lo, hi)
        self.colorbar.setLevels(levels)
        self.image.setImage(shown, autoLevels=False, levels=levels)
        self.image.setRect(-0.5, -0.5, nx, ny)
        # the colour bar's ticks: the readout's values (1-2-5 on a log scale)
        if log:
            ticks = [v for v in log_ticks(lo, hi) if lo <= v <= hi]
            self.colorbar.axis.setTicks([[(math.log10(v), tick_text(v)) for v in ticks], []])
        else:
            self.colorbar.axis.setTicks(None)
        bar_label = f"median {readout_label(self.readout)}"
        if self.colorbar.axis.labelText != bar_label:
            self.colorbar.axis.setLabel(bar_label)
            refit_to_views(self.colorbar)  # the wider axis inside the view, not cut off
        self.missing.set_cells([(i, j) for j, i in zip(*np.nonzero(cells.hatched), strict=True)])
        self._cell_texts(cells.texts(), levels, shown)
        p = self.plot
        p.setLabel("bottom", axis_label(x_axis))
        p.setLabel("left", axis_label(y_axis))
        p.getAxis("bottom").setTicks([[(float(i), t) for i, t in enumerate(cells.layout.x_labels())]])
        p.getAxis("left").setTicks([[(float(j), t) for j, t in enumerate(cells.layout.y_labels())]])
        if (ny, nx) != self._shape or self._force_range:
            self._shape = (ny, nx)
            self._force_range = False
            p.vb.setRange(xRange=(-0.5, nx - 0.5), yRange=(-0.5, ny - 0.5), padding=0)
        self.set_title(
            f"median {readout_label(self.readout)} over {x_axis.replace('_', ' ')} and "
            f"{y_axis.replace('_', ' ')}"
        )

    def _cell_texts(self, texts: list[list[str]], levels: tuple[float, float], shown: np.ndarray) -> None:
        """Each cell's text (the cell model's) written in it, dark on light colours."""
        ny, nx = shown.shape
        wanted = nx * ny if any(any(row) for row in texts) else 0
        while len(self.texts) > wanted:
            self.plot.removeItem(self.texts.pop())
        while len(self.texts) < wanted:
            item = pg.TextItem("", anchor=(0.5, 0.5))
            item.setZValue(3)
            self.plot.addItem(item, ignoreBounds=True)
            self.texts.append(item)
        lo, hi = levels
        for k, item in enumerate(self.texts):
            j, i = divmod(k, nx)
            if not texts[j][i]:
                item.setText("")
                continue
            share = 0.5 if hi <= lo else min(max((shown[j, i] - lo) / (hi - lo), 0.0), 1.0)
            r, g, b, _ = self.cmap.map(share, mode="float")
            ink = "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "#ffffff"
            item.setText(texts[j][i], color=ink)
            item.setPos(i, j)

    def extra_lines(self) -> list[str]:
        cells = self.cells
        lines = []
        if cells.hatched.any():
            what = "became sparse" if self.readout == "steps_to_sparse" else "has a value"
            lines.append(f"grey, hatched: no run of the cell {what}")
        if (cells.runs == 0).any() and cells.rows:
            lines.append("blank: no run finished yet")
        return lines


class CurvesPanel(GridPanel):
    """The readout's median over seeds against the first varied option, a curve per
    combination of the others with its 10-90 % band over seeds; for the polysemantic count
    the paper's n²/(4m) dashed in the series' colour."""

    title = "Readout against the first varied option"
    claim = (
        "The median over seeds of the readout chosen in the Sweep tab against the first "
        "option the sweep varies, one curve per combination of the others, shaded from the "
        "10th to the 90th percentile over seeds."
    )

    def __init__(self, parent=None):
        super().__init__(self.title, legend=True, parent=parent)
        self.series: list[
            tuple[pg.PlotDataItem, pg.PlotDataItem, pg.PlotDataItem, pg.FillBetweenItem, pg.PlotDataItem]
        ] = []
        self._labels: list[str] = []
        self.band_sample = pg.PlotDataItem(
            [0, 1], [0, 0], pen=pg.mkPen(None), fillLevel=0, fillBrush=pg.mkBrush(128, 128, 128, 80)
        )
        self.prediction_sample = pg.PlotDataItem([0, 1], [0, 0], pen=pen(GREY, DASH))
        # n²/(4m) once, grey, when every series has the same (m is not one of the series')
        self.prediction = pg.PlotDataItem(pen=pen(GREY, DASH))
        self.plot.addItem(self.prediction)
        self.sync_tick_text()  # two levels of ticks and grid lines, as the other panels
        self._extras: tuple[bool, bool] = (False, False)  # the band's and the prediction's entries
        self.x_positions = np.zeros(0)  # where each x value sits (log10 on a log axis)
        self.x_log = False

    def _build(self, labels: list[str]) -> None:
        """A curve, its band and its prediction per series (when the series change)."""
        p = self.plot
        for items in self.series:
            for item in items:
                p.removeItem(item)
        p.legend.clear()
        self._extras = (False, False)
        self.series = []
        for s, label in enumerate(labels):
            color = COLORS[s % len(COLORS)]
            c = QtGui.QColor(color)
            median = pg.PlotDataItem(
                pen=pen(color),
                symbol="o",
                symbolSize=7,
                symbolPen=None,
                symbolBrush=pg.mkBrush(color),
                name=label,
            )
            median.setZValue(3)
            # the band's edges drawn with no pen, not pen=None: without a pen a PlotDataItem
            # builds no path, and FillBetweenItem fills between their paths
            lo, hi = pg.PlotDataItem(pen=pg.mkPen(None)), pg.PlotDataItem(pen=pg.mkPen(None))
            band = pg.FillBetweenItem(lo, hi, brush=pg.mkBrush(c.red(), c.green(), c.blue(), 50))
            predicted = pg.PlotDataItem(pen=pen(color, DASH))
            for item in (lo, hi, band, predicted):
                p.addItem(item)
            p.addItem(median)  # in the legend, by its name
            self.series.append((median, lo, hi, band, predicted))
        self._labels = labels

    def draw(self) -> None:
        cells = self.cells
        labels = [label or "median" for label in cells.layout.series_labels()]
        if labels != self._labels:
            self._build(labels)
            self._force_range = True
        x_axis, numeric = cells.x_axis, cells.layout.x_numeric
        self.x_log = cells.layout.x_log
        if numeric:
            xs = np.array([float(v) for v in cells.x_values])
            pos = np.log10(xs) if self.x_log else xs
        else:
            pos = np.arange(len(cells.x_values), dtype=float)
        self.x_positions = pos
        log = self.value_log

        def view(y: np.ndarray) -> np.ndarray:
            if not log:
                return y
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(y > 0, np.log10(y), np.nan)

        polysemantic = self.readout == "polysemantic"
        pred = cells.predicted
        shared = polysemantic and bool(np.allclose(pred, pred[:1], equal_nan=True))
        self.prediction.setData(pos, view(pred[0]) if shared else [])
        for s, (median, lo, hi, _band, predicted) in enumerate(self.series):
            med, p10, p90 = view(cells.median[s]), view(cells.p10[s]), view(cells.p90[s])
            ok = np.isfinite(med)
            median.setData(pos[ok], med[ok])
            band_ok = ok & np.isfinite(p10) & np.isfinite(p90)
            lo.setData(pos[band_ok], p10[band_ok])
            hi.setData(pos[band_ok], p90[band_ok])
            if polysemantic and not shared:
                predicted.setData(pos, view(pred[s]))
            else:
                predicted.setData([], [])
        self._legend_extras(True, polysemantic)
        p = self.plot
        p.setLabel("bottom", axis_label(x_axis))
        p.setLabel("left", readout_label(self.readout))
        self._ticks(cells, pos, numeric)
        self._force_range = True
        self._manage_ranges()
        self.set_title(f"{readout_label(self.readout)} against {x_axis.replace('_', ' ')}")

    def _legend_extras(self, band: bool, prediction: bool) -> None:
        """The band's entry and, for the polysemantic count, the prediction's, last."""
        if (band, prediction) == self._extras:
            return
        legend = self.plot.legend
        for item in (self.band_sample, self.prediction_sample):
            legend.removeItem(item)
        if band:
            legend.addItem(self.band_sample, BAND)
        if prediction:
            legend.addItem(self.prediction_sample, "n²/(4m)")
        self._extras = (band, prediction)

    def _ticks(self, cells: GridCells, pos: np.ndarray, numeric: bool) -> None:
        bottom, left = self.plot.getAxis("bottom"), self.plot.getAxis("left")
        if not numeric or len(pos) <= 8:  # every value labelled where it sits
            bottom.setTicks([[(float(x), t) for x, t in zip(pos, cells.layout.x_labels(), strict=True)]])
        elif self.x_log:
            xs = [float(v) for v in cells.x_values]
            bottom.setTicks([[(math.log10(v), tick_text(v)) for v in log_ticks(min(xs), max(xs))], []])
        else:
            bottom.setTicks(None)
        if self.value_log:
            ys = np.concatenate([cells.p10.ravel(), cells.p90.ravel(), cells.median.ravel()])
            ys = ys[np.isfinite(ys) & (ys > 0)]
            yt = log_ticks(float(ys.min()) / 2, float(ys.max()) * 2) if ys.size else []
            left.setTicks([[(math.log10(v), tick_text(v)) for v in yt], []] if yt else None)
        else:
            left.setTicks(None)

    def range_extras(self, plot) -> tuple[list[float], list[float]]:
        """Every planned x in view, with or without runs yet (half a step beyond the ends
        of a category axis)."""
        pos = list(self.x_positions)
        if not pos:
            return [], []
        if self.cells is not None and not self.cells.layout.x_numeric:
            return [-0.5, len(pos) - 0.5], []
        return pos, []

    def range_items(self, plot) -> list | None:
        lines = [item for items in self.series for item in (items[0], items[1], items[2], items[4])]
        return [*lines, self.prediction]
