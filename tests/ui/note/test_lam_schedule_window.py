"""λ(t) in the note's window, on the real widgets with real key events: the λ warm-up and λ
schedule fields of the Parameters dock (a new run, or the reason at the field and the run
untouched), the λ field following the schedule, a live change of λ ending it, sessions and
presets keeping it, and the λ(t) strip of the Norm balance panel. The expected λ is worked
out here from the knots (by hand, or numpy.interp), not with the package's lam_at."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import type_keys
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.core.note.params import SimParams

TIMEOUT = 20_000


def balance(win):
    return next(p for p in win.panels if type(p).__name__ == "BalancePanel")


def legend_texts(panel) -> list[str]:
    return [label.text for _sample, label in panel.plot.legend.items]


def new_run_painted(qtbot, win):
    """The window's current run has a painted snapshot."""
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    return win.snapshot


def running_past(qtbot, win, t):
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.snapshot.t > t,
        timeout=TIMEOUT,
    )
    return win.snapshot


def step(qtbot, win):
    """One single step (Right arrow) and its paused snapshot painted."""
    t = win.snapshot.t
    QTest.keyClick(win, QtCore.Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: win.snapshot.t > t and win.snapshot.state == "paused", timeout=TIMEOUT)
    return win.snapshot


def shown_lam(win) -> float:
    return float(win.controls.lam.text())


def slider_lam(win) -> float:
    slider = win.controls.lam_slider
    return slider.to_value(slider.value())


def test_a_typed_warm_up_starts_a_run_under_its_knots_and_the_fields_exclude_each_other(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    running_past(qtbot, win, 0.0)
    run_id = win.run_id
    assert balance(win).lam_strip.isVisible() is False and "λ(t)" not in legend_texts(balance(win))

    type_keys(win.controls.lam_warmup, "50")
    assert win.run_id == run_id + 1, "a warm-up starts a new run"
    assert win.params.lam_schedule == ((0.0, 0.0), (50.0, 0.01)) and win.params.lam == 0.01
    snap = new_run_painted(qtbot, win)
    assert snap.initial_params.lam_schedule == ((0.0, 0.0), (50.0, 0.01)), "the worker runs it"
    assert win.controls.lam_warmup.text() == "50" and win.controls.lam_schedule.text() == ""
    assert win.controls.lam_warmup.error.isHidden()

    # a schedule replaces the warm-up (its field emptied); λ is where it ends
    type_keys(win.controls.lam_schedule, "0:0, 20:5e-3, 60:2e-2")
    assert win.run_id == run_id + 2
    assert win.params.lam_schedule == ((0.0, 0.0), (20.0, 5e-3), (60.0, 2e-2)) and win.params.lam == 0.02
    assert win.controls.lam_warmup.text() == "" and win.controls.lam_schedule.text() != ""
    assert new_run_painted(qtbot, win).initial_params.lam_schedule == win.params.lam_schedule

    # a warm-up replaces the schedule, rising to the λ in force (0.02)
    type_keys(win.controls.lam_warmup, "30")
    assert win.run_id == run_id + 3
    assert win.params.lam_schedule == ((0.0, 0.0), (30.0, 0.02))
    assert win.controls.lam_schedule.text() == "" and win.controls.lam_warmup.text() == "30"

    # emptied: a new run at a constant λ (the one the warm-up rose to)
    type_keys(win.controls.lam_warmup, "")
    assert win.run_id == run_id + 4
    assert win.params.lam_schedule == () and win.params.lam == 0.02
    assert new_run_painted(qtbot, win).initial_params.lam_schedule == ()
    qtbot.waitUntil(lambda: not balance(win).lam_strip.isVisible(), timeout=TIMEOUT)
    assert "λ(t)" not in legend_texts(balance(win))


BAD = {  # each field's bad texts and the reason its message gives
    "lam_schedule": [
        ("0:1,0:2", "from 0 to 1"),  # λ = 2 is what the check meets first
        ("0:1e-3,0:2e-3", "repeated"),
        ("0:0,50:1e-3,20:2e-3", "out of order"),
        ("abc", "expected knots t:value"),
        ("0:0,100:-1e-3", "from 0 to 1"),
        ("0:0,100:2", "from 0 to 1"),
    ],
    "lam_warmup": [("-5", ">= 0"), ("abc", "not a valid number"), ("inf", "finite")],
}
# each field's good text and the knots it gives: λ rises to 0.01 (the λ in force)
GOOD = {
    "lam_schedule": ("0:0,40:1e-2", ((0.0, 0.0), (40.0, 0.01))),
    "lam_warmup": ("30", ((0.0, 0.0), (30.0, 0.01))),
}


def test_a_bad_schedule_is_refused_at_its_field_and_the_run_goes_on(qtbot, note_window):
    """Each bad text typed into its field, one after another on one run: the reason at the
    field, and the run untouched goes on; then a good value clears the field's message and
    starts a run under its knots."""
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    for field, cases in BAD.items():
        before = running_past(qtbot, win, 0.0)
        run_id, params = win.run_id, win.params
        widget = getattr(win.controls, field)
        for text, reason in cases:
            type_keys(widget, text)
            assert widget.error.isVisibleTo(win.controls), text
            assert reason in widget.error.text(), (text, widget.error.text())
            assert win.run_id == run_id and win.params == params, text
            # the worker goes on with the same run: a later snapshot of it, its parameters unchanged
            later = running_past(qtbot, win, before.t)
            assert later.run_id == run_id and later.params == params and later.changes == (), text
            before = later
        # a good value clears the message
        text, knots = GOOD[field]
        type_keys(widget, text)
        assert widget.error.isHidden() and win.run_id == run_id + 1
        assert win.params.lam_schedule == knots


def test_a_schedule_that_ends_after_t_end_or_a_warm_up_to_lam_0_is_refused(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2, t_end=100.0), speed=5.0)
    running_past(qtbot, win, 0.0)
    run_id = win.run_id
    type_keys(win.controls.lam_schedule, "0:0,200:1e-2")
    assert "after t_end = 100" in win.controls.lam_schedule.error.text()
    type_keys(win.controls.lam_warmup, "150")
    assert "after t_end = 100" in win.controls.lam_warmup.error.text()
    assert win.run_id == run_id and win.params.lam_schedule == ()
    type_keys(win.controls.lam, "0")  # a live change to λ = 0: nothing to warm up to
    type_keys(win.controls.lam_warmup, "50")
    assert "set λ > 0 first" in win.controls.lam_warmup.error.text()
    assert win.run_id == run_id and win.params.lam_schedule == () and win.params.lam == 0.0


def by_hand(t: float) -> float:
    """λ(t) of the schedule 0:0, 4:2e-2, 8:1e-2 (written out piece by piece)."""
    if t <= 4.0:
        return 2e-2 * t / 4.0
    if t <= 8.0:
        return 2e-2 + (1e-2 - 2e-2) * (t - 4.0) / 4.0
    return 1e-2


def test_the_lam_field_and_slider_follow_the_schedule_without_a_change(qtbot, note_window):
    """Paused, each single step moves t by speed/30 = 1: the λ shown at each painted t is
    the schedule's, through both pieces and past the last knot, and no change is made."""
    knots = ((0.0, 0.0), (4.0, 2e-2), (8.0, 1e-2))
    win = note_window(SimParams(m=300, lam=1e-2, lam_schedule=knots), playing=False, speed=30.0)
    snap = new_run_painted(qtbot, win)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    assert shown_lam(win) == 0.0  # λ(0) of a warm-up, though the run's lam is 1e-2
    seen = []
    for _ in range(11):
        snap = step(qtbot, win)
        expected = by_hand(snap.t)
        assert shown_lam(win) == pytest.approx(expected, rel=1e-5, abs=1e-12), snap.t
        assert slider_lam(win) == pytest.approx(expected, rel=0.03), snap.t  # a slider step is 2.3 %
        seen.append(snap.t)
    assert min(seen) < 4.0 < max(seen) and max(seen) > 8.0, seen  # every piece was looked at
    # following is no change: the same run, no live change, the schedule still in force
    assert win.run_id == snap.run_id and snap.changes == ()
    assert win.params.lam_schedule == knots and snap.params.lam_schedule == knots
    assert win.controls.lam_schedule.text() != "" and win.controls.lam.error.isHidden()


def test_a_live_lam_change_ends_the_schedule_and_clears_its_fields(qtbot, note_window):
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    running_past(qtbot, win, 0.0)
    type_keys(win.controls.lam_warmup, "1000")
    run_id = win.run_id
    running_past(qtbot, win, 1.0)
    assert shown_lam(win) < 1e-2  # still warming up
    type_keys(win.controls.lam, "0.005")
    assert win.run_id == run_id, "a live change, not a new run"
    assert win.params.lam_schedule == () and win.params.lam == 0.005
    assert win.controls.lam_warmup.text() == "" and win.controls.lam_schedule.text() == ""
    qtbot.waitUntil(
        lambda: win.snapshot.params.lam_schedule == () and win.snapshot.lam == 0.005, timeout=TIMEOUT
    )
    change = next(c for c in win.snapshot.changes if c.name == "lam")
    later = running_past(qtbot, win, change.t + 0.5)
    assert shown_lam(win) == 0.005, "the field keeps the λ typed (no schedule to follow)"
    # the strip: the warm-up's ramp up to the change, then 0.005 (the paint budget may hold
    # a panel a frame behind the snapshot shown: wait for it to reach that instant)
    qtbot.waitUntil(lambda: balance(win).lam_curve.getData()[0][-1] >= later.t, timeout=TIMEOUT)
    x, y = balance(win).lam_curve.getData()
    assert balance(win).lam_strip.isVisible()
    ramp = x <= change.t
    assert np.allclose(y[ramp][:-1], np.interp(x[ramp][:-1], [0.0, 1000.0], [0.0, 1e-2]), rtol=1e-12, atol=0)
    assert y[-1] == 0.005 and x[-1] >= later.t


def test_a_session_and_a_preset_keep_the_schedule(qtbot, note_window, tmp_path):
    win = note_window(SimParams(m=300, lam=1e-2), speed=5.0)
    running_past(qtbot, win, 0.0)
    knots = ((0.0, 0.0), (30.0, 1e-2), (60.0, 5e-3))
    type_keys(win.controls.lam_schedule, "0:0,30:1e-2,60:5e-3")
    running_past(qtbot, win, 1.0)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    path = tmp_path / "scheduled.json"
    assert win.files.save_session(path), win.last_error
    assert win.files.save_preset("ramp")

    type_keys(win.controls.lam_schedule, "")  # another run, with no schedule
    assert win.params.lam_schedule == () and win.controls.lam_schedule.text() == ""

    for reopen in (lambda: win.files.open_session(path), lambda: win.files.apply_preset("ramp")):
        type_keys(win.controls.lam_schedule, "")
        assert reopen(), win.last_error
        assert win.params.lam_schedule == knots and win.params.lam == 5e-3
        assert win.controls.lam_warmup.text() == ""
        text = win.controls.lam_schedule.text()
        pairs = [tuple(float(v) for v in knot.split(":")) for knot in text.split(",")]
        assert tuple(pairs) == knots, text
        assert new_run_painted(qtbot, win).initial_params.lam_schedule == knots

    # a warm-up's session fills the warm-up field
    type_keys(win.controls.lam_warmup, "25")
    running_past(qtbot, win, 0.5)
    warm = tmp_path / "warm.json"
    assert win.files.save_session(warm), win.last_error
    type_keys(win.controls.lam_warmup, "")
    assert win.files.open_session(warm), win.last_error
    assert win.params.lam_schedule == ((0.0, 0.0), (25.0, 5e-3))
    assert win.controls.lam_warmup.text() == "25" and win.controls.lam_schedule.text() == ""


def test_the_lam_strip_draws_the_knots_interpolation(qtbot, note_window):
    knots = ((0.0, 0.0), (4.0, 2e-2), (8.0, 1e-2))
    t_knots, lam_knots = np.array([k[0] for k in knots]), np.array([k[1] for k in knots])
    win = note_window(SimParams(m=300, lam=1e-2), playing=False, speed=30.0)
    panel = balance(win)
    new_run_painted(qtbot, win)
    type_keys(win.controls.lam_schedule, "0:0,4:2e-2,8:1e-2")
    qtbot.waitUntil(
        lambda: win.snapshot.run_id == win.run_id and win.snapshot.state == "paused", timeout=TIMEOUT
    )
    for _ in range(3):
        step(qtbot, win)
    checked = set()
    while win.snapshot.t < 11.0:
        snap = step(qtbot, win)
        x, y = panel.lam_curve.getData()
        assert panel.lam_strip.isVisible() and "λ(t)" in legend_texts(panel)
        assert x[0] == 0.0 and x[-1] == snap.t and np.all(np.diff(x) >= 0)
        assert np.allclose(y, np.interp(x, t_knots, lam_knots), rtol=1e-12, atol=0), (x, y)
        inside = t_knots[(t_knots > 0) & (t_knots < snap.t)]
        assert set(inside) <= set(x), "every knot passed is a corner of the line"
        checked.add(len(inside))
    assert checked == {1, 2}, "drawn both in the second piece and past the last knot"
    # the strip shares the time axis, and its y axis holds the largest λ
    (x0, x1), (y0, y1) = panel.lam_strip.vb.viewRange()
    assert (x0, x1) == pytest.approx(tuple(panel.ratio_plot.vb.viewRange()[0]), rel=1e-9)
    assert y0 <= 0.0 and y1 >= 2e-2


def test_without_a_schedule_the_balance_panel_is_laid_out_as_it_was(qtbot):
    """A run without a schedule has no strip: the panel's rows (the pushes, the ratio and its
    time axis, the legend) are where a panel that never drew a schedule has them, also
    after one that had a schedule."""
    from sparsity_gui.core.note.runner import snapshot_of
    from sparsity_gui.core.note.simulation import Simulation
    from sparsity_gui.plots.note.norms import BalancePanel

    def snapshot(params, run_id):
        sim = Simulation(params)
        while sim.t < 20.0:
            sim.advance_recording(20.0)
        return snapshot_of(sim, params, run_id=run_id, seq=1, state="paused")

    def layout(panel):
        QtWidgets.QApplication.processEvents()
        axis = panel.ratio_plot.getAxis("bottom")
        rows = panel.graphics.ci.layout
        return (
            [p.geometry().getRect() for p in (panel.plot, panel.ratio_plot, panel.plot.legend)],
            rows.rowCount(),
            axis.style["showValues"],
            axis.label.isVisible(),
            legend_texts(panel),
            panel.lam_strip.isVisible(),
        )

    plain = snapshot(SimParams(m=200, lam=1e-2), 1)
    scheduled = snapshot(SimParams(m=200, lam=1e-2, lam_schedule=((0.0, 0.0), (10.0, 1e-2))), 2)
    fresh, reused = BalancePanel(), BalancePanel()
    for panel in (fresh, reused):
        qtbot.addWidget(panel)
        panel.resize(520, 380)
        panel.show()
    fresh.update_from(plain)
    reused.update_from(scheduled)
    assert layout(reused) != layout(fresh) and reused.lam_strip.isVisible()
    reused.update_from(dataclasses.replace(plain, run_id=3))
    assert layout(reused) == layout(fresh)
    assert not fresh.lam_strip.isVisible() and fresh.lam_strip.scene() is None, "never in the layout"
