"""The interference window's schedule fields, typed as a user types: a warm-up or knots start
a new run with that schedule, the dock shows the l1 and lr in force at the painted step
(computed here from the formulas), the step panels mark the schedule's turns once the run
passes them, a bad value is refused at its field with the run untouched, and a live change
of l1 ends the l1 schedule."""

from __future__ import annotations

import math

import numpy as np
from helpers import type_keys

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS

TIMEOUT = 30_000
BASE = InterferenceParams(n=8, m=16, optimizer="gd-zero", l1=0.04, lr=0.05, steps=1500, seed=2)


def finished(win):
    return win.snapshot is not None and win.snapshot.state == "finished"


def test_an_l1_warm_up_typed_in_starts_a_run_that_follows_it(qtbot, make_iwindow):
    win = make_iwindow(BASE)
    qtbot.waitUntil(lambda: finished(win), timeout=TIMEOUT)
    first = win.snapshot.run_id
    type_keys(win.controls.l1_warmup, "600")
    assert win.params.l1_warmup == 600 and win.params.l1_schedule == ()
    qtbot.waitUntil(lambda: finished(win) and win.snapshot.run_id > first, timeout=TIMEOUT)
    snap = win.snapshot
    assert snap.latest.l1 == 0.04 and snap.latest.lr == 0.05
    win.repaint_now()
    win._update_status(snap)
    assert "in force at step 1,500: l1 = 4.0e-2, lr = 5.0e-2" in win.controls.units.text()
    # the warm-up's end is marked on every step panel, once the run has passed it
    for panel in (win.poly_panel, win.kept_panel):
        assert [x for x, _label in panel._drawn] == [600.0]
    # l1 in the history: 0.04 * min(1, k / 600) at the row's step k
    h = snap.history
    for step, l1 in zip(h[:, 0], h[:, HISTORY_COLUMNS.index("l1")], strict=True):
        assert math.isclose(l1, 0.04 * min(1.0, max(step, 1) / 600), rel_tol=1e-13)


def test_lr_knots_set_lr_and_clear_the_warm_up_and_decay(qtbot, make_iwindow):
    win = make_iwindow(BASE.with_changes(lr_warmup=100, lr_decay="linear", lr_decay_steps=200))
    qtbot.waitUntil(lambda: win.snapshot is not None, timeout=TIMEOUT)
    assert win.controls.lr_warmup.text() == "100" and win.controls.lr_decay_steps.text() == "200"
    type_keys(win.controls.lr_schedule, "0:0.01,500:0.03")
    p = win.params
    assert (p.lr, p.lr_schedule, p.lr_warmup, p.lr_decay) == (0.03, ((0.0, 0.01), (500.0, 0.03)), 0, "none")
    assert win.controls.lr.text() == "0.03" and win.controls.lr_warmup.text() == ""
    qtbot.waitUntil(lambda: finished(win) and win.snapshot.params == p, timeout=TIMEOUT)
    # t = 4 Σ lr_k: the ramp from 0.01 to 0.03 over 500 steps, then 0.03
    lr = [0.01 + 0.02 * min(k, 500) / 500 for k in range(1, 1501)]
    assert math.isclose(win.snapshot.latest.t, 4 * math.fsum(lr), rel_tol=1e-12)


def test_bad_schedules_are_refused_at_the_field_and_the_run_goes_on(qtbot, make_iwindow):
    win = make_iwindow(BASE.with_changes(steps=10**8))
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.step > 0, timeout=TIMEOUT)
    run_id, params = win.snapshot.run_id, win.params
    for field, text, words in (
        (win.controls.l1_schedule, "0:0,0:1e-3", "repeated"),
        (win.controls.l1_schedule, "abc", "expected knots step:value"),
        (win.controls.lr_schedule, "0:2", "every lr must be from 0 to 1"),
        (win.controls.l1_warmup, "-3", "from 0 to"),
    ):
        type_keys(field, text)
        assert not field.error.isHidden() and words in field.error.text(), (text, field.error.text())
        assert win.params == params
    step = win.snapshot.step
    qtbot.waitUntil(lambda: win.snapshot.step > step, timeout=TIMEOUT)
    assert win.snapshot.run_id == run_id


def test_a_live_l1_change_ends_the_l1_schedule_and_keeps_the_run(qtbot, make_iwindow):
    win = make_iwindow(BASE.with_changes(steps=10**8, l1_warmup=10**6, lr_warmup=50))
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.step > 100, timeout=TIMEOUT)
    run_id = win.snapshot.run_id
    type_keys(win.controls.l1, "0.02")
    assert (win.params.l1, win.params.l1_warmup, win.params.lr_warmup) == (0.02, 0, 50)
    assert win.controls.l1_warmup.text() == ""
    step = win.snapshot.step
    qtbot.waitUntil(
        lambda: win.snapshot.step > step + 10 and win.snapshot.params == win.params, timeout=TIMEOUT
    )
    assert win.snapshot.run_id == run_id and win.snapshot.latest.l1 == 0.02


def test_noise_from_the_dock_sigma_live_and_bad_sigma_refused(qtbot, make_iwindow):
    """Choosing a noise kind starts a run with it; its σ then applies live (same run, the
    worker's parameters follow); a bad σ is refused at the field with the run untouched;
    the Kept panel draws the history's sum_w4."""
    win = make_iwindow(BASE.with_changes(optimizer="gd", l1=0.0, lr=0.02, steps=10**8))
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.step > 0, timeout=TIMEOUT)
    first = win.snapshot.run_id
    box = win.controls.noise
    box.setCurrentIndex(box.findData("bernoulli"))
    box.activated.emit(box.currentIndex())
    assert (win.params.noise, win.params.noise_sigma) == ("bernoulli", 0.1)
    qtbot.waitUntil(lambda: win.snapshot.run_id > first and win.snapshot.step > 50, timeout=TIMEOUT)
    run_id = win.snapshot.run_id
    type_keys(win.controls.noise_sigma, "0.15")
    assert win.params.noise_sigma == 0.15
    qtbot.waitUntil(lambda: win.snapshot.params.noise_sigma == 0.15, timeout=TIMEOUT)
    assert win.snapshot.run_id == run_id
    for text, words in (("-1", "must be from 0 to 10"), ("nan", "")):
        type_keys(win.controls.noise_sigma, text)
        assert (
            not win.controls.noise_sigma.error.isHidden() and words in win.controls.noise_sigma.error.text()
        )
        assert win.params.noise_sigma == 0.15
    win.repaint_now()
    h = win.snapshot.history
    x, y = win.kept_panel.w4.getData()
    np.testing.assert_array_equal(y, h[:, HISTORY_COLUMNS.index("sum_w4")])


def test_knots_given_to_the_window_read_as_the_note_writes_them(qtbot, make_iwindow):
    """Knots the window is opened with (a launch option, a session, a preset) show in their
    fields as a user types them and as the dock's note and a pin's name write them
    ('0:0,500:0.002', never '0.0:0.0,500.0:0.002'), and read back as the same knots."""
    lr_knots = ((0.0, 0.0), (500.0, 0.002), (1500.0, 0.0005))
    l1_knots = ((0.0, 0.0), (300.0, 0.04))
    win = make_iwindow(BASE.with_changes(lr=0.0005, lr_schedule=lr_knots, l1_schedule=l1_knots))
    assert win.controls.lr_schedule.text() == "0:0,500:0.002,1500:0.0005"
    assert win.controls.l1_schedule.text() == "0:0,300:0.04"
    assert "lr schedule = 0:0,500:0.002,1500:0.0005" in win.controls.units.text()
    # typed back unchanged, the field gives the same knots: no new run
    params = win.params
    type_keys(win.controls.lr_schedule, win.controls.lr_schedule.text())
    assert win.params.lr_schedule == lr_knots and win.params == params
