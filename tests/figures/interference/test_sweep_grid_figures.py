"""A sweep's grid figures (figures/interference/grid.py), drawn from known rows: the curves'
medians and bands and the heatmap's cells are the test's own quantiles of the rows
(Python's statistics), a run never sparse is left out and said so, the layout rules hold at
a journal's column and text width, and each figure's script draws it from its JSON (the
script redrawing the PNG alone, the SVG and the PDF: test_figure_contracts.py)."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from helpers import sweep_row

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepRow, SweepSpec
from sparsity_gui.figures import layout
from sparsity_gui.figures.interference.grid import (
    curves,
    grid_data,
    grid_figure_files,
    heatmap,
    overlap,
    overlap_data,
    overlap_figure_files,
)
from sparsity_gui.figures.save import arrays_of, data_json, figure_of
from sparsity_gui.figures.style import DOUBLE_COLUMN, PAPER, SINGLE_COLUMN
from tests.figures.figure_files import redraw

L1S = (1e-3, 1e-2, 0.1, 0.5)
OPTIMIZERS = ("adamw", "gd-zero", "signsgd")
SEEDS = 5
WIDTHS = [SINGLE_COLUMN, DOUBLE_COLUMN]


def spec(overlap=False, **axes) -> SweepSpec:
    base = InterferenceParams(n=8, m=16, steps=1000, lr=1e-3)
    return SweepSpec(base=base, m_values=(16,), seeds=SEEDS, axes=tuple(axes.items()), overlap=overlap)


def steps_of(l1: float, optimizer: str, seed: int) -> int:
    """Known steps to sparsity: Adam's flatten at large l1, GD's fall as 1/l1 and never
    come at the smallest; seeds spread them."""
    if optimizer == "gd-zero":
        return -1 if l1 < 5e-3 else int(40 / l1) + 7 * seed
    if optimizer == "signsgd":
        return 900 + 13 * seed
    return int(1200 + 300 / (l1 * 1e3) ** 0.5) + 31 * seed


def overlap_of(p) -> np.ndarray:
    """A known W(0) W(T)^T per run: a diagonal that fades with l1, a seed's own off-diagonal."""
    rng = np.random.default_rng(p.seed)
    return np.diag(np.full(p.n, 1.0 - p.l1)) + 0.1 * rng.standard_normal((p.n, p.n))


def rows_of(plan: SweepSpec) -> list[SweepRow]:
    return [
        sweep_row(
            p,
            polysemantic=(p.seed + len(p.optimizer)) % 4,
            opposite_pairs=1,
            sum_w4=0.5,
            steps_to_sparse=steps_of(p.l1, p.optimizer, p.seed),
            rail_share=min(1.0, p.l1 * 3) if p.optimizer == "adamw" else 0.01 * p.seed,
            shrinkage_ratio=0.99,
            overlap=overlap_of(p),
        )
        for p in plan.runs()
    ]


PLAN = spec(l1=L1S, optimizer=OPTIMIZERS, overlap=True)
ROWS = rows_of(PLAN)


def data_of(plan, rows, readout, **kw) -> dict:
    return arrays_of(json.loads(data_json(grid_data(rows, plan, readout, **kw))))  # as the JSON holds it


def draw(panel, data, width=SINGLE_COLUMN):
    return figure_of(panel, data, PAPER, (width, 2.6 * max(1.0, width / SINGLE_COLUMN) ** 0.5))


def expected(readout: str, l1: float, optimizer: str) -> list[float]:
    values = [float(getattr(r, readout)) for r in ROWS if r.l1 == l1 and r.optimizer == optimizer]
    return [v for v in values if not (readout == "steps_to_sparse" and v == -1)]


def test_the_curves_are_the_medians_and_the_10_90_band_of_each_optimizer():
    fig = draw(curves, data_of(PLAN, ROWS, "steps_to_sparse"))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"  # l1 and the steps span decades
    lines = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert len(lines) == len(OPTIMIZERS)
    for line, optimizer in zip(lines, OPTIMIZERS, strict=True):
        xs = [l1 for l1 in L1S if expected("steps_to_sparse", l1, optimizer)]
        np.testing.assert_array_equal(line.get_xdata(), xs)
        np.testing.assert_allclose(
            line.get_ydata(),
            [statistics.median(expected("steps_to_sparse", x, optimizer)) for x in xs],
            rtol=1e-12,
        )
    bands = ax.collections
    for band, optimizer in zip(bands, OPTIMIZERS, strict=True):
        xs = [l1 for l1 in L1S if expected("steps_to_sparse", l1, optimizer)]
        verts = band.get_paths()[0].vertices
        for x in xs:
            cuts = statistics.quantiles(expected("steps_to_sparse", x, optimizer), n=10, method="inclusive")
            ys = verts[np.isclose(verts[:, 0], x), 1]
            assert min(ys) == pytest.approx(cuts[0], rel=1e-12) and max(ys) == pytest.approx(
                cuts[-1], rel=1e-12
            )
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts[:3] == [f"optimizer = {o}" for o in OPTIMIZERS] and "10–90 % of seeds" in texts
    assert f"{SEEDS} of {len(ROWS)} runs never sparse" in texts  # gd-zero at l1 = 1e-3
    assert layout.layout_faults(fig) == []


def test_the_polysemantic_curves_carry_the_prediction():
    fig = draw(curves, data_of(PLAN, ROWS, "polysemantic"))
    ax = fig.axes[0]
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--" and len(ln.get_xdata())]
    assert dashed and all(np.allclose(ln.get_ydata(), 8 * 8 / (4 * 16)) for ln in dashed)
    assert "$n^2/(4m)$" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_the_heatmap_is_the_median_of_each_cell_and_hatches_the_never_sparse():
    fig = draw(heatmap, data_of(PLAN, ROWS, "steps_to_sparse"))
    ax = fig.axes[0]
    image = ax.images[0].get_array()
    assert image.shape == (len(OPTIMIZERS), len(L1S))
    for j, optimizer in enumerate(OPTIMIZERS):
        for i, l1 in enumerate(L1S):
            values = expected("steps_to_sparse", l1, optimizer)
            if values:
                assert image[j, i] == statistics.median(values)
            else:
                assert np.ma.is_masked(image[j, i]) or not np.isfinite(image[j, i])
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 1 and hatched[0].get_xy() == (-0.5, OPTIMIZERS.index("gd-zero") - 0.5)
    assert "hatched: never sparse" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.001", "0.01", "0.1", "0.5"]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(OPTIMIZERS)
    cells = {t.get_text() for t in ax.texts}
    assert str(int(statistics.median(expected("steps_to_sparse", 0.5, "adamw")))) in cells
    assert layout.layout_faults(fig) == []


@pytest.mark.parametrize("width", WIDTHS, ids=["3.5in", "7in"])
@pytest.mark.parametrize("readout", ["steps_to_sparse", "rail_share", "polysemantic"])
def test_both_figures_keep_the_layout_rules(readout, width):
    data = data_of(PLAN, ROWS, readout)
    for panel in (curves, heatmap):
        assert layout.layout_faults(draw(panel, data, width)) == []


def test_a_categorical_x_axis_has_its_values_as_ticks_and_a_cut_grid_says_so():
    plan = spec(optimizer=OPTIMIZERS, l1_schedule=(((0.0, 0.0), (500.0, 1e-3)), ((0.0, 1e-3),)))
    rows = rows_of(plan)[:-3]  # cancelled before its last runs
    data = data_of(plan, rows, "rail_share", cancelled=True)
    fig = draw(curves, data)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == list(OPTIMIZERS)
    assert ax.get_title().startswith(f"cancelled: {len(rows)} of {len(rows) + 3} runs")
    assert [t.get_text() for t in fig.legends[0].get_texts()][:2] == [
        "l1 schedule = 0:0,500:0.001",
        "l1 schedule = 0:0.001",
    ]
    assert layout.layout_faults(fig) == []


def test_the_overlap_panels_are_each_cells_mean_over_its_seeds():
    data = arrays_of(json.loads(data_json(overlap_data(PLAN, ROWS))))
    assert data["more"] == len(L1S) * len(OPTIMIZERS) - 8  # the first 8 cells drawn
    fig = figure_of(overlap, data, PAPER, (DOUBLE_COLUMN, 4.0))
    panels = [ax for ax in fig.axes if ax.collections and ax.get_title()]
    assert len(panels) == 8
    cells = [(l1, opt) for l1 in L1S for opt in OPTIMIZERS][:8]
    for ax, (l1, opt) in zip(panels, cells, strict=True):
        mine = [overlap_of(p) for p in PLAN.runs() if p.l1 == l1 and p.optimizer == opt]
        drawn = np.asarray(ax.collections[0].get_array()).reshape(8, 8)
        np.testing.assert_allclose(drawn, sum(mine) / len(mine), rtol=0, atol=1e-14)
        assert ax.get_title() == f"{l1:g}, {opt} ({SEEDS})"
    assert "the first 8 of 12 cells" in fig._suptitle.get_text()
    assert layout.layout_faults(fig) == []


# --- the scripts --------------------------------------------------------------------------
NAMES = ["curves", "heatmap", "overlap"]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The grid's JSON and scripts (their PNG, SVG and PDF: test_figure_contracts.py)."""
    folder = tmp_path_factory.mktemp("grid") / "figures"
    folder.mkdir()
    files = grid_figure_files(PLAN, ROWS, "steps_to_sparse", formats=())
    files.update(overlap_figure_files(PLAN, ROWS, formats=()))
    for name, blob in files.items():
        (folder / name).write_bytes(blob)
    return folder, files


def test_each_figure_has_its_json_and_a_script_alone(written):
    _folder, files = written
    assert set(files) == {f"{n}.{ext}" for n in NAMES for ext in ("json", "py")}
    for n in NAMES:
        script = files[f"{n}.py"].decode()
        assert "sparsity_gui" not in script and "import numpy" in script
        assert "gd-zero" not in script  # the values are the JSON's data, never code


@pytest.mark.parametrize("name", NAMES)
def test_every_text_is_at_least_6_pt(written, name):
    folder, _files = written
    fig = redraw(folder, name)
    small = [(t.get_text(), t.get_fontsize()) for t in layout.visible_texts(fig) if t.get_fontsize() < 6.0]
    assert small == [], small
