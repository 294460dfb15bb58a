"""File › Export all… asks for a folder in a real Qt file dialog, driven here by key events as
a person would: a new folder's name typed into it is taken (Qt's own folder chooser said
"Directory not found"), and the export then writes every file into that new folder. An
existing folder is still chosen as before, a cancelled dialog writes nothing, and a name
that is a file is refused by the dialog."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets
from pytestqt.qtbot import QtBot

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.dialogs import FolderDialog, choose_folder

TIMEOUT = 60_000
# Qt's offscreen platform cannot raise a window or grab the keyboard (the dialog and its
# name completer ask to); under a real X server these notices do not occur.
pytestmark = pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing the keyboard")


def type_into_dialog(qtbot: QtBot, where, name: str, key=QtCore.Qt.Key.Key_Return) -> list:
    """Once the dialog is up (modal, inside exec), go to the folder ``where`` (as the user
    would by clicking), type ``name`` into its file-name field and press ``key``; returns
    what was seen (filled in later)."""
    seen: list = []

    def drive() -> None:
        dialog = QtWidgets.QApplication.activeModalWidget()
        if not isinstance(dialog, FolderDialog):
            QtCore.QTimer.singleShot(50, drive)  # not up yet
            return
        seen.append(dialog)
        dialog.setDirectory(str(where))
        line = dialog.findChild(QtWidgets.QLineEdit, "fileNameEdit")
        line.setFocus()
        line.selectAll()
        qtbot.keyClicks(line, name)
        qtbot.keyClick(line, key)
        if dialog.isVisible():  # it refused: say so, then close it
            seen.append("still open")
            QtCore.QTimer.singleShot(0, lambda: close_refusal_and(dialog))

    def close_refusal_and(dialog) -> None:
        box = QtWidgets.QApplication.activeModalWidget()
        if isinstance(box, QtWidgets.QMessageBox):
            seen.append(box.text())
            box.close()
        dialog.reject()

    QtCore.QTimer.singleShot(0, drive)
    return seen


def test_a_new_folder_name_typed_into_the_export_all_dialog_is_created_and_filled(
    qtbot, make_window, tmp_path
):
    win = make_window(SimParams(m=200, lam=2e-2, seed=4), playing=False)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    target = tmp_path / "fresh export"
    assert not target.exists()
    seen = type_into_dialog(qtbot, tmp_path, target.name)
    win.exports.export_all_dialog()  # blocks in the dialog until the keys above are typed
    assert seen and isinstance(seen[0], FolderDialog) and "still open" not in seen
    qtbot.waitUntil(lambda: win.exports.job is None, timeout=TIMEOUT)  # written beside the GUI
    assert target.is_dir(), win.last_error
    names = sorted(p.name for p in target.iterdir())
    for name in ("timeseries.csv", "run.json", "session.json", "window.png", "weights.csv"):
        assert name in names, names
    assert (target / "timeseries.csv").read_text().startswith("t,")


def test_choosing_an_existing_folder_and_cancelling(qtbot, make_window, tmp_path):
    """An existing folder is chosen by its name; Escape cancels and nothing is written."""
    win = make_window(SimParams(m=200, lam=2e-2, seed=4), playing=False)
    existing = tmp_path / "there"
    existing.mkdir()
    seen = type_into_dialog(qtbot, tmp_path, existing.name)
    assert choose_folder(win, "Export all into folder") == str(existing)
    assert seen and "still open" not in seen
    type_into_dialog(qtbot, tmp_path, "never", key=QtCore.Qt.Key.Key_Escape)
    assert choose_folder(win, "Export all into folder") == ""
    assert not (tmp_path / "never").exists()


def test_a_name_that_is_a_file_is_refused_by_the_dialog(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=2e-2, seed=4), playing=False)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    seen = type_into_dialog(qtbot, tmp_path, a_file.name)
    assert choose_folder(win, "Export all into folder") == ""
    assert "still open" in seen
    assert a_file.read_text() == "not a folder"


@pytest.mark.parametrize("model", ["interference"])
def test_the_sweep_save_dialog_takes_a_new_folder_name(qtbot, make_iwindow, tmp_path, model):
    """The interference window's Save the sweep into folder… uses the same dialog."""
    win = make_iwindow()
    target = tmp_path / "new sweep folder"
    seen = type_into_dialog(qtbot, tmp_path, target.name)
    assert choose_folder(win.sweep, "Save the sweep into folder") == str(target)
    assert isinstance(seen[0], FolderDialog)
