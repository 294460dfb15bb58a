"""The numbers interference.md's "L1, TopK and JumpReLU in one toy" prints, recomputed from
the CSVs committed beside its figure (docs/mechanisms): each must follow from the rows, and
the page must print it. The knee is recomputed here with the rule written out (the smallest C
from which every step to the next C changes the median L0 by < 10 % per decade)."""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)
LRS = (1e-4, 3e-4, 1e-3)


def rows(path: str) -> list[dict]:
    with open(ROOT / path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def text() -> str:
    page = (ROOT / "docs" / "interference.md").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", page[page.index("## L1, TopK and JumpReLU in one toy") :])


KNEE = rows("docs/mechanisms/knee/sweep.csv")


def median(column: str, lr: float, c: float) -> float:
    return statistics.median(float(r[column]) for r in KNEE if float(r["lr"]) == lr and float(r["l0"]) == c)


def test_the_grid_is_the_documented_one():
    assert len(KNEE) == 108
    assert {(float(r["l0"]), float(r["lr"])) for r in KNEE} == {(c, lr) for c in CS for lr in LRS}
    assert {(r["n"], r["m"], r["steps"], r["optimizer"], r["sparsity"]) for r in KNEE} == {
        ("64", "16", "2000", "adam", "jumprelu")
    }


def test_the_knees(text):
    knees = []
    for lr in LRS:
        l0 = [median("l0_per_input", lr, c) for c in CS]
        flat = [
            abs(b - a) / a / math.log10(d / c) < 0.1
            for a, b, c, d in zip(l0, l0[1:], CS, CS[1:], strict=False)
        ]
        j = len(flat)
        while j > 0 and flat[j - 1]:
            j -= 1
        knees.append(CS[j] if j < len(flat) else None)
    assert knees == [0.03, 0.03, 0.3]
    assert json.loads((ROOT / "docs/mechanisms/knee/figures/knee.json").read_text())["knees"] == knees
    assert "at `C = 0.03` for `lr = 10⁻⁴` and `3·10⁻⁴`, at `C = 0.3` for `lr = 10⁻³`" in text


def test_where_the_final_l0_stays_and_where_it_started(text):
    at_one = [median("l0_per_input", lr, 1.0) for lr in LRS]
    at_least = [median("l0_per_input", lr, 1e-4) for lr in LRS]
    assert [f"{v:.3g}" for v in at_one] == ["10.1", "6.95", "3.3"]
    assert [f"{v:.3g}" for v in at_least] == ["15.1", "15.5", "15.8"] and at_least[2] == 15.75
    assert (
        "stays at 10.1, 6.95 and 3.3 units per input (of 16, medians at `C = 1`) from 15.1, 15.5 and 15.75"
        in text
    )


def test_the_threshold_rail_share_and_the_verdict(text):
    shares = [median("threshold_rail_share", lr, 1.0) for lr in LRS]
    assert [round(v, 2) for v in shares[:2]] == [0.31, 0.17] and round(shares[2], 3) == 0.085
    assert "(at `C = 1`: 0.31, 0.17 and 0.085, medians)" in text
    most = max(float(r["threshold_rail_share"]) for r in KNEE)
    assert 0.32 < most <= 0.33 and "(at most 0.33)" in text
    assert all(r["threshold_saturated"] == "False" for r in KNEE)
    assert all(int(r["polysemantic"]) == 0 and float(r["dead_units"]) == 0 for r in KNEE)


def test_where_the_thresholds_end(text):
    table = rows("docs/mechanisms/thresholds.csv")
    ranges = []
    for lr in LRS:
        mine = [r for r in table if float(r["lr"]) == lr]
        assert len(mine) == 4 and all(float(r["reachable"]) == pytest.approx(1e-3 + lr * 2000) for r in mine)
        theta = [float(r["threshold_median"]) for r in mine]
        ranges.append((min(theta), max(theta), statistics.median(theta)))
    for (lo, hi, _), (doc_lo, doc_hi) in zip(
        ranges, [(0.065, 0.071), (0.113, 0.123), (0.214, 0.225)], strict=True
    ):
        assert lo == pytest.approx(doc_lo, abs=6e-4) and hi == pytest.approx(doc_hi, abs=6e-4)
    assert "0.065–0.071, 0.113–0.123 and 0.214–0.225" in text and "0.201, 0.601 and 2.001" in text
    largest = [float(r["largest_w_median"]) for r in table]
    assert round(min(largest), 2) == 0.40 and round(max(largest), 2) == 0.52 and "0.40–0.52" in text
    m1, m2, m3 = (r[2] for r in ranges)
    assert round(m2 / m1, 1) == 1.7 and round(m3 / m2, 1) == 1.9 and "×1.7 and ×1.9" in text


@pytest.mark.parametrize(
    "name, row_text",
    [
        ("l1", "| `l1`, `l1 = 10⁻³` | 9.67 | 15.0 |"),
        ("topk", "| `topk`, `K = 2` | 25.67 | 11.33 | 2 |"),
        ("jumprelu", "| `jumprelu`, `C = 0.3` | 20.0 | 0 | 1.18 (`m = 32`), 3.97 (`m = 64`) |"),
    ],
)
def test_the_polysemantic_count_under_each_mechanism(name, row_text, text):
    table = rows(f"docs/mechanisms/{name}/sweep.csv")
    assert {(r["n"], r["steps"], r["optimizer"], r["lr"], r["sparsity"]) for r in table} == {
        ("64", "7500", "adam", "0.001", name)
    }
    means = {}
    for m in ("32", "64"):
        mine = [r for r in table if r["m"] == m]
        assert len(mine) == 3 and not any(r["settled"] == "True" for r in mine)
        means[m] = statistics.mean(int(r["polysemantic"]) for r in mine)
        if name == "jumprelu":
            kept = statistics.mean(float(r["l0_per_input"]) for r in mine)
            assert f"{kept:.2f}" in row_text
    shown = [f"{v:.2f}".rstrip("0").rstrip(".") if v == int(v) else f"{v:.2f}" for v in means.values()]
    cells = row_text.split("|")[2:4]
    assert [float(c) for c in cells] == [pytest.approx(float(s), abs=5e-3) for s in shown]
    assert row_text in text


def test_why_jumprelu_has_none_at_m_64(text):
    by = {name: rows(f"docs/mechanisms/{name}/sweep.csv") for name in ("l1", "jumprelu")}
    active_j = sorted(int(r["active"]) for r in by["jumprelu"] if r["m"] == "64")
    active_l1 = sorted(int(r["active"]) for r in by["l1"] if r["m"] == "64")
    assert active_j[0] == 1 and active_j[-1] == 4 and active_l1[0] == 61 and active_l1[-1] == 63
    assert "(1 to 4 active weights in all, against 61–63 under L1)" in text
