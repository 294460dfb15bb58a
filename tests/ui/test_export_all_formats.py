"""The figure formats of File › Export all…: its folder dialog has a box per format
(PNG, SVG, PDF), checked as last chosen (all three at first); the export writes each figure
in exactly the formats checked, beside its JSON and its script (whose FORMATS line is the
same), and the choice is kept in the app's settings for the next dialog. Choosing a folder
with no box checked is refused under the boxes, the dialog left open and nothing written.
Driven with real clicks and keys in Qt's own dialog, offscreen; the interference window's
export_all takes the same formats and refuses the same bad ones."""

from __future__ import annotations

import re

import pytest
from PySide6 import QtCore, QtWidgets
from pytestqt.qtbot import QtBot

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.dialogs import settings
from sparsity_gui.ui.figure_export import ExportAllDialog
from sparsity_gui.ui.figure_style import FORMATS_KEY

TIMEOUT = 60_000
pytestmark = pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing the keyboard")


def drive_dialog(qtbot: QtBot, where, clicks, name: str, key=QtCore.Qt.Key.Key_Return) -> list:
    """Once Export all's dialog is up: what its boxes show, then a click on each format
    of ``clicks``, ``name`` typed into its file-name field and ``key`` pressed; a dialog
    still open after that is noted with its note under the boxes, then cancelled."""
    seen: list = []

    def drive() -> None:
        dialog = QtWidgets.QApplication.activeModalWidget()
        if not isinstance(dialog, ExportAllDialog):
            QtCore.QTimer.singleShot(50, drive)
            return
        seen.append({fmt: box.isChecked() for fmt, box in dialog.format_boxes.items()})
        for fmt in clicks:
            qtbot.mouseClick(dialog.format_boxes[fmt], QtCore.Qt.MouseButton.LeftButton)
        dialog.setDirectory(str(where))
        line = dialog.findChild(QtWidgets.QLineEdit, "fileNameEdit")
        line.setFocus()
        line.selectAll()
        qtbot.keyClicks(line, name)
        qtbot.keyClick(line, key)
        if dialog.isVisible():
            seen.append(("still open", dialog.format_note.text()))
            dialog.reject()

    QtCore.QTimer.singleShot(0, drive)
    return seen


NOTE_PANELS = (
    "weights_sorted",
    "threshold_crossing",
    "norm_balance",
    "l1_decay",
    "relative_variance",
    "sparsity_force",
    "phase_plane",
)


def figure_names(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def script_formats(path) -> tuple[str, ...]:
    line = re.search(r"^FORMATS = (\(.*?\))  #", path.read_text(encoding="utf-8"), re.M)
    assert line, path
    return eval(line.group(1))  # noqa: S307 - the script's tuple literal


def test_unchecked_formats_are_not_written_and_the_choice_is_remembered(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=2e-2, seed=4), playing=False)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    target = tmp_path / "png only"
    seen = drive_dialog(qtbot, tmp_path, ["svg", "pdf"], target.name)
    win.exports.export_all_dialog()  # blocks in the dialog until the clicks and keys above
    assert seen[0] == {"png": True, "svg": True, "pdf": True}, seen  # at first: all three
    assert len(seen) == 1, seen
    qtbot.waitUntil(lambda: win.exports.job is None, timeout=TIMEOUT)
    names = [n for n in figure_names(target) if n.split(".")[0] in NOTE_PANELS]  # the figures
    assert names == sorted(f"{s}.{ext}" for s in NOTE_PANELS for ext in ("png", "json", "py")), win.last_error
    assert all(script_formats(target / f"{s}.py") == ("png",) for s in NOTE_PANELS)
    assert (target / "window.png").is_file() and (target / "timeseries.csv").is_file()
    assert settings().value(FORMATS_KEY) == "png"
    # the next dialog shows the choice kept; checking PDF and cancelling keeps it as it was
    seen = drive_dialog(qtbot, tmp_path, ["pdf"], "never", key=QtCore.Qt.Key.Key_Escape)
    win.exports.export_all_dialog()
    assert seen[0] == {"png": True, "svg": False, "pdf": False}, seen
    assert not (tmp_path / "never").exists() and settings().value(FORMATS_KEY) == "png"


def test_no_format_checked_is_refused_at_the_boxes(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=2e-2, seed=4), playing=False)
    settings().setValue(FORMATS_KEY, "svg,pdf")  # as a former choice left it
    seen = drive_dialog(qtbot, tmp_path, ["svg", "pdf"], "nothing")
    win.exports.export_all_dialog()
    assert seen == [{"png": False, "svg": True, "pdf": True}, ("still open", "check at least one format")]
    assert not (tmp_path / "nothing").exists() and win.exports.job is None
    assert settings().value(FORMATS_KEY) == "svg,pdf"


def test_a_bad_stored_choice_counts_as_all_three(qtbot, make_window, tmp_path):
    """A settings file edited by hand: the dialog offers the three formats again."""
    win = make_window(SimParams(m=200, lam=2e-2, seed=4), playing=False)
    settings().setValue(FORMATS_KEY, "png,tiff")
    seen = drive_dialog(qtbot, tmp_path, [], "never", key=QtCore.Qt.Key.Key_Escape)
    win.exports.export_all_dialog()
    assert seen[0] == {"png": True, "svg": True, "pdf": True}


def test_the_interference_export_all_writes_the_formats_given(qtbot, make_iwindow, tmp_path):
    win = make_iwindow(
        InterferenceParams(n=8, m=16, optimizer="gd-zero", l1=0.04, lr=0.05, steps=300, seed=1)
    )
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    bad = tmp_path / "bad"
    assert not win.exports.export_all(bad, formats="svg,tiff")
    assert "unknown format 'tiff'" in win.last_error and not bad.exists()
    assert not win.exports.export_all(bad, formats=())
    assert "no format given" in win.last_error and not bad.exists()
    out = tmp_path / "svg"
    assert win.exports.export_all(out, formats="SVG"), win.last_error
    names = figure_names(out / "figures")
    stems = {n.rsplit(".", 1)[0] for n in names}
    assert "layout" in stems and "weights" in stems, names
    assert names == sorted(f"{s}.{ext}" for s in stems for ext in ("svg", "json", "py"))
    assert script_formats(out / "figures" / "layout.py") == ("svg",)
