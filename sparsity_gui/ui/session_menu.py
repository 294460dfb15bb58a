"""`SessionMenu`, the sessions of either window's File menu: Save session… (Ctrl+S), Open
session… (Ctrl+O) and Open recent, at the top of the menu. A model's menu (the note's
ui/note/file_menu.py, the interference model's ui/interference/session_menu.py) says its
own parts: the recent list's key, the file filter and name, the tips (class attributes),
and the run on screen as a script, the session file's text, how an opened session starts
its run and what the status bar says (the methods under "the model's parts").

The methods take paths (save_session, open_session): the menu actions call them after a
dialog, tests call them directly. They never raise on bad input: they report through the
window's fail (a non-modal message), leave the current run untouched and return False.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_text
from sparsity_gui.ui.dialogs import UNCHANGED, RecentMenu, open_file_name, save_file_name

RECENT_MAX = 8


class SessionMenu(QtCore.QObject):
    RECENT_KEY = ""  # the settings key of the recent sessions: each window its own list
    FILE_FILTER = ""  # the dialogs' filter
    FILE_NAME = "session.json"  # offered by Save session…
    OPEN_TIP = ""
    SAVE_TIP = ""

    def __init__(self, window, menu: QtWidgets.QMenu):
        super().__init__(window)
        self.win = window
        self._build(menu)

    # --- the model's parts ----------------------------------------------------------------
    def script(self) -> tuple[Any, Any]:
        """The run on screen as (script, where its W(0) came from), read from the snapshot
        on the GUI thread; InputError while the run is starting."""
        raise NotImplementedError

    def session_text(self, script, source, pins: list, style) -> str:
        """The session file's text; made in the save's worker."""
        raise NotImplementedError

    def saved_text(self, script) -> str:
        """Where the saved run is, for the status bar: 't = 2.5', 'step 1,000'."""
        raise NotImplementedError

    def load_session(self, path: Path):
        """The session in ``path`` (InputError: why it cannot be opened)."""
        raise NotImplementedError

    def start_session(self, session, path: Path) -> None:
        """The window's new run: the session's, replayed to its instant, paused."""
        raise NotImplementedError

    # --- the menu -------------------------------------------------------------------------
    def _action(self, name: str, text: str, slot: Callable, shortcut, tip: str) -> QtGui.QAction:
        act = QtGui.QAction(text, self.win)
        act.setObjectName(name)
        act.setShortcut(QtGui.QKeySequence(shortcut))
        act.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        act.setToolTip(tip)
        act.setStatusTip(tip)
        act.triggered.connect(lambda _checked=False: slot())
        return act

    def _build(self, menu: QtWidgets.QMenu) -> None:
        """Open session…, Open recent and Save session… at the top of ``menu``."""
        first = menu.actions()[0] if menu.actions() else None
        self.act_open_session = self._action(
            "act_open_session",
            "Open session…",
            self.open_session_dialog,
            QtGui.QKeySequence.StandardKey.Open,
            self.OPEN_TIP,
        )
        self.act_save_session = self._action(
            "act_save_session",
            "Save session…",
            self.save_session_dialog,
            QtGui.QKeySequence.StandardKey.Save,
            self.SAVE_TIP,
        )
        self.recent_menu = RecentMenu(self.win, self.RECENT_KEY, self.open_session, RECENT_MAX)
        menu.insertAction(first, self.act_open_session)
        menu.insertMenu(first, self.recent_menu)
        menu.insertAction(first, self.act_save_session)
        menu.insertSeparator(first)

    # --- sessions -------------------------------------------------------------------------
    def save_session(self, path: str | Path, wait: bool = True) -> bool:
        """The run on screen into ``path`` (atomically: an earlier file stays whole if the
        write fails), made and written beside the GUI as an export (``wait``: see
        PanelExports.run_job)."""
        win = self.win
        path = Path(path)
        title = "Cannot save the session"
        try:
            script, source = self.script()
            pins = list(win.pin_control.pins)
            style = win.exports.style()
        except InputError as exc:
            return win.fail(title, exc.message)

        def work(job) -> None:
            text = self.session_text(script, source, pins, style)
            job.check()
            atomic_write_text(path, text)

        def finish(outcome) -> bool:
            error = outcome.error
            if outcome.ok:
                self.add_recent(path)
                return win.done(
                    f"Saved the session ({self.saved_text(script)}, {len(script.changes)} live change(s), "
                    f"{len(pins)} pinned run(s)) to {path}"
                )
            if outcome.cancelled:
                win.done(f"Saving cancelled; {path} is as it was")
                return False
            if isinstance(error, InputError):
                return win.fail(title, error.message)
            if isinstance(error, OSError):
                return win.fail(title, f"{path}: {error.strerror or error}. {UNCHANGED}")
            assert error is not None
            raise error

        return win.exports.run_job(work, "Saving the session…", finish, wait=wait, title=title)

    def open_session(self, path: str | Path) -> bool:
        """Train the saved run again: the window shows it paused at the saved instant, its
        parameters in the dock, its pins and its series of snapshots. A bad file shows what
        is wrong and leaves the current run as it was."""
        win = self.win
        path = Path(path)
        try:
            session = self.load_session(path)
        except InputError as exc:
            return win.fail("Cannot open the session", exc.message)
        refused = win.checkpoints.unreadable(session.series)  # before the run changes
        if refused:
            return win.fail("Cannot open the session", f"{path}: {refused}; the current run goes on")
        script = session.script
        win.set_playing(False)
        self.start_session(session, path)  # the worker replays the run to the saved instant
        win.pin_control.restore(session.pins)  # the session as saved, pinned runs included
        self.add_recent(path)
        unused = ""  # a style file gone: said (in a box too), the run opens anyway
        if session.style not in (None, win.exports.style()) and not win.exports.set_style(session.style):
            unused = f"; its figure style is not used: {win.last_error}"
        # its series of snapshots read again (beside the GUI); one that is gone: said here
        gone = win.checkpoints.reopen(session.series)
        if gone:
            unused += f"; {gone}"
        return win.done(
            f"Opened {path}: {self.saved_text(script)}, {len(script.changes)} live change(s){unused}"
        )

    def recent_sessions(self) -> list[str]:
        return self.recent_menu.paths()

    def add_recent(self, path: str | Path) -> None:
        self.recent_menu.add(path)

    def clear_recent(self) -> None:
        self.recent_menu.clear_list()

    # --- dialogs (the menu actions) -------------------------------------------------------
    def open_session_dialog(self) -> None:
        path = open_file_name(self.win, "Open session", self.FILE_FILTER)
        if path:
            self.open_session(path)

    def save_session_dialog(self) -> None:
        path, _ = save_file_name(self.win, "Save session", self.FILE_NAME, self.FILE_FILTER)
        if path:
            if not Path(path).suffix:
                path += ".json"
            self.save_session(path, wait=False)
