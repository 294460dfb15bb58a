"""The optimizer and noise findings the docs print, recomputed from the CSVs committed beside
their figures (docs/optimizers, docs/noise): each number must follow from the rows, and the
docs must print it. The docs' text is searched in README.md and docs/*.md together, with
line breaks folded, so a finding may move between pages."""

from __future__ import annotations

import csv
import importlib.util
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]


def docs_text() -> str:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return re.sub(r"\s+", " ", " ".join(p.read_text(encoding="utf-8") for p in pages if p.exists()))


def rows(path: str) -> list[dict]:
    with open(ROOT / path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def never_sparse(row: dict) -> bool:
    return row["steps_to_sparse"] == ""  # as sweep.csv: no number a table would average


def by(rows_: list[dict], *keys: str) -> dict:
    groups = defaultdict(list)
    for r in rows_:
        groups[tuple(r[k] for k in keys)].append(r)
    return groups


@pytest.fixture(scope="module")
def text():
    return docs_text()


@pytest.mark.parametrize("path", ["docs/optimizers/optimizers.csv", "docs/optimizers/grid/sweep.csv"])
def test_never_sparse_is_an_empty_cell_not_a_number(path):
    """A run that never became sparse has no steps_to_sparse: an empty cell, which every
    tabular reader takes for missing (a -1 would be averaged as a number of steps)."""
    cells = [r["steps_to_sparse"] for r in rows(path)]
    assert "" in cells  # the tables have such runs
    assert all(c == "" or (c.isdigit() and int(c) >= 0) for c in cells)


def test_the_optimizer_figure_script_writes_never_sparse_empty(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "optimizer_figure", ROOT / "docs/optimizers/optimizer_figure.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    row = dict(
        optimizer="adamw", lr=1e-3, l1=1e-3, seed=0, rail_share=0.5, shrinkage_ratio=1.0, polysemantic=2
    )
    script.write_csv(
        [{**row, "steps_to_sparse": None}, {**row, "seed": 1, "steps_to_sparse": 4980}], tmp_path / "o.csv"
    )
    with open(tmp_path / "o.csv", newline="") as f:
        assert [r["steps_to_sparse"] for r in csv.DictReader(f)] == ["", "4980"]


def test_survivors_distance_to_the_fixed_point_per_optimizer(text):
    worst = defaultdict(float)
    for r in rows("docs/optimizers/optimizers.csv"):
        if not never_sparse(r) and r["shrinkage_ratio"] not in ("", "nan"):
            worst[r["optimizer"]] = max(worst[r["optimizer"]], abs(float(r["shrinkage_ratio"]) - 1))
    assert 4.4e-4 < worst["signsgd"] < 4.5e-4 and "4.5·10⁻⁴" in text
    assert 1.2e-5 < worst["adamw"] < 1.3e-5 and "1.3·10⁻⁵" in text
    assert max(worst["gd-zero"], worst["ista"]) < 2e-15 and "2·10⁻¹⁵" in text
    assert "within 10⁻⁴ of 1 (AdamW, gd-zero, ISTA: within 10⁻⁵)" not in text


def test_where_signsgd_and_gradient_descent_become_sparse(text):
    groups = by(rows("docs/optimizers/optimizers.csv"), "optimizer", "l1")
    failed = {l1: sum(map(never_sparse, groups[("signsgd", l1)])) for l1 in ("0.01", "0.03", "1.0")}
    assert failed == {"0.01": 3, "0.03": 2, "1.0": 3}
    assert "nor in 2 of 3 seeds at `l1 = 0.03`" in text
    assert "neither AdamW nor signSGD ever counts as sparse" in text
    sparse = [r for r in groups[("signsgd", "0.03")] + groups[("signsgd", "0.1")] if not never_sparse(r)]
    sparse += [r for r in groups[("signsgd", "0.3")] if not never_sparse(r)]
    steps = sorted(int(r["steps_to_sparse"]) for r in sparse)
    assert (steps[0], steps[-1]) == (1080, 1290) and "1,080–1,290 steps" in text
    # the gd-zero "median" at l1 = 0.003 is one run of three
    one = [int(r["steps_to_sparse"]) for r in groups[("gd-zero", "0.003")] if not never_sparse(r)]
    assert one == [16770] and "16,770 (the one seed of three" in text
    medians = [
        np.median([int(r["steps_to_sparse"]) for r in groups[("gd-zero", l1)]])
        for l1 in ("0.01", "0.03", "0.1", "0.3")
    ]
    assert medians == [9690, 2700, 690, 330] and "→ 9,690 → 2,700 → 690 → 330" in text


def test_the_mean_rail_shares_the_docs_quote(text):
    groups = by(rows("docs/optimizers/optimizers.csv"), "optimizer", "l1")
    med = {
        l1: np.median([float(r["rail_share"]) for r in groups[("adamw", l1)]])
        for l1 in ("0.001", "0.01", "0.03")
    }
    assert [round(med[k], 2) for k in ("0.001", "0.01", "0.03")] == [0.05, 0.34, 0.50]
    assert "rises from 0.05 at `l1 = 10⁻³` through 0.34 (0.01) to 0.50 at 0.03" in text


def test_the_grid_gd_zero_and_ista_share_steps_not_runs(text):
    groups = by(rows("docs/optimizers/grid/sweep.csv"), "optimizer")
    key = lambda r: (float(r["l1"]), int(r["seed"]))  # noqa: E731
    gd, ista = sorted(groups[("gd-zero",)], key=key), sorted(groups[("ista",)], key=key)
    assert len(gd) == len(ista) == 25
    assert all(a["steps_to_sparse"] == b["steps_to_sparse"] for a, b in zip(gd, ista, strict=True))
    differ = sum(
        a[c] != b[c]
        for a, b in zip(gd, ista, strict=True)
        for c in gd[0]
        if c not in ("optimizer", "seconds")
    )
    assert differ == 27 and "27 of their other values differ" in text
    assert "the same runs here" not in text
    adam = by(groups[("adamw",)], "l1")
    first, last = (np.median([int(r["steps_to_sparse"]) for r in adam[(l1,)]]) for l1 in ("0.001", "0.5"))
    assert (first, last) == (9912, 1404) and "9,912 → 1,404 steps" in text
    sign = [int(r["steps_to_sparse"]) for r in groups[("signsgd",)] if not never_sparse(r)]
    assert (min(sign), max(sign)) == (876, 1044) and "876–1,044 steps" in text


def test_the_noise_table(text):
    final = defaultdict(list)
    for r in rows("docs/noise/noise.csv"):
        if r["step"] == "100000":
            final[(r["noise"], r["sigma"])].append(float(r["sum_w4"]))
    for (kind, sigma), low_high, median in (
        (("bernoulli", "0.07"), "0.30–0.34", 0.32),
        (("bernoulli", "0.1"), "0.80–0.83", 0.81),
        (("bernoulli", "0.15"), "0.76–0.79", 0.77),
        (("gaussian", "0.1"), "0.15–0.17", 0.16),
    ):
        values = final[(kind, sigma)]
        assert len(values) == 5
        low, high = (float(x) for x in low_high.split("–"))
        assert low <= min(values) + 0.005 and max(values) - 0.005 <= high
        assert round(float(np.median(values)), 2) == median
        name = "Bernoulli" if kind == "bernoulli" else "Gaussian"
        assert f"| {name} σ = {sigma} | {low_high} (median {median:.2f}" in text
