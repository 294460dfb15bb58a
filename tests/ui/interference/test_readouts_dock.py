"""The optimizer lab's readouts in the interference window's dock and in api.train: when the
run became sparse, its mean rail share, its shrinkage against the fixed point, computed here
from the snapshot's W by their definitions (the fixed point as numpy's root of the cubic)."""

from __future__ import annotations

import math

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams

TIMEOUT = 60_000
L1 = 0.4


def fixed_point_norm2(l1: float) -> float:
    """w*^2 of (1 - w^2) w = l1/4: the largest real root below 1 of w^3 - w + l1/4."""
    roots = np.roots([1.0, 0.0, -1.0, l1 / 4.0])
    real = [r.real for r in roots if abs(r.imag) < 1e-12 and 0 < r.real < 1]
    return max(real) ** 2


def shrinkage_ratio(W: np.ndarray, l1: float) -> float:
    a = np.abs(W)
    single = ((a >= 0.8) & (a <= 1.2)).sum(axis=1) == 1
    if not single.any():
        return math.nan
    return float(np.mean(np.sum(a[single] ** 2, axis=1))) / fixed_point_norm2(l1)


def test_the_dock_shows_the_runs_readouts(qtbot, make_iwindow):
    params = InterferenceParams(n=8, m=16, optimizer="gd-zero", l1=L1, lr=0.05, steps=800, seed=2)
    win = make_iwindow(params, playing=True)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    snap = win.snapshot
    qtbot.waitUntil(lambda: f"{snap.step:,} / " in win.status_line.text(), timeout=TIMEOUT)  # painted
    text = win.controls.units.text()
    assert snap.steps_to_sparse is not None and f"sparse at step {snap.steps_to_sparse:,}" in text
    assert f"rail share {snap.rail_share_mean:.2f}" in text
    assert f"‖W_i‖²/w*² {shrinkage_ratio(snap.W, L1):.4f}" in text
    assert "l1 saturated" not in text  # gradient descent is never on Adam's rail


def test_api_train_returns_the_readouts_of_run_json(tmp_path):
    import json

    from sparsity_gui import api

    result = api.train(n=8, m=16, optimizer="gd-zero", l1=L1, lr=0.05, steps=800, seed=2)
    found = result.readouts
    assert found["steps_to_sparse"] is not None and 0 < found["steps_to_sparse"] <= 800
    assert math.isclose(found["shrinkage"]["ratio"], shrinkage_ratio(result.w_final, L1), rel_tol=1e-12)
    assert math.isclose(found["shrinkage"]["fixed_point_norm2"], fixed_point_norm2(L1), rel_tol=1e-12)
    result.save(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "run.json").read_text())["readouts"] == json.loads(
        json.dumps(found)
    )
