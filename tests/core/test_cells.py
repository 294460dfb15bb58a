"""A grid's cells whichever model's (core/cells.py): cell_stats and the table of runs placed
in their cells, against numbers worked out by hand (numpy's linear quantile: position
q·(k-1) among k sorted values)."""

from __future__ import annotations

import math

import numpy as np

from sparsity_gui.core.cells import CellTable, cell_stats


def test_cell_stats_are_the_median_quantiles_mean_and_sample_sd_of_the_values_with_one():
    st = cell_stats([300.0, math.nan, 100.0, 200.0])
    assert st == {
        "runs_with_value": 3,
        "median": 200.0,
        "p10": 120.0,
        "p90": 280.0,
        "mean": 200.0,
        "std": 100.0,
    }
    assert cell_stats([7.0]) == {
        "runs_with_value": 1,
        "median": 7.0,
        "p10": 7.0,
        "p90": 7.0,
        "mean": 7.0,
        "std": 0.0,
    }
    assert cell_stats([math.nan]) == {
        "runs_with_value": 0,
        "median": None,
        "p10": None,
        "p90": None,
        "mean": None,
        "std": None,
    }


def test_a_cell_table_places_each_run_and_leaves_out_those_outside():
    table = CellTable.of([(0, 1), (0, 1), (1, 0), None, (1, 0)], [1.0, 3.0, math.nan, 99.0, 5.0], (2, 2))
    np.testing.assert_array_equal(table.runs, [[0, 2], [2, 0]])
    np.testing.assert_array_equal(table.with_value, [[0, 2], [1, 0]])
    np.testing.assert_array_equal(table.median, [[np.nan, 2.0], [5.0, np.nan]])
    np.testing.assert_allclose(table.p10, [[np.nan, 1.2], [5.0, np.nan]])
    np.testing.assert_allclose(table.p90, [[np.nan, 2.8], [5.0, np.nan]])
    np.testing.assert_allclose(table.std, [[np.nan, math.sqrt(2.0)], [0.0, np.nan]])
    assert table.shape == (2, 2)
