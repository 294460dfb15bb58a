"""`run --lam-schedule` and `--lam-warmup`, and the API's `simulate(lam_schedule=,
lam_warmup=)`: the files say what ran (run.json's parameters and λ at every row of
timeseries.csv), the warm-up is the two-knot schedule it abbreviates, the API writes the
CLI's files, and bad input is one `error:` line, exit status 2 and nothing written (the
API: a ValueError with the same words). The commands run through
__main__.main in this process (a refused `run` in a real process, its status and a stderr
without traceback: test_cli_bad_inputs.py's test_the_command_itself_refuses_a_bad_file)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import command_result, read_number_csv

from sparsity_gui import api

WARMUP = ["--m", "400", "--lam", "2e-2", "--lam-warmup", "30", "--samples", "61", "-q"]


def test_a_warm_up_runs_as_its_two_knot_schedule_and_its_files_say_so(tmp_path, monkeypatch, capsys):
    a = command_result(["run", *WARMUP, "--out", "a"], tmp_path, monkeypatch, capsys)
    b = command_result(
        ["run", "--m", "400", "--lam-schedule", "0:0,30:2e-2", "--samples", "61", "-q", "--out", "b"],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    header, rows = read_number_csv(tmp_path / "a" / "timeseries.csv")
    assert (tmp_path / "a" / "timeseries.csv").read_bytes() == (
        tmp_path / "b" / "timeseries.csv"
    ).read_bytes()
    lam, t = rows[:, header.index("lam")], rows[:, header.index("t")]
    np.testing.assert_allclose(lam, np.minimum(t / 30.0, 1.0) * 2e-2, rtol=1e-12, atol=1e-18)
    # Λ(t) = ∫λ: t²/60 · 2e-2 on the ramp, then 2e-2 (t − 15)
    big = np.where(t <= 30.0, 2e-2 * t**2 / 60.0, 2e-2 * (t - 15.0))
    np.testing.assert_allclose(rows[:, header.index("lam_t")], big, rtol=1e-12, atol=1e-18)
    meta = json.loads((tmp_path / "a" / "run.json").read_text())
    assert meta["parameters"]["lam"] == 2e-2
    assert meta["parameters"]["lam_schedule"] == [[0.0, 0.0], [30.0, 2e-2]]
    assert meta["lam_changes"] == [[0.0, 0.0], [30.0, 2e-2]]
    assert meta["regime"]["lam_schedule"] == {"lam_max": 2e-2, "lam_lowered": False}
    assert int(rows[-1, header.index("nonzero")]) == 1 or meta["t_end"] > meta["t_one_weight_left"]


def test_without_a_schedule_run_json_has_no_schedule(tmp_path, monkeypatch, capsys):
    proc = command_result(
        ["run", "--m", "300", "--samples", "5", "-q", "--out", "res"], tmp_path, monkeypatch, capsys
    )
    assert proc.returncode == 0, proc.stderr
    assert "lam_schedule" not in json.loads((tmp_path / "res" / "run.json").read_text())["parameters"]


def test_the_api_writes_the_clis_files(tmp_path, monkeypatch, capsys):
    result = api.simulate(m=400, lam=2e-2, lam_warmup=30, samples=61)
    result.save(tmp_path / "api")
    proc = command_result(["run", *WARMUP, "--out", "cli"], tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "api" / "timeseries.csv").read_bytes() == (
        tmp_path / "cli" / "timeseries.csv"
    ).read_bytes()
    command = json.loads((tmp_path / "api" / "run.json").read_text())["command_line"]
    assert "--lam-warmup 30.0" in command and "--lam 0.02" in command
    knots = api.simulate(m=200, lam_schedule=[(0, 1e-2), (20, 3e-2)], samples=5)
    assert knots.params.lam == 3e-2 and knots.params.lam_schedule == ((0.0, 1e-2), (20.0, 3e-2))


BAD = {
    "knots out of order": (
        ["--lam-schedule", "0:0,200:1e-3,100:2e-3"],
        "lam-schedule: knot times must increase",
    ),
    "a knot repeated": (["--lam-schedule", "0:0,200:1e-3,200:2e-3"], "t = 200 is repeated"),
    "a negative λ": (["--lam-schedule", "0:-1e-3,10:1e-3"], "every λ must be from 0 to 1"),
    "λ above 1": (["--lam-schedule", "0:0,10:1.5"], "every λ must be from 0 to 1, got 1.5"),
    "not a number": (["--lam-schedule", "0:0,x:1e-3"], "expected knots t:value"),
    "a warm-up longer than the run": (
        ["--lam-warmup", "500", "--t-end", "100"],
        "lam-warmup: reaches its last λ at t = 500, after the run's end (t_end = 100)",
    ),
    "a negative warm-up": (["--lam-warmup", "-1"], "lam-warmup: must be >= 0, got -1.0"),
    "both": (["--lam-warmup", "10", "--lam-schedule", "0:0,10:1e-3"], "and --lam-schedule both give"),
    "a conflicting --lam": (
        ["--lam", "1e-2", "--lam-schedule", "0:0,10:1e-3"],
        "conflicts with --lam-schedule",
    ),
    "a warm-up to 0": (["--lam", "0", "--lam-warmup", "10"], "warms λ up to --lam, which is 0"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_schedules_are_one_error_line_and_nothing_written(tmp_path, monkeypatch, capsys, name):
    from sparsity_gui.__main__ import main

    args, words = BAD[name]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["run", "--m", "100", *args, "--out", "res"])
    assert info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], captured.err
    assert captured.out == "" and list(tmp_path.iterdir()) == []


def test_a_bad_schedule_through_the_command_and_the_api_say_the_same(tmp_path, monkeypatch, capsys):
    args, words = BAD["knots out of order"]
    proc = command_result(["run", "--m", "100", *args, "--out", "res"], tmp_path, monkeypatch, capsys)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert words in proc.stderr and list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match=words.split(": ", 1)[1]):
        api.simulate(m=100, lam_schedule="0:0,200:1e-3,100:2e-3")
    with pytest.raises(ValueError, match="conflicts with --lam-schedule"):
        api.simulate(m=100, lam=1e-2, lam_schedule=[(0, 0), (10, 1e-3)])


def test_a_knot_at_a_subnormal_time_runs_to_its_end_in_the_command_and_the_api(tmp_path, monkeypatch):
    """`--lam-warmup 5e-324` and a knot at 1e-320 once hung the exact solver at t = 0. Now
    λ is 1e-3 from the knot on: the rows are a constant-λ run's, Λ(t) = 1e-3 t."""
    from sparsity_gui.__main__ import main

    monkeypatch.chdir(tmp_path)
    argv = ["run", "--m", "10", "--t-end", "1", "--lam-warmup", "5e-324", "--samples", "5", "-q"]
    assert main([*argv, "--out", "w"]) == 0
    header, rows = read_number_csv(tmp_path / "w" / "timeseries.csv")
    np.testing.assert_array_equal(rows[:, header.index("t")], [0.0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(rows[1:, header.index("lam")], 1e-3)
    np.testing.assert_allclose(rows[:, header.index("lam_t")], 1e-3 * rows[:, header.index("t")], rtol=1e-15)
    result = api.simulate(m=10, t_end=1.0, lam_schedule="0:0,1e-320:1e-3", samples=5)
    assert result.timeseries[-1, result.columns.index("t")] == 1.0
    assert result.timeseries[-1, result.columns.index("lam")] == 1e-3
