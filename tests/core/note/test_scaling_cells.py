"""The scaling grid's cells (core/note/scaling.scaling_cells), which its live panels and its
figures draw: each run in its (lam, m) cell, the mean and SD over seeds, the note's regime,
against numbers worked out by hand."""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np

from sparsity_gui.core.note.scaling import ScalingRow, scaling_cells


def scaling_row(m: int, lam: float, seed: int, value: float, start: float) -> ScalingRow:
    numbers = {f.name: math.nan for f in fields(ScalingRow)}
    return ScalingRow(
        **{
            **numbers,
            "m": m,
            "lam": lam,
            "seed": seed,
            "lam_t_one": value,
            "lam_norm1_0": start,
            "balance_possible": start <= 0.25,
            "theta_rises": True,
            "theta_rise_condition": True,
        }
    )


def test_the_scaling_cells_are_the_mean_and_sd_over_seeds_of_each_m_and_lam():
    rows = [
        scaling_row(10, 1e-3, 0, 1.0, 0.1),
        scaling_row(10, 1e-3, 1, 3.0, 0.2),
        scaling_row(100, 1e-3, 0, 2.0, 0.2),
        scaling_row(100, 1e-3, 1, math.nan, 0.4),  # too short to have it
        scaling_row(10, 1e-2, 0, 5.0, 0.3),
    ]
    cells = scaling_cells(rows, "lam_t_one", m_values=(10, 100, 1000), lam_values=(1e-3, 1e-2))
    assert cells.m_values == (10, 100, 1000) and cells.lam_values == (1e-3, 1e-2)
    np.testing.assert_array_equal(cells.table.runs, [[2, 2, 0], [1, 0, 0]])
    np.testing.assert_array_equal(cells.table.mean, [[2.0, 2.0, np.nan], [5.0, np.nan, np.nan]])
    np.testing.assert_allclose(cells.table.std, [[math.sqrt(2.0), 0.0, np.nan], [0.0, np.nan, np.nan]])
    # the regime: the mean lam ||W(0)||_1 of the cell at most 1/4 (0.15, 0.3; 0.3)
    np.testing.assert_array_equal(cells.regime, [[True, False, False], [False, False, False]])
