"""The interference window, driven as a user would: real widgets, real worker thread,
real files. Expected values are recomputed here from the snapshot's W with numpy, not
taken from the panels' own code."""

import os
import subprocess
import sys
import traceback
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from helpers import type_into
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.ui.interference.window import InterferenceWindow

TIMEOUT = 30_000
H = {c: i for i, c in enumerate(HISTORY_COLUMNS)}
# converges within a fraction of a second (16 features, 32 neurons, the note's GD)
SMALL = InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=3000, seed=1)
# the same, but long enough to stay running for the whole test
LONG = SMALL.with_changes(steps=10**8)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def wait_step(qtbot, win, above=0):
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.step > above, timeout=TIMEOUT)


def wait_finished(qtbot, win):
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)


def counts_of(W):
    a = np.abs(W)
    return ((a >= 0.8) & (a <= 1.2)).sum(axis=0)


def order_of(W):
    """Neurons grouped by feature, written out longhand: each feature's largest-|w| neuron
    in feature order (first time it appears), then every other neuron ascending."""
    order = []
    for i in range(W.shape[0]):
        k = int(np.argmax(np.abs(W[i])))
        if k not in order:
            order.append(k)
    order += [k for k in range(W.shape[1]) if k not in order]
    return np.array(order)


def test_runs_to_the_end_and_panels_show_the_snapshot(qtbot, interference_window):
    win = interference_window(SMALL)
    wait_finished(qtbot, win)
    qtbot.wait(100)
    snap = win.snapshot
    assert snap.step == SMALL.steps and snap.run_id == win.run_id
    W = snap.W
    assert W.shape == (16, 32)
    # (a) heatmap: the image is W, features as rows; ordered: the columns regrouped
    heat = win.weights_panel
    np.testing.assert_array_equal(heat.image.image, W)
    heat.order.setChecked(True)
    np.testing.assert_array_equal(heat.columns, order_of(W))
    np.testing.assert_array_equal(heat.image.image, W[:, order_of(W)])
    assert heat.image.levels is not None and tuple(np.ravel(heat.image.levels)) == (-1.2, 1.2)
    # ordered, feature i's largest weight sits in column i, or in the column of an earlier
    # feature it shares a neuron with: a diagonal with collisions
    shown = heat.image.image
    owners = np.array([int(np.argmax(np.abs(shown[i]))) for i in range(16)])
    first_seen = np.unique(owners, return_inverse=True)[1]
    np.testing.assert_array_equal(owners, first_seen)
    # (b) bars: active features per neuron, recomputed from W; polysemantic ones in red
    counts = counts_of(W)
    np.testing.assert_array_equal(snap.counts, counts)
    x, y = win.active_panel.all.getData()
    np.testing.assert_array_equal(y, counts)
    np.testing.assert_array_equal(x, np.arange(33) - 0.5)
    _x, red = win.active_panel.poly.getData()
    np.testing.assert_array_equal(red, np.where(counts > 1, counts, 0))
    np.testing.assert_array_equal(win.active_panel.histogram[: counts.max() + 1], np.bincount(counts))
    # (c) polysemantic neurons against the prediction n^2/(4m) = 2
    h = snap.history
    px, py = win.poly_panel.count.getData()
    np.testing.assert_array_equal(px, h[:, H["step"]])
    np.testing.assert_array_equal(py, h[:, H["polysemantic"]])
    assert py[-1] == np.count_nonzero(counts > 1)
    _x, pred = win.poly_panel.predicted.getData()
    assert np.all(pred == 16 * 16 / (4 * 32))
    # (d) share of features still on their initial largest neuron
    _x, kept = win.kept_panel.kept.getData()
    np.testing.assert_array_equal(kept, h[:, H["kept_share"]])
    w0 = np.random.default_rng(1).standard_normal((16, 32)) / np.sqrt(32)
    assert kept[-1] == np.mean(np.argmax(np.abs(W), 1) == np.argmax(np.abs(w0), 1))
    # (e) signs of colliding pairs
    _x, opp = win.signs_panel.opposite.getData()
    _x, same = win.signs_panel.same.getData()
    np.testing.assert_array_equal(opp, h[:, H["opposite_pairs"]])
    np.testing.assert_array_equal(same, h[:, H["same_pairs"]])
    act = (np.abs(W) >= 0.8) & (np.abs(W) <= 1.2)
    pos = (act & (W > 0)).sum(0)
    neg = (act & (W < 0)).sum(0)
    assert opp[-1] == np.sum(pos * neg)
    assert same[-1] == np.sum(pos * (pos - 1) // 2 + neg * (neg - 1) // 2)
    # (f) sparsification (log axes: the positive values)
    _x, nz = win.sparsity_panel.nonzero.getOriginalDataset()
    np.testing.assert_array_equal(nz, h[:, H["nonzero"]])
    assert nz[-1] == np.count_nonzero(W)
    _x, loss = win.sparsity_panel.loss.getOriginalDataset()
    keep = h[:, H["loss"]] > 0
    np.testing.assert_array_equal(loss, h[keep, H["loss"]])
    assert "3,000 / 3,000" in win.status_line.text() and "finished" in win.status_line.text()


def test_a_wide_heatmap_pools_so_that_no_large_weight_disappears(qtbot, interference_window):
    """More neurons than pixels: each image pixel shows its block's weight of largest |w|."""
    win = interference_window(
        InterferenceParams(n=6, m=5000, optimizer="gd-zero", lr=0.01, steps=10), playing=False
    )
    qtbot.waitUntil(lambda: win.snapshot is not None, timeout=TIMEOUT)
    qtbot.wait(100)
    win.repaint_now()
    heat = win.weights_panel
    fy, fx = heat.pool
    assert fy == 1 and fx >= 5
    W = win.snapshot.W
    image = heat.image.image
    assert image.shape == (6, -(-5000 // fx))
    for i in range(6):
        for j in range(image.shape[1]):
            block = W[i, j * fx : (j + 1) * fx]
            assert image[i, j] == block[np.argmax(np.abs(block))]
    # pixels keep neuron units on the axis
    rect = heat.image.mapRectToParent(heat.image.boundingRect())
    assert rect.width() == image.shape[1] * fx and rect.height() == 6


def test_invalid_input_is_shown_at_the_field_and_the_run_goes_on(qtbot, interference_window):
    win = interference_window(LONG)
    wait_step(qtbot, win)
    run_id = win.snapshot.run_id
    c = win.controls
    for field, text, reason in (
        (c.lr, "-1", "> 0"),
        (c.n, "0", "from 1"),
        (c.l1, "abc", "not a valid number"),
        (c.sigma, "nan", "finite"),
        (c.m, "1e9", "65536"),
        (c.steps, "2.5", "whole number"),
        (c.weight_decay, "-1", ">= 0"),
    ):
        type_into(field, text)
        assert field.error.isVisibleTo(c), text
        assert reason in field.error.text(), (text, field.error.text())
        assert field.edit.toolTip() == field.error.text()
    step = win.snapshot.step
    wait_step(qtbot, win, above=step)  # still running
    snap = win.snapshot
    assert snap.run_id == run_id and win.worker.run_id == run_id
    assert snap.params == LONG and win.params == LONG, "the current run is untouched"
    # a good value clears the message and applies
    type_into(c.lr, "0.02")
    assert not c.lr.error.isVisibleTo(c)
    qtbot.waitUntil(lambda: win.snapshot.params.lr == 0.02, timeout=TIMEOUT)
    assert win.snapshot.run_id == run_id


def test_live_change_keeps_the_run_and_m_or_optimizer_restart_it(qtbot, interference_window):
    win = interference_window(LONG)
    wait_step(qtbot, win)
    run_id = win.snapshot.run_id
    step = win.snapshot.step
    type_into(win.controls.l1, "0.08")
    qtbot.waitUntil(lambda: win.snapshot.params.l1 == 0.08, timeout=TIMEOUT)
    assert win.snapshot.run_id == run_id and win.snapshot.step >= step, "l1 applies live"
    assert "λ = l1/4 = 2.0e-2" in win.controls.units.text()
    # the live change is marked on the step panels
    qtbot.waitUntil(lambda: win.poly_panel.marker_count == 1, timeout=TIMEOUT)
    win.controls.interference.setChecked(False)
    qtbot.waitUntil(lambda: not win.snapshot.params.interference, timeout=TIMEOUT)
    assert win.snapshot.run_id == run_id
    # m: a new run (the stale snapshots of the old one are never painted)
    type_into(win.controls.m, "48")
    qtbot.waitUntil(lambda: win.snapshot.params.m == 48, timeout=TIMEOUT)
    assert win.snapshot.run_id > run_id and win.snapshot.W.shape == (16, 48)
    qtbot.waitUntil(lambda: win.weights_panel.image.image.shape == (16, 48), timeout=TIMEOUT)
    assert win.snapshot.params.l1 == 0.08 and not win.snapshot.params.interference
    run_id = win.snapshot.run_id
    # the optimizer: a new run too
    combo = win.controls.optimizer
    combo.setCurrentIndex(combo.findData("adamw"))
    combo.activated.emit(combo.currentIndex())
    qtbot.waitUntil(lambda: win.snapshot.params.optimizer == "adamw", timeout=TIMEOUT)
    assert win.snapshot.run_id > run_id
    assert combo.currentText() == "AdamW (paper)"
    assert [combo.itemData(i) for i in range(combo.count())] == [
        "gd-zero",
        "gd",
        "adam",
        "adamw",
        "ista",
        "signsgd",
    ]
    assert "Adam" in win.controls.units.text()


def test_a_new_run_reaches_every_panel_on_its_first_frame(qtbot, make_iwindow):
    """Unlike the note's window, a new run is drawn on all six panels at once: the panels
    find live changes by comparing the snapshots they see, and a panel that took the run
    a frame late would miss a change made in between (its marker lost)."""
    win = make_iwindow(LONG)
    wait_step(qtbot, win)
    win.paint_timer.timeout.disconnect()  # frames painted here, one at a time
    old_run = win.run_id
    win.restart()
    assert win.run_id != old_run

    def first_frame():
        win.paint_latest()
        snap = win.snapshot
        return snap is not None and snap.run_id == win.run_id and snap.state == "running"

    qtbot.waitUntil(first_frame, timeout=TIMEOUT)
    assert not win.panels_owed
    # seven panels, the Thresholds panel a hidden tab (drawn when shown)
    assert len(win.panels) == 7 and win.thresholds_panel not in win.painted_panels()
    assert all(p.last.run_id == win.run_id for p in win.painted_panels())


def test_pause_step_and_restart(qtbot, interference_window):
    win = interference_window(LONG)
    wait_step(qtbot, win, above=100)
    win.activateWindow()
    win.setFocus()
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    assert not win.playing
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(100)
    step = win.snapshot.step
    qtbot.wait(300)
    assert win.snapshot.step == step, "paused means no steps"
    win.step_button.click()
    qtbot.waitUntil(lambda: win.snapshot.step == step + 1, timeout=TIMEOUT)
    qtbot.wait(200)
    assert win.snapshot.step == step + 1 and win.snapshot.state == "paused"
    win.act_play.trigger()
    assert win.playing
    wait_step(qtbot, win, above=step + 1)
    run_id = win.snapshot.run_id
    win.restart_button.click()
    qtbot.waitUntil(lambda: win.snapshot.run_id > run_id, timeout=TIMEOUT)
    assert win.snapshot.history[0, H["step"]] == 0
    assert win.snapshot.params == LONG


def test_worker_failure_is_shown_and_the_window_stays_usable(qtbot, interference_window):
    # GD with lr = 1 flips a whole row when |W_i|^2 > 1.25: sigma = 2 does it at once
    bad = InterferenceParams(n=8, m=16, optimizer="gd-zero", lr=1.0, sigma=2.0, steps=1000)
    win = interference_window(bad)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "error", timeout=TIMEOUT)
    qtbot.waitUntil(lambda: win.failure_line.isVisibleTo(win.param_dock.widget().widget()), timeout=TIMEOUT)
    assert "lower lr" in win.failure_line.text()
    assert win.error_box is not None and win.error_box.isVisible()
    assert not win.playing
    win.error_box.close()
    type_into(win.controls.lr, "0.02")
    win.act_play.trigger()
    win.restart()
    qtbot.waitUntil(
        lambda: win.snapshot.state in ("running", "finished") and win.snapshot.params.lr == 0.02,
        timeout=TIMEOUT,
    )
    assert not win.failure_line.isVisibleTo(win.param_dock.widget().widget())


def test_exports_write_real_files(qtbot, interference_window, tmp_path):
    """Export figure (by the panel's index or the panel itself), the window and the data;
    every panel, and the window's layout, as a real PNG and SVG:
    test_interference_export_all.py's Export all. (The module's window never runs a sweep:
    test_sweep_beside_the_live_run_pauses_and_resumes_it has a window of its own.)"""
    win = interference_window(SMALL)
    wait_finished(qtbot, win)
    qtbot.wait(100)
    snap = win.snapshot
    exported = win.all_panels()[:-1]  # the sweep's has no runs yet
    assert exported == win.panels and win.thresholds_panel in exported
    last = len(exported) - 1
    png, svg = tmp_path / "p0.png", tmp_path / f"p{last}.svg"
    assert win.exports.export_figure(0, png), win.last_error
    assert win.exports.export_figure(exported[last], svg), win.last_error
    assert png.read_bytes().startswith(PNG_MAGIC)
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert len(list(root.iter())) > 20, "the SVG holds drawing elements"
    for name in ("p0", f"p{last}"):
        assert (tmp_path / f"{name}.json").is_file() and (tmp_path / f"{name}.py").is_file()
    assert not win.exports.export_figure(win.sweep.panel, tmp_path / "sweep.png")
    assert "run a sweep first" in win.last_error and not (tmp_path / "sweep.png").exists()
    win.error_box.close()
    assert win.exports.export_figure("window", tmp_path / "window.png")
    assert (tmp_path / "window.png").read_bytes().startswith(PNG_MAGIC)
    assert (tmp_path / "window.json").is_file() and (tmp_path / "window.py").is_file()
    # data
    assert win.exports.export_data("history", tmp_path / "history.csv")
    lines = (tmp_path / "history.csv").read_text().splitlines()
    assert lines[0].split(",") == list(HISTORY_COLUMNS)
    table = np.loadtxt(tmp_path / "history.csv", delimiter=",", skiprows=1, ndmin=2)
    np.testing.assert_array_equal(table, snap.history)
    assert win.exports.export_data("weights", tmp_path / "w_final.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "w_final.npy"), snap.W)
    assert win.exports.export_data("counts", tmp_path / "counts.csv")
    lines = (tmp_path / "counts.csv").read_text().splitlines()
    assert lines[0] == "neuron,active_features,polysemantic"
    table = np.loadtxt(tmp_path / "counts.csv", delimiter=",", skiprows=1, dtype=int)
    np.testing.assert_array_equal(table[:, 0], np.arange(32))
    np.testing.assert_array_equal(table[:, 1], counts_of(snap.W))
    np.testing.assert_array_equal(table[:, 2], counts_of(snap.W) > 1)
    # refusals: a message, no file, the window goes on
    assert not win.exports.export_figure(0, tmp_path / "x.gif")
    assert "unknown format" in win.last_error and not (tmp_path / "x.gif").exists()
    assert not win.exports.export_data("weights", tmp_path / "missing" / "w_final.npy")
    assert "missing" in win.last_error
    assert win.error_box.isVisible()
    win.error_box.close()
    assert win.thread.is_alive()


def test_sweep_beside_the_live_run_pauses_and_resumes_it(qtbot, make_iwindow):
    win = make_iwindow(LONG)
    wait_step(qtbot, win)
    sweep = win.sweep
    type_into(sweep.n, "8")
    type_into(sweep.m, "8,16")
    type_into(sweep.seeds, "2")
    type_into(sweep.steps, "200")
    assert sweep.pause_live.isChecked()
    assert sweep.start()
    assert not win.playing, "the live run pauses while the sweep runs"
    qtbot.waitUntil(lambda: sweep.outcome == "done", timeout=TIMEOUT)
    assert win.playing, "and resumes afterwards"
    assert sweep.progress.value() == sweep.progress.maximum()
    assert len(sweep.rows) == 4 and len(sweep.panel.rows) == 4
    # the base parameters came from the window: gd-zero, l1, lr, sigma
    assert {r.optimizer for r in sweep.rows} == {"gd-zero"}
    assert sorted((r.m, r.seed) for r in sweep.rows) == [(8, 1), (8, 2), (16, 1), (16, 2)]
    assert "sweep done" in win.status_labels["sweep"].text()
    wait_step(qtbot, win, above=win.snapshot.step)
    # the live panels are not drawn while the sweep tab is shown, and catch up on return
    win.tabs.setCurrentIndex(1)
    painted = win.poly_panel.count.getData()[0][-1]
    # no fixed wait: on a loaded machine the next history row may take a while
    qtbot.waitUntil(lambda: win.snapshot.history[-1, H["step"]] > painted, timeout=TIMEOUT)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(100)
    assert win.poly_panel.count.getData()[0][-1] < win.snapshot.history[-1, H["step"]]
    win.tabs.setCurrentIndex(0)
    assert win.poly_panel.count.getData()[0][-1] == win.snapshot.history[-1, H["step"]]
    np.testing.assert_array_equal(win.weights_panel.image.image, win.snapshot.W)


def test_closing_with_a_sweep_running_joins_every_thread(qtbot, make_iwindow):
    win = make_iwindow(LONG)
    wait_step(qtbot, win)
    sweep = win.sweep
    type_into(sweep.n, "64")
    type_into(sweep.m, "64:2048:64")
    type_into(sweep.seeds, "4")
    type_into(sweep.steps, "100000")
    sweep.pause_live.setChecked(False)
    assert sweep.start()
    qtbot.waitUntil(lambda: sweep.job.progress is not None, timeout=TIMEOUT)
    job = sweep.job
    thread = job.worker
    assert thread.is_alive() and win.playing
    win.close()
    # close() stopped both and joined them with its deadline; on a loaded machine a thread can
    # take longer than that to reach its next check, so each gets a bounded wait to end by itself
    assert job.cancelled()
    for t in (thread, win.thread):
        t.join(60)
    alive = [t for t in (thread, win.thread) if t.is_alive()]
    frames = sys._current_frames()
    assert not alive, [(t.name, "".join(traceback.format_stack(frames.get(t.ident)))) for t in alive]


def test_model_menu_of_the_note_window_opens_one_interference_window(qtbot, make_window):
    main = make_window()
    menus = [a.text() for a in main.menuBar().actions()]
    assert "&Model" in menus
    main.act_model_interference.trigger()
    other = main.windows.window("interference")  # closed by the note's window (the fixture closes that)
    assert isinstance(other, InterferenceWindow)
    assert other.isVisible()
    qtbot.waitUntil(lambda: other.snapshot is not None, timeout=TIMEOUT)
    main.act_model_interference.trigger()
    assert main.windows.window("interference") is other, "one window, raised again"
    thread = other.thread
    main.close()
    assert not thread.is_alive(), "closing the note's window closes and joins the other"


def test_model_menu_of_the_interference_window_opens_the_note(qtbot, make_iwindow):
    win = make_iwindow(LONG)
    win.act_model_note.trigger()
    note = win.windows.window("note")  # closed with the interference window
    assert note.isVisible()
    note.act_model_interference.trigger()
    assert note.windows.window("interference") is win
    thread = note.thread
    win.close()
    assert not thread.is_alive()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_blas_runs_one_thread_beside_the_gui(qtbot, interference_window):
    """OpenBLAS's default thread pool fought the GUI thread for the cores (11 against 76
    steps/s at n = 256, m = 1024 on a busy 2-core machine, measured): the window runs one
    BLAS thread. Checked through OpenBLAS's own getter, on every OpenBLAS loaded."""
    import ctypes

    win = interference_window(SMALL)
    assert win.blas_limited, "no OpenBLAS found to limit"
    assert win.blas_threads == 1
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "openblas" in line.split()[-1].lower()}
    seen = 0
    for path in paths:
        lib = ctypes.CDLL(path)
        for name in (
            "openblas_get_num_threads",
            "scipy_openblas_get_num_threads",
            "scipy_openblas_get_num_threads64_",
            "openblas_get_num_threads64_",
        ):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_int
                assert fn() == win.blas_threads, path
                seen += 1
                break
    assert seen == len(win.blas_limited)


ENV = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}


def test_entry_point_opens_the_interference_model(tmp_path):
    shot = tmp_path / "shot.png"
    env = {**ENV, "SPARSITY_GUI_SETTINGS": str(tmp_path / "s.ini")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparsity_gui",
            "--model",
            "interference",
            "--n",
            "24",
            "--m",
            "48",
            "--optimizer",
            "gd-zero",
            "--lr",
            "0.01",
            "--quit-after",
            "1500",
            "--screenshot",
            str(shot),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.strip() == "", out.stderr
    assert shot.read_bytes().startswith(PNG_MAGIC)


def test_a_restart_that_cannot_start_is_shown_and_the_old_run_stays(qtbot, interference_window):
    """The worker refuses a new run (here a W(0) of the wrong shape; in use, one that does
    not fit in memory): the window shows why, at the dock and in a dialog, even though no
    snapshot of the refused run exists, and the previous run stays on screen."""
    win = interference_window(SMALL)
    wait_finished(qtbot, win)
    old_id = win.snapshot.run_id
    win.start_run(SMALL.with_changes(seed=SMALL.seed + 1), w0=np.zeros((2, 2)))
    qtbot.waitUntil(lambda: win.failure_line.isVisibleTo(win.param_dock.widget().widget()), timeout=TIMEOUT)
    assert "cannot start the run" in win.failure_line.text() and "w0" in win.failure_line.text()
    assert win.error_box is not None and win.error_box.isVisible()
    # the old run stays on screen, under the refused run's id and an error state
    assert win.snapshot.run_id == win.run_id == old_id + 1
    assert win.snapshot.W.shape == (SMALL.n, SMALL.m) and win.snapshot.step == SMALL.steps
    # pausing and playing again must not hide why the restart failed
    win.set_playing(True)
    win.set_playing(False)
    qtbot.wait(300)
    assert win.snapshot.state == "error"
    assert win.failure_line.isVisibleTo(win.param_dock.widget().widget())
    # a restart that can start clears it
    win.restart()
    qtbot.waitUntil(lambda: win.snapshot.run_id > old_id and win.snapshot.state != "error", timeout=TIMEOUT)
    qtbot.waitUntil(
        lambda: not win.failure_line.isVisibleTo(win.param_dock.widget().widget()), timeout=TIMEOUT
    )


def test_a_preset_starts_a_new_run_with_its_parameters(qtbot, interference_window):
    from sparsity_gui.core.interference.params import PRESETS

    win = interference_window(SMALL)
    wait_step(qtbot, win)
    old_id = win.snapshot.run_id
    menu = win.findChild(QtWidgets.QMenu, "menu_presets")
    acts = {a.text(): a for a in menu.actions()}
    assert list(acts) == [name for name, _tip, _p in PRESETS]
    acts["Control: no interference"].trigger()
    want = next(p for name, _t, p in PRESETS if name == "Control: no interference")
    qtbot.waitUntil(lambda: win.snapshot.run_id > old_id, timeout=TIMEOUT)
    p = win.snapshot.params
    assert p == want.with_changes(seed=SMALL.seed)
    assert win.controls.fields["n"].edit.text() == str(want.n)
    assert not win.controls.interference.isChecked()


def test_idle_means_idle_paused_or_finished_nothing_is_painted(qtbot, interference_window):
    """A finished or paused run publishes no snapshot (each one copies W): the window
    paints nothing until something changes."""
    win = interference_window(SMALL)
    wait_finished(qtbot, win)
    qtbot.wait(300)
    frames, seq = win.frames, win.snapshot.seq
    qtbot.wait(1000)
    assert win.frames == frames and win.snapshot.seq == seq, "a finished run kept repainting"
    assert "— fps" in win.status_line.text()
    win.restart()
    wait_step(qtbot, win)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(300)
    frames, step = win.frames, win.snapshot.step
    qtbot.wait(1000)
    assert win.frames == frames, "a paused run kept repainting"
    win.single_step()
    qtbot.waitUntil(lambda: win.snapshot.step == step + 1, timeout=TIMEOUT)


def test_a_finished_run_shows_play_and_space_runs_it_again(qtbot, interference_window):
    win = interference_window(SMALL)
    wait_finished(qtbot, win)
    qtbot.waitUntil(lambda: win.act_play.text() == "Play", timeout=TIMEOUT)
    assert win.play_button.text() == "Play"
    run_id = win.run_id
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    assert win.run_id == run_id + 1 and win.playing
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id and win.snapshot.step > 0, timeout=TIMEOUT)


def test_a_new_run_says_preparing_until_its_first_frame(qtbot, interference_window):
    win = interference_window(LONG)
    wait_step(qtbot, win)
    win.on_params_changed({"m": 40})
    assert win.status_line.text().startswith(f"preparing run {win.run_id}")
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: win.status_line.text().startswith("step"), timeout=TIMEOUT)
