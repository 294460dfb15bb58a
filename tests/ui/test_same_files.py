"""One set of files per run, whichever front end writes it: each window's Export all writes
the files of its model's command (`run`, `interference`) under the same names, with the
same run.json keys, and adds only its own (the figures, the window's picture, the session,
the tracked weights, the pinned runs). Real windows; the commands through the program's
entry point (__main__.main) in this process, the same code a subprocess runs (tests/cli run
them as subprocesses)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sparsity_gui.__main__ import main
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams

TIMEOUT = 60_000


def run_command(args, capsys) -> None:
    """`sparsity-gui ARGS` run to its end, successfully."""
    assert main([str(a) for a in args]) == 0, capsys.readouterr().err


def _names(folder) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_file()}


def _keys(folder) -> set[str]:
    return set(json.loads((folder / "run.json").read_text()))


def test_the_note_window_writes_the_run_commands_files(qtbot, make_window, tmp_path, capsys):
    params = SimParams(m=300, lam=1e-2, seed=3)
    run_command(["run", "--m", 300, "--lam", 1e-2, "--seed", 3, "--out", tmp_path / "cli"], capsys)
    win = make_window(params, playing=False)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    assert win.exports.export_all(tmp_path / "win"), win.last_error
    command, window = _names(tmp_path / "cli"), _names(tmp_path / "win")
    assert command == {"timeseries.csv", "weights.csv", "deaths.csv", "run.json"}
    assert command <= window
    extras = {n for n in window - command if not n.endswith((".png", ".svg", ".pdf", ".json", ".py"))}
    assert extras == {"tracked.csv"}  # the window's own besides its figures and session.json
    assert "session.json" in window and "window.png" in window
    # run.json: the command's keys, and the window's session time besides
    assert _keys(tmp_path / "cli") <= _keys(tmp_path / "win")
    assert _keys(tmp_path / "win") - _keys(tmp_path / "cli") <= {"t_session"}
    # the weights' columns are the command's too
    for name in ("weights.csv", "deaths.csv", "timeseries.csv"):
        head = [(tmp_path / where / name).read_text().splitlines()[0] for where in ("cli", "win")]
        assert head[0] == head[1], name


def test_the_interference_window_writes_the_interference_commands_files(
    qtbot, make_iwindow, tmp_path, capsys
):
    params = InterferenceParams(n=8, m=16, optimizer="gd-zero", l1=0.05, lr=0.05, steps=300, seed=2)
    run_command(
        ["interference", "--n", 8, "--m", 16, "--optimizer", "gd-zero", "--l1", 0.05, "--lr", 0.05,
         "--steps", 300, "--seed", 2, "--out", tmp_path / "cli"],
        capsys,
    )  # fmt: skip
    win = make_iwindow(params)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    assert win.exports.export_all(tmp_path / "win"), win.last_error
    command, window = _names(tmp_path / "cli"), _names(tmp_path / "win")
    assert command == {"history.csv", "w0.npy", "w_final.npy", "neuron_counts.csv", "run.json"}
    assert command <= window and window - command == {"session.json", "window.png"}  # figures in figures/
    assert _keys(tmp_path / "cli") == _keys(tmp_path / "win")
    meta = json.loads((tmp_path / "win" / "run.json").read_text())
    assert meta["w0"] == {"source": "normal"} and meta["parameters"]["seed"] == 2
    # the same run, trained by the same kernels: the same W(0) and W at the end
    for name in ("w0.npy", "w_final.npy"):
        np.testing.assert_array_equal(np.load(tmp_path / "cli" / name), np.load(tmp_path / "win" / name))
    cli_meta = json.loads((tmp_path / "cli" / "run.json").read_text())
    assert meta["final"]["polysemantic"] == cli_meta["final"]["polysemantic"]
    assert meta["final"]["loss"] == pytest.approx(cli_meta["final"]["loss"], rel=1e-12)  # from its W
