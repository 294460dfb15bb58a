"""The desktop app, driven as a user would: real widgets, real worker thread."""

import numpy as np
import pytest
from PySide6 import QtCore
from PySide6.QtTest import QTest

from sparsity_gui.core.note.initial import draw_normal
from sparsity_gui.core.note.metrics import COL
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.solvers import ExactSolver, InitialState

TIMEOUT = 20_000


def wait_running(qtbot, win):
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0, timeout=TIMEOUT)


def type_into(qtbot, field, text):
    field.edit.selectAll()
    field.edit.setText(text)
    field.edit.editingFinished.emit()


def test_lam_change_reaches_running_simulation_without_reset(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    run_id = win.run_id
    t_before = win.snapshot.t
    type_into(qtbot, win.controls.lam, "0.02")
    qtbot.waitUntil(lambda: win.snapshot.lam == 0.02, timeout=TIMEOUT)
    snap = win.snapshot
    assert win.run_id == run_id and snap.run_id == run_id, "a lam change must not reset the run"
    assert snap.t >= t_before
    assert [c.lam for c in snap.lam_changes] == [0.01, 0.02]
    change_t = snap.lam_changes[1].t
    assert change_t > 0
    # every time panel shows a vertical marker at the moment of the change
    qtbot.waitUntil(lambda: all(p.marker_count == 1 for p in win.panels if p.time_plots), timeout=TIMEOUT)
    for panel in win.panels:
        for _plot, line in panel._markers:
            assert line.value() == pytest.approx(change_t)


def test_lam_slider_applies_live(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    win.controls.lam_slider.setValue(win.controls.lam_slider.value() + 100)  # x10: 100 steps a decade
    qtbot.waitUntil(lambda: abs(win.snapshot.lam - 0.1) / 0.1 < 0.05, timeout=TIMEOUT)
    assert win.controls.lam.text() == f"{win.snapshot.lam:g}"


def test_invalid_value_is_refused_at_the_field(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    run_id = win.run_id
    for text, reason in (("-1", "from 0 to 1"), ("abc", "not a valid number"), ("nan", "finite")):
        type_into(qtbot, win.controls.lam, text)
        assert win.controls.lam.error.isVisibleTo(win.controls), text
        assert reason in win.controls.lam.error.text()
    type_into(qtbot, win.controls.m, "0")
    assert "m" in win.controls.m.error.text() or "from 1" in win.controls.m.error.text()
    qtbot.wait(200)
    assert win.run_id == run_id
    assert win.snapshot.lam == 0.01 and win.snapshot.m == 300, "the current run is untouched"
    # a good value clears the message
    type_into(qtbot, win.controls.lam, "0.005")
    assert not win.controls.lam.error.isVisibleTo(win.controls)
    qtbot.waitUntil(lambda: win.snapshot.lam == 0.005, timeout=TIMEOUT)


def test_changing_m_starts_new_run_and_drops_stale_snapshots(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    old = win.snapshot
    type_into(qtbot, win.controls.m, "500")
    assert win.run_id == old.run_id + 1
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    assert win.snapshot.m == 500
    # a snapshot of the old run arriving late is never painted
    painted = win.snapshot
    stale = old.__class__(**{**old.__dict__, "seq": 10**9})
    win.runner.stop()
    win.thread.join(5)
    with win.runner._lock:
        win.runner.latest = stale
    win.paint_latest()
    assert win.snapshot is painted


def test_play_pause_step_reset_and_shortcuts(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2, method="gd", eta=0.05), speed=2.0)
    wait_running(qtbot, win)
    win.activateWindow()
    win.setFocus()
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    assert not win.playing
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(100)
    t_paused = win.snapshot.t
    qtbot.wait(300)
    assert win.snapshot.t == t_paused, "paused means time stands still"
    # Right arrow: one gradient-descent step
    QTest.keyClick(win, QtCore.Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: win.snapshot.t > t_paused, timeout=TIMEOUT)
    assert win.snapshot.t == pytest.approx(t_paused + 0.05, abs=1e-12)
    # toolbar / menu actions are the same QActions
    win.act_play.trigger()
    assert win.playing
    qtbot.waitUntil(lambda: win.snapshot.t > t_paused + 0.2, timeout=TIMEOUT)
    # Ctrl+R: a new run from W(0)
    run_id = win.run_id
    QTest.keyClick(win, QtCore.Qt.Key.Key_R, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert win.run_id == run_id + 1
    qtbot.waitUntil(lambda: win.snapshot.run_id == run_id + 1, timeout=TIMEOUT)
    assert win.snapshot.history[0, COL["t"]] == 0.0


def test_panels_draw_what_the_core_computes(qtbot, make_window):
    params = SimParams(m=400, lam=1e-2, seed=3)
    win = make_window(params, speed=20.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 5, timeout=TIMEOUT)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(100)
    snap = win.snapshot
    # an independent exact solve of the same W(0) to the same instant
    solver = ExactSolver(InitialState.from_weights(draw_normal(400, 0.9, 3)), 1e-2)
    solver.advance_to(snap.t)
    abs_sorted = solver.abs_sorted()
    mo = solver.moments()
    theta = mo.theta
    panel = win.panels[0]
    xs, ys = panel.growing.getData()
    xs2, ys2 = panel.shrinking.getData()
    np.testing.assert_allclose(ys, abs_sorted[(xs - 1).astype(int)], rtol=1e-9)
    np.testing.assert_allclose(ys2, abs_sorted[(xs2 - 1).astype(int)], rtol=1e-9)
    assert np.all(ys[:-1] >= theta) and np.all(ys2 < theta)
    assert panel.theta_line.value() == pytest.approx(theta, rel=1e-9)
    assert panel.balance_line.value() == pytest.approx(1 / mo.norm1, rel=1e-9)
    # sparsity force: the line s*(a - theta) and the weights on it
    force = win.panels[5]
    fx, fy = force.up.getData()
    np.testing.assert_allclose(fy, mo.s * fx - 1e-2, rtol=1e-9, atol=1e-15)
    assert np.all(fx > theta)
    assert force.theta_line.value() == pytest.approx(theta, rel=1e-9)
    # norm balance: the last point is the core's feature and regularization push
    balance = win.panels[2]
    bx, by = balance.feature.getData()
    assert bx[-1] == pytest.approx(snap.t)
    assert by[-1] == pytest.approx(mo.s * mo.norm2_sq, rel=1e-9)
    rx, ry = balance.reg.getData()
    assert ry[-1] == pytest.approx(1e-2 * mo.norm1, rel=1e-9)
    # status bar agrees with the core
    assert win.status_labels["nonzero"].text() == f"m' = {mo.nonzero:,}"


def test_closing_during_a_fast_run_joins_the_thread(qtbot, make_window):
    win = make_window(SimParams(m=20_000, lam=1e-3), speed=0.0)
    wait_running(qtbot, win)
    assert win.thread.is_alive()
    win.close()
    assert not win.thread.is_alive()


def test_layout_persists_and_resets(qtbot, make_window):
    win = make_window()
    win.note_dock.hide()
    win.resize(1000, 700)
    win.close()
    again = make_window()
    assert not again.note_dock.isVisible()
    again.reset_layout()
    assert again.note_dock.isVisible() and again.param_dock.isVisible()


def test_gd_divergence_pauses_with_a_reason(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2, method="gd", eta=2.0, sigma=3.0), speed=0.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "error", timeout=TIMEOUT)
    assert "smaller eta" in win.snapshot.message
    assert not win.playing
    assert win.error_box.isVisible()
    win.error_box.close()
    # the app stays usable: a reset with a sane eta runs again
    type_into(qtbot, win.controls.eta, "0.05")
    win.reset()
    qtbot.waitUntil(
        lambda: win.snapshot.run_id == win.run_id and win.snapshot.state != "error", timeout=TIMEOUT
    )
