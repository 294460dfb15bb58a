"""`checkpoints --fit-time-scale`: the t per step that best fits the snapshots' |W|_1 by
the note's flow, written as fitted (never as a prediction). Under plain SGD the fit finds
the step's own time, 4 lr; under Adam, where no time maps steps to the flow, it is the only
way the flow's columns are filled, and they say so. The commands run in this process
(test_checkpoints.py starts the entry point's own process)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import command_result, one_error_line
from test_checkpoints import rows, train, w0_matrix

pytest.importorskip("torch")

L1, LR = 0.02, 2e-3
STEPS = tuple(range(0, 5001, 250))


def write_row(tmp_path, optimizer):
    snaps = train(w0_matrix(n=1, m=40, seed=11), optimizer, STEPS, l1=L1, lr=LR)
    path = tmp_path / f"{optimizer}.npz"
    np.savez(path, W=np.stack([snaps[s][0] for s in STEPS]), steps=np.array(STEPS))
    return path


def test_under_plain_sgd_the_fitted_time_is_the_steps_own(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    argv = ["checkpoints", write_row(tmp_path, "sgd"), "--l1", L1, "--lr", LR, "--optimizer", "sgd",
            "--fit-time-scale", "--out", out]  # fmt: skip
    proc = command_result(argv, tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    assert "FITTED time scale" in proc.stdout
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    fitted = meta["fitted_time_per_step"]
    assert fitted["label"].startswith("fitted:") and "not a prediction" in fitted["label"]
    assert fitted["value"] == pytest.approx(4 * LR, rel=2e-3)  # the flow is off by O(lr)
    assert meta["flow"].startswith("FITTED") and meta["settings"]["fit_time_scale"] is True
    table = rows(out / "compare.csv")
    assert [r["t"] for r in table] == pytest.approx([fitted["value"] * s for s in STEPS], rel=1e-12)


def test_under_adam_the_flow_is_placed_at_a_fitted_time_and_labelled_so(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    path = write_row(tmp_path, "adamw")
    # PNGs alone at 50 dpi: no image is read here, only the figure's JSON
    proc = command_result(["checkpoints", path, "--l1", L1, "--lr", LR, "--optimizer", "adamw",
                           "--fit-time-scale", "--figures", "--formats", "png", "--dpi", 50, "--out", out],
                          tmp_path, monkeypatch, capsys)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (
        "under adamw no time maps steps to the flow" in proc.stdout and "fitted, not predicted" in proc.stdout
    )
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    tau = meta["fitted_time_per_step"]["value"]
    table = rows(out / "compare.csv")
    assert all(np.isfinite(r["norm1_flow"]) for r in table)
    # the fit is the least squares of the relative differences of |W|_1: a nearby scale fits worse
    from sparsity_gui.core.note.compare import flow_at

    w0 = np.load(path)["W"][0]
    measured = np.array([r["norm1"] for r in table])

    def misfit(scale):
        flow = np.array([np.abs(w).sum() for w in flow_at(w0, L1 / 4, scale * np.array(STEPS, float))])
        return np.sum(((flow - measured) / measured) ** 2)

    assert misfit(tau) < min(misfit(tau * 0.97), misfit(tau * 1.03))
    figure = json.loads((out / "figures" / "norm1.json").read_text(encoding="utf-8"))
    assert "FITTED" in figure["flow_label"]
    # without the option, the flow is not claimed
    plain = tmp_path / "plain"
    argv = ["checkpoints", path, "--l1", L1, "--lr", LR, "--optimizer", "adamw", "--out", plain]
    assert command_result(argv, tmp_path, monkeypatch, capsys).returncode == 0
    assert "fitted_time_per_step" not in json.loads((plain / "run.json").read_text(encoding="utf-8"))


def test_a_fitted_time_scale_is_for_one_row(tmp_path, monkeypatch, capsys):
    snaps = train(w0_matrix(n=3, m=8, seed=1), "sgd", (0, 10, 20), l1=L1, lr=LR)
    path = tmp_path / "matrix.npz"
    np.savez(path, W=np.stack([snaps[s] for s in (0, 10, 20)]), steps=np.array([0, 10, 20]))
    out = tmp_path / "out"
    proc = command_result(["checkpoints", path, "--all-rows", "--l1", L1, "--lr", LR, "--optimizer", "sgd",
                           "--fit-time-scale", "--out", out], tmp_path, monkeypatch, capsys)  # fmt: skip
    line = one_error_line(proc)
    assert "fit-time-scale" in line and "one row" in line, line
    assert not out.exists()
