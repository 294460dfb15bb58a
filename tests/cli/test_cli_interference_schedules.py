"""`interference` and `sweep` with --l1-warmup, --l1-schedule, --lr-warmup, --lr-decay,
--lr-decay-steps and --lr-schedule, and the API's train()/sweep() with the same: the files
say what ran (run.json's parameters, history.csv's l1 and lr at every row, computed here
from the formulas in docs/commands.md), a sweep's rows are the runs `interference` makes, the
API writes the CLI's files, and bad input is one `error:` line, exit status 2, nothing
written (in the API, a ValueError). The commands run
through __main__.main in this process (the entry point's code)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers import assert_refused_in_process, command_result, read_csv, read_number_csv

from sparsity_gui import api

SMALL = ["--n", "6", "--m", "12", "--steps", "300", "--optimizer", "adamw", "--l1", "0.02", "--lr", "0.01"]
SCHEDULED = [
    *SMALL,
    "--l1-warmup",
    "120",
    "--lr-warmup",
    "40",
    "--lr-decay",
    "cosine",
    "--lr-decay-steps",
    "100",
]


def expected_lr(k):
    warm = min(1.0, k / 40)
    x = min(max((k - 200) / 100, 0.0), 1.0)
    return 0.01 * warm * 0.5 * (1.0 + math.cos(math.pi * x))


def test_history_and_run_json_say_which_l1_and_lr_were_in_force(tmp_path, monkeypatch, capsys):
    proc = command_result(
        ["interference", *SCHEDULED, "--samples", "31", "-q", "--out", "res"], tmp_path, monkeypatch, capsys
    )
    assert proc.returncode == 0, proc.stderr
    header, rows = read_number_csv(tmp_path / "res" / "history.csv")
    assert header[-4:] == ["l1", "lr", "sum_w4", "rail_share"]
    for step, l1, lr in rows[:, [header.index("step"), header.index("l1"), header.index("lr")]]:
        k = max(int(step), 1)
        assert l1 == pytest.approx(0.02 * min(1.0, k / 120), rel=1e-13)
        assert lr == pytest.approx(expected_lr(k), rel=1e-13, abs=1e-18)
    assert rows[-1, header.index("lr")] == 0.0  # the decay ends at 0 on the last step
    params = json.loads((tmp_path / "res" / "run.json").read_text())["parameters"]
    assert {k: params[k] for k in ("l1_warmup", "lr_warmup", "lr_decay", "lr_decay_steps")} == {
        "l1_warmup": 120,
        "lr_warmup": 40,
        "lr_decay": "cosine",
        "lr_decay_steps": 100,
    }
    assert "l1_schedule" not in params and "lr_schedule" not in params


def test_knots_set_the_value_and_the_api_writes_the_clis_files(tmp_path, monkeypatch, capsys):
    knots = ["--l1-schedule", "0:0,100:0.03", "--lr-schedule", "0:0.02,300:0.005"]
    args = ["--n", "5", "--m", "9", "--steps", "300", "--optimizer", "gd-zero", *knots, "--samples", "7"]
    proc = command_result(["interference", *args, "-q", "--out", "cli"], tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    params = json.loads((tmp_path / "cli" / "run.json").read_text())["parameters"]
    assert (params["l1"], params["lr"]) == (0.03, 0.005)  # the values after the last knots
    assert params["l1_schedule"] == [[0.0, 0.0], [100.0, 0.03]]
    result = api.train(
        n=5,
        m=9,
        steps=300,
        optimizer="gd-zero",
        l1_schedule=[(0, 0), (100, 0.03)],
        lr_schedule="0:0.02,300:0.005",
        samples=7,
    )
    result.save(tmp_path / "api")
    for name in ("history.csv", "neuron_counts.csv"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    command = json.loads((tmp_path / "api" / "run.json").read_text())["command_line"]
    assert "--l1-schedule 0.0:0.0,100.0:0.03" in command
    # t = 4 Σ lr_k over the knots' interpolation
    header, rows = read_number_csv(tmp_path / "cli" / "history.csv")
    lr = np.interp(np.arange(1, 301), [0, 300], [0.02, 0.005])
    steps = rows[:, header.index("step")].astype(int)
    np.testing.assert_allclose(rows[:, header.index("t")], [4 * lr[:s].sum() for s in steps], rtol=1e-12)


def test_a_sweep_with_a_warm_up_gives_the_rows_interference_gives(tmp_path, monkeypatch, capsys):
    base = ["--n", "8", "--steps", "400", "--optimizer", "gd-zero", "--l1", "0.2", "--lr", "0.05"]
    warm = ["--l1-warmup", "150"]
    proc = command_result(
        ["sweep", *base, "--m", "16,32", "--seeds", "2", *warm, "--no-figure", "-q", "--out", "sw"],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert proc.returncode == 0, proc.stderr
    spec = json.loads((tmp_path / "sw" / "sweep.json").read_text())["spec"]
    assert spec["base"]["l1_warmup"] == 150
    header, rows = read_csv(tmp_path / "sw" / "sweep.csv")
    (row,) = [r for r in rows if r[header.index("m")] == "32" and r[header.index("seed")] == "1"]
    one = command_result(
        ["interference", *base, "--m", "32", "--seed", "1", *warm, "--samples", "2", "-q", "--out", "one"],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert one.returncode == 0, one.stderr
    final = json.loads((tmp_path / "one" / "run.json").read_text())["final"]
    for name in ("polysemantic", "active", "opposite_pairs", "same_pairs", "nonzero"):
        assert int(row[header.index(name)]) == final[name], name


BAD = {
    "a warm-up and knots of l1": (
        ["--l1-warmup", "10", "--l1-schedule", "0:0,10:1e-3"],
        "do not go together",
    ),
    "an --l1 the knots do not end at": (
        ["--l1", "5e-3", "--l1-schedule", "0:0,10:1e-3"],
        "conflicts with --l1-schedule",
    ),
    "a decay without its length": (["--lr-decay", "linear"], "goes with --lr-decay"),
    "a length without a decay": (["--lr-decay-steps", "10"], "goes with --lr-decay"),
    "knots out of order": (["--lr-schedule", "5:1e-3,2:1e-3"], "knot steps must increase"),
    "knots that are not numbers": (["--l1-schedule", "0:zero"], "expected knots step:value"),
    "a negative warm-up": (["--l1-warmup", "-5"], "l1_warmup: must be a whole number of steps from 0"),
}


@pytest.mark.parametrize("name", list(BAD))
@pytest.mark.parametrize("command", ["interference", "sweep"])
def test_bad_schedules_are_one_error_line_and_nothing_written(tmp_path, monkeypatch, capsys, name, command):
    args, words = BAD[name]
    monkeypatch.chdir(tmp_path)
    argv = [command, "--n", "4", "--m", "8", "--steps", "50", *args, "--out", "res"]
    assert_refused_in_process(argv, words, tmp_path, capsys)


def test_the_api_refuses_the_same_with_a_value_error():
    with pytest.raises(ValueError, match="conflicts with --l1-schedule"):
        api.train(n=2, m=3, steps=10, l1=5e-3, l1_schedule=[(0, 0), (5, 1e-3)])
    with pytest.raises(ValueError, match="goes with --lr-decay"):
        api.sweep(n=2, m=[3], seeds=1, steps=10, lr_decay="linear")


def test_the_app_takes_the_schedule_options_for_the_interference_window_only():
    from sparsity_gui.cli.gui_options import build_gui_parser, gui_params
    from sparsity_gui.core.errors import InputError

    args = build_gui_parser().parse_args(
        ["--model", "interference", "--n", "8", "--m", "16", "--lr-warmup", "30"]
    )
    model, params, _w0 = gui_params(args)
    assert model == "interference" and params.lr_warmup == 30
    with pytest.raises(InputError, match="--l1-warmup is an option of --model interference"):
        gui_params(build_gui_parser().parse_args(["--l1-warmup", "30"]))
