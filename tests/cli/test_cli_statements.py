"""Issue 34: `-q` (and `-v`) before any command works as after it, for every command;
`interference --w0 FILE` writes no seed or sigma into run.json's parameters (they drew
nothing), as the Python API's save() with an array. Each command runs in this process through
__main__.main (the entry point's code); one real subprocess per statement checks that the
process itself stays silent with -q before its command and refuses -q with -v."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import cli, command_in_process, one_error_line

from sparsity_gui import api

# a small case of each command (well under a second each), and what it writes
COMMANDS = {
    "run": (["--m", "50", "--lam", "1e-2"], "run.json"),
    "interference": (["--n", "4", "--m", "8", "--steps", "40", "--samples", "11"], "run.json"),
    "sweep": (["--n", "4", "--m", "8,16", "--seeds", "1", "--steps", "40", "--no-figure"], "sweep.csv"),
    "scaling": (["--m", "50", "--lam", "1e-2", "--seeds", "1", "--no-figure"], "scaling.csv"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_quiet_before_the_command_works_as_after_it(tmp_path, monkeypatch, capsys, command):
    args, written = COMMANDS[command]
    code, out, err = command_in_process([command, *args, "--out", "loud"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert out.startswith("wrote ")  # the summary -q leaves out
    for where, argv in (
        ("before", ["-q", command, *args, "--out", "before"]),
        ("after", [command, "-q", *args, "--out", "after"]),
        ("long", ["--quiet", command, *args, "--out", "long"]),
    ):
        code, out, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
        assert code == 0, (where, err)
        assert out == "" and err == "", where
        assert (tmp_path / where / written).is_file(), where


def test_quiet_before_the_command_silences_the_real_process(tmp_path):
    args, written = COMMANDS["run"]
    proc = cli(["-q", "run", *args, "--out", tmp_path / "before"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    assert (tmp_path / "before" / written).is_file()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_verbose_before_the_command_and_both_refused(tmp_path, monkeypatch, capsys, command):
    args, written = COMMANDS[command]
    code, out, err = command_in_process(["-v", command, *args, "--out", "v"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert out.startswith("wrote ") and (tmp_path / "v" / written).is_file()
    assert err  # the developer's log
    both = ["-q", "-v", command, *args, "--out", "both"]
    code, out, err = command_in_process(both, tmp_path, monkeypatch, capsys)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "not allowed with" in lines[0], err
    assert not (tmp_path / "both").exists()


def test_the_real_process_refuses_quiet_and_verbose_before_the_command(tmp_path):
    args, _written = COMMANDS["interference"]
    refused = cli(["-q", "-v", "interference", *args, "--out", tmp_path / "both"])
    assert "not allowed with" in one_error_line(refused)
    assert not (tmp_path / "both").exists()


def test_interference_w0_file_claims_no_seed_or_sigma(tmp_path, monkeypatch, capsys):
    w0 = np.random.default_rng(7).standard_normal((4, 8)) / np.sqrt(8)
    np.save(tmp_path / "w0.npy", w0)
    argv = ["-q", "interference", "--w0", tmp_path / "w0.npy", "--steps", "30", "--samples", "4"]
    argv += ["--out", "f"]
    code, _out, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "f" / "run.json").read_text())
    assert "seed" not in meta["parameters"] and "sigma" not in meta["parameters"]
    assert meta["w0"]["source"] == "file" and meta["w0"]["path"] == str(tmp_path / "w0.npy")
    assert (meta["parameters"]["n"], meta["parameters"]["m"]) == (4, 8)
    np.testing.assert_array_equal(np.load(tmp_path / "f" / "w0.npy"), w0)
    # the normal draw made W(0) from them: there they are
    drawn = ["interference", "--n", "4", "--m", "8", "--seed", "3", "--sigma", "0.5", "--steps", "30",
             "--samples", "4", "--out", "d"]  # fmt: skip
    code, _out, err = command_in_process(drawn, tmp_path, monkeypatch, capsys)
    assert code == 0, err
    params = json.loads((tmp_path / "d" / "run.json").read_text())["parameters"]
    assert (params["seed"], params["sigma"]) == (3, 0.5)
    # the Python API with an array says the same
    out = api.train(w0=w0, steps=30, samples=4).save(tmp_path / "api")
    meta = json.loads((out / "run.json").read_text())
    assert "seed" not in meta["parameters"] and "sigma" not in meta["parameters"]
    assert meta["w0"]["source"] != "normal"
