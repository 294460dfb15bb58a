"""`--dtype` of the interference model on the command line: `interference` and `sweep` (through
__main__.main in-process: the promise is the files; the real processes of both commands are
tests/cli/test_cli_interference.py's) write float32 runs (W's files, run.json, sweep.csv's rows, sweep.json's
settings), `--resume` refuses another precision, a bad value is one `error:` line with
status 2 and nothing written, and the GUI's parser takes it for --model interference only."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from helpers import command_result

from sparsity_gui.cli.gui_options import build_gui_parser, gui_params
from sparsity_gui.core.errors import InputError


def test_interference_float32_writes_float32_weights(tmp_path, monkeypatch, capsys):
    args = ["--n", "6", "--m", "12", "--seed", "2", "--steps", "50", "--samples", "3", "--out", "res"]
    argv = ["interference", *args, "--dtype", "float32", "--optimizer", "gd-zero", "--lr", "0.05"]
    proc = command_result(argv, tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    assert "(gd-zero, float32)" in proc.stdout
    res = tmp_path / "res"
    w0, W = np.load(res / "w0.npy"), np.load(res / "w_final.npy")
    assert w0.dtype == W.dtype == np.float32
    # W(0): the documented float64 draw, rounded to float32
    draw = np.random.default_rng(2).standard_normal((6, 12)) / math.sqrt(12)
    np.testing.assert_array_equal(w0, draw.astype(np.float32))
    meta = json.loads((res / "run.json").read_text())
    assert meta["parameters"]["dtype"] == "float32"
    assert meta["final"]["nonzero"] == np.count_nonzero(W)


def test_sweep_float32_rows_and_settings_and_resume_checks_the_precision(tmp_path, monkeypatch, capsys):
    args = ["--n", "4", "--m", "8,12", "--seeds", "2", "--steps", "60", "--no-figure", "--out", "sw"]
    proc = command_result(
        ["sweep", *args, "--dtype", "float32", "--jobs", "1"], tmp_path, monkeypatch, capsys
    )
    assert proc.returncode == 0, proc.stderr
    assert "adamw, float32, 60 steps" in proc.stdout
    with open(tmp_path / "sw" / "sweep.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 and {r["dtype"] for r in rows} == {"float32"}
    meta = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    assert meta["spec"]["base"]["dtype"] == "float32"
    before = (tmp_path / "sw" / "sweep.csv").read_bytes()
    proc = command_result(["sweep", *args, "--resume"], tmp_path, monkeypatch, capsys)  # float64 now
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert "other settings" in proc.stderr
    assert (tmp_path / "sw" / "sweep.csv").read_bytes() == before


@pytest.mark.parametrize("command", ["interference", "sweep"])
def test_a_bad_dtype_is_one_error_line_and_nothing_written(tmp_path, monkeypatch, capsys, command):
    argv = [command, "--n", "4", "--m", "8", "--steps", "10", "--dtype", "float16", "--out", "res"]
    proc = command_result(argv, tmp_path, monkeypatch, capsys)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "float16" in lines[0]
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_gui_options_take_dtype_for_the_interference_model_only():
    _, params, _ = gui_params(
        build_gui_parser().parse_args(["--model", "interference", "--dtype", "float32"])
    )
    assert params.dtype == "float32"
    _, params, _ = gui_params(build_gui_parser().parse_args(["--model", "interference"]))
    assert params.dtype == "float64"
    with pytest.raises(InputError) as err:
        gui_params(build_gui_parser().parse_args(["--dtype", "float32"]))
    assert err.value.field == "dtype"
