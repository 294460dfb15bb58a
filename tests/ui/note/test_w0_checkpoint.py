"""The note window's W(0) from a checkpoint: the dialog that picks the tensor and the row
(real widgets, answered as a user would), and damaged or foreign files shown in a box with
the current run untouched."""

from __future__ import annotations

import json
import struct
import sys
import zipfile

import numpy as np
from PySide6 import QtCore, QtWidgets
from safetensors.numpy import save_file

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.weights_dialog import ArrayChoiceDialog

TIMEOUT = 30_000
RNG = np.random.default_rng(5)
ENCODER = (RNG.standard_normal((6, 40)) / 5).astype(np.float32)


def checkpoint(folder):
    path = folder / "model.safetensors"
    save_file(
        {
            "encoder.weight": ENCODER,
            "encoder.bias": np.linspace(-0.3, 0.3, 6).astype(np.float16),
            "embed": np.ones((2, 3, 4), np.float32),
        },
        str(path),
    )
    return path


def answer(act):
    """Run ``act(dialog)`` on the W(0) dialog once it is up (it is modal: the call that
    opens it returns only after)."""
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


def new_run(qtbot, win, m):
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.snapshot.m == m,
        timeout=TIMEOUT,
    )


def rows_of(dialog):
    table = dialog.table
    out = {}
    for i in range(table.topLevelItemCount()):
        item = table.topLevelItem(i)
        enabled = bool(item.flags() & QtCore.Qt.ItemFlag.ItemIsEnabled)
        out[item.text(0)] = (item.text(1), item.text(2), enabled)
    return out


def test_the_dialog_picks_the_tensor_and_the_row(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=1e-2), speed=5.0)
    path = checkpoint(tmp_path)
    listed = {}

    def pick(dialog):
        listed.update(rows_of(dialog))
        dialog.select("encoder.weight")
        assert dialog.row.isEnabled() and dialog.row.maximum() == 5
        dialog.row.setValue(4)
        listed["summary"] = dialog.summary.text()
        dialog.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).click()

    answer(pick)
    assert win.files.load_w0(str(path)), win.last_error
    # sorted by name; a 3-D tensor cannot be W(0) and is greyed out
    assert listed.pop("summary") == "W(0) = row 4 of encoder.weight (6 × 40): m = 40"
    assert listed == {
        "embed": ("2 × 3 × 4", "F32", False),
        "encoder.bias": ("6", "F16", True),
        "encoder.weight": ("6 × 40", "F32", True),
    }
    new_run(qtbot, win, 40)
    np.testing.assert_array_equal(win.runner.sim.init.w0, ENCODER[4].astype(np.float64))
    assert win.params.w0_path == str(path)
    # a session says where W(0) came from and embeds it
    assert win.files.save_session(tmp_path / "s.json"), win.last_error
    w0 = json.loads((tmp_path / "s.json").read_text())["w0"]
    assert (w0["path"], w0["array"], w0["row"]) == (str(path), "encoder.weight", 4)
    assert w0["weights"] == ENCODER[4].astype(np.float64).tolist()

    # a vector needs no row: the spin box is off, W(0) is the whole tensor
    def pick_bias(dialog):
        dialog.select("encoder.bias")
        assert not dialog.row.isEnabled()
        dialog.accept()

    answer(pick_bias)
    assert win.files.load_w0(str(path)), win.last_error
    new_run(qtbot, win, 6)
    np.testing.assert_array_equal(win.runner.sim.init.w0, np.linspace(-0.3, 0.3, 6).astype(np.float16))


def test_cancel_leaves_the_run_as_it_was(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=1e-2), speed=5.0)
    new_run(qtbot, win, 200)
    run_id, sim = win.run_id, win.runner.sim
    seen = answer(lambda d: d.reject())
    assert not win.files.load_w0(str(checkpoint(tmp_path)))
    assert "dialog" in seen and win.run_id == run_id and win.runner.sim is sim and win.params.m == 200


def test_a_single_bf16_tensor_loads_without_asking(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=1e-2), speed=5.0)
    bits = {0x3F00: 0.5, 0xBE80: -0.25, 0x3DCC: 0.099609375, 0x0000: 0.0, 0xBF40: -0.75}
    header = json.dumps({"w": {"dtype": "BF16", "shape": [5], "data_offsets": [0, 10]}}).encode()
    path = tmp_path / "bf16.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + np.array(list(bits), "<u2").tobytes())
    assert win.files.load_w0(str(path)), win.last_error  # no dialog: one tensor, a vector
    new_run(qtbot, win, 5)
    np.testing.assert_array_equal(win.runner.sim.init.w0, list(bits.values()))


def bad_files(folder):
    good = checkpoint(folder)
    data = good.read_bytes()
    (folder / "truncated.safetensors").write_bytes(data[:-30])
    (folder / "garbage.safetensors").write_bytes((48).to_bytes(8, "little") + b"{" + bytes(range(128, 180)))
    (folder / "photo.safetensors").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    with zipfile.ZipFile(folder / "model.pt", "w") as z:  # torch.save's layout, made without torch
        z.writestr("model/data.pkl", b"\x80\x02}q\x00.")
    return good


BAD = [
    ("truncated.safetensors", {}, "truncated"),
    ("garbage.safetensors", {}, "the header is not JSON text"),
    ("photo.safetensors", {}, "not a valid .safetensors file (it is a PNG image)"),
    ("model.pt", {}, "needs PyTorch, which is not installed"),
    ("model.safetensors", {"array": "embed"}, "expected a 1-D array, got 3 dimensions"),
    ("model.safetensors", {"array": "encoder.weight", "row": 9}, "row 9 is out of range (0 to 5)"),
]


def test_bad_files_show_why_and_the_run_goes_on(qtbot, make_window, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # as without torch, installed or not
    win = make_window(SimParams(m=200, lam=1e-2), speed=5.0)
    bad_files(tmp_path)
    new_run(qtbot, win, 200)
    run_id, sim, params = win.run_id, win.runner.sim, win.params
    for name, kw, needle in BAD:
        assert not win.files.load_w0(str(tmp_path / name), **kw)
        assert needle in win.last_error and str(tmp_path / name) in win.last_error, win.last_error
        box = win.error_box
        assert box is not None and box.isVisible() and not box.isModal()
        assert box.windowTitle() == "Cannot load W(0)" and needle in box.text()
        assert win.run_id == run_id and win.runner.sim is sim and win.params == params
        assert win.controls.init_kind.currentIndex() == 0  # the dock still says: a normal draw
    t = win.snapshot.t
    qtbot.waitUntil(lambda: win.snapshot.t > t, timeout=TIMEOUT)  # still running
