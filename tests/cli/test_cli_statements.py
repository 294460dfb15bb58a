"""Issue 34, through the real CLI in subprocesses: `-q` (and `-v`) before any command works
as after it, for every command; `interference --w0 FILE` writes no seed or sigma into
run.json's parameters (they drew nothing), as the Python API's save() with an array."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import cli, one_error_line

from sparsity_gui import api

# a small case of each command (about a second each), and what it writes
COMMANDS = {
    "run": (["--m", "50", "--lam", "1e-2"], "run.json"),
    "interference": (["--n", "4", "--m", "8", "--steps", "40", "--samples", "11"], "run.json"),
    "sweep": (["--n", "4", "--m", "8,16", "--seeds", "1", "--steps", "40", "--no-figure"], "sweep.csv"),
    "scaling": (["--m", "50", "--lam", "1e-2", "--seeds", "1", "--no-figure"], "scaling.csv"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_quiet_before_the_command_works_as_after_it(tmp_path, command):
    args, written = COMMANDS[command]
    loud = cli([command, *args, "--out", tmp_path / "loud"])
    assert loud.returncode == 0, loud.stderr
    assert loud.stdout.startswith("wrote ")  # the summary -q leaves out
    for where, argv in (
        ("before", ["-q", command, *args, "--out", tmp_path / "before"]),
        ("after", [command, "-q", *args, "--out", tmp_path / "after"]),
        ("long", ["--quiet", command, *args, "--out", tmp_path / "long"]),
    ):
        proc = cli(argv)
        assert proc.returncode == 0, (where, proc.stderr)
        assert proc.stdout == "" and proc.stderr == "", where
        assert (tmp_path / where / written).is_file(), where


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_verbose_before_the_command_and_both_refused(tmp_path, command):
    args, written = COMMANDS[command]
    proc = cli(["-v", command, *args, "--out", tmp_path / "v"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote ") and (tmp_path / "v" / written).is_file()
    assert proc.stderr  # the developer's log
    refused = cli(["-q", "-v", command, *args, "--out", tmp_path / "both"])
    assert "not allowed with" in one_error_line(refused)
    assert not (tmp_path / "both").exists()


def test_interference_w0_file_claims_no_seed_or_sigma(tmp_path):
    w0 = np.random.default_rng(7).standard_normal((4, 8)) / np.sqrt(8)
    np.save(tmp_path / "w0.npy", w0)
    proc = cli(
        [
            "-q",
            "interference",
            "--w0",
            tmp_path / "w0.npy",
            "--steps",
            "30",
            "--samples",
            "4",
            "--out",
            tmp_path / "f",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((tmp_path / "f" / "run.json").read_text())
    assert "seed" not in meta["parameters"] and "sigma" not in meta["parameters"]
    assert meta["w0"]["source"] == "file" and meta["w0"]["path"] == str(tmp_path / "w0.npy")
    assert (meta["parameters"]["n"], meta["parameters"]["m"]) == (4, 8)
    np.testing.assert_array_equal(np.load(tmp_path / "f" / "w0.npy"), w0)
    # the normal draw made W(0) from them: there they are
    drawn = cli(["interference", "--n", "4", "--m", "8", "--seed", "3", "--sigma", "0.5", "--steps", "30",
                 "--samples", "4", "--out", tmp_path / "d"])  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr
    params = json.loads((tmp_path / "d" / "run.json").read_text())["parameters"]
    assert (params["seed"], params["sigma"]) == (3, 0.5)
    # the Python API with an array says the same
    out = api.train(w0=w0, steps=30, samples=4).save(tmp_path / "api")
    meta = json.loads((out / "run.json").read_text())
    assert "seed" not in meta["parameters"] and "sigma" not in meta["parameters"]
    assert meta["w0"]["source"] != "normal"
