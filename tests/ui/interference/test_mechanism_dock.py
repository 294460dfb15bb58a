"""The Parameters dock runs the sparsity mechanisms (issue 51): JumpReLU chosen and its
settings typed at fields built from the settings table train, in the real window's worker
thread, exactly the W that api.train trains; a bad K is refused at its field with the run
untouched; only the chosen mechanism's fields are shown."""

import numpy as np
from helpers import type_into

from sparsity_gui import api
from sparsity_gui.core.interference.mechanisms import SPARSITY_COLUMNS
from sparsity_gui.core.interference.params import InterferenceParams

TIMEOUT = 60_000
START = InterferenceParams(n=8, m=16, optimizer="adam", l1=1e-3, lr=1e-2, steps=300, seed=3)


def choose(combo, data):
    combo.setCurrentIndex(combo.findData(data))
    combo.activated.emit(combo.currentIndex())


def shown(win, name):
    return win.controls.fields[name].isVisibleTo(win.controls)


def test_jumprelu_from_the_dock_trains_api_trains_w_and_a_bad_k_is_refused(qtbot, make_iwindow):
    win = make_iwindow(START)
    win.resize(1366, 768)
    win.show()
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    controls = win.controls
    assert not any(shown(win, name) for name in ("k", "l0", "bandwidth", "threshold_init"))
    assert win.snapshot.sparsity_rows.shape == (0, len(SPARSITY_COLUMNS)), "no record under l1"

    choose(controls.sparsity, "jumprelu")
    qtbot.waitUntil(lambda: win.params.sparsity == "jumprelu", timeout=TIMEOUT)
    assert win.params.l1 == 0.0
    assert [shown(win, name) for name in ("k", "l0", "bandwidth", "threshold_init")] == [
        False,
        True,
        True,
        True,
    ]
    assert controls.threshold_param.isVisibleTo(controls)
    type_into(controls.fields["l0"], "0.002")
    type_into(controls.fields["bandwidth"], "0.05")
    type_into(controls.fields["threshold_init"], "0.02")
    choose(controls.threshold_param, "log")
    want = dict(l0=0.002, bandwidth=0.05, threshold_init=0.02, threshold_param="log")
    qtbot.waitUntil(lambda: all(getattr(win.params, k) == v for k, v in want.items()), timeout=TIMEOUT)
    qtbot.waitUntil(
        lambda: win.snapshot.params == win.params and win.snapshot.state == "finished", timeout=TIMEOUT
    )
    snap = win.snapshot
    assert snap.step == START.steps
    result = api.train(n=8, m=16, optimizer="adam", lr=1e-2, steps=300, seed=3, sparsity="jumprelu", **want)
    assert np.array_equal(snap.W, result.w_final), "the window's run is api.train's to the last digit"
    # the mechanism's record came along, a copy: its last thresholds are the run's
    rows, thresholds = snap.sparsity_rows, snap.thresholds
    assert rows.shape[1] == len(SPARSITY_COLUMNS) and rows[-1, 0] == START.steps
    assert thresholds.shape[1] == 1 + START.m and thresholds[-1, 0] == START.steps
    assert np.array_equal(thresholds[-1, 1:], win.worker.run.mechanism.theta)
    assert not thresholds.flags.writeable

    choose(controls.sparsity, "topk")
    qtbot.waitUntil(lambda: win.params.sparsity == "topk", timeout=TIMEOUT)
    assert win.params.k == 1 and shown(win, "k") and not shown(win, "l0")
    qtbot.waitUntil(
        lambda: win.snapshot.params == win.params and win.snapshot.state == "finished", timeout=TIMEOUT
    )
    before = (win.params, win.snapshot.run_id, win.snapshot.W.copy())
    k = controls.fields["k"]
    type_into(k, "17")  # m = 16
    assert k.error.isVisibleTo(k) and "m = 16" in k.error.text(), k.error.text()
    type_into(k, "0")
    assert k.error.isVisibleTo(k) and "1" in k.error.text(), k.error.text()
    qtbot.wait(300)
    assert win.params == before[0] and win.snapshot.run_id == before[1]
    assert np.array_equal(win.snapshot.W, before[2]), "the run is untouched"
    # back to L1: the table's l1, no mechanism field shown
    choose(controls.sparsity, "l1")
    qtbot.waitUntil(lambda: win.params.sparsity == "l1", timeout=TIMEOUT)
    assert win.params.l1 == 1e-3 and win.params.k is None and not shown(win, "k")


def test_the_l0_warmup_and_knots_fields_set_jumprelus_schedule_and_refuse_bad_knots(qtbot, make_iwindow):
    """The L0 warm-up and knots fields (from their rows) show under JumpReLU only; knots set
    l0 to their last value and clear the warm-up, a warm-up clears the knots; bad knots are
    refused at the field with the run untouched; the noise stays when JumpReLU is chosen."""
    win = make_iwindow(START.with_changes(noise="bernoulli", noise_sigma=0.05))
    win.show()
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    controls = win.controls
    assert not shown(win, "l0_warmup") and not shown(win, "l0_schedule")
    choose(controls.sparsity, "jumprelu")
    qtbot.waitUntil(lambda: win.params.sparsity == "jumprelu", timeout=TIMEOUT)
    assert win.params.noise == "bernoulli" and win.params.noise_sigma == 0.05
    assert shown(win, "l0_warmup") and shown(win, "l0_schedule")
    type_into(controls.fields["l0_schedule"], "0:0,100:0.004")
    qtbot.waitUntil(lambda: win.params.l0_schedule == ((0.0, 0.0), (100.0, 0.004)), timeout=TIMEOUT)
    assert win.params.l0 == 0.004 and controls.fields["l0"].text() == "0.004"
    type_into(controls.fields["l0_warmup"], "50")
    qtbot.waitUntil(lambda: win.params.l0_warmup == 50, timeout=TIMEOUT)
    assert win.params.l0_schedule == () and controls.fields["l0_schedule"].text() == ""
    qtbot.waitUntil(
        lambda: win.snapshot.params == win.params and win.snapshot.state == "finished", timeout=TIMEOUT
    )
    result = api.train(
        n=8, m=16, optimizer="adam", lr=1e-2, steps=300, seed=3, sparsity="jumprelu", l0=0.004,
        l0_warmup=50, noise="bernoulli", noise_sigma=0.05,
    )  # fmt: skip
    assert np.array_equal(win.snapshot.W, result.w_final), "the window's run is api.train's"
    before = (win.params, win.snapshot.run_id)
    field = controls.fields["l0_schedule"]
    type_into(field, "5:0,2:0.1")
    assert field.error.isVisibleTo(field) and "must increase" in field.error.text(), field.error.text()
    qtbot.wait(200)
    assert (win.params, win.snapshot.run_id) == before


def test_the_l0_in_force_is_in_the_dock_and_the_history_across_a_live_change(qtbot, make_iwindow):
    """JumpReLU with an L0 warm-up and an lr warm-up: the dock's in-force line names the L0
    coefficient (the table's 'L0', not the units kept) in force at the painted step; a live
    change of l0 ends its warm-up, the line then shows the new value, and the exported
    history.csv's l0 is the warm-up's C min(1, k/T) up to the change's step (the worker's
    record of it) and the new value after."""
    from sparsity_gui.core.settings import format_sci

    params = START.with_changes(
        sparsity="jumprelu", l1=0.0, l0=0.004, l0_warmup=10**6, lr_warmup=50, steps=10**8, threshold_init=0.05
    )
    win = make_iwindow(params)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.step > 100, timeout=TIMEOUT)
    snap = win.snapshot
    win._update_status(snap)
    l0 = 0.004 * snap.step / 10**6
    assert abs(snap.latest.l0 - l0) <= 1e-14 * l0  # (the warm-up's ratio, rounded either way)
    line = win.controls.units.text().split("\n")[2]
    assert line == f"in force at step {snap.step:,}: l1 = 0, lr = 1.0e-2, L0 = {format_sci(l0)}"
    win.on_params_changed({"l0": 0.002})
    assert (win.params.l0, win.params.l0_warmup, win.params.lr_warmup) == (0.002, 0, 50)
    qtbot.waitUntil(
        lambda: win.snapshot.params == win.params and win.snapshot.step > snap.step + 50, timeout=TIMEOUT
    )
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    snap = win.snapshot
    win._update_status(snap)
    line = win.controls.units.text().split("\n")[2]
    assert line == f"in force at step {snap.step:,}: l1 = 0, lr = 1.0e-2, L0 = 2.0e-3"
    (change,) = snap.changes
    assert change.value_dict == {"l0": 0.002}
    lines = win.exports.data_bytes("history").decode().splitlines()
    header, rows = lines[0].split(","), np.array([[float(v) for v in row.split(",")] for row in lines[1:]])
    step, got = rows[:, header.index("step")], rows[:, header.index("l0")]
    want = np.where(step <= change.step, 0.004 * np.maximum(step, 1) / 10**6, 0.002)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    assert (step > change.step).sum() >= 2 and (step <= change.step).sum() >= 2
