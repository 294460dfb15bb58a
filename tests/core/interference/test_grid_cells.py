"""A sweep's cells (core/interference/cells.py), which its live panels and its figures draw:
each run placed in its cell, the statistics over seeds, the text written in a cell, the
layout and which figures draw a grid, all against numbers worked out by hand for small
grids (numpy's linear quantile: position q·(k-1) among k sorted values)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from helpers import sweep_row

from sparsity_gui.core.interference.cells import (
    CELL_TEXT_MAX,
    CURVES,
    HEATMAP,
    GridLayout,
    cell_text,
    fixed_text,
    grid_cells,
    grid_figures,
)
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepRow, SweepSpec

BASE = InterferenceParams(n=4, m=8, steps=100, lr=0.1)
# steps to sparsity per (l1, optimizer), seeds 0, 1, 2; -1: never sparse
STEPS = {
    (0.01, "adamw"): (100, 300, 200),
    (0.1, "adamw"): (50, 50, 80),
    (0.01, "gd-zero"): (-1, -1, -1),
    (0.1, "gd-zero"): (-1, 1000, 3000),
}


def plan(seeds: int = 3, **axes) -> SweepSpec:
    axes = axes or {"l1": (0.01, 0.1), "optimizer": ("adamw", "gd-zero")}
    return SweepSpec(base=BASE, m_values=(8,), seeds=seeds, axes=tuple(axes.items()))


def row(p: InterferenceParams, steps_to_sparse: int = -1, polysemantic: int = 0):
    return sweep_row(p, steps_to_sparse=steps_to_sparse, polysemantic=polysemantic)


def steps_rows(spec: SweepSpec) -> list[SweepRow]:
    return [row(p, STEPS[(p.l1, p.optimizer)][p.seed - BASE.seed]) for p in spec.runs()]


def test_the_layout_of_two_varied_options():
    layout = GridLayout.of(plan())
    assert layout.x_axis == "l1" and layout.others == ("optimizer",)
    assert layout.x_values == (0.01, 0.1) and layout.combos == (("adamw",), ("gd-zero",))
    assert layout.shape == (2, 2) and layout.planned_runs == 12
    assert layout.x_numeric and layout.x_log  # 0.01 to 0.1: a decade
    assert layout.x_labels() == ["0.01", "0.1"] and layout.y_labels() == ["adamw", "gd-zero"]
    assert layout.series_labels() == ["optimizer = adamw", "optimizer = gd-zero"]
    np.testing.assert_array_equal(layout.predicted, np.full((2, 2), 4 * 4 / (4 * 8)))


def test_the_cells_of_steps_to_sparsity_over_three_seeds():
    spec = plan()
    cells = grid_cells(GridLayout.of(spec), steps_rows(spec), "steps_to_sparse")
    nan = np.nan
    # rows: adamw, gd-zero; columns: l1 0.01, 0.1
    np.testing.assert_array_equal(cells.runs, [[3, 3], [3, 3]])
    np.testing.assert_array_equal(cells.table.with_value, [[3, 3], [0, 2]])
    np.testing.assert_array_equal(cells.median, [[200.0, 50.0], [nan, 2000.0]])
    np.testing.assert_allclose(cells.p10, [[120.0, 50.0], [nan, 1200.0]])
    np.testing.assert_allclose(cells.p90, [[280.0, 74.0], [nan, 2800.0]])
    np.testing.assert_allclose(cells.table.mean, [[200.0, 60.0], [nan, 2000.0]])
    np.testing.assert_allclose(cells.table.std, [[100.0, math.sqrt(300.0)], [nan, math.sqrt(2e6)]])
    assert cells.without_value == 4 and cells.rows == 12
    np.testing.assert_array_equal(cells.hatched, [[False, False], [True, False]])
    assert cells.texts() == [["200", "50"], ["", "2000"]]
    assert cells.missing == "never sparse"
    assert cells.value_log  # medians from 50 to 2000


def test_a_grid_cut_short_has_cells_without_runs_neither_hatched_nor_written():
    spec = plan()
    rows = [r for r in steps_rows(spec) if not (r.l1 == 0.1 and r.optimizer == "gd-zero")]
    stranger = row(replace(BASE, l1=0.5, optimizer="adamw"), 10)  # a cell the plan does not have
    cells = grid_cells(GridLayout.of(spec), [*rows, stranger], "steps_to_sparse")
    np.testing.assert_array_equal(cells.runs, [[3, 3], [3, 0]])
    np.testing.assert_array_equal(cells.hatched, [[False, False], [True, False]])
    assert cells.texts() == [["200", "50"], ["", ""]] and cells.rows == 10


def test_another_readout_names_its_runs_without_a_value_otherwise_and_is_not_logged():
    spec = plan()
    rows = [row(p, polysemantic=p.seed - BASE.seed + (p.optimizer == "gd-zero")) for p in spec.runs()]
    cells = grid_cells(GridLayout.of(spec), rows, "polysemantic")
    np.testing.assert_array_equal(cells.median, [[1.0, 1.0], [2.0, 2.0]])
    assert cells.missing == "without a value" and cells.without_value == 0
    assert not cells.value_log and cells.texts() == [["1", "1"], ["2", "2"]]


@pytest.mark.parametrize(
    "value, text",
    [(936.0, "936"), (2.5, "2.5"), (0.8123, "0.812"), (137.5, "138"), (123456.0, "1.23e+05"), (-0.5, "-0.5")],
)
def test_a_cells_text(value, text):
    assert cell_text(value) == text


def test_a_grid_past_the_most_cells_written_writes_none():
    values = tuple(0.001 * (k + 1) for k in range(11))
    spec = plan(seeds=1, l1=values, lr=values)
    layout = GridLayout.of(spec)
    assert layout.shape[0] * layout.shape[1] == 121 > CELL_TEXT_MAX
    rows = [row(p, 10) for p in spec.runs()]
    texts = grid_cells(layout, rows, "steps_to_sparse").texts()
    assert len(texts) == 11 and all(t == [""] * 11 for t in texts)


def test_which_figures_draw_a_grid():
    assert grid_figures(SweepSpec(base=BASE, m_values=(8, 16), seeds=1)) == ()  # m alone: its count
    assert grid_figures(plan(l1=(0.01, 0.1))) == (CURVES,)
    assert grid_figures(plan()) == (CURVES, HEATMAP)
    assert grid_figures(plan(l1=(0.01, 0.1), optimizer=("adamw", "gd-zero"), lr=(0.1, 0.2))) == (CURVES,)


def test_three_varied_options_name_each_series_in_full():
    """The options in the order a sweep takes them (axes.AXES: l1, lr, optimizer), the
    first across, the others' combinations down."""
    spec = plan(seeds=1, optimizer=("adamw", "gd-zero"), l1=(0.01, 0.1), lr=(0.1, 0.2))
    layout = GridLayout.of(spec)
    assert layout.x_axis == "l1" and layout.y_labels() == ["0.1", "0.1", "0.2", "0.2"]
    assert layout.series_labels() == [
        "lr = 1.0e-1, optimizer = adamw",
        "lr = 1.0e-1, optimizer = gd-zero",
        "lr = 2.0e-1, optimizer = adamw",
        "lr = 2.0e-1, optimizer = gd-zero",
    ]


def test_the_settings_every_run_shares():
    assert fixed_text(plan()) == "n = 4 · m = 8 · lr = 1.0e-1 · steps = 100 · 3 seeds"
    assert fixed_text(plan(), math=True) == "$n = 4$ · $m = 8$ · lr = 1.0e-1 · steps = 100 · 3 seeds"


def test_the_settings_every_run_shares_are_every_one_that_differs_from_a_default_run():
    """Not a list by hand: a warm-up, noise and Adam's β₁ that every run of the grid has
    are said (as a pin's name says them), the varied option is not, and a varied noise
    kind keeps its shared σ; knots read as the fields write them."""
    base = BASE.with_changes(l1_warmup=50, noise="bernoulli", noise_sigma=0.05, optimizer="adam", beta1=0.8)
    spec = SweepSpec(base=base, m_values=(8, 16), seeds=2, axes=(("lr", (0.1, 0.2)),))
    assert fixed_text(spec) == (
        "n = 4 · l1 = 1.0e-3 · optimizer = adam · steps = 100 · noise = Bernoulli · noise σ = 0.05"
        " · l1 warm-up = 50 steps · β₁ = 0.8 · 2 seeds"
    )
    adamw = base.with_changes(optimizer="adamw", beta1=0.9, l1_warmup=0)
    noisy = SweepSpec(base=adamw, m_values=(8,), seeds=1, axes=(("noise", ("none", "bernoulli")),))
    assert (
        fixed_text(noisy)
        == "n = 4 · m = 8 · l1 = 1.0e-3 · lr = 1.0e-1 · steps = 100 · noise σ = 0.05 · 1 seed"
    )
    knots = SweepSpec(
        base=BASE, m_values=(8,), seeds=1, axes=(("l1_schedule", (((0.0, 0.0), (10.0, 0.002)), ())),)
    )
    assert GridLayout.of(knots).x_labels() == ["0:0,10:0.002", "none"]
