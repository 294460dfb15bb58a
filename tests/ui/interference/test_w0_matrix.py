"""The interference window's W(0) from a file: File > Load W(0) from file…, the dialog that
picks the matrix, the run starting from it (n and m from its shape) and keeping it through
restarts, and bad files shown in a box with the current run untouched."""

from __future__ import annotations

import sys

import numpy as np
from PySide6 import QtCore, QtWidgets
from safetensors.numpy import save_file

from sparsity_gui.core.interference.initial import W0File
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.ui.weights_dialog import ArrayChoiceDialog

TIMEOUT = 30_000
RNG = np.random.default_rng(9)
W0 = (RNG.standard_normal((7, 12)) / 3).astype(np.float32)  # n = 7 features, m = 12 neurons
START = InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=10**8, seed=1)


def answer(act):
    seen = {}

    def poke():
        w = QtWidgets.QApplication.activeModalWidget()
        if not isinstance(w, ArrayChoiceDialog):
            QtCore.QTimer.singleShot(20, poke)
            return
        seen["dialog"] = w
        act(w)

    QtCore.QTimer.singleShot(0, poke)
    return seen


def shown_run(qtbot, win):
    qtbot.waitUntil(
        lambda: (
            win.snapshot is not None and win.snapshot.run_id == win.run_id and win.snapshot.latest is not None
        ),
        timeout=TIMEOUT,
    )
    return win.snapshot


def test_load_w0_picks_the_matrix_and_keeps_it_through_restarts(qtbot, make_iwindow, tmp_path):
    win = make_iwindow(START, playing=False)
    shown_run(qtbot, win)
    assert win.w0_line.text() == "W(0): normal draw (seed = 1, σ = 1)"
    assert win.act_open_w0 in win.menuBar().actions()[0].menu().actions()
    path = tmp_path / "ae.safetensors"
    save_file({"W": W0, "b": np.zeros(12, np.float32)}, str(path))
    offered = {}

    def pick(dialog):
        for i in range(dialog.table.topLevelItemCount()):
            item = dialog.table.topLevelItem(i)
            offered[item.text(0)] = bool(item.flags() & QtCore.Qt.ItemFlag.ItemIsEnabled)
        dialog.select("W")
        offered["summary"] = dialog.summary.text()
        assert dialog.row.isHidden()  # the whole matrix: no row to choose
        dialog.accept()

    answer(pick)
    assert win.load_w0(path), win.last_error
    assert offered == {"W": True, "b": False, "summary": "W(0) = W: n = 7 features × m = 12 neurons"}
    snap = shown_run(qtbot, win)
    assert (win.params.n, win.params.m) == (7, 12)
    assert (win.controls.fields["n"].edit.text(), win.controls.fields["m"].edit.text()) == ("7", "12")
    np.testing.assert_array_equal(snap.W, W0.astype(np.float64))  # paused at step 0: W = W(0)
    assert win.w0_line.text().startswith("W(0): ae.safetensors [W], 7 × 12")

    # Restart and a change of optimizer (a new run) start from the file's W(0) again
    win.act_step.trigger()
    qtbot.waitUntil(lambda: win.snapshot.step == 1, timeout=TIMEOUT)
    assert not np.array_equal(win.snapshot.W, snap.W)
    win.act_restart.trigger()
    np.testing.assert_array_equal(shown_run(qtbot, win).W, W0.astype(np.float64))
    win.on_params_changed({"optimizer": "adam"})
    assert win.snapshot.run_id != win.run_id
    np.testing.assert_array_equal(shown_run(qtbot, win).W, W0.astype(np.float64))
    # a new seed draws W(0) at random again: the documented normal(0, sigma/sqrt(m)) draw
    win.on_params_changed({"seed": 4})
    drawn = shown_run(qtbot, win).W
    np.testing.assert_array_equal(
        drawn, np.random.default_rng(4).standard_normal((7, 12)) * (1.0 / np.sqrt(12))
    )
    assert win.w0_line.text() == "W(0): normal draw (seed = 4, σ = 1)"


def test_a_window_opened_with_a_w0_starts_from_it(qtbot, make_iwindow):
    """`sparsity-gui --model interference --w0 FILE` opens the window with the file's
    matrix (app.py hands it over): the first run and its restarts start from it."""
    matrix = W0.astype(np.float64)
    win = make_iwindow(
        START.with_changes(n=7, m=12),
        playing=False,
        w0_file=W0File(matrix, "ae.safetensors [W]", {"source": "file"}),
    )
    snap = shown_run(qtbot, win)
    np.testing.assert_array_equal(snap.W, matrix)  # paused at step 0: W = W(0)
    assert win.w0_line.text() == "W(0): ae.safetensors [W], 7 × 12; a new n, m, seed or σ draws it again"
    win.act_step.trigger()
    qtbot.waitUntil(lambda: win.snapshot.step == 1, timeout=TIMEOUT)
    assert not np.array_equal(win.snapshot.W, matrix)
    win.act_restart.trigger()
    np.testing.assert_array_equal(shown_run(qtbot, win).W, matrix)


def test_bad_files_show_why_and_the_run_goes_on(qtbot, make_iwindow, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # as without torch, installed or not
    win = make_iwindow(START, playing=True)
    snap = shown_run(qtbot, win)
    save_file({"W": W0, "v": W0[0], "cube": np.ones((2, 2, 2))}, str(tmp_path / "ck.safetensors"))
    data = (tmp_path / "ck.safetensors").read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[:-50])
    (tmp_path / "photo.npy").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (tmp_path / "model.pt").write_bytes(b"\x80\x02\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little"))
    big = np.zeros((2, 70000), np.float16)
    np.save(tmp_path / "wide.npy", big)
    run_id, run, params = win.run_id, win.worker.run, win.params
    for name, tensor, needle in (
        ("ck.safetensors", "v", "W(0) is a matrix n x m (features x neurons), not 1-D, shape (12,)"),
        ("ck.safetensors", "cube", "not 3-D, shape (2, 2, 2)"),
        ("ck.safetensors", "nope", "no tensor named 'nope'"),
        ("cut.safetensors", None, "truncated"),
        ("photo.npy", None, "not a valid .npy file (it is a PNG image)"),
        ("model.pt", None, "needs PyTorch, which is not installed"),
        ("wide.npy", None, "W(0) is 2 x 70000; n must be 1 to 4096 and m 1 to 65536"),
    ):
        assert not win.load_w0(tmp_path / name, tensor)
        assert needle in win.last_error and str(tmp_path / name) in win.last_error, win.last_error
        box = win.error_box
        assert box.isVisible() and not box.isModal() and box.windowTitle() == "Cannot load W(0)"
        assert win.run_id == run_id and win.worker.run is run and win.params == params
    step = snap.step
    qtbot.waitUntil(lambda: win.snapshot.step > step + 5, timeout=TIMEOUT)  # still training
    assert win.w0_line.text() == "W(0): normal draw (seed = 1, σ = 1)"
