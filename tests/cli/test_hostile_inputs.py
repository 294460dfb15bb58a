"""Hostile input to the headless commands: every case is one `error:` line, exit status 2,
no traceback, and nothing made or changed where the command was pointed (no DIR, no
temporary folder, earlier files intact). The refusals run in this process through
__main__.main (the entry point's code, with the test's environment variables), and so do
the runs a raised limit lets through and the intact sweep resumed; the sweep to resume is
written once by a real subprocess.

- Bounded work: runs whose work can never end in reasonable time (a tiny lam, a t_end near
  the float limit, gradient descent with 10^13 steps, n x n x m x steps past 10^15
  multiply-adds, a grid whose longest run is too long) are refused before they start, with
  what they would need and the environment variable that raises the limit; the variable
  moves the limit both ways.
- Special files: a FIFO, a socket or a device given as any input file (W(0) of both
  models, a resumed sweep's sweep.json and sweep.csv) is refused before it is opened. The
  tests never open a FIFO themselves; a command that blocked on one would fail its test at
  pytest-timeout's limit, not hang the run.
- Parsers: a safetensors header or sweep.json nested 10^5 deep (RecursionError before),
  sweep.json of the wrong JSON type, and crafted sweep.csv rows (extra or missing cells, a
  cell of 10^6 characters, a NUL, a run twice, a wrong type) are named errors.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import socket
import struct
from pathlib import Path

import numpy as np
import pytest
from helpers import cli, command_in_process

LIMITS = ("SPARSITY_GUI_MAX_STEPS", "SPARSITY_GUI_MAX_WEIGHT_STEPS", "SPARSITY_GUI_MAX_MULTIPLY_ADDS")
ENV = {name: value for name, value in os.environ.items() if name not in LIMITS}
ENV["QT_QPA_PLATFORM"] = "offscreen"
SWEEP = ["sweep", "--n", "4", "--m", "8,16", "--seeds", "2", "--steps", "20", "--jobs", "1", "--no-figure"]


def listing(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` (hidden ones too) with its content or its kind; FIFOs and
    sockets by kind only (reading a FIFO would block)."""
    out: dict[str, bytes | str] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink() or not (p.is_file() or p.is_dir()):
            out[str(p.relative_to(folder))] = "<special>"
        elif p.is_dir():
            out[str(p.relative_to(folder))] = "<dir>"
        else:
            out[str(p.relative_to(folder))] = p.read_bytes()
    return out


_TEST: list = []  # the running test's (monkeypatch, capsys), for refused()


@pytest.fixture(autouse=True)
def _this_test(monkeypatch, capsys):
    _TEST[:] = [monkeypatch, capsys]
    yield
    _TEST.clear()


def refused(args, cwd: Path, *needles: str, env=None) -> str:
    """Run the command in this process in ``cwd``, with --out cwd/out (unless given) and
    none of the limits' variables but ``env``'s, and check the refusal."""
    if "--out" not in args:
        args = [*args, "--out", str(cwd / "out")]
    before = listing(cwd)
    code, out, err = ran(args, cwd, env)
    assert code == 2 and out == "", (code, out, err)
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert listing(cwd) == before, "nothing made, removed or changed"
    return lines[0]


def ran(args, cwd: Path, env=None) -> tuple[int, str, str]:
    """(status, stdout, stderr) of the command run in this process in ``cwd``, with none of
    the limits' variables but ``env``'s."""
    return command_in_process(args, cwd, *_TEST, env={**dict.fromkeys(LIMITS), **(env or {})})


# --- bounded work ------------------------------------------------------------------------------
WORK_LIMIT = "SPARSITY_GUI_MAX_STEPS"
WORK = [
    # (arguments, words the message must hold)
    (["run", "--m", "1000", "--lam", "1e-300"], ["lam = 1e-300 to one weight left", "steps", "limit is 1e9"]),
    (["run", "--m", "1000", "--lam", "1e-12"], ["would need about", f"{WORK_LIMIT}=1e13"]),
    (["run", "--m", "50", "--lam", "5e-324"], ["lam = 4.94066e-324", "infinitely many", "no run that long"]),
    (["run", "--m", "1000", "--t-end", "1.7e308"], ["t_end = 1.7e308", "limit is 1e9"]),
    (["run", "--m", "100", "--method", "gd", "--eta", "1e-3", "--t-end", "1e10"], ["about 1e13 steps"]),
    (["run", "--m", "1000", "--method", "gd", "--lam", "1e-9"], ["by gradient descent at eta = 0.05"]),
    # 2e8 steps (under the steps' limit), each over up to 10^7 weights: 2e15 weight-steps
    (
        ["run", "--m", "1e7", "--method", "gd", "--t-end", "1e7"],
        ["t_end = 1e7 by gradient descent", "about 2e15 weight-steps", "SPARSITY_GUI_MAX_WEIGHT_STEPS=1e16"],
    ),
    (["scaling", "--m", "100,1000", "--lam", "1e-3,1e-12", "--seeds", "1"], ["lam = 1e-12 to one weight"]),
    (
        ["interference", "--n", "2048", "--m", "2048", "--steps", "1e8"],
        ["100000000 steps at n = 2048, m = 2048", "about 8.6e17 multiply-adds", "limit is 1e15"],
    ),
    (
        ["sweep", "--n", "1024", "--m", "1024,8192", "--steps", "1e7"],
        ["10000000 steps at n = 1024, m = 8192 would need about 8.6e16"],
    ),
]


@pytest.mark.parametrize("args, needles", WORK, ids=[" ".join(a[:1] + a[-2:]) for a, _ in WORK])
def test_unbounded_work_is_refused_before_it_starts(tmp_path, args, needles):
    refused(args, tmp_path, *needles)


def test_estimate_of_a_run_to_one_weight_counts_a_near_tie_at_the_top(tmp_path):
    """The last phase lasts about (1/lam) ln((u1 - u3)/(u1 - u2)) (docs/theory.md §4): with
    the top two weights of W(0) 1e-16 apart it is about 30/lam, so at lam = 1e-8 the run
    from this file is refused (the normal draw's, about 2.5/lam, would be allowed)."""
    w0 = -np.linspace(0.01, 0.5, 1000)  # signs do not matter: |W(0)|
    w0[-2] = -(0.5 - 1e-16)
    np.save(tmp_path / "tied.npy", w0)
    lam = 1e-8
    u1, u2, u3 = 0.5, abs(w0[-2]), abs(w0[-3])
    t_last = math.log((u1 - u3) / (u1 - u2)) / lam  # the last phase alone: about 3e9
    message = refused(["run", "--w0", str(tmp_path / "tied.npy"), "--lam", "1e-8"], tmp_path, "lam = 1e-8")
    t_said = float(message.split("at t of about ")[1].split(")")[0])
    # the last phase, plus a time of order 1/lam before it, to two digits
    assert t_last < t_said < 1.05 * (t_last + 3 / lam)


def test_the_environment_variable_moves_the_limit_both_ways(tmp_path):
    """m = 1000, lam = 0.01: a few thousand solver steps (2336 measured for seed 0). A limit
    of 1000 refuses it, 10^5 lets it run (and it ends: one weight left)."""
    args = ["run", "--m", "1000", "--lam", "0.01", "--samples", "5"]
    message = refused(args, tmp_path, "limit is 1000 per run", env={WORK_LIMIT: "1000"})
    assert 1000 < int(message.split("would need about ")[1].split(" steps")[0]) < 10_000
    code, _, err = ran([*args, "--out", str(tmp_path / "out")], tmp_path, {WORK_LIMIT: "1e5"})
    assert code == 0, err
    assert (tmp_path / "out" / "timeseries.csv").is_file()
    # gradient descent's weight-steps: 200 steps over 1000 weights
    gd = ["run", "--m", "1000", "--lam", "0.01", "--method", "gd", "--eta", "0.05", "--t-end", "10"]
    refused(gd, tmp_path, "about 200000 weight-steps", env={"SPARSITY_GUI_MAX_WEIGHT_STEPS": "1e5"})
    code, _, err = ran(
        [*gd, "--out", str(tmp_path / "gd")], tmp_path, {"SPARSITY_GUI_MAX_WEIGHT_STEPS": "1e6"}
    )
    assert code == 0, err
    (tmp_path / "out2").mkdir()
    refused(
        ["interference", "--n", "4", "--m", "8", "--steps", "20"],
        tmp_path / "out2",
        "would need about 3200 multiply-adds",
        env={"SPARSITY_GUI_MAX_MULTIPLY_ADDS": "100"},
    )


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5", "inf"])
def test_a_bad_limit_in_the_environment_is_named(tmp_path, value):
    refused(["run", "--m", "50"], tmp_path, WORK_LIMIT, "whole number", env={WORK_LIMIT: value})


# --- special files -----------------------------------------------------------------------------
def _special(tmp_path: Path, kind: str, name: str) -> Path:
    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))  # listening is not needed: the path is a socket
        sock.close()
    else:
        os.symlink("/dev/zero", path)  # a device, through a link as a user would give it
    return path


KINDS = {"fifo": "is a FIFO", "socket": "is a socket", "device": "is a character device"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["w.npy", "w.safetensors", "w.csv", "w.pt"])
def test_a_special_file_as_the_note_w0_is_refused_unopened(tmp_path, kind, name):
    path = _special(tmp_path, kind, name)
    refused(["run", "--w0", str(path)], tmp_path, str(path), KINDS[kind], "not a regular file")


@pytest.mark.parametrize("kind", KINDS)
def test_a_special_file_as_the_interference_w0_is_refused_unopened(tmp_path, kind):
    path = _special(tmp_path, kind, "w.npz")
    refused(["interference", "--n", "4", "--m", "8", "--w0", str(path)], tmp_path, KINDS[kind])


@pytest.fixture(scope="module")
def sweep_folder(tmp_path_factory) -> Path:
    """A finished sweep of SWEEP (four runs) to resume."""
    folder = tmp_path_factory.mktemp("sweep") / "done"
    proc = cli([*SWEEP, "--out", str(folder)], folder.parent, env=ENV)
    assert proc.returncode == 0, proc.stderr
    return folder


def _resumable(sweep_folder: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    shutil.copytree(sweep_folder, folder)
    return folder


@pytest.mark.parametrize("kind", ["fifo", "socket"])
@pytest.mark.parametrize("name", ["sweep.json", "sweep.csv"])
def test_a_special_file_in_a_resumed_sweep_is_refused_unopened(sweep_folder, tmp_path, kind, name):
    folder = _resumable(sweep_folder, tmp_path)
    (folder / name).unlink()
    _special(folder, kind, name)
    refused([*SWEEP, "--out", str(folder), "--resume"], tmp_path, name, KINDS[kind])


# --- parsers -----------------------------------------------------------------------------------
DEEP = "[" * 100_000 + "]" * 100_000


def test_a_safetensors_header_nested_deeply_is_named(tmp_path):
    header = ('{"w": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}, "x": ' + DEEP + "}").encode()
    (tmp_path / "deep.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(16))
    path = tmp_path / "deep.safetensors"
    refused(["run", "--w0", str(path)], tmp_path, "nests lists or objects more than 8")


BAD_SWEEP_JSON = {
    "nested": (DEEP, "nested more than 32 deep"),
    "a list": ("[]", "expected a JSON object"),
    "a string": ('"sweep"', "expected a JSON object"),
    "a number": ("3", "expected a JSON object"),
    "spec of the wrong type": ('{"spec": [1], "command_line": 7}', "other settings; give the same options"),
    "not JSON": ("{", "not valid JSON"),
    "an integer of 10^4 digits": ('{"spec": ' + "7" * 10_000 + "}", "not valid JSON (Exceeds the limit"),
    "empty": ("", "the file is empty"),
    "binary": ("\x00\x01\x02", "binary data"),
}


@pytest.mark.parametrize("case", BAD_SWEEP_JSON)
def test_a_bad_sweep_json_is_named_on_resume(sweep_folder, tmp_path, case):
    text, needle = BAD_SWEEP_JSON[case]
    folder = _resumable(sweep_folder, tmp_path)
    (folder / "sweep.json").write_text(text)
    refused([*SWEEP, "--out", str(folder), "--resume"], tmp_path, "sweep.json", needle)


def _csv_edit(lines: list[str], case: str) -> list[str]:
    header, first, *rest = lines
    if case == "extra cell":
        return [header, first + ",surplus", *rest]
    if case == "missing cell":
        return [header, first.rsplit(",", 1)[0], *rest]
    if case == "huge cell":
        return [header, "9" * 10_000 + first[first.index(",") :], *rest]
    if case == "huge quoted cell":  # past the csv module's own field limit
        return [header, '"' + "9" * 1_000_000 + '"' + first[first.index(",") :], *rest]
    if case == "NUL":
        return [header, first.replace(",", ",\x00", 1), *rest]
    if case == "run twice":
        return [header, first, first, *rest[1:]]
    if case == "wrong type":
        return [header, "eight" + first[first.index(",") :], *rest]
    if case == "other columns":
        return ["m,seed", *rest]
    raise AssertionError(case)


BAD_SWEEP_CSV = {
    "extra cell": "cells, the header has",
    "missing cell": "cells, the header has",
    "huge cell": "m has 10000 characters, at most 200",
    "huge quoted cell": "not CSV",
    "NUL": "binary data",
    "run twice": "twice",
    "wrong type": "line 2 of sweep.csv",
    "other columns": "not a sweep.csv",
}


@pytest.mark.parametrize("case", BAD_SWEEP_CSV)
def test_a_crafted_sweep_csv_is_named_on_resume(sweep_folder, tmp_path, case):
    folder = _resumable(sweep_folder, tmp_path)
    lines = (folder / "sweep.csv").read_text().splitlines()
    assert len(lines) == 5  # the header and four runs
    (folder / "sweep.csv").write_text("\n".join(_csv_edit(lines, case)) + "\n")
    refused([*SWEEP, "--out", str(folder), "--resume"], tmp_path, "sweep.csv", BAD_SWEEP_CSV[case])


def test_an_intact_resumed_sweep_still_resumes(sweep_folder, tmp_path):
    """The checks refuse only what is wrong: the sweep as written resumes with nothing to
    train, and its runs are kept."""
    folder = _resumable(sweep_folder, tmp_path)
    rows = (folder / "sweep.csv").read_text()
    code, out, err = ran([*SWEEP, "--out", str(folder), "--resume"], tmp_path)
    assert code == 0, err
    assert "trained again" not in out
    assert (folder / "sweep.csv").read_text() == rows
    assert json.loads((folder / "sweep.json").read_text())["spec"]["m_values"] == [8, 16]


# --- a resumed sweep keeps only rows it could have written -------------------------------------
TAMPERED = {
    "another grid's n": ("n", "5"),
    "an optimizer named evil": ("optimizer", "evil"),
    "-7 polysemantic neurons": ("polysemantic", "-7"),
    "sum_w4 = inf": ("sum_w4", "inf"),
    "an l1 the grid does not have": ("l1", "0.5"),
    "a seed the grid does not have": ("seed", "9"),
    "more polysemantic neurons than neurons": ("polysemantic", "17"),
}


def _without_seconds(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(f)]


@pytest.mark.parametrize("case", TAMPERED)
def test_a_tampered_row_is_dropped_and_trained_again(sweep_folder, tmp_path, monkeypatch, capsys, case):
    """The row is not one this grid could have written: the command says it drops it, trains
    that run again, and sweep.csv ends as the untouched sweep's (but for the seconds)."""
    from sparsity_gui.__main__ import main

    column, value = TAMPERED[case]
    folder = _resumable(sweep_folder, tmp_path)
    with open(folder / "sweep.csv", newline="") as f:
        rows = list(csv.reader(f))
    rows[2][rows[0].index(column)] = value
    with open(folder / "sweep.csv", "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    monkeypatch.chdir(tmp_path)
    assert main([*SWEEP, "--out", str(folder), "--resume"]) == 0
    out = capsys.readouterr().out
    assert "note: 1 row(s) of" in out and "are trained again" in out
    assert _without_seconds(folder / "sweep.csv") == _without_seconds(sweep_folder / "sweep.csv")
    assert json.loads((folder / "sweep.json").read_text())["complete"] is True


def test_resume_refuses_to_replace_a_folder_holding_the_users_own_files(sweep_folder, tmp_path):
    """--resume writes the folder anew: a file or a folder the sweep did not write is named,
    and nothing is changed."""
    folder = _resumable(sweep_folder, tmp_path)
    (folder / "notes.txt").write_text("mine")
    resume = [*SWEEP, "--out", str(folder), "--resume"]
    refused(resume, tmp_path, "holds 'notes.txt', which the sweep did not")
    (folder / "notes.txt").unlink()
    (folder / "mine").mkdir()
    (folder / "mine" / "analysis.py").write_text("print(1)")
    refused(resume, tmp_path, "holds 'mine', which the sweep did not")
