"""`sweep` over JumpReLU's L0 coefficient (issue 51): sweep.csv carries each run's
mechanism readouts (final L0 per input, dead units, threshold rail share and its saturation
verdict), and the knee figure's knee per lr is the rule worked out here from the CSV's own
medians; a list the mechanism cannot take is one error line, exit 2, nothing written."""

from __future__ import annotations

import csv
import json
import math
import statistics

import pytest
from helpers import assert_refused_in_process

BASE = ["sweep", "--n", "6", "--m", "4", "--steps", "120", "--seeds", "3", "--optimizer", "adam"]
CS = (1e-3, 1e-2, 0.1, 1.0)
LRS = (1e-3, 1e-2)


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--l0", "1e-3,1e-2"], "l0: goes with --sparsity jumprelu"),
        (["--sparsity", "topk", "--k", "1,8"], "k: must be a whole number from 1 to m = 4, got 8"),
        (["--sparsity", "topk", "--k", "0,2"], "k: "),
        (["--sparsity", "jumprelu", "--l0=-1,1"], "l0: must be >= 0"),
        (["--k", "1,2"], "k: goes with --sparsity topk"),
        (["--sparsity", "topk", "--k", "3", "--m", "2,8"], "k: must be a whole number from 1 to m = 2"),
    ],
)
def test_a_list_the_mechanism_cannot_take_is_refused(extra, words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert_refused_in_process([*BASE, *extra, "--out", "o"], words, tmp_path, capsys)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("knee")
    monkeypatch = pytest.MonkeyPatch()
    argv = [*BASE, "--sparsity", "jumprelu", "--l0", ",".join(map(str, CS)), "--lr", ",".join(map(str, LRS))]
    try:
        from sparsity_gui.__main__ import main

        monkeypatch.chdir(folder)
        code = main([*argv, "--out", "o", "--dpi", "60"])
    finally:
        monkeypatch.undo()
    assert code in (0, None)
    with open(folder / "o" / "sweep.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return folder / "o", rows


def test_each_row_carries_the_mechanisms_readouts(swept):
    _out, rows = swept
    assert len(rows) == len(CS) * len(LRS) * 3
    for row in rows:
        assert row["sparsity"] == "jumprelu" and float(row["l0"]) in CS and float(row["lr"]) in LRS
        l0, dead = float(row["l0_per_input"]), float(row["dead_units"])
        assert 0.0 <= l0 <= 4.0 and dead == int(dead) and 0 <= dead <= 4
        if dead == 4:  # no unit kept by any input: none kept per input either
            assert l0 == 0.0
        share = float(row["threshold_rail_share"])
        saturated = row["threshold_saturated"] == "True"
        assert saturated == (share > 0.5)  # the verdict: more than half the steps on the rail


def test_the_knee_figure_marks_the_rules_knee_of_each_lr(swept):
    out, rows = swept
    data = json.loads((out / "figures" / "knee.json").read_text())
    assert data["series"] == ["lr = 1.0e-3", "lr = 1.0e-2"]  # LRS
    for s, lr in enumerate(LRS):
        medians = [
            statistics.median(
                float(r["l0_per_input"]) for r in rows if float(r["lr"]) == lr and float(r["l0"]) == c
            )
            for c in CS
        ]
        # the rule, written out: the smallest C from which each step changes L0 by < 10 %/decade
        flat = [
            abs(b - a) / abs(a) / math.log10(d / c) < 0.1 if a else b == a
            for a, b, c, d in zip(medians, medians[1:], CS, CS[1:], strict=False)
        ]
        expected = None
        for j in range(len(flat) - 1, -1, -1):
            if not flat[j]:
                break
            expected = CS[j]
        assert data["l0_median"][s * len(CS) : (s + 1) * len(CS)] == pytest.approx(medians)
        assert data["knees"][s] == expected
    assert (out / "figures" / "knee.png").stat().st_size > 0


def test_the_api_sweep_draws_the_knee_and_refuses_it_without_a_list_of_l0():
    from matplotlib.figure import Figure

    from sparsity_gui import api

    grid = api.sweep(
        n=6, m=[4], steps=60, seeds=2, optimizer="adam", sparsity="jumprelu", l0=[1e-2, 1.0], lr=1e-3
    )
    assert [r.l0 for r in grid.sweep_rows] == [1e-2, 1e-2, 1.0, 1.0]
    fig = grid.plot("knee")
    assert isinstance(fig, Figure) and fig.axes[-1].get_xlabel() == "JumpReLU's L0 coefficient $C$"
    one = api.sweep(
        n=6, m=[4], steps=60, seeds=1, optimizer="adam", sparsity="jumprelu", l0=0.1, lr=[1e-3, 1e-2]
    )
    with pytest.raises(ValueError, match="panel: the knee needs"):
        one.plot("knee")
