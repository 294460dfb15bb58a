"""The interference window's *Export all*: a worker thread draws every figure (matplotlib)
while the window keeps painting, with a progress bar and Cancel in the status bar, as the
note window's (ui/background.py); a cancelled export
writes nothing, a finished one writes the figures (with their data and scripts), the
shown run's data, the window (window.png), the session (session.json) and the pinned runs,
as the note window's Export all (Ctrl+E in both). Real window, real training thread, real
files."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
from PySide6 import QtGui, QtWidgets

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.interference.session import load_session
from sparsity_gui.figures.save import arrays_of

TIMEOUT = 60_000
# an Export all draws every panel in PNG, SVG and PDF: minutes on a machine other work loads
EXPORT_TIMEOUT = 300_000
SMALL = InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=3000, seed=1)
PANELS = ("active", "kept", "layout", "polysemantic", "signs", "sparsity", "thresholds", "weights")


def finished_window(qtbot, make_iwindow, pin: bool = False):
    win = make_iwindow(SMALL)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    if pin:
        assert win.pin_control.pin(), win.last_error
    return win


def test_export_all_writes_every_figure_and_the_data(qtbot, make_iwindow, tmp_path):
    """A finished Export all's folder; a second Export all asked for while it runs is
    refused with a message and does not disturb it."""
    win = finished_window(qtbot, make_iwindow, pin=True)
    snap = win.snapshot
    assert win.exports.export_all(tmp_path / "all", wait=False)
    job = win.exports.job
    assert job is not None and job.running
    assert not win.exports.export_all(tmp_path / "two") and "an export is running" in win.last_error
    win.error_box.close()
    assert win.exports.job is job
    qtbot.waitUntil(lambda: not job.running, timeout=EXPORT_TIMEOUT)
    assert not (tmp_path / "two").exists()
    assert job.outcome.ok, win.last_error
    assert win.snapshot is snap or win.snapshot.run_id == snap.run_id  # the run on screen untouched
    folder = tmp_path / "all"
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "figures",
        "history.csv",
        "neuron_counts.csv",
        "pin_1.csv",
        "pins.json",
        "run.json",
        "session.json",
        "w0.npy",
        "w_final.npy",
        "window.png",
    ]
    figures = sorted(p.name for p in (folder / "figures").iterdir())
    assert figures == sorted(f"{p}.{ext}" for p in PANELS for ext in ("json", "pdf", "png", "py", "svg"))
    # each a real file: a PNG, an SVG that holds drawing elements, a PDF
    for panel in PANELS:
        assert (folder / "figures" / f"{panel}.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), panel
        root = ET.parse(folder / "figures" / f"{panel}.svg").getroot()
        assert root.tag.endswith("svg") and len(list(root.iter())) > 20, panel
        assert (folder / "figures" / f"{panel}.pdf").read_bytes().startswith(b"%PDF"), panel
    # the figure is drawn from the data exported beside it
    table = np.loadtxt(folder / "history.csv", delimiter=",", skiprows=1, ndmin=2)
    data = arrays_of(json.loads((folder / "figures" / "signs.json").read_text()))
    np.testing.assert_array_equal(data["opposite_pairs"], table[:, HISTORY_COLUMNS.index("opposite_pairs")])
    assert [p["label"] for p in data["pins"]] == [json.loads((folder / "pins.json").read_text())[0]["label"]]
    assert f"Exported {len(names) - 1 + len(figures)} files" in win.statusBar().currentMessage()
    assert win.exports.job is None and win.exports.progress is None
    # the window as on screen, and the session that reopens this run at this step
    image = QtGui.QImage(str(folder / "window.png"))
    assert (image.width(), image.height()) == (win.width(), win.height())
    session = load_session(folder / "session.json")
    assert session.script.step == snap.step and session.params == snap.params
    assert [p.number for p in session.pins] == [1]
    assert not any(p.name.startswith(".") for p in folder.iterdir())  # no temporary folder left


def test_ctrl_e_is_export_all_as_in_the_note_window(qtbot, make_iwindow):
    win = make_iwindow(SMALL)
    act = win.findChild(QtGui.QAction, "act_export_all")  # the note's: test_export_session.py
    assert act.shortcut().toString() == "Ctrl+E" and act.text() == "Export all…"
    assert act in win.menuBar().actions()[0].menu().actions()  # in File


def test_a_cancelled_export_leaves_nothing_behind(qtbot, make_iwindow, tmp_path):
    win = finished_window(qtbot, make_iwindow)
    target = tmp_path / "new"
    assert win.exports.export_all(target, wait=False)
    job, progress = win.exports.job, win.exports.progress
    bar = win.statusBar().findChild(QtWidgets.QProgressBar, "export_progress")
    # 7 panels (Thresholds among them) and the layout drawn; 5 data files, the session and
    # the window written
    assert bar is progress.bar and bar.maximum() == 7 + 1 + 5 + 1 + 1
    painted = win.snapshot.seq
    cancel = win.statusBar().findChild(QtWidgets.QPushButton, "export_cancel")
    cancel.click()  # the user's Cancel
    qtbot.waitUntil(lambda: not job.running, timeout=TIMEOUT)
    assert job.outcome.cancelled and "nothing was written" in win.statusBar().currentMessage()
    assert not target.exists()
    assert win.last_error == "Export cancelled" and win.error_box is None  # asked for: no warning box
    assert win.snapshot.seq >= painted
    # an existing folder keeps exactly what it had
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    assert win.exports.export_all(kept, wait=False)
    job = win.exports.job
    job.cancel()
    qtbot.waitUntil(lambda: not job.running, timeout=TIMEOUT)
    assert sorted(p.name for p in kept.iterdir()) == ["notes.txt"]


def test_export_all_refuses_a_file(qtbot, make_iwindow, tmp_path):
    """(A second export while one runs: test_export_all_writes_every_figure_and_the_data.)"""
    win = finished_window(qtbot, make_iwindow)
    afile = tmp_path / "a-file"
    afile.write_text("x")
    assert not win.exports.export_all(afile)
    assert "is a file, not a folder" in win.last_error and win.exports.job is None
    assert afile.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
