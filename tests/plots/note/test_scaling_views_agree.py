"""The note's scaling panels and its exported scaling figures show one cell model
(core/note/scaling.scaling_cells): for the same rows, each lam's means over seeds, joined
and hollow outside the note's regime, read from the pyqtgraph items are the ones the
matplotlib figure draws from the JSON that scaling_figure_files writes. Real panels
(offscreen), real figure files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6 import QtWidgets

from sparsity_gui.core.note.scaling import ScalingRow
from sparsity_gui.figures.note.scaling import scaling_figure_files, scaling_panel
from sparsity_gui.figures.save import arrays_of, figure_of
from sparsity_gui.figures.style import PAPER, SINGLE_COLUMN
from sparsity_gui.plots.note.scaling import SCALING_PANEL_TYPES
from sparsity_gui.ui.windows import delete_widgets


@pytest.fixture(scope="module")
def app():
    return QtWidgets.QApplication.instance() or QtWidgets.QApplication([])


def scaling_rows() -> list[ScalingRow]:
    rows = []
    for m in (100, 1000, 10_000):
        for j, lam in enumerate((1e-3, 1e-2)):
            for s in range(3):
                start = lam * 0.7 * m**0.5  # past 1/4 only for lam = 1e-2 at m = 10^4
                v = 1.0 + 0.1 * j + 0.05 * s * np.log10(m)
                numbers = dict.fromkeys(("fitted_c", "fitted_c_bulk", "rel_var_mean"), 0.5 + 0.01 * s)
                rows.append(
                    ScalingRow(
                        **{
                            **dict.fromkeys(ScalingRow.__dataclass_fields__, 1.0),
                            **numbers,
                            "m": m,
                            "lam": lam,
                            "seed": s,
                            "lam_t_one": v,
                            "lam_norm1_0": start,
                            "balance_possible": start <= 0.25,
                            "theta_rises": True,
                            "theta_rise_condition": True,
                        }
                    )
                )
    return rows


def test_the_scaling_panels_show_the_same_means_live_and_exported(app):
    rows = scaling_rows()
    files = scaling_figure_files(None, rows, formats=())
    panels = [kind() for kind in SCALING_PANEL_TYPES]
    try:
        for live, name in zip(panels, ("lam_t_one", "fitted_c", "rel_var"), strict=True):
            live.resize(720, 520)
            live.show_rows(rows)
            app.processEvents()
            data = arrays_of(json.loads(files[f"{name}.json"]))
            ax = figure_of(scaling_panel, data, PAPER, (SINGLE_COLUMN, 2.6)).axes[0]
            joined = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
            hollow = [
                ln for ln in ax.get_lines() if ln.get_marker() == "o" and ln.get_markerfacecolor() == "white"
            ]
            assert len(joined) == len(live.lam_values) == 2
            for i, lam in enumerate(live.lam_values):
                x, y = live.curves[lam].line.getOriginalDataset()
                np.testing.assert_allclose(x, joined[i].get_xdata(), rtol=1e-12)
                np.testing.assert_allclose(y, joined[i].get_ydata(), rtol=1e-12)
                hx, hy = (
                    np.asarray([] if v is None else v) for v in live.curves[lam].outside.getOriginalDataset()
                )
                np.testing.assert_allclose(hx, hollow[i].get_xdata(), rtol=1e-12)
                np.testing.assert_allclose(hy, hollow[i].get_ydata(), rtol=1e-12)
            assert live.outside_cells == 1  # lam = 1e-2 at m = 10^4: 0.007 * 100 > 1/4
    finally:
        delete_widgets(app, *panels)
