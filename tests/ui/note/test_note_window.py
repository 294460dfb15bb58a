"""The desktop app, driven as a user would: real widgets, real worker thread."""

import numpy as np
import pytest
from helpers import type_into
from PySide6 import QtCore
from PySide6.QtTest import QTest

from sparsity_gui.core.note.initial import draw_normal
from sparsity_gui.core.note.metrics import COL
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.solvers import ExactSolver, InitialState

TIMEOUT = 20_000


def wait_running(qtbot, win):
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0, timeout=TIMEOUT)


def test_lam_change_reaches_running_simulation_without_reset(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    run_id = win.run_id
    t_before = win.snapshot.t
    type_into(win.controls.lam, "0.02")
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
        for _plot, markers in panel._markers:
            assert markers.positions() == pytest.approx([change_t])


def test_live_changes_add_no_items_to_the_plots(qtbot, note_window):
    """Each λ change draws a marker on every time plot, all of a plot's in one item: the
    items a plot holds do not grow with the changes (as pyqtgraph InfiniteLines, two
    items a change and a plot, they slowed every frame after)."""
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    counts = None
    for k, lam in enumerate(("0.02", "0.03", "0.015"), start=1):
        if k > 1:  # far enough from the last change not to merge into it (1 % of the time shown)
            last = win.snapshot.lam_changes[-1].t
            qtbot.waitUntil(lambda last=last: win.snapshot.t > 1.5 * last + 0.5, timeout=TIMEOUT)
        type_into(win.controls.lam, lam)
        qtbot.waitUntil(
            lambda k=k: all(p.marker_count == k for p in win.panels if p.time_plots), timeout=TIMEOUT
        )
        now = [len(plot.items) for panel in win.panels for plot in panel.time_plots]
        assert counts is None or now == counts
        counts = now
    for panel in win.panels:
        for plot, markers in panel._markers:
            assert markers in plot.items
            assert markers.labels() == ["λ = 2.0e-2", "λ = 3.0e-2", "λ = 1.5e-2"]


def test_lam_slider_applies_live(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    win.controls.lam_slider.setValue(win.controls.lam_slider.value() + 100)  # x10: 100 steps a decade
    qtbot.waitUntil(lambda: abs(win.snapshot.lam - 0.1) / 0.1 < 0.05, timeout=TIMEOUT)
    assert win.controls.lam.text() == f"{win.snapshot.lam:g}"


def test_invalid_value_is_refused_at_the_field(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    run_id = win.run_id
    for text, reason in (("-1", "from 0 to 1"), ("abc", "not a valid number"), ("nan", "finite")):
        type_into(win.controls.lam, text)
        assert win.controls.lam.error.isVisibleTo(win.controls), text
        assert reason in win.controls.lam.error.text()
    type_into(win.controls.m, "0")
    assert "m" in win.controls.m.error.text() or "from 1" in win.controls.m.error.text()
    qtbot.wait(200)
    assert win.run_id == run_id
    assert win.snapshot.lam == 0.01 and win.snapshot.m == 300, "the current run is untouched"
    # a good value clears the message
    type_into(win.controls.lam, "0.005")
    assert not win.controls.lam.error.isVisibleTo(win.controls)
    qtbot.waitUntil(lambda: win.snapshot.lam == 0.005, timeout=TIMEOUT)


def test_changing_m_starts_new_run_and_drops_stale_snapshots(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    old = win.snapshot
    type_into(win.controls.m, "500")
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


def test_play_pause_step_reset_and_shortcuts(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2, method="gd", eta=0.05), speed=2.0)
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


def test_panels_draw_what_the_core_computes(qtbot, note_window):
    params = SimParams(m=400, lam=1e-2, seed=3)
    win = note_window(params, speed=20.0)
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


def test_gd_divergence_pauses_with_a_reason(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2, method="gd", eta=2.0, sigma=3.0), speed=0.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "error", timeout=TIMEOUT)
    assert "smaller eta" in win.snapshot.message
    assert not win.playing
    assert win.error_box.isVisible()
    win.error_box.close()
    # the app stays usable: a reset with a sane eta runs again
    type_into(win.controls.eta, "0.05")
    win.restart()
    qtbot.waitUntil(
        lambda: win.snapshot.run_id == win.run_id and win.snapshot.state != "error", timeout=TIMEOUT
    )


def shown_t(win) -> str:
    return win.status_labels["t"].text()


def test_idle_means_idle_paused_or_finished_nothing_is_painted(qtbot, note_window):
    """A paused or finished run publishes no snapshot, so the window paints nothing until
    something changes; a user action (a step, a live change) paints again."""
    win = note_window(SimParams(m=300, lam=1e-2), speed=0.0)  # as fast as possible: finishes
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    qtbot.wait(300)  # the last snapshots of the run drain
    frames, seq = win.frames, win.snapshot.seq
    qtbot.wait(1000)
    assert win.frames == frames and win.snapshot.seq == seq, "a finished run kept repainting"
    assert win.status_labels["sps"].text() == "0 steps/s" and win.status_labels["fps"].text() == "— fps"
    assert "1 weight above θ grow" in win.note.toPlainText()  # not "1 weights"
    # paused mid-run: the same
    win2 = note_window(SimParams(m=3000, lam=1e-3), speed=1.0)
    wait_running(qtbot, win2)
    win2.set_playing(False)
    qtbot.waitUntil(lambda: win2.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(300)
    frames, t = win2.frames, win2.snapshot.t
    qtbot.wait(1000)
    assert win2.frames == frames, "a paused run kept repainting"
    # the last frame reached every panel (none is left a frame behind), ranges included
    # (a panel in a hidden tab catches up when shown: test_phase_plane.py)
    assert all(panel.last is win2.snapshot for panel in win2.painted_panels())
    assert shown_t(win2) == f"t = {win2.snapshot.t:.6g}"
    # a user action is painted at once
    win2.single_step()
    qtbot.waitUntil(lambda: win2.snapshot.t > t, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: win2.frames > frames, timeout=TIMEOUT)  # (counted once on screen)
    qtbot.wait(100)
    assert win2.frames <= frames + 2  # the step (and the pause it implies)
    win2.on_params_changed({"lam": 2e-3})
    qtbot.waitUntil(lambda: win2.snapshot.lam == 2e-3, timeout=TIMEOUT)


def test_play_pause_tells_the_truth_about_a_finished_run(qtbot, make_window):
    """A finished run shows Play, not Pause; Space on it runs it again from W(0) (it does not
    silently pause, which left a later reset sitting paused at t = 0)."""
    win = make_window(SimParams(m=300, lam=1e-2), speed=0.0)
    assert win.act_play.text() == "Pause"
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    assert win.act_play.text() == "Play" and "again" in win.act_play.toolTip()
    run_id = win.run_id
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    assert win.run_id == run_id + 1 and win.playing
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id and win.snapshot.t > 0, timeout=TIMEOUT)
    assert win.act_play.text() in ("Pause", "Play")  # running, or already finished again
    # finished again: a reset runs (the window still wants to play)
    qtbot.waitUntil(lambda: win.snapshot.state == "finished", timeout=TIMEOUT)
    win.restart()
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id and win.snapshot.t > 0, timeout=TIMEOUT)
    # paused, Space plays
    win2 = make_window(SimParams(m=3000, lam=1e-3), speed=1.0)
    wait_running(qtbot, win2)
    QTest.keyClick(win2, QtCore.Qt.Key.Key_Space)
    assert not win2.playing and win2.act_play.text() == "Play"
    QTest.keyClick(win2, QtCore.Qt.Key.Key_Space)
    assert win2.playing and win2.act_play.text() == "Pause"


def test_shortcuts_work_right_after_enter_in_a_field(qtbot, note_window):
    """Click a field, type a value, press Enter: the keyboard goes back to the window, so
    Space, Right and Ctrl+R act at once (they used to type a space, move the cursor)."""
    from PySide6 import QtWidgets

    win = note_window(SimParams(m=3000, lam=1e-3), speed=1.0)
    wait_running(qtbot, win)
    with qtbot.waitActive(win):
        win.activateWindow()
    field = win.controls.lam.edit
    field.setFocus()
    qtbot.waitUntil(lambda: QtWidgets.QApplication.focusWidget() is field, timeout=TIMEOUT)
    field.selectAll()
    QTest.keyClicks(field, "0.002")
    QTest.keyClick(field, QtCore.Qt.Key.Key_Return)
    assert win.params.lam == 0.002 and field.text() == "0.002"

    def key(k, mod=QtCore.Qt.KeyboardModifier.NoModifier):
        # where the keyboard delivers the key: the focus widget, else the window
        QTest.keyClick(QtWidgets.QApplication.focusWidget() or win, k, mod)

    assert QtWidgets.QApplication.focusWidget() is not field
    key(QtCore.Qt.Key.Key_Space)
    assert not win.playing and field.text() == "0.002"
    t = win.snapshot.t
    key(QtCore.Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: win.snapshot.t > t, timeout=TIMEOUT)
    run_id = win.run_id
    key(QtCore.Qt.Key.Key_R, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert win.run_id == run_id + 1
    # a refused value keeps the focus in its field, to be corrected
    field.setFocus()
    qtbot.waitUntil(lambda: QtWidgets.QApplication.focusWidget() is field, timeout=TIMEOUT)
    field.selectAll()
    QTest.keyClicks(field, "-1")
    QTest.keyClick(field, QtCore.Qt.Key.Key_Return)
    assert QtWidgets.QApplication.focusWidget() is field and not win.controls.lam.error.isHidden()


def test_a_field_gets_its_help_back_after_a_refused_value(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    field = win.controls.sigma
    help_text = field.edit.toolTip()
    type_into(field, "-1")
    assert field.edit.toolTip() != help_text and "> 0" in field.edit.toolTip()
    type_into(field, "0.8")
    assert field.edit.toolTip() == help_text
    type_into(field, "nan")
    win.restart()  # Ctrl+R shows the parameters in force, and the help
    assert field.edit.toolTip() == help_text and field.text() == "0.8"


def test_the_first_frame_at_t_0(qtbot, note_window):
    """Before anything can be fitted the law's legend says c = —, not nan; time axes start
    at t = 0 and run forward, not from -0.5 to 0.5."""
    win = note_window(SimParams(m=300, lam=1e-2), playing=False)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "paused", timeout=TIMEOUT)
    assert win.snapshot.t == 0.0
    decay = win.panels[3]
    assert decay.plot.legend.getLabel(decay.law).text.endswith("c = —")
    for panel in win.panels:
        for plot in panel.time_plots:
            lo, hi = plot.vb.viewRange()[0]
            assert -0.1 <= lo <= 0.0 and hi >= 1.0, (panel.title, lo, hi)
    # once there is a run to fit, c is a number
    win.set_playing(True)
    qtbot.waitUntil(lambda: np.isfinite(win.snapshot.fitted_c), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "c = —" not in decay.plot.legend.getLabel(decay.law).text, timeout=TIMEOUT)


def test_the_speed_shown_is_the_speed_used_and_t_end_has_a_label(qtbot, note_window):
    from PySide6 import QtWidgets

    win = note_window(SimParams(m=300, lam=1e-3), speed=None)  # the default: 0.075 / lam
    assert win.speed == pytest.approx(75.0)
    assert win.controls.speed_label.text() == "75 t/s" and win.controls.current_speed() == win.speed
    win.controls.speed_slider.set_log_value(10.0)
    win.controls.speed_slider.setValue(win.controls.speed_slider.value() + 1)  # a user's move
    shown = float(win.controls.speed_label.text().split()[0])
    assert shown == win.speed == win.controls.current_speed()
    form = win.controls.findChild(QtWidgets.QFormLayout)
    label = form.labelForField(win.controls.t_end)
    assert label is not None and label.text() == "t_end"


def test_help_lists_the_shortcuts_and_quit_closes_every_window(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2), speed=5.0)
    menus = [a.text() for a in win.menuBar().actions()]
    assert menus[-1] == "&Help"
    text = win.shortcuts_text()
    for key, what in (
        ("Space", "Play / pause"),
        ("Right", "Step"),
        ("Ctrl+R", "Reset"),
        ("Ctrl+E", "Export all"),
        ("Ctrl+S", "Save session"),
        ("Ctrl+Q", "Quit"),
    ):
        assert f"<b>{key}</b></td><td>{what}" in text, (key, what, text)
    box = win.show_shortcuts()
    assert box.isVisible() and not box.isModal()
    box.close()
    other = win.windows.open("interference")
    assert "<b>Ctrl+Q</b></td><td>Quit" in other.shortcuts_text()
    other.act_quit.trigger()  # Quit in the second window closes both
    assert win.closed and other.closed


def test_a_large_new_run_says_preparing_until_its_first_frame(qtbot, note_window):
    win = note_window(SimParams(m=3000, lam=1e-3), speed=1.0)
    wait_running(qtbot, win)
    win.on_params_changed({"m": 2_000_000})
    assert win.status_labels["state"].text() == "preparing"  # not the old run's "running"
    qtbot.waitUntil(
        lambda: win.snapshot.run_id == win.run_id and win.snapshot.m == 2_000_000, timeout=TIMEOUT
    )
    qtbot.waitUntil(lambda: win.status_labels["state"].text() == "running", timeout=TIMEOUT)


def test_theta_is_unmistakable_and_tracked_weights_are_keyed_by_rank(qtbot, note_window):
    import pyqtgraph as pg

    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    wait_running(qtbot, win)
    panel = win.panels[1]
    theta = pg.mkPen(panel.theta_curve.opts["pen"])
    assert theta.style() == QtCore.Qt.PenStyle.DashLine and theta.color().name() == "#000000"
    shown = panel.shown_tracked(win.snapshot)
    colours = [p.color() for p in panel.tracked.pens]
    assert len(colours) == len(shown) == panel.tracked.curve_count
    assert all(c.name() != "#000000" and c.name() != theta.color().name() for c in colours)
    assert len({c.name() for c in colours}) == len(colours)

    def luminance(c):  # relative luminance (sRGB), which viridis raises steadily
        lin = [
            v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
            for v in (c.redF(), c.greenF(), c.blueF())
        ]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    lum = [luminance(c) for c in colours]
    assert lum == sorted(lum), "dark for the largest initial weight, lighter down the ranks"
    ranks = win.snapshot.tracked_ranks[shown] + 1
    key = panel.plot.legend.getLabel(panel.key_sample).text
    assert key == f"|W_k| by initial rank, {ranks[0]} (dark) … {ranks[-1]:,}" and ranks[0] == 1


def test_a_lam_drag_is_one_change_with_one_readable_marker(qtbot, note_window):
    from sparsity_gui.core.note.changes import LiveChange, merged_changes
    from sparsity_gui.core.text import sci

    win = note_window(SimParams(m=3000, lam=1e-3), speed=20.0)
    wait_running(qtbot, win)
    slider = win.controls.lam_slider
    start = slider.value()
    slider.setSliderDown(True)  # a drag: many positions, one change on release
    for pos in range(start + 1, start + 12):
        slider.setSliderPosition(pos)
    assert win.params.lam == 1e-3, "nothing is applied while dragging"
    assert win.controls.lam.text() == f"{float(f'{slider.to_value(start + 11):.3g}'):g}"
    slider.setSliderDown(False)
    lam = win.params.lam
    assert lam != 1e-3
    qtbot.waitUntil(lambda: len(win.snapshot.lam_changes) == 2, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: all(p.marker_count == 1 for p in win.panels if p.time_plots), timeout=TIMEOUT)
    assert win.panels[1]._markers[0][1].labels() == [f"λ = {sci(lam)}"]
    assert sci(0.002) == "2.0e-3" and sci(0.0126) == "1.3e-2" and sci(150.0) == "1.5e2"
    # changes closer than 1 % of the time shown merge into the last one
    near = [LiveChange(10.0, "lam", 1e-3), LiveChange(10.5, "lam", 2e-3), LiveChange(40.0, "lam", 3e-3)]
    merged = merged_changes(near, span=100.0)
    assert [(c.t, c.value) for c in merged] == [(10.5, 2e-3), (40.0, 3e-3)]
