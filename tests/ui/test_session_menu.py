"""The sessions of both windows' File menus (ui/session_menu.py, one menu with each model's
parts): the same entries at the top of the menu, each window its own recent list, and the
same refusals, with the run on screen untouched: a save while a new run starts, a save
where no file can be written, a file that is not there."""

import pytest
from PySide6 import QtGui

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams

TIMEOUT = 60_000


@pytest.fixture(params=["note", "interference"])
def window(request, make_window, make_iwindow):
    """A window of each model, its run shown; with its session menu."""
    if request.param == "note":
        win = make_window(SimParams(m=200, lam=1e-2), speed=5.0)
        return win, win.files
    win = make_iwindow(InterferenceParams(n=8, m=16, steps=10**7, seed=1))
    return win, win.sessions


def shown(win) -> bool:
    snap = win.snapshot
    return snap is not None and snap.run_id == win.run_id and getattr(snap, "latest", True) is not None


def file_menu(win):
    return next(a.menu() for a in win.menuBar().actions() if a.text() == "&File")


def test_the_file_menu_starts_with_the_sessions(qtbot, window):
    win, sessions = window
    qtbot.waitUntil(lambda: shown(win), timeout=TIMEOUT)
    top = file_menu(win).actions()[:4]
    assert [a.text() for a in top[:3]] == ["Open session…", "Open recent", "Save session…"]
    assert top[1].menu() is sessions.recent_menu and top[3].isSeparator()
    assert top[0].shortcut() == QtGui.QKeySequence(QtGui.QKeySequence.StandardKey.Open)
    assert top[2].shortcut() == QtGui.QKeySequence(QtGui.QKeySequence.StandardKey.Save)
    assert top[0].statusTip() and top[2].statusTip()


def test_the_windows_keep_their_own_recent_sessions(qtbot, make_window, make_iwindow, tmp_path):
    wins = make_window(SimParams(m=200, lam=1e-2)), make_iwindow(InterferenceParams(n=8, m=16, steps=10**7))
    qtbot.waitUntil(lambda: all(shown(w) for w in wins), timeout=TIMEOUT)
    note, interference = wins[0].files, wins[1].sessions
    note.add_recent(tmp_path / "a.json")
    interference.add_recent(tmp_path / "b.json")
    assert note.recent_sessions() == [str((tmp_path / "a.json").resolve())]
    assert interference.recent_sessions() == [str((tmp_path / "b.json").resolve())]
    interference.clear_recent()
    assert interference.recent_sessions() == [] and len(note.recent_sessions()) == 1


def test_refused_saves_and_opens_leave_the_run_and_the_files(qtbot, window, tmp_path):
    win, sessions = window
    qtbot.waitUntil(lambda: shown(win), timeout=TIMEOUT)
    win.start_run(win.params)  # a new run: no snapshot of it on screen yet
    run_id = win.run_id
    assert not sessions.save_session(tmp_path / "early.json")
    assert "still starting" in win.last_error and not (tmp_path / "early.json").exists()

    qtbot.waitUntil(lambda: shown(win), timeout=TIMEOUT)
    blocker = tmp_path / "a_file"
    blocker.write_text("keep")
    assert not sessions.save_session(blocker / "s.json")
    assert f"{blocker / 's.json'}: Not a directory" in win.last_error
    assert "unchanged" in win.last_error and blocker.read_text() == "keep"
    assert not sessions.open_session(tmp_path / "nowhere.json")
    assert "nowhere.json" in win.last_error
    assert win.run_id == run_id, "a refused session starts no run"
    assert sessions.recent_sessions() == [], "nothing refused is remembered"

    assert sessions.save_session(tmp_path / "s.json"), win.last_error
    assert win.statusBar().currentMessage().startswith("Saved the session (")
    assert sessions.recent_sessions() == [str((tmp_path / "s.json").resolve())]
