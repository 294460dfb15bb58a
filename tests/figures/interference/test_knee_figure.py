"""A JumpReLU sweep's knee figure (figures/interference/knee.py), drawn from known rows: its
medians are the test's own medians of the rows (Python's statistics), the knee of each lr is
the one worked out here by hand from the rule, the knee is drawn where it is, each curve
names θ0 + lr·steps, the layout rules hold at a journal's column and text width, and its
script draws it from its JSON (redrawing its PNG pixel for pixel alone, the SVG and the
PDF: test_figure_contracts.py)."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from helpers import sweep_row

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepRow, SweepSpec
from sparsity_gui.figures import layout
from sparsity_gui.figures.interference.knee import knee_data, knee_drawn, knee_figure_files, knee_panel
from sparsity_gui.figures.save import arrays_of, data_json, figure_of
from sparsity_gui.figures.style import DOUBLE_COLUMN, PAPER, SINGLE_COLUMN
from tests.figures.figure_files import redraw

CS = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
LRS = (1e-4, 1e-3)
SEEDS = 5
STEPS = 1000
THETA0 = 2e-3
# the median final L0 per input of each lr at each C: at lr 1e-4 it changes by 20 %, 17 %,
# then 0 % per decade (the knee at C = 1e-2); at lr 1e-3 by 20 % or more at every step (none)
L0 = {1e-4: (15.0, 12.0, 10.0, 10.0, 10.0), 1e-3: (15.0, 12.0, 8.0, 5.0, 3.0)}
KNEES = [1e-2, None]


def plan(**axes) -> SweepSpec:
    base = InterferenceParams(
        n=8, m=16, steps=STEPS, optimizer="adam", l1=0.0, sparsity="jumprelu", l0=1e-3, threshold_init=THETA0
    )
    return SweepSpec(base=base, m_values=(16,), seeds=SEEDS, axes=tuple(axes.items()))


def rows_of(spec: SweepSpec) -> list[SweepRow]:
    """Each run's final L0: its cell's value, the seeds spread symmetrically around it (the
    median is the cell's); its threshold rail share rises with C, more at the small lr."""
    return [
        sweep_row(
            p,
            l0_per_input=L0[p.lr][CS.index(p.l0)] + 0.25 * (p.seed - 2),
            threshold_rail_share=min(1.0, 0.1 + 0.1 * CS.index(p.l0) * (2e-4 / p.lr) ** 0.5 + 0.01 * p.seed),
        )
        for p in spec.runs()
    ]


PLAN = plan(l0=CS, lr=LRS)
ROWS = rows_of(PLAN)


def data_of(spec, rows) -> dict:
    return arrays_of(json.loads(data_json(knee_data(rows, spec))))  # as the JSON holds it


def draw(data, width=SINGLE_COLUMN):
    return figure_of(knee_panel, data, PAPER, (width, 3.2))


def test_a_jumprelu_grid_over_c_draws_the_knee_figure_and_others_do_not():
    assert PLAN.varied == ("l0", "lr") and knee_drawn(PLAN)
    assert not knee_drawn(plan(lr=LRS)) and not knee_drawn(plan(l0=(1e-3,), lr=LRS))


def test_the_curves_are_each_lrs_medians_over_seeds_and_its_knee_the_hand_worked_one():
    data = data_of(PLAN, ROWS)
    assert list(data["series"]) == ["lr = 1.0e-4", "lr = 1.0e-3"]
    assert np.allclose(data["c"], CS)
    for name, column in (("l0", "l0_per_input"), ("rail", "threshold_rail_share")):
        median = np.asarray(data[f"{name}_median"]).reshape(2, 5)
        lo, hi = (np.asarray(data[f"{name}_{q}"]).reshape(2, 5) for q in ("p10", "p90"))
        for s, lr in enumerate(LRS):
            for j, c in enumerate(CS):
                values = [getattr(r, column) for r in ROWS if r.lr == lr and r.l0 == c]
                assert len(values) == SEEDS
                assert median[s, j] == pytest.approx(statistics.median(values), abs=1e-12)
                assert min(values) <= lo[s, j] <= median[s, j] <= hi[s, j] <= max(values)
    knees = [None if not np.isfinite(k) else float(k) for k in data["knees"]]
    assert knees == KNEES
    assert "10%" in data["knee_definition"] and data["tolerance"] == 0.1
    # θ0 + Σ lr over the steps, a constant lr: θ0 + lr·steps
    assert np.allclose(data["reachable"], [THETA0 + lr * STEPS for lr in LRS], rtol=1e-12)


@pytest.mark.parametrize("width", [SINGLE_COLUMN, DOUBLE_COLUMN])
def test_the_knee_is_marked_where_it_is_and_named_in_the_legend(width):
    fig = draw(data_of(PLAN, ROWS), width)
    top, bottom = fig.axes[:2]
    for ax in (top, bottom):  # an open circle at lr 1e-4's knee, none for lr 1e-3
        circles = [line for line in ax.get_lines() if line.get_markerfacecolor() == "none"]
        assert len(circles) == 1 and circles[0].get_xdata()[0] == 1e-2 and circles[0].get_color() == "C0"
        assert ax.get_xscale() == "log"
    assert circles[0].get_ydata()[0] == pytest.approx(
        statistics.median(r.threshold_rail_share for r in ROWS if r.lr == 1e-4 and r.l0 == 1e-2)
    )
    assert top.get_lines()[0].get_color() == "C0"
    top_circle = [line for line in top.get_lines() if line.get_markerfacecolor() == "none"][0]
    assert top_circle.get_ydata()[0] == 10.0
    texts = " ".join(
        t.get_text()
        for legend in fig.legends + [a.get_legend() for a in fig.axes if a.get_legend()]
        for t in legend.get_texts()
    )
    assert "lr = 1.0e-4: knee at $C = 0.01$" in texts and "lr = 1.0e-3: no knee in the grid" in texts
    assert "= 0.102$" in texts and "= 1$" in texts and "10%" in texts  # 0.002 + 1e-4·1000, 0.002 + 1
    assert layout.layout_faults(fig) == []


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("knee") / "figures"
    folder.mkdir()
    files = knee_figure_files(PLAN, ROWS, formats=())  # its PNG, SVG, PDF: test_figure_contracts.py
    for name, blob in files.items():
        (folder / name).write_bytes(blob)
    return folder, files


def test_the_figure_has_its_json_and_a_script_alone(written):
    _folder, files = written
    assert set(files) == {"knee.json", "knee.py"}
    script = files["knee.py"].decode()
    assert "sparsity_gui" not in script and "import numpy" in script


def test_every_text_is_at_least_6_pt(written):
    folder, _files = written
    fig = redraw(folder, "knee")
    small = [(t.get_text(), t.get_fontsize()) for t in layout.visible_texts(fig) if t.get_fontsize() < 6.0]
    assert small == [], small
