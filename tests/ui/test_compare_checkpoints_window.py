"""File → Compare with checkpoints…, in both windows, with real widgets: a series written
here by torch's plain SGD on the paper's loss (tests/cli/test_checkpoints.py's loop), picked
in the dialog by code, becomes a pinned run drawn as points at the snapshots' |W|_1 (from
the files, by numpy), the live run starts from the first snapshot, and the dock's distance
is the largest relative difference of |W|_1 from the prediction, computed here by the
independent oracles (tests/note_oracles.py's flow, tests/interference_oracles.py's gradient
descent). A bad series is refused in the dialog, the run untouched; a session keeps the
series, and one whose series is gone opens with one line saying so; one whose series is now
unreadable (crafted) is refused in either window, nothing started."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from interference_oracles import gd_on_network, network_grad_backprop
from note_oracles import reference_flow

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.note.params import SimParams

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_checkpoints import train, w0_matrix  # noqa: E402  (the training loop, torch's SGD)

TIMEOUT = 30_000
SVG = "{http://www.w3.org/2000/svg}"
L1, LR = 0.04, 2e-3
STEPS = (0, 100, 250, 500, 750, 1000)
ROW = 1


def write_npy_series(folder: Path, snaps: dict[int, np.ndarray]) -> Path:
    folder.mkdir()
    for step, W in snaps.items():
        np.save(folder / f"step_{step:06d}.npy", W)
    return folder


def files_norm1(folder: Path, row: int | None = None) -> np.ndarray:
    """|W|_1 of each snapshot (a row's, or the matrix's), read back from the files."""
    out = []
    for path in sorted(folder.glob("step_*.npy")):
        W = np.load(path).astype(np.float64)
        out.append(np.abs(W[row] if row is not None else W).sum())
    return np.array(out)


def first_snapshot(folder: Path) -> np.ndarray:
    return np.load(sorted(folder.glob("step_*.npy"))[0]).astype(np.float64)


@pytest.fixture(scope="module")
def note_series(tmp_path_factory):
    """Three encodings (n = 3, m = 24) trained together by torch's SGD: row 1 feels the
    others, so the note's flow of it alone is off by a visible amount."""
    folder = tmp_path_factory.mktemp("note") / "sgd-run"
    return write_npy_series(folder, train(w0_matrix(n=3, m=24, seed=5), "sgd", STEPS, l1=L1, lr=LR))


def fill(dialog, path, *, pick="row", index=ROW, l1=L1, lr=LR, optimizer="sgd", fit=False):
    dialog.path.setText(str(path))
    dialog.set_pick(pick, index)
    dialog.l1.setText(repr(l1))
    dialog.lr.setText(repr(lr))
    dialog.optimizer.setCurrentText(optimizer)
    dialog.fit.setChecked(fit)


def compare_through_dialog(qtbot, win, path, **fields):
    """File → Compare with checkpoints…: the dialog filled and accepted, its comparison
    joined; returns the dialog's error text ("" when it closed accepted)."""
    dialog = win.checkpoints.open_dialog()
    assert dialog.isVisible()
    fill(dialog, path, **fields)
    dialog.accept()
    dialog.wait(60)
    if dialog.isVisible():
        return dialog.error.text()
    return ""


def series_pins(win):
    return [p for p in win.pin_control.pins if p.marks == "points"]


def finished_run(qtbot, win):
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.finished,
        timeout=TIMEOUT,
    )
    qtbot.wait(300)  # the dock follows the run 4 times a second
    return win.snapshot


def test_the_note_window_pins_a_row_of_the_series_as_points_over_the_flow_from_its_first(
    qtbot, make_window, note_series, tmp_path
):
    win = make_window(SimParams(m=200, lam=1e-2))
    act = win.checkpoints.act_compare
    assert act in win.menuBar().actions()[0].menu().actions() and act.text() == "Compare with checkpoints…"
    # prefilled from the window's parameters: l1 = 4 lam, lr = eta / 4, plain SGD
    dialog = win.checkpoints.open_dialog()
    assert float(dialog.l1.text()) == pytest.approx(4e-2) and float(dialog.lr.text()) == pytest.approx(
        win.params.eta / 4
    )
    assert dialog.optimizer.currentText() == "sgd"
    dialog.reject()

    assert compare_through_dialog(qtbot, win, note_series) == "", win.last_error
    win.on_speed_changed(0.0)  # flat out: the run reaches the last snapshot at once
    (pin,) = series_pins(win)
    assert (
        pin.name == "sgd-run"
        and win.pin_control.labels[pin.number] == f"pin {pin.number}: sgd-run (snapshots)"
    )

    # the live run: W(0) = the first snapshot's row, the exact flow with lam = l1/4 to the last
    snap = finished_run(qtbot, win)
    w0 = first_snapshot(note_series)[ROW]
    np.testing.assert_array_equal(snap.w0, w0)
    t = 4 * LR * np.array(STEPS, float)
    assert snap.params.lam == L1 / 4 and snap.params.method == "exact" and snap.t == pytest.approx(t[-1])

    # the points: the snapshots' |W|_1 at t = 4 lr step, over the L1 decay panel's live curve
    norm1 = files_norm1(note_series, ROW)
    decay = next(p for p in win.panels if type(p).__name__ == "DecayPanel")
    (points,) = decay.pinned_items[pin.number]
    assert points.opts["symbol"] == "o" and points.opts["pen"] is None
    np.testing.assert_allclose(points.xData, t, rtol=1e-15)
    np.testing.assert_allclose(points.yData, norm1, rtol=1e-15)
    assert points.zValue() > decay.measured.zValue()  # over the live curve

    # the dock: the largest relative difference of |W|_1 from the flow (scipy's DOP853 here)
    flow = reference_flow(w0, L1 / 4, t).norm1
    expected = np.max(np.abs(norm1 - flow) / flow)
    assert expected > 1e-4  # row 1 felt the other rows: a distance to see
    distance, count = win.checkpoints.distance(pin.number)
    assert count == len(STEPS) and distance == pytest.approx(expected, rel=1e-7)
    text = win.checkpoints.label.text()
    assert "sgd-run" in text and f"all {len(STEPS)} snapshots" in text and "note's exact flow" in text
    assert f"off by at most {distance:.3g} (relative)" in text
    # reached so far: the snapshots up to a time on the live run's axis
    series = win.checkpoints.series[pin.number]
    partial = np.max((np.abs(norm1 - flow) / flow)[:3])
    assert series.distance(t[2]) == (pytest.approx(partial, rel=1e-7), 3)

    # the panel's exported figure draws the snapshots as circles too, one a snapshot
    svg = tmp_path / "decay.svg"
    assert win.exports.export_figure(win.all_panels().index(decay), svg), win.last_error
    group = next(e for e in ET.fromstring(svg.read_bytes()).iter() if e.get("id") == f"pin{pin.number}")
    assert sum(1 for _ in group.iter(SVG + "use")) == len(STEPS)


def test_the_interference_window_trains_the_matrix_from_its_first_snapshot(qtbot, make_iwindow, tmp_path):
    n, m, lr_run, steps = 6, 10, 0.01, (0, 20, 50, 100, 200)
    folder = write_npy_series(
        tmp_path / "matrix-run", train(w0_matrix(n, m, seed=3), "sgd", steps, l1=0.05, lr=lr_run)
    )
    win = make_iwindow(
        InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=400, seed=1)
    )
    dialog = win.checkpoints.open_dialog()
    assert dialog.l1.text() == "0.04" and dialog.optimizer.currentText() == "gd-zero"
    dialog.reject()
    # the comparison's lr (0.012) is not the run's (0.01): the prediction drifts off the points
    lr = 0.012
    assert compare_through_dialog(qtbot, win, folder, pick="matrix", l1=0.05, lr=lr) == "", win.last_error
    (pin,) = series_pins(win)
    snap = finished_run(qtbot, win)
    W0 = first_snapshot(folder)
    np.testing.assert_array_equal(snap.w0, W0)
    assert (snap.params.n, snap.params.m, snap.params.optimizer, snap.params.lr) == (n, m, "gd", lr)
    assert snap.step == steps[-1]

    norm1 = files_norm1(folder)
    (_nonzero, _active, _loss, points) = win.sparsity_panel.pinned_items[pin.number]
    assert points.opts["symbol"] == "o"
    np.testing.assert_array_equal(points.xData, np.array(steps, float))
    np.testing.assert_allclose(points.yData, norm1, rtol=1e-14)
    np.testing.assert_allclose(pin.column("norm1"), norm1, rtol=1e-14)
    assert pin.columns == HISTORY_COLUMNS

    path = gd_on_network(W0, lr, steps[-1], lambda W: network_grad_backprop(W, 0.05))
    predicted = np.array([np.abs(path[s]).sum() for s in steps])
    expected = np.max(np.abs(norm1 - predicted) / predicted)
    assert expected > 1e-3
    distance, count = win.checkpoints.distance(pin.number)
    assert count == len(steps) and distance == pytest.approx(expected, rel=1e-9)
    assert "the model trained from the first snapshot (sgd)" in win.checkpoints.label.text()
    # the series' diagnostics, a line each: under SGD no rail to judge; where deaths begin,
    # read back from the files (a weight alive at the first within 2 lr l1 of zero)
    text = win.checkpoints.label.text()
    assert "no rail under sgd" in text
    snaps = [np.load(p).astype(np.float64) for p in sorted(folder.glob("step_*.npy"))]
    tol = 2 * lr * 0.05
    alive = np.abs(snaps[0]) > tol
    begin = next((s for s, W in zip(steps, snaps, strict=True) if (alive & (np.abs(W) <= tol)).any()), None)
    assert begin is not None and f"deaths begin at step {begin:,}" in text
    dead = np.mean(np.abs(snaps[-1]) <= tol)
    assert f"{dead:.0%} at the last" in text

    # a new l1: the live run is no longer the prediction, and the dock says so
    win.on_params_changed({"l1": 0.02})
    qtbot.waitUntil(lambda: "is not its prediction now" in win.checkpoints.label.text(), timeout=TIMEOUT)


@pytest.mark.parametrize("case", ["empty folder", "mixed shapes"])
def test_a_bad_series_is_refused_in_the_dialog_and_the_run_goes_on(
    qtbot, note_window, interference_window, tmp_path, case
):
    """(Each window the module's shared one, with a new run: a refused series pins
    nothing.)"""
    folder = tmp_path / "bad"
    folder.mkdir()
    if case == "mixed shapes":
        W = w0_matrix()
        np.save(folder / "step_1.npy", W)
        np.save(folder / "step_2.npy", W[:, :5])
    windows = (
        (note_window(SimParams(m=200, lam=1e-2)), "row"),
        (interference_window(InterferenceParams()), "matrix"),
    )
    for win, pick in windows:
        qtbot.waitUntil(lambda w=win: w.snapshot is not None, timeout=TIMEOUT)
        run_id, params, pins = win.run_id, win.params, list(win.pin_control.pins)
        dialog = win.checkpoints.open_dialog()
        fill(dialog, folder, pick=pick)
        dialog.accept()
        dialog.wait(60)
        assert dialog.isVisible() and dialog.error.isVisible()
        reason = dialog.error.text()
        if case == "empty folder":
            assert "bad: no snapshots" in reason, reason
        else:
            assert "step_2.npy: shape (6, 5)" in reason, reason
        assert (win.run_id, win.params, list(win.pin_control.pins)) == (run_id, params, pins)
        dialog.reject()
        assert not dialog.isVisible()


def test_the_note_window_refuses_adam_without_a_fitted_time_scale_and_labels_a_fitted_one(
    qtbot, make_window, tmp_path
):
    steps = (0, 250, 500, 1000, 2000)
    folder = write_npy_series(
        tmp_path / "adam-run", train(w0_matrix(n=1, m=24, seed=7), "adamw", steps, l1=L1, lr=LR)
    )
    win = make_window(SimParams(m=200, lam=1e-2))
    run_id = win.run_id
    error = compare_through_dialog(qtbot, win, folder, index=0, optimizer="adamw")
    assert "under adamw no time maps steps to the note's flow" in error and win.run_id == run_id
    win.checkpoints.dialog.reject()
    assert compare_through_dialog(qtbot, win, folder, index=0, optimizer="adamw", fit=True) == "", (
        win.last_error
    )
    (pin,) = series_pins(win)
    series = win.checkpoints.series[pin.number]
    tau = series.comparison.time_per_step
    assert series.comparison.time_fitted and tau > 0
    np.testing.assert_allclose(pin.column("t"), tau * np.array(steps, float), rtol=1e-15)
    assert win.params.t_end == pytest.approx(tau * steps[-1])
    qtbot.waitUntil(lambda: "FITTED time scale" in win.checkpoints.label.text(), timeout=TIMEOUT)
    assert "FITTED" in win.checkpoints.label.text()


def test_a_session_keeps_the_series_and_one_whose_series_is_gone_opens_without_it(
    qtbot, make_window, note_series, tmp_path
):
    series = tmp_path / "sgd-run"
    shutil.copytree(note_series, series)
    win = make_window(SimParams(m=200, lam=1e-2))
    assert compare_through_dialog(qtbot, win, series) == "", win.last_error
    win.on_speed_changed(0.0)
    finished_run(qtbot, win)
    assert win.pin_control.pin(), win.last_error  # a plain pinned run beside it
    (before,) = series_pins(win)
    session = tmp_path / "session.json"
    assert win.files.save_session(session), win.last_error
    saved = json.loads(session.read_text(encoding="utf-8"))
    (entry,) = saved["series"]
    assert entry["number"] == before.number and entry["path"] == str(series) and entry["row"] == ROW
    assert (entry["l1"], entry["lr"], entry["optimizer"]) == (L1, LR, "sgd")
    assert [p["number"] for p in saved["pins"]] == [
        p.number for p in win.pin_control.pins if p.series is None
    ]

    win.pin_control.clear()
    assert not win.pin_control.pins
    assert win.files.open_session(session), win.last_error
    qtbot.waitUntil(lambda: len(series_pins(win)) == 1, timeout=TIMEOUT)
    (after,) = series_pins(win)
    assert (after.number, after.name, after.series) == (before.number, before.name, before.series)
    np.testing.assert_array_equal(after.rows, before.rows)
    assert len(win.pin_control.pins) == 2
    qtbot.waitUntil(lambda: "sgd-run" in (win.checkpoints.label.text() or ""), timeout=TIMEOUT)
    assert "not its prediction" not in win.checkpoints.label.text()  # the session's run is it

    # the series gone: one line says so, the rest of the session opens
    shutil.rmtree(series)
    win.pin_control.clear()
    assert win.files.open_session(session), win.last_error
    message = win.statusBar().currentMessage()
    assert f"its series {series} is not shown: {series}: no such file or folder" in message, message
    assert win.last_error == ""
    assert [p.series for p in win.pin_control.pins] == [None]  # the plain pinned run
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    np.testing.assert_array_equal(win.snapshot.w0, first_snapshot(note_series)[ROW])

    # a crafted series (cfg.json nested 10^5 deep, a step past int64): the session is refused
    # in a message before its run starts, and the run goes on as it was
    for crafted, words in CRAFTED_SERIES:
        crafted(series)
        run_id, params = win.run_id, win.params
        assert not win.files.open_session(session)
        assert "cannot be read" in win.last_error and words in win.last_error, win.last_error
        assert (win.run_id, win.params) == (run_id, params)
        shutil.rmtree(series)


def deep_cfg(folder: Path) -> None:
    """SAELens' layout whose cfg.json nests 10^5 deep."""
    for step in ("1", "2"):
        (folder / step).mkdir(parents=True)
        (folder / step / "sae_weights.safetensors").write_bytes(b"")
        (folder / step / "cfg.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")


def step_past_int64(folder: Path) -> None:
    folder.mkdir()
    for step in ("1", "99999999999999999999999"):
        np.save(folder / f"step_{step}.npy", np.ones(4))


CRAFTED_SERIES = ((deep_cfg, "nested more than"), (step_past_int64, "outside 0 to 2^63 - 1"))


def test_the_interference_window_refuses_a_session_whose_series_is_unreadable(qtbot, make_iwindow, tmp_path):
    """The note window's case above, in the interference window: Open session of a session
    whose compared series is now a crafted folder shows why, and starts nothing: the run on
    screen, its parameters, its pins and its series stay as they were."""
    series = write_npy_series(
        tmp_path / "matrix-run", train(w0_matrix(6, 10, seed=3), "sgd", (0, 20, 50), l1=0.05, lr=0.01)
    )
    win = make_iwindow(
        InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=400, seed=1)
    )
    assert compare_through_dialog(qtbot, win, series, pick="matrix", l1=0.05, lr=0.01) == "", win.last_error
    finished_run(qtbot, win)
    session = tmp_path / "session.json"
    assert win.sessions.save_session(session), win.last_error
    (entry,) = json.loads(session.read_text(encoding="utf-8"))["series"]
    assert entry["path"] == str(series)
    shutil.rmtree(series)
    win.on_params_changed({"seed": 2})  # the run on screen is no longer the session's
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    for crafted, words in CRAFTED_SERIES:
        crafted(series)
        run_id, params, pins = win.run_id, win.params, list(win.pin_control.pins)
        compared, recent = dict(win.checkpoints.series), win.sessions.recent_sessions()
        assert not win.sessions.open_session(session)
        assert "cannot be read" in win.last_error and words in win.last_error, win.last_error
        assert win.last_error.endswith("the current run goes on"), win.last_error
        assert str(session) in win.last_error
        qtbot.wait(200)  # a run started would show in the next snapshot
        assert (win.run_id, win.params, list(win.pin_control.pins)) == (run_id, params, pins)
        assert win.snapshot.run_id == run_id and win.params.seed == 2
        assert dict(win.checkpoints.series) == compared
        assert win.sessions.recent_sessions() == recent
        shutil.rmtree(series)


def test_the_dock_says_an_sae_series_is_a_reference_and_how_its_steps_were_found(qtbot, make_iwindow):
    """dictionary_learning's trainer folder (tests/data/sae): the window trains the paper's
    model from its first snapshot and its dock says, once, what that curve is."""
    folder = Path(__file__).resolve().parents[1] / "data" / "sae" / "dictlearn" / "trainer_0"
    win = make_iwindow(InterferenceParams(n=16, m=32, optimizer="adam", l1=0.1, lr=1e-3, steps=100, seed=1))
    error = compare_through_dialog(qtbot, win, folder, pick="matrix", l1=0.1, lr=1e-3, optimizer="adam")
    assert error == "", error
    (pin,) = series_pins(win)
    assert list(pin.rows[:, 0]) == [0, 15, 30, 45, 60]  # the snapshots at their steps
    qtbot.waitUntil(lambda: "a reference" in (win.checkpoints.label.text() or ""), timeout=TIMEOUT)
    text = win.checkpoints.label.text()
    assert text.count("a reference, not a prediction of this run") == 1, text
    assert "dictionary_learning SAE (AutoEncoder, trained by StandardTrainer)" in text
    assert "steps: each checkpoint's step is in its name" in text
    assert "20 of 64 latents never change" in text
    assert "2 lr: under adam a dead weight chatters by about lr" in text
