"""Both grids of runs (the note's `scaling`, the interference `sweep`) take their m values,
jobs and workers by the same rules (core/grid.py), and refuse the same input with the same
words: through the command line (__main__.main in this process: a message test; the refusal
as a real process is tests/cli/test_cli_scaling.py's memory test), the Python API and the core
functions."""

from __future__ import annotations

import pytest
from helpers import command_in_process

from sparsity_gui import api
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec
from sparsity_gui.core.note.scaling import ScalingGrid

SCALING = ["scaling", "--lam", "1e-3", "--no-figure"]
SWEEP = ["sweep", "--n", "4", "--steps", "5", "--seeds", "1", "--no-figure"]
# (m option, the error line after "error: ", with {max} the model's largest m)
BAD_M = {
    "zero": ("0,100", "m: every m must be from 1 to {max}, got 0"),
    "negative": ("-5", "m: every m must be from 1 to {max}, got -5"),
    "too large": ("1e9", "m: every m must be from 1 to {max}, got 1000000000"),
    "not whole": (
        "2.5",
        "m: expected a list like 64,128,256, powers like 1e3,1e4,1e5 or a range start:stop:step, got '2.5'",
    ),
    "empty range": ("64:32:8", "m: no values of m in '64:32:8'"),
    "huge range": ("1:1e12:1", "m: '1:1e12:1' gives 1000000000000 values of m; at most 1000 are allowed"),
}
MAXIMA = {"scaling": "1e8", "sweep": "65536"}


def error_line(argv, cwd, monkeypatch, capsys) -> str:
    """The one `error:` line of a command refused in this process: status 2, nothing on stdout."""
    status, out, err = command_in_process(argv, cwd, monkeypatch, capsys)
    lines = err.splitlines()
    assert status == 2 and out == "" and len(lines) == 1, (status, out, err)
    return lines[0]


@pytest.mark.parametrize("name", list(BAD_M))
@pytest.mark.parametrize("command", [SCALING, SWEEP], ids=["scaling", "sweep"])
def test_both_commands_refuse_an_m_list_with_the_same_words(tmp_path, monkeypatch, capsys, command, name):
    m, words = BAD_M[name]
    argv = [*command, f"--m={m}", "--out", "out"]
    assert error_line(argv, tmp_path, monkeypatch, capsys) == "error: " + words.format(max=MAXIMA[command[0]])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", list(BAD_M))
def test_both_api_grids_refuse_an_m_list_with_the_same_words(name):
    m, words = BAD_M[name]
    for grid, extra, top in ((api.scaling, {"lam": 1e-3}, "1e8"), (api.sweep, {"n": 4}, "65536")):
        with pytest.raises(InputError) as caught:
            grid(m=m, **extra)
        assert str(caught.value) == words.format(max=top)


@pytest.mark.parametrize("jobs", [True, 0, 65, 1.5, "2"])
def test_both_api_grids_refuse_the_same_jobs_with_the_same_words(jobs):
    for grid, extra in ((api.scaling, {"lam": 1e-3}), (api.sweep, {"n": 4, "steps": 5, "seeds": 1})):
        with pytest.raises(InputError) as caught:
            grid(m="8,16", jobs=jobs, **extra)
        assert str(caught.value) == f"jobs: must be from 1 to 64, got {jobs}"


@pytest.mark.parametrize("command", [SCALING, SWEEP], ids=["scaling", "sweep"])
def test_both_commands_refuse_jobs_zero_with_the_same_words(tmp_path, monkeypatch, capsys, command):
    argv = [*command, "--m", "8", "--jobs", "0", "--out", "out"]
    assert error_line(argv, tmp_path, monkeypatch, capsys) == "error: jobs: must be from 1 to 64, got 0"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("workers", [True, False, 0, 1.0, "2"])
def test_both_core_grids_refuse_a_bool_or_non_whole_workers_alike(workers):
    grid = ScalingGrid(m_values=(8,), lam_values=(1e-3,), seeds=1)
    spec = SweepSpec(InterferenceParams(n=4, m=8, steps=5), m_values=(8,), seeds=1)
    messages = []
    for run in (lambda: grid.run(workers=workers), lambda: spec.run(workers=workers)):
        with pytest.raises(InputError) as caught:
            run()
        messages.append(str(caught.value))
    assert messages == [f"jobs: must be a whole number of at least 1, got {workers!r}"] * 2
