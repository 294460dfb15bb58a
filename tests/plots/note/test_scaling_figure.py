"""The scaling figures (plots/note/scaling.py): the means and error bars drawn against numpy, the
curves of each lam apart, the m ticks, and the exported files (PNG, and plain SVG that
rsvg-convert renders like the PNG)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6 import QtWidgets

from sparsity_gui.core.note.scaling import ScalingRow
from sparsity_gui.plots.note.scaling import (
    DODGE_DECADES,
    SCALING_PANEL_TYPES,
    RelVarPanel,
    power_text,
)
from sparsity_gui.ui.windows import delete_widgets

M_VALUES = (1000, 10_000, 100_000)
LAMS = (1e-4, 1e-3, 1e-2)


def fake_rows(seeds: int = 3) -> list[ScalingRow]:
    """Rows with known numbers (a figure test needs no solver): every column a simple
    function of (m, lam, seed)."""
    rows = []
    for m in M_VALUES:
        for j, lam in enumerate(LAMS):
            for s in range(seeds):
                v = 1.0 + 0.1 * j + 0.05 * s * math.log10(m)
                rows.append(
                    ScalingRow(
                        m=m,
                        lam=lam,
                        seed=s,
                        t_one=v / lam,
                        lam_t_one=v,
                        fitted_c=0.5 + 0.01 * s + 0.02 * j,
                        rel_var_mean=0.4 + 0.03 * s,
                        rel_var_min=0.01,
                        rel_var_max=1.5,
                        balance_ratio=1.001,
                        w_last=0.99,
                        w_last_root=0.99,
                        fitted_c_bulk=0.8 + 0.01 * s,
                        fit_max_rel_dev=0.3,
                        # > 1/4 only at lam = 10^-2 with m = 10^4 and 10^5
                        lam_norm1_0=lam * 0.7 * math.sqrt(m),
                        norm2_w0=0.81,
                        balance_possible=lam * 0.7 * math.sqrt(m) <= 0.25,
                        theta_rises=True,
                        theta_rise_condition=True,
                        theta_fall=0.0,
                        theta_fall_t=float("nan"),
                        sigma=0.9,
                        t_end=1.1 * v / lam,
                        seconds=0.1,
                    )
                )
    return rows


@pytest.fixture
def app():
    return QtWidgets.QApplication.instance() or QtWidgets.QApplication([])


def test_means_and_error_bars_against_numpy(app):
    rows = fake_rows()
    panels = [cls() for cls in SCALING_PANEL_TYPES]
    try:
        for panel in panels:
            panel.resize(720, 520)
            panel.show_rows(rows, m_values=M_VALUES, lam_values=LAMS)
            app.processEvents()
            assert panel.lam_values == LAMS
            log = panel.log_axis.isChecked()
            assert log == (panel.column != "rel_var_mean")  # lam*T and c on log axes by default
            for i, lam in enumerate(LAMS):
                curve = panel.curves[lam]
                want_mean, want_sd = [], []
                for m in M_VALUES:
                    vals = np.array([getattr(r, panel.column) for r in rows if r.m == m and r.lam == lam])
                    want_mean.append(vals.mean())
                    want_sd.append(vals.std(ddof=1))
                want_mean, want_sd = np.array(want_mean), np.array(want_sd)
                shift = (i - 1) * DODGE_DECADES  # three curves: -1, 0, +1 dodge
                x, y = curve.line.getOriginalDataset()
                np.testing.assert_allclose(np.log10(x), np.log10(M_VALUES) + shift, rtol=1e-12)
                np.testing.assert_allclose(y, want_mean, rtol=1e-12)
                bars = curve.bars.opts
                np.testing.assert_allclose(bars["x"], np.log10(M_VALUES) + shift, rtol=1e-12)
                if log:  # ErrorBarItem has no log mode: log10 coordinates
                    np.testing.assert_allclose(bars["y"], np.log10(want_mean), rtol=1e-12)
                    np.testing.assert_allclose(
                        bars["top"], np.log10(want_mean + want_sd) - np.log10(want_mean), rtol=1e-10
                    )
                    np.testing.assert_allclose(
                        bars["bottom"], np.log10(want_mean) - np.log10(want_mean - want_sd), rtol=1e-10
                    )
                else:
                    np.testing.assert_allclose(bars["y"], want_mean, rtol=1e-12)
                    np.testing.assert_allclose(bars["top"], want_sd, rtol=1e-12)
                    np.testing.assert_allclose(bars["bottom"], want_sd, rtol=1e-12)
                rx, _ry = curve.runs.getOriginalDataset()
                assert len(rx) == len(M_VALUES) * 3  # every seed's point
                # filled means where lam ||W(0)||_1 <= 1/4 (the note's regime), hollow where not
                hollow = sum(lam * 0.7 * math.sqrt(m) > 0.25 for m in M_VALUES)
                fx, _ = curve.means.getOriginalDataset()
                ox, _ = curve.outside.getOriginalDataset()
                assert len(fx) == 3 - hollow and (len(ox) if ox is not None else 0) == hollow
                label = panel.plot.legend.getLabel(curve.means).text
                assert label == f"λ = {power_text(lam)}"
            assert panel.outside_cells == 2 and "hollow" in panel.note.text
            # the swept m are the labelled ticks, as powers of ten
            ticks = panel.plot.getAxis("bottom")._tickLevels[0]
            assert [t for _v, t in ticks] == ["10³", "10⁴", "10⁵"]
            assert panel.plot.getAxis("left").logMode is log
        # the half-normal start of the relative variance, as a reference line
        rv = panels[2]
        assert isinstance(rv, RelVarPanel)
        assert rv.reference.value() == pytest.approx(math.pi / 2 - 1)
        # fewer rows, new lam: the curves follow; no rows: nothing drawn
        panels[0].show_rows(rows[:3], m_values=(1000,), lam_values=(1e-4,))
        assert list(panels[0].curves) == [1e-4]
        panels[0].show_rows([], m_values=(1000,), lam_values=(1e-4,))
        x, _y = panels[0].curves[1e-4].line.getOriginalDataset()
        assert x is None or len(x) == 0
        assert "no runs" in panels[0].note.text
    finally:
        delete_widgets(app, *panels)


def test_power_text():
    assert power_text(1e-4) == "10⁻⁴"
    assert power_text(1000) == "10³"
    assert power_text(2e-3) == "2·10⁻³"
    assert power_text(0.5) == "0.5"
    assert power_text(3000) == "3·10³"
    assert power_text(1234) == "1234"
