"""*File → Export movie…* in both windows (offscreen): the dialog writes the movie in its
thread while the live run goes on; Cancel leaves nothing; a bad time range is told at the
field; without PyAV the menu item says which extra to install."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

av = pytest.importorskip("av", reason="the [movie] extra (PyAV) is not installed")

from sparsity_gui.ui.movie_dialog import MovieDialog  # noqa: E402

TIMEOUT = 60_000


def frames_of(path):
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def menu_action(win):
    file_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&File")
    (act,) = [a for a in file_menu.actions() if a.objectName() == "act_export_movie"]
    return act


def open_dialog(qtbot, win) -> MovieDialog:
    menu_action(win).trigger()
    dialog = win.movie_dialog
    assert isinstance(dialog, MovieDialog)
    qtbot.addWidget(dialog)
    return dialog


def test_note_window_exports_a_movie_while_the_run_goes_on(qtbot, make_window, tmp_path):
    win = make_window()
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 5.0, timeout=TIMEOUT)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    dialog = open_dialog(qtbot, win)
    t_shown = win.snapshot.t
    assert float(dialog.end.text()) == pytest.approx(t_shown)
    dialog.select_panel("l1_decay")
    dialog.seconds.setValue(1.0)
    dialog.fps.setValue(4)
    win.set_playing(True)  # the live run goes on meanwhile
    assert dialog.start_export(tmp_path / "l1.mp4")
    assert dialog.running and not dialog.export_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.outcome != "", timeout=TIMEOUT)
    assert dialog.outcome == "written", dialog.message
    assert len(frames_of(tmp_path / "l1.mp4")) == 4
    qtbot.waitUntil(lambda: win.snapshot.t > t_shown, timeout=TIMEOUT)  # the run went on


def test_cancel_leaves_nothing_and_a_bad_range_is_told(qtbot, make_window, tmp_path):
    win = make_window()
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 2.0, timeout=TIMEOUT)
    dialog = open_dialog(qtbot, win)
    dialog.end.setText("1e9")
    assert not dialog.start_export(tmp_path / "x.mp4")
    assert "must lie within the run" in dialog.error.text()
    dialog.end.setText(dialog.start.text())
    assert not dialog.start_export(tmp_path / "x.mp4")
    dialog.end.setText("2.0")
    dialog.seconds.setValue(20.0)  # 600 frames: long enough to be cancelled midway
    dialog.select_panel("layout")
    assert dialog.start_export(tmp_path / "x.mp4")
    qtbot.waitUntil(lambda: dialog.bar.value() >= 1, timeout=TIMEOUT)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: dialog.outcome != "", timeout=TIMEOUT)
    assert dialog.outcome == "cancelled"
    assert os.listdir(tmp_path) == [p for p in os.listdir(tmp_path) if p.endswith(".ini") or p == "config"]


def test_interference_window_exports_a_gif_matching_its_run(qtbot, make_iwindow, tmp_path):
    from PySide6 import QtWidgets

    from sparsity_gui.core.interference.params import InterferenceParams
    from sparsity_gui.figures.scripted import panel_size
    from sparsity_gui.ui.dialogs import settings
    from sparsity_gui.ui.figure_style import STYLE_KEY

    win = make_iwindow(InterferenceParams(n=8, m=16, steps=200), playing=True)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    # Export figure → Figure style → Talk, as in the note window: the movie takes it too
    style_menu = win.findChild(QtWidgets.QMenu, "menu_figure_style")
    (talk,) = [a for a in style_menu.actions() if a.text() == "Talk"]
    try:
        talk.trigger()
        assert win.exports.style() == "talk" and talk.isChecked()
        dialog = open_dialog(qtbot, win)
        assert float(dialog.end.text()) == 200
        dialog.select_panel("weights")
        dialog.seconds.setValue(1.0)
        dialog.fps.setValue(3)
        dialog.format.setCurrentIndex(1)  # GIF
        assert dialog.start_export(tmp_path / "w.gif")
        qtbot.waitUntil(lambda: dialog.outcome != "", timeout=TIMEOUT)
    finally:
        settings().remove(STYLE_KEY)
    # the replay reproduced the W on screen at step 200 (else: refused, nothing written)
    assert dialog.outcome == "written", dialog.message
    frames = frames_of(tmp_path / "w.gif")
    assert len(frames) == 3 and not np.array_equal(frames[0], frames[-1])
    width = int(panel_size("talk")[0] * dialog.options()[1].dpi)  # the talk style's figure width
    assert frames[0].shape[1] == width + width % 2


NO_AV_DIALOG = """
import sys
class _NoAv:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "av":
            raise ImportError("No module named 'av'")
sys.meta_path.insert(0, _NoAv())
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication([])
seen = []
def close_box():
    for w in app.topLevelWidgets():
        if isinstance(w, QtWidgets.QMessageBox) and w.isVisible():
            seen.append(w.text())
            w.close()
timer = QtCore.QTimer(interval=50)
timer.timeout.connect(close_box)
timer.start()
from sparsity_gui.ui.movie_dialog import open_movie_dialog
window = QtWidgets.QMainWindow()
print(open_movie_dialog(window, lambda: None), "|", *seen)
"""


def test_without_pyav_the_menu_item_names_the_extra(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-c", NO_AV_DIALOG],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        "None | movies need the PyAV encoder, which is not installed: pip install 'sparsity-gui[movie]'"
    )


def test_the_dialog_lists_titles_and_saves_in_the_last_folder(qtbot, make_window, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    from sparsity_gui.ui.dialogs import last_folder, remember_folder

    win = make_window()
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 1.0, timeout=TIMEOUT)
    dialog = open_dialog(qtbot, win)
    shown = [dialog.panel.itemText(i) for i in range(dialog.panel.count())]
    assert shown[0] == "Weights, sorted" and shown[-1] == "All panels (layout)"
    assert not any("_" in text for text in shown)  # titles, not the figures' file names
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    remember_folder(str(earlier / "x.csv"))
    offered = []

    def save_file_name(parent, caption, name, filters):
        offered.append(name)
        return "", ""  # the user cancels

    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", save_file_name)
    dialog.select_panel("l1_decay")
    dialog.ask_path()
    assert offered == [str(earlier / "l1_decay.mp4")]
    assert last_folder() == str(earlier)
