"""`interference --noise KIND --noise-sigma S` and the same in `sweep` and the API: the files
say what ran, `--noise none` writes the files of a run without the option byte for byte, the
API writes the CLI's files, and bad input is one `error:` line, exit status 2, nothing
written (in the API a ValueError with the same words). The commands run through
__main__.main in this process (the entry point's code)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import assert_refused_in_process, command_result, read_csv, read_number_csv

from sparsity_gui import api

RUN = ["--n", "6", "--m", "10", "--steps", "2000", "--optimizer", "gd", "--l1", "0", "--lr", "0.02"]


def test_noise_is_in_run_json_and_sum_w4_in_the_history(tmp_path, monkeypatch, capsys):
    proc = command_result(
        [
            "interference",
            *RUN,
            "--noise",
            "bernoulli",
            "--noise-sigma",
            "0.1",
            "--samples",
            "5",
            "-q",
            "--out",
            "res",
        ],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((tmp_path / "res" / "run.json").read_text())
    assert (meta["parameters"]["noise"], meta["parameters"]["noise_sigma"]) == ("bernoulli", 0.1)
    header, rows = read_number_csv(tmp_path / "res" / "history.csv")
    W = np.load(tmp_path / "res" / "w_final.npy")
    assert rows[-1, header.index("sum_w4")] == pytest.approx(np.mean(np.sum(W**4, axis=1)), rel=1e-12)
    assert meta["final"]["sum_w4"] == rows[-1, header.index("sum_w4")]
    result = api.train(
        n=6, m=10, steps=2000, optimizer="gd", l1=0, lr=0.02, noise="bernoulli", noise_sigma=0.1, samples=5
    )
    result.save(tmp_path / "api")
    for name in ("history.csv", "w_final.npy"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "res" / name).read_bytes(), name


def test_no_noise_writes_the_files_of_a_run_without_the_option(tmp_path, monkeypatch, capsys):
    a = command_result(
        ["interference", *RUN, "--samples", "5", "-q", "--out", "a"], tmp_path, monkeypatch, capsys
    )
    b = command_result(
        ["interference", *RUN, "--noise", "none", "--samples", "5", "-q", "--out", "b"],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    for name in ("history.csv", "w0.npy", "w_final.npy", "neuron_counts.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    params = json.loads((tmp_path / "b" / "run.json").read_text())["parameters"]
    assert "noise" not in params and "noise_sigma" not in params


def test_a_sweep_with_noise_has_sum_w4_per_run(tmp_path, monkeypatch, capsys):
    proc = command_result(
        [
            "sweep",
            "--n",
            "6",
            "--m",
            "8,12",
            "--seeds",
            "2",
            "--steps",
            "1500",
            "--optimizer",
            "gd",
            "--l1",
            "0",
            "--lr",
            "0.02",
            "--noise",
            "gaussian",
            "--noise-sigma",
            "0.1",
            "--no-figure",
            "-q",
            "--out",
            "sw",
        ],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert proc.returncode == 0, proc.stderr
    header, rows = read_csv(tmp_path / "sw" / "sweep.csv")
    w4 = header.index("sum_w4")
    assert len(rows) == 4 and all(0.0 < float(r[w4]) < 1.0 for r in rows)
    spec = json.loads((tmp_path / "sw" / "sweep.json").read_text())["spec"]
    assert (spec["base"]["noise"], spec["base"]["noise_sigma"]) == ("gaussian", 0.1)


BAD = {
    "an unknown kind": (
        ["--noise", "pink", "--noise-sigma", "0.1"],
        "noise: must be one of none, bernoulli, gaussian",
    ),
    "a negative sigma": (
        ["--noise", "gaussian", "--noise-sigma", "-0.1"],
        "noise_sigma: must be from 0 to 10",
    ),
    "sigma not finite": (["--noise", "gaussian", "--noise-sigma", "inf"], "noise_sigma"),
    "sigma without a kind": (["--noise-sigma", "0.1"], "needs a noise kind"),
    "a kind without sigma": (["--noise", "bernoulli"], "needs --noise-sigma"),
}


@pytest.mark.parametrize("name", list(BAD))
@pytest.mark.parametrize("command", ["interference", "sweep"])
def test_bad_noise_is_one_error_line_and_nothing_written(tmp_path, monkeypatch, capsys, name, command):
    args, words = BAD[name]
    monkeypatch.chdir(tmp_path)
    argv = [command, "--n", "4", "--m", "8", "--steps", "50", *args, "--out", "res"]
    assert_refused_in_process(argv, words, tmp_path, capsys)


def test_the_api_refuses_the_same():
    with pytest.raises(ValueError, match="must be one of none, bernoulli, gaussian"):
        api.train(n=2, m=3, steps=10, noise="pink", noise_sigma=0.1)
    with pytest.raises(ValueError, match="needs a noise kind"):
        api.sweep(n=2, m=[3], seeds=1, steps=10, noise_sigma=0.1)
