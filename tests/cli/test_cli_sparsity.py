"""`interference --sparsity l1|topk|jumprelu` and api.train(sparsity=...): a run without the
option writes the files it wrote before the option existed (the l1 path, byte for byte), a
TopK or JumpReLU run writes what it kept and its thresholds, the threshold rail share in
run.json is the one recomputed from thresholds.csv, and bad input is one `error:` line,
exit status 2, nothing written (in the API a ValueError naming the argument)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers import assert_refused_in_process, command_in_process, read_number_csv

from sparsity_gui import api
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun
from sparsity_gui.core.interference.sampled import train_sampled
from sparsity_gui.core.interference.settings import run_settings

RUN = ["--n", "8", "--m", "16", "--steps", "300", "--lr", "3e-3", "-q"]
JUMP = ["--sparsity", "jumprelu", "--l0", "0.01", "--threshold-init", "0.05", "--bandwidth", "0.02"]


def test_l1_is_the_run_without_the_option(tmp_path, monkeypatch, capsys):
    """--sparsity l1 and no option: the same files; neither names a mechanism setting; and
    the weights are the l1 path's own loop (train_steps after interference_push each step)."""
    from sparsity_gui.core.interference.kernels import OPT_CODE, interference_push, row_norms2, train_steps

    for name, extra in (("a", []), ("b", ["--sparsity", "l1"])):
        code, _, err = command_in_process(
            ["interference", *RUN, "--samples", "7", "--out", name, *extra], tmp_path, monkeypatch, capsys
        )
        assert code == 0, err
    for name in ("history.csv", "w0.npy", "w_final.npy", "neuron_counts.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    meta = json.loads((tmp_path / "b" / "run.json").read_text())
    assert not {"sparsity", "k", "l0", "bandwidth", "threshold_init", "threshold_param"} & set(
        meta["parameters"]
    )
    assert "sparsity" not in meta["readouts"]
    assert not (tmp_path / "b" / "sparsity.csv").exists()
    p = InterferenceParams(n=8, m=16, steps=300, lr=3e-3)
    assert "sparsity" not in run_settings(p) and "k" not in run_settings(p)
    # the l1 path, step by step with the kernels' own arguments
    W = np.load(tmp_path / "a" / "w0.npy").copy()
    norm2, push = row_norms2(W), np.zeros_like(W)
    mom1, mom2 = np.zeros_like(W), np.zeros_like(W)
    for s in range(p.steps):
        interference_push(W, push)
        one = np.array([p.lr]), np.array([p.l1])
        train_steps(W, norm2, push, mom1, mom2, OPT_CODE["adamw"], 1, s, *one, 0.01, 0.9, 0.999, 1e-8)
    assert np.array_equal(W, np.load(tmp_path / "a" / "w_final.npy"))


@pytest.fixture(scope="module")
def jump_folder(tmp_path_factory):
    """One JumpReLU run through the command, a history row at every step."""
    folder = tmp_path_factory.mktemp("jump")
    mp = pytest.MonkeyPatch()
    from sparsity_gui.__main__ import main

    mp.chdir(folder)
    try:
        assert main(["interference", *RUN, *JUMP, "--samples", "301", "--out", "res"]) == 0
    finally:
        mp.undo()
    return folder / "res"


def test_jumprelu_rail_share_is_the_one_its_thresholds_show(jump_folder):
    meta = json.loads((jump_folder / "run.json").read_text())
    assert meta["parameters"]["sparsity"] == "jumprelu" and meta["parameters"]["l1"] == 0.0
    found = meta["readouts"]["sparsity"]
    header, theta = read_number_csv(jump_folder / "thresholds.csv")
    assert header[0] == "step" and len(header) == 1 + 16
    assert np.array_equal(theta[:, 0], np.arange(301))  # every step
    moves = np.abs(np.diff(theta[:, 1:], axis=0))  # plain thresholds: the optimizer's variable
    lr = 3e-3
    moved = moves[moves > 0]
    assert moved.size == found["threshold_steps"] > 100
    share = np.count_nonzero(moved >= lr / 2) / moved.size
    assert found["threshold_rail_share"] == pytest.approx(share, rel=1e-12)
    assert found["threshold_steps_past_rail"] == np.count_nonzero(moved > lr)
    # sparsity.csv: cumulative counts, a median and band of the same thresholds
    names, rows = read_number_csv(jump_folder / "sparsity.csv")
    last = dict(zip(names, rows[-1], strict=True))
    assert last["thresholds_moved"] == moved.size
    assert last["threshold_median"] == pytest.approx(np.median(theta[-1, 1:]), rel=1e-12)
    assert last["threshold_tracked"] == theta[-1, 1]
    # L0 per input and dead units from the final W and thresholds
    kept = np.abs(np.load(jump_folder / "w_final.npy")) > theta[-1, 1:]
    assert found["l0_per_input"] == pytest.approx(kept.sum(axis=1).mean(), rel=1e-12)
    assert found["dead_units"] == int(np.sum(~kept.any(axis=0)))
    assert last["l0_per_input"] == found["l0_per_input"]


def test_topk_records_the_kth_largest_h_and_the_api_writes_the_commands_files(tmp_path, monkeypatch, capsys):
    code, out, err = command_in_process(
        ["interference", *RUN[:-1], "--sparsity", "topk", "--k", "3", "--samples", "4", "--out", "res"],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert code == 0, err
    assert "topk: 3 units kept per input" in out
    W = np.load(tmp_path / "res" / "w_final.npy")
    header, rows = read_number_csv(tmp_path / "res" / "thresholds.csv")
    third = np.sort(np.abs(W), axis=1)[:, -3]
    assert np.array_equal(rows[-1, 1:], third)
    result = api.train(n=8, m=16, steps=300, lr=3e-3, sparsity="topk", k=3, samples=4)
    assert result.readouts["sparsity"]["l0_per_input"] == 3.0
    result.save(tmp_path / "api")
    for name in ("history.csv", "w_final.npy", "sparsity.csv", "thresholds.csv"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "res" / name).read_bytes(), name


@pytest.mark.parametrize(
    "extra,words",
    [
        (["--sparsity", "topk", "--k", "0"], "from 1"),
        (["--sparsity", "topk", "--k", "17"], "m = 16"),
        (["--sparsity", "topk"], "topk needs k"),
        (["--sparsity", "topk", "--k", "2", "--l1", "1e-3"], "topk has no penalty"),
        (["--sparsity", "jumprelu", "--bandwidth", "0"], "bandwidth"),
        (["--sparsity", "jumprelu", "--l0", "-0.5"], "l0"),
        (["--sparsity", "jumprelu", "--threshold-init", "0"], "threshold_init"),
        (["--sparsity", "jumprelu", "--threshold-param", "exp"], "threshold_param"),
        (["--l0", "0.1"], "goes with --sparsity jumprelu"),
        (["--l0", "0"], "goes with --sparsity jumprelu"),
        (["--sparsity", "topk", "--k", "2", "--l0", "0.1"], "goes with --sparsity jumprelu"),
        (["--k", "2"], "goes with --sparsity topk"),
        (["--sparsity", "dropout"], "sparsity"),
        (["--l0-warmup", "5"], "l0_warmup: goes with --sparsity jumprelu (the run's is l1)"),
        (
            ["--sparsity", "topk", "--k", "2", "--l0-schedule", "0:0,5:0.1"],
            "l0_schedule: goes with --sparsity jumprelu",
        ),
        (
            ["--sparsity", "jumprelu", "--l0-warmup", "-5"],
            "l0_warmup: must be a whole number of steps from 0",
        ),
        (["--sparsity", "jumprelu", "--l0-warmup", "2.5"], "--l0-warmup"),
        (["--sparsity", "jumprelu", "--l0-schedule", "0:0,5"], "l0-schedule: expected knots step:value"),
        (["--sparsity", "jumprelu", "--l0-schedule", "5:0,2:0.1"], "knot steps must increase"),
        (["--sparsity", "jumprelu", "--l0-schedule", "0:0,5:-1"], "every l0 must be from 0"),
        (
            ["--sparsity", "jumprelu", "--l0", "0.1", "--l0-schedule", "0:0,5:0.2"],
            "conflicts with --l0-schedule",
        ),
        (
            ["--sparsity", "jumprelu", "--l0-warmup", "5", "--l0-schedule", "0:0,5:0.1"],
            "l0_schedule: and l0_warmup do not go together",
        ),
    ],
)
def test_bad_sparsity_options_are_refused(extra, words, tmp_path, capsys):
    assert_refused_in_process(["interference", *RUN, *extra, "--out", "res"], words, tmp_path, capsys)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(sparsity="topk", k=0), "k"),
        (dict(sparsity="topk", k=2, l1=1e-3), "l1"),
        (dict(sparsity="jumprelu", bandwidth=-1.0), "bandwidth"),
        (dict(sparsity="jumprelu", l0=-1.0), "l0"),
        (dict(l0=0.5), "l0"),
        (dict(l0_warmup=5), "l0_warmup: goes with --sparsity jumprelu"),
        (dict(sparsity="topk", k=2, l0_schedule="0:0,5:0.1"), "l0_schedule: goes with --sparsity jumprelu"),
        (dict(sparsity="jumprelu", l0_warmup=-5), "l0_warmup: must be a whole number of steps"),
        (dict(sparsity="jumprelu", l0_schedule="0:0,5"), "l0_schedule: expected knots"),
        (
            dict(sparsity="jumprelu", l0_schedule=[(0, 0.0), (5, -1.0)]),
            "l0_schedule: every l0 must be from 0",
        ),
        (
            dict(sparsity="jumprelu", l0_schedule=[(5, 0.0), (2, 0.1)]),
            "l0_schedule: knot steps must increase",
        ),
        (dict(sparsity="jumprelu", l0=0.1, l0_schedule="0:0,5:0.2"), "l0: 0.1 conflicts with --l0-schedule"),
    ],
)
def test_the_api_refuses_them_naming_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        api.train(n=4, m=8, steps=5, **kwargs)


def test_a_sampled_run_keeps_one_threshold_row_per_history_row():
    p = InterferenceParams(n=5, m=9, steps=40, lr=3e-3, sparsity="jumprelu", l0=0.01, threshold_init=0.1)
    run = train_sampled(p, 9)
    steps = run.history_array()[:, 0]
    assert np.array_equal(run.sparsity_history.thresholds.array()[:, 0], steps)
    assert np.array_equal(run.sparsity_history.rows.array()[:, 0], steps)
    assert math.isfinite(run.loss()) and isinstance(run, InterferenceRun)


def test_jumprelus_history_has_the_l0_in_force_at_every_row(tmp_path, monkeypatch, capsys):
    """history.csv's ``l0`` (JumpReLU's L0 coefficient C in force, not the units kept: those
    are sparsity.csv's ``l0_per_input``) is the schedule's value of the step that reached the
    row (row 0: step 1's), from the knots' line or C min(1, k/T) computed here; l1 and TopK
    runs have no such column (TopK's K is fixed, an l1 run's history is as before)."""
    from sparsity_gui.core.interference.run import HISTORY_COLUMNS

    knots = ((0.0, 0.0), (100.0, 0.004), (200.0, 0.01))
    code, _, err = command_in_process(
        ["interference", *RUN, *JUMP[:2], "--l0-schedule", "0:0,100:0.004,200:0.01", *JUMP[4:]]
        + ["--samples", "31", "--out", "knots"],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert code == 0, err
    names, rows = read_number_csv(tmp_path / "knots" / "history.csv")
    assert names == [*HISTORY_COLUMNS[:13], "l0", *HISTORY_COLUMNS[13:]] and HISTORY_COLUMNS[12] == "l1"
    column = dict(zip(names, rows.T, strict=True))
    want = [np.interp(max(k, 1), [x for x, _ in knots], [v for _, v in knots]) for k in column["step"]]
    np.testing.assert_allclose(column["l0"], want, rtol=1e-14, atol=0)
    assert column["l0"][-1] == 0.01 and len(rows) == 31
    # the API's warm-up: its table is the file's
    result = api.train(
        n=8, m=16, steps=300, lr=3e-3, sparsity="jumprelu", l0=0.01, l0_warmup=120,
        threshold_init=0.05, bandwidth=0.02, samples=31,
    )  # fmt: skip
    table = dict(zip(result.columns, result.history.T, strict=True))
    want = [0.01 * min(1.0, max(k, 1) / 120) for k in table["step"]]
    np.testing.assert_allclose(table["l0"], want, rtol=1e-14, atol=0)
    result.save(tmp_path / "warm")
    names, rows = read_number_csv(tmp_path / "warm" / "history.csv")
    assert names == list(result.columns) and np.array_equal(rows, result.history, equal_nan=True)
    for kwargs in ({"sparsity": "topk", "k": 2}, {}):
        other = api.train(n=4, m=8, steps=20, samples=5, **kwargs)
        assert other.columns == HISTORY_COLUMNS and "l0" not in other.columns
