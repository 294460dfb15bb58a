"""A sweep's live grid panels and its exported grid figures show one cell model
(core/interference/cells.py): for the same grid and rows, the heatmap's cells (values,
texts, hatching, ticks) and the curves' medians and 10-90 % bands read from the pyqtgraph
items are the ones the matplotlib figure draws from the JSON that grid_figure_files
writes. Real panels (offscreen), real figure files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import sweep_row, tick_texts
from PySide6 import QtWidgets

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec
from sparsity_gui.figures.interference.grid import PANELS, grid_figure_files
from sparsity_gui.figures.save import arrays_of, figure_of
from sparsity_gui.figures.style import PAPER, SINGLE_COLUMN
from sparsity_gui.plots.interference.grid import CurvesPanel, HeatmapPanel
from sparsity_gui.ui.windows import delete_widgets

L1S, OPTIMIZERS, SEEDS = (1e-3, 1e-2, 0.1), ("adamw", "gd-zero", "signsgd"), 4
PLAN = SweepSpec(
    base=InterferenceParams(n=8, m=16, steps=1000, lr=1e-3),
    m_values=(16,),
    seeds=SEEDS,
    axes=(("l1", L1S), ("optimizer", OPTIMIZERS)),
)


def row(p: InterferenceParams):
    """Known readouts: gd-zero never sparse at the smallest l1 and once at the next; the
    seeds spread every cell."""
    s, i = p.seed, L1S.index(p.l1)
    steps = {"adamw": 1500 - 200 * i + 37 * s, "gd-zero": int(40 / p.l1) + 11 * s, "signsgd": 900 + 5 * s}
    never = p.optimizer == "gd-zero" and (i == 0 or (i == 1 and s == 2))
    return sweep_row(
        p,
        polysemantic=(s * 3 + i + len(p.optimizer)) % 5,
        steps_to_sparse=-1 if never else steps[p.optimizer],
        rail_share=0.1 * s + 0.01 * i,
    )


# cancelled before its last cell's runs: a cell without a run too
ROWS = [row(p) for p in PLAN.runs()][:-SEEDS]


@pytest.fixture(scope="module")
def app():
    return QtWidgets.QApplication.instance() or QtWidgets.QApplication([])


@pytest.fixture
def panel(app):
    made = []

    def make(kind, *args):
        p = kind()
        p.resize(900, 600)
        p.show()
        made.append(p)
        p.show_grid(PLAN, ROWS, *args, cancelled=True)
        app.processEvents()
        p.settle_tick_text()  # the axes measured for their labels, as on screen after a paint
        return p

    yield make
    delete_widgets(app, *made)


def exported(name: str, readout: str):
    """The figure ``name`` as its script draws it: from the JSON grid_figure_files wrote."""
    files = grid_figure_files(PLAN, ROWS, readout, cancelled=True, formats=())
    data = arrays_of(json.loads(files[f"{name}.json"]))
    return figure_of(PANELS[name], data, PAPER, (SINGLE_COLUMN, 2.6)).axes[0]


@pytest.mark.parametrize("readout", ["steps_to_sparse", "rail_share"])
def test_the_heatmap_shows_the_same_cells_live_and_exported(panel, readout):
    heat = panel(HeatmapPanel, readout)
    ax = exported("heatmap", readout)
    # the values: the live image holds log10 on a log colour scale
    live = np.asarray(heat.image.image, float)
    live = 10.0**live if heat.value_log else live
    drawn = np.ma.filled(ax.images[0].get_array().astype(float), np.nan)
    np.testing.assert_allclose(live, drawn, rtol=1e-12)
    assert np.isnan(live).sum() == (2 if readout == "steps_to_sparse" else 1)  # never sparse; no run
    # the text in each cell, where it sits
    written = [it for it in heat.texts if it.textItem.toPlainText()]
    live_texts = {(it.pos().x(), it.pos().y()): it.textItem.toPlainText() for it in written}
    figure_texts = {tuple(map(float, t.get_position())): t.get_text() for t in ax.texts}
    assert live_texts == figure_texts and len(figure_texts) == 9 - np.isnan(live).sum()
    # the hatched cells: runs, but none with a value; the cell without a run is not
    hatched = {(p.get_x() + 0.5, p.get_y() + 0.5) for p in ax.patches if p.get_hatch()}
    assert hatched == {(float(i), float(j)) for i, j in heat.missing.cells}
    assert hatched == ({(0.0, 1.0)} if readout == "steps_to_sparse" else set())
    # the ticks and the colour bar's name
    plot = heat.plot
    assert tick_texts(plot.getAxis("bottom")) == [t.get_text() for t in ax.get_xticklabels()]
    assert (
        tick_texts(plot.getAxis("left")) == [t.get_text() for t in ax.get_yticklabels()] == list(OPTIMIZERS)
    )
    assert heat.colorbar.axis.labelText == ax.figure.axes[1].get_ylabel()


@pytest.mark.parametrize("readout", ["steps_to_sparse", "polysemantic"])
def test_the_curves_show_the_same_medians_and_bands_live_and_exported(panel, readout):
    curves = panel(CurvesPanel, readout)
    ax = exported("curves", readout)
    names = {id(sample.item): label.text for sample, label in curves.plot.legend.items}
    figure_lines = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    figure_labels = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert curves.x_log and ax.get_xscale() == "log"
    for s, (median, lo, hi, band, _pred) in enumerate(curves.series):
        label = names[id(median)]
        assert figure_labels[s] == label == f"optimizer = {OPTIMIZERS[s]}"
        x, y = median.getData()
        line = figure_lines[s]
        np.testing.assert_allclose(10.0**x, line.get_xdata(), rtol=1e-12)
        np.testing.assert_allclose(10.0**y if curves.value_log else y, line.get_ydata(), rtol=1e-12)
        # the band: between the same 10th and 90th percentiles at each x
        verts = ax.collections[s].get_paths()[0].vertices
        for bx, low, high in zip(lo.getData()[0], lo.getData()[1], hi.getData()[1], strict=True):
            at = verts[np.isclose(verts[:, 0], 10.0**bx), 1]
            unlog = (lambda v: 10.0**v) if curves.value_log else (lambda v: v)
            np.testing.assert_allclose([at.min(), at.max()], [unlog(low), unlog(high)], rtol=1e-12)
        # and it is filled live: a band with an area wherever the quantiles part
        if (hi.getData()[1] > lo.getData()[1]).any():
            assert band.path().boundingRect().height() > 0
    if readout == "steps_to_sparse":
        never = f"{sum(r.steps_to_sparse == -1 for r in ROWS)} of {len(ROWS)} runs never sparse"
        assert never in figure_labels and never in curves.note.text
