"""Bounded work in the windows: a value whose run would pass the limit of bounded work
(core/checks.py, the rule the CLI and the API call) is refused at its field, with what the
run would need, and the run on screen goes on untouched. The note window (lam, t_end),
the interference window (steps), the scaling tab and the sweep tab (before a grid starts)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import type_keys

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.interference.sweep_tab import SweepWidget
from sparsity_gui.ui.note.scaling_tab import ScalingWidget


def _error(field) -> str:
    return field.error.text() if not field.error.isHidden() else ""


def _running(qtbot, win) -> float:
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0, timeout=30_000)
    return win.snapshot.t


def test_a_tiny_lam_is_refused_at_its_field_and_the_run_goes_on(qtbot, make_window, monkeypatch):
    monkeypatch.delenv("SPARSITY_GUI_MAX_STEPS", raising=False)
    win = make_window(SimParams(m=300, lam=1e-2), speed=5.0)
    t0 = _running(qtbot, win)
    run_id = win.run_id
    type_keys(win.controls.lam, "1e-300")
    message = _error(win.controls.lam)
    assert "lam = 1e-300 to one weight left" in message and "SPARSITY_GUI_MAX_STEPS" not in message
    assert "no run that long can end" in message
    type_keys(win.controls.lam, "1e-12")
    assert "SPARSITY_GUI_MAX_STEPS=1e13" in _error(win.controls.lam)
    assert win.params.lam == 1e-2 and win.run_id == run_id  # the run is untouched
    qtbot.waitUntil(lambda: win.snapshot.t > t0 and win.snapshot.lam == 1e-2, timeout=30_000)
    type_keys(win.controls.lam, "2e-2")  # a value the limit allows is taken
    assert _error(win.controls.lam) == ""
    qtbot.waitUntil(lambda: win.params.lam == 2e-2, timeout=10_000)


def test_a_t_end_near_the_float_limit_is_refused_at_its_field(qtbot, make_window, monkeypatch):
    monkeypatch.delenv("SPARSITY_GUI_MAX_STEPS", raising=False)
    win = make_window(SimParams(m=300, lam=1e-2, t_end=50.0), speed=5.0)
    _running(qtbot, win)
    type_keys(win.controls.t_end, "1.7e308")
    assert "t_end = 1.7e308 would need about" in _error(win.controls.t_end)
    assert win.params.t_end == 50.0
    type_keys(win.controls.t_end, "80")
    assert _error(win.controls.t_end) == "" and win.params.t_end == 80.0


def test_training_steps_past_the_limit_are_refused_at_their_field(qtbot, make_iwindow, monkeypatch):
    monkeypatch.delenv("SPARSITY_GUI_MAX_MULTIPLY_ADDS", raising=False)
    win = make_iwindow(InterferenceParams(n=256, m=1024, steps=200), playing=False)
    steps = win.controls.fields["steps"]
    type_keys(steps, "1e8")  # 256^2 * 1024 * 1e8 = 6.7e15 multiply-adds
    assert "100000000 steps at n = 256, m = 1024 would need about 6.7e15 multiply-adds" in _error(steps)
    assert win.params.steps == 200


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--lam", "1e-12"], "lam = 1e-12 to one weight left"),
        (["--t-end", "1e300"], "t_end = 1e300 would need about"),
        (["--model", "interference", "--n", "2048", "--m", "2048", "--steps", "1e8"], "8.6e17 multiply-adds"),
    ],
)
def test_the_app_refuses_unbounded_work_on_its_command_line(tmp_path, args, needle):
    """`sparsity-gui ARGS` (the window's options): one error line, status 2, no window."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARSITY_GUI_MAX_")}
    env.update(QT_QPA_PLATFORM="offscreen", SPARSITY_GUI_SETTINGS=str(tmp_path / "s.ini"))
    proc = subprocess.run(
        [sys.executable, "-m", "sparsity_gui", *args, "--quit-after", "1000"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], proc.stderr


def test_the_scaling_tab_refuses_a_grid_whose_longest_run_is_too_long(show_tab, monkeypatch):
    monkeypatch.delenv("SPARSITY_GUI_MAX_STEPS", raising=False)
    tab = show_tab(ScalingWidget(lambda: SimParams(m=200, lam=1e-2)))
    for field, text in ((tab.m, "100,1000"), (tab.lam, "1e-3,1e-12"), (tab.seeds, "1")):
        field.edit.setText(text)
    assert tab.checked_plan() is None
    assert "lam = 1e-12 to one weight left" in _error(tab.lam)
    tab.lam.edit.setText("1e-3,1e-2")
    assert tab.checked_plan() is not None and _error(tab.lam) == ""


def test_the_sweep_tab_refuses_a_sweep_whose_longest_run_is_too_long(show_tab, monkeypatch):
    monkeypatch.delenv("SPARSITY_GUI_MAX_MULTIPLY_ADDS", raising=False)
    tab = show_tab(SweepWidget(lambda: InterferenceParams(n=64, m=64)), 1100, 600)
    for field, text in ((tab.n, "1024"), (tab.m, "1024,8192"), (tab.seeds, "1"), (tab.steps, "1e7")):
        field.edit.setText(text)
    assert tab.checked_plan() is None
    assert "10000000 steps at n = 1024, m = 8192 would need about 8.6e16" in _error(tab.steps)
    tab.steps.edit.setText("100")
    assert tab.checked_plan() is not None
