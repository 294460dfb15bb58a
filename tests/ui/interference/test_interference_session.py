"""Sessions in the interference window (ui/interference/session_menu.py): a run with noise,
a live change of l1 and a pin, saved and opened in a new window, is the same run at the same
step, paused, its parameters in the dock and its pin there; a damaged file is refused with
its reason and the run on screen goes on untouched."""

import json

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.session import FORMAT

TIMEOUT = 60_000
NOISY = InterferenceParams(
    n=16, m=32, optimizer="adamw", l1=2e-3, lr=3e-3, steps=10**7, seed=4, noise="bernoulli", noise_sigma=0.1
)


def shown(win):
    snap = win.snapshot
    return snap is not None and snap.run_id == win.run_id and snap.latest is not None


def paused_at(qtbot, win):
    """The run paused, its last snapshot on screen; that snapshot."""
    win.set_playing(False)
    qtbot.waitUntil(lambda: shown(win) and win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.waitUntil(lambda: win.worker.latest.seq == win.snapshot.seq, timeout=TIMEOUT)
    return win.snapshot


def test_a_saved_session_opens_as_the_same_run(qtbot, make_iwindow, tmp_path):
    win = make_iwindow(NOISY)
    qtbot.waitUntil(lambda: shown(win) and win.snapshot.step >= 50, timeout=TIMEOUT)
    win.on_params_changed({"l1": 4e-3})  # live: the run goes on with it
    qtbot.waitUntil(lambda: shown(win) and bool(win.snapshot.changes), timeout=TIMEOUT)
    (change,) = win.snapshot.changes
    assert change.value_dict == {"l1": 4e-3} and change.step >= 50
    qtbot.waitUntil(lambda: win.snapshot.step >= change.step + 40, timeout=TIMEOUT)
    snap = paused_at(qtbot, win)
    assert win.pin_control.pin(), win.last_error
    (pin,) = win.pin_control.pins

    path = tmp_path / "run.json"
    assert win.sessions.save_session(path), win.last_error
    saved = json.loads(path.read_text())
    assert saved["format"] == FORMAT and saved["step"] == snap.step
    assert saved["parameters"]["l1"] == 2e-3 and saved["parameters"]["noise"] == "bernoulli"
    assert saved["changes"] == [{"step": change.step, "values": {"l1": 4e-3}}]
    assert win.sessions.recent_sessions() == [str(path.resolve())]

    # a second window (the first is closed: one window per model) opens it
    win.close()
    other = make_iwindow(InterferenceParams(n=8, m=16, steps=200))
    qtbot.waitUntil(lambda: shown(other), timeout=TIMEOUT)
    # through File → Open recent, as a user reopens it
    other.sessions.recent_menu.aboutToShow.emit()
    entries = [act for act in other.sessions.recent_menu.actions() if act.text() == str(path.resolve())]
    assert len(entries) == 1
    entries[0].trigger()
    qtbot.waitUntil(lambda: shown(other) and other.snapshot.step == snap.step, timeout=TIMEOUT)
    again = other.snapshot
    assert not other.playing and again.state == "paused"
    assert again.params == snap.params and other.params == snap.params
    np.testing.assert_array_equal(again.W, snap.W)  # the same run, to the last digit
    np.testing.assert_array_equal(again.w0, snap.w0)
    assert again.changes == snap.changes and again.initial_params == snap.initial_params
    # the dock shows its parameters: noise, its σ, l1 as changed
    controls = other.controls
    assert controls.noise.currentData() == "bernoulli"
    assert controls.fields["noise_sigma"].text() == "0.1"
    assert float(controls.fields["l1"].text()) == 4e-3
    # its pin is there, as it was
    (pin2,) = other.pin_control.pins
    assert pin2.number == pin.number and pin2.param_dict == pin.param_dict
    np.testing.assert_array_equal(pin2.rows, pin.rows)
    assert 1 in other.poly_panel.pinned_items
    qtbot.wait(200)
    assert other.snapshot.step == snap.step  # paused: it stays there
    # the live change is marked where it was made, on every step panel, as before saving
    other.repaint_now()
    for panel in (other.poly_panel, other.kept_panel):
        assert panel._drawn == ((float(change.step), "l1 = 4.0e-3"),)  # as the table writes l1

    # played on, it is the run going on (a live change is recorded on top)
    other.set_playing(True)
    qtbot.waitUntil(lambda: other.snapshot.step > snap.step + 10, timeout=TIMEOUT)
    other.set_playing(False)


def test_a_damaged_session_leaves_the_run_untouched(qtbot, make_iwindow, tmp_path):
    win = make_iwindow(NOISY.with_changes(steps=300))
    qtbot.waitUntil(lambda: shown(win) and win.finished, timeout=TIMEOUT)
    good = tmp_path / "good.json"
    assert win.sessions.save_session(good), win.last_error
    before = win.snapshot
    run_id, params = win.run_id, win.params

    obj = json.loads(good.read_text())
    obj["parameters"]["noise_sigma"] = 50
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(obj))
    obj = json.loads(good.read_text())
    obj["changes"] = [{"step": 10, "values": {"optimizer": "adam"}}]
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps(obj))
    note = tmp_path / "note.json"
    note.write_text(json.dumps({"format": "sparsity-gui session", "version": 1}))
    (tmp_path / "empty.json").write_text("")
    for path, words in (
        (bad, "'parameters.noise_sigma': must be from 0 to 10"),
        (foreign, "'changes[0].values.optimizer': only"),
        (note, "a session of the note's window"),
        (tmp_path / "empty.json", "the file is empty"),
        (tmp_path / "nowhere.json", "nowhere.json"),
    ):
        assert not win.sessions.open_session(path), path
        assert words in win.last_error and str(path.name) in win.last_error, win.last_error
    qtbot.wait(200)
    assert win.run_id == run_id and win.params == params
    assert win.snapshot.run_id == run_id and win.snapshot.step == before.step == 300
    np.testing.assert_array_equal(win.snapshot.W, before.W)
    assert win.sessions.recent_sessions() == [str(good.resolve())]


def test_a_session_keeps_a_compared_series_and_its_run(qtbot, make_iwindow, tmp_path):
    """File → Compare with checkpoints…, saved and opened: the series pinned again (read
    from its folder), the run trained from its first snapshot, the dock following it."""
    folder = tmp_path / "matrix-run"
    folder.mkdir()
    rng = np.random.default_rng(2)
    steps = (0, 20, 50, 100)
    for step in steps:
        np.save(folder / f"step_{step:06d}.npy", rng.standard_normal((6, 10)) * 0.3 / (1 + step / 50))
    win = make_iwindow(InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=400))
    dialog = win.checkpoints.open_dialog()
    dialog.path.setText(str(folder))
    dialog.set_pick("matrix", 0)
    dialog.l1.setText("0.05")
    dialog.lr.setText("0.01")
    dialog.optimizer.setCurrentText("gd")
    dialog.accept()
    dialog.wait(60)
    assert not dialog.isVisible(), dialog.error.text()
    qtbot.waitUntil(lambda: shown(win) and win.finished and win.snapshot.step == steps[-1], timeout=TIMEOUT)
    (series,) = [p for p in win.pin_control.pins if p.series is not None]
    snap = win.snapshot
    path = tmp_path / "series.json"
    assert win.sessions.save_session(path), win.last_error
    saved = json.loads(path.read_text())
    assert saved["w0"]["source"] == "file" and saved["w0"]["series_step"] == 0
    assert saved["series"][0]["path"] == str(folder) and "pins" not in saved

    win.close()
    other = make_iwindow(InterferenceParams(n=8, m=16, steps=200))
    assert other.sessions.open_session(path), other.last_error
    qtbot.waitUntil(lambda: [p.series for p in other.pin_control.pins] == [series.series], timeout=TIMEOUT)
    (again,) = other.pin_control.pins
    assert (again.number, again.name) == (series.number, series.name)
    np.testing.assert_array_equal(again.rows, series.rows)
    qtbot.waitUntil(lambda: shown(other) and other.snapshot.step == snap.step, timeout=TIMEOUT)
    np.testing.assert_array_equal(other.snapshot.W, snap.W)
    np.testing.assert_array_equal(other.snapshot.w0, np.load(folder / "step_000000.npy"))
    # the dock's text follows the run on its timer: before the session's run has reached the
    # series' first snapshot it says, rightly, that the live run is not its prediction
    qtbot.waitUntil(
        lambda: (
            "matrix-run" in (other.checkpoints.label.text() or "")
            and "not its prediction" not in other.checkpoints.label.text()
        ),
        timeout=TIMEOUT,
    )
    assert "not its prediction" not in other.checkpoints.label.text()  # the session's run is it
