"""The dock's note time in the interference window: t = 4·Σ lr over the run's steps, written
out here from the schedule's formulas and from the step at which lr was changed live, and
the same text as the status line's once the run has finished; a finished run that never
became sparse says by which step; run.json's t_end is the same sum."""

from __future__ import annotations

import json
import math
import re

from helpers import type_keys

from sparsity_gui.core.interference.params import InterferenceParams

TIMEOUT = 60_000


def finished(win):
    return win.snapshot is not None and win.snapshot.state == "finished"


def dock_time(win) -> float:
    return float(re.search(r"t = 4·Σ lr = ([0-9.e+-]+) by step", win.controls.units.text())[1])


def status_time(win) -> float:
    return float(re.search(r"\(t = ([0-9.e+-]+)\)", win.status_line.text())[1])


def painted(qtbot, win):
    snap = win.snapshot
    qtbot.waitUntil(lambda: f"{snap.step:,} / " in win.status_line.text(), timeout=TIMEOUT)
    win._update_status(snap)


def warmup_cosine_lr(k: int, lr: float, warmup: int, decay: int, steps: int) -> float:
    x = min(max((k - (steps - decay)) / decay, 0.0), 1.0)
    return lr * min(1.0, k / warmup) * 0.5 * (1.0 + math.cos(math.pi * x))


def test_under_an_lr_schedule_the_dock_sums_lr_as_the_status_line(qtbot, make_iwindow):
    p = InterferenceParams(
        n=8, m=16, optimizer="gd-zero", l1=0.04, lr=0.05, steps=1500, seed=2, lr_warmup=300,
        lr_decay="cosine", lr_decay_steps=600,
    )  # fmt: skip
    want = 4 * math.fsum(warmup_cosine_lr(k, 0.05, 300, 600, 1500) for k in range(1, 1501))
    win = make_iwindow(p)
    assert dock_time(win) == float(f"{want:.6g}")  # before the first step: the whole run's
    qtbot.waitUntil(lambda: finished(win), timeout=TIMEOUT)
    painted(qtbot, win)
    assert dock_time(win) == float(f"{want:.6g}") and status_time(win) == float(f"{want:.6g}")
    assert want < 0.75 * 4 * 0.05 * 1500  # not 4·lr·steps


def test_after_a_live_lr_change_the_dock_sums_both_lrs(qtbot, make_iwindow):
    p = InterferenceParams(n=16, m=64, optimizer="gd-zero", l1=0.04, lr=0.05, steps=400_000, seed=2)
    win = make_iwindow(p)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.step > 2000, timeout=TIMEOUT)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(300)  # the paused run's last snapshot
    k = win.snapshot.step
    assert 0 < k < p.steps
    type_keys(win.controls.lr, "0.02")
    assert win.params.lr == 0.02
    win.set_playing(True)
    qtbot.waitUntil(lambda: finished(win), timeout=TIMEOUT)
    painted(qtbot, win)
    want = 4 * (0.05 * k + 0.02 * (p.steps - k))
    assert math.isclose(win.snapshot.latest.t, want, rel_tol=1e-9)
    assert dock_time(win) == float(f"{want:.6g}") and status_time(win) == float(f"{want:.6g}")


def test_a_finished_run_that_never_became_sparse_says_by_which_step(qtbot, make_iwindow):
    p = InterferenceParams(n=8, m=16, optimizer="gd-zero", l1=1e-3, lr=0.05, steps=300, seed=2)
    win = make_iwindow(p)
    qtbot.waitUntil(lambda: finished(win), timeout=TIMEOUT)
    painted(qtbot, win)
    assert win.snapshot.steps_to_sparse is None
    text = win.controls.units.text()
    assert "not sparse by step 300" in text and "not sparse yet" not in text


def test_run_json_t_end_is_four_times_the_sum_of_lr(tmp_path):
    from sparsity_gui import api

    kw = dict(n=8, m=16, optimizer="gd-zero", l1=0.04, lr=0.05, steps=1500, seed=2)
    result = api.train(**kw, lr_warmup=300, lr_decay="cosine", lr_decay_steps=600)
    result.save(tmp_path / "run")
    units = json.loads((tmp_path / "run" / "run.json").read_text())["note_units"]
    want = 4 * math.fsum(warmup_cosine_lr(k, 0.05, 300, 600, 1500) for k in range(1, 1501))
    assert math.isclose(units["t_end"], want, rel_tol=1e-12)
