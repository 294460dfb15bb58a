"""The interference window's sessions: File → Save session… (Ctrl+S), Open session…
(Ctrl+O) and Open recent, as the note's window has them (ui/note/file_menu.py).

`SessionMenu`'s methods take paths (save_session, open_session): the menu actions call them
after a dialog, tests call them directly. They never raise on bad input: they report
through the window's fail (a non-modal message), leave the current run untouched and return
False. A session's run is started through the window's start_run, which the worker replays
to the saved step (core/interference/session.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_text
from sparsity_gui.core.interference.initial import W0File, w0_label
from sparsity_gui.core.interference.session import InterferenceScript, load_session, session_text
from sparsity_gui.ui.dialogs import UNCHANGED, RecentMenu, open_file_name, save_file_name

RECENT_KEY = "recent/interference_sessions"  # the note's window keeps its own list
RECENT_MAX = 8
SESSION_FILTER = "sparsity-gui interference session (*.json);;All files (*)"


class SessionMenu(QtCore.QObject):
    def __init__(self, window, menu: QtWidgets.QMenu):
        super().__init__(window)
        self.win = window
        self._build(menu)

    # --- the menu ---------------------------------------------------------------------------
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
            "Open a saved session and train its run again to the saved step (Ctrl+O)",
        )
        self.act_save_session = self._action(
            "act_save_session",
            "Save session…",
            self.save_session_dialog,
            QtGui.QKeySequence.StandardKey.Save,
            "Save the run (parameters, W(0), live changes, step, pinned runs) as a JSON session (Ctrl+S)",
        )
        self.recent_menu = RecentMenu(self.win, RECENT_KEY, self.open_session, RECENT_MAX)
        menu.insertAction(first, self.act_open_session)
        menu.insertMenu(first, self.recent_menu)
        menu.insertAction(first, self.act_save_session)
        menu.insertSeparator(first)

    # --- sessions ---------------------------------------------------------------------------
    def current_script(self) -> tuple[InterferenceScript, dict]:
        """The run on screen as a script (from its snapshot: never the worker's objects) and
        where its W(0) came from; InputError while it is starting."""
        win = self.win
        snap = win.snapshot
        if snap is None or snap.run_id != win.run_id or snap.latest is None or snap.initial_params is None:
            raise InputError("session", "the run is still starting; try again in a moment")
        source = dict(win.run_w0_source)
        if source.get("source") != "normal":  # a file's (or a caller's) W(0): embedded
            source["source"] = "file"
        w0 = None if source["source"] == "normal" else snap.w0
        changes = tuple(c for c in snap.changes if c.step <= snap.step)
        return InterferenceScript(snap.initial_params, w0, changes, snap.step), source

    def session_maker(self) -> Callable[[], str]:
        """The run on screen as a session file's text (Export all's session.json): what it
        needs read now, on the GUI thread; the text made by the function returned, in any
        thread. InputError while the run is starting."""
        script, source = self.current_script()
        pins = list(self.win.pin_control.pins)
        style = self.win.exports.style()
        return lambda: session_text(script, source, pins, style)

    def save_session(self, path: str | Path, wait: bool = True) -> bool:
        """The run on screen into ``path`` (atomically: an earlier file stays whole if the
        write fails), written beside the GUI as an export (``wait``: PanelExports.run_job)."""
        win = self.win
        path = Path(path)
        title = "Cannot save the session"
        try:
            script, source = self.current_script()
            pins = list(win.pin_control.pins)
            style = win.exports.style()
        except InputError as exc:
            return win.fail(title, exc.message)

        def work(job) -> None:
            text = session_text(script, source, pins, style)
            job.check()
            atomic_write_text(path, text)

        def finish(outcome) -> bool:
            error = outcome.error
            if outcome.ok:
                self.add_recent(path)
                return win.done(
                    f"Saved the session (step {script.step:,}, {len(script.changes)} live change(s), "
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
        """Train the saved run again: the window shows it paused at the saved step, its
        parameters in the dock, its pins and series. A bad file shows what is wrong and
        leaves the current run as it was."""
        win = self.win
        path = Path(path)
        try:
            session = load_session(path)
        except InputError as exc:
            return win.fail("Cannot open the session", exc.message)
        refused = win.checkpoints.unreadable(session.series)  # before the run changes
        if refused:
            return win.fail("Cannot open the session", f"{path}: {refused}; the current run goes on")
        script = session.script
        win.set_playing(False)
        if session.source["source"] == "file":
            where = session.source.get("path")
            label = w0_label(where, session.source.get("tensor")) if where else "embedded weights"
            win.w0_file = W0File(script.w0, f"{label} (from {path.name})", dict(session.source))
        else:
            win.w0_file = None
        win.start_run(session.params, script.w0, script=script)
        win.pin_control.restore(session.pins)
        self.add_recent(path)
        unused = ""  # a style file gone: said (in a box too), the run opens anyway
        if session.style not in (None, win.exports.style()) and not win.exports.set_style(session.style):
            unused = f"; its figure style is not used: {win.last_error}"
        gone = win.checkpoints.reopen(session.series)  # read again beside the GUI
        if gone:
            unused += f"; {gone}"
        return win.done(f"Opened {path}: step {script.step:,}, {len(script.changes)} live change(s){unused}")

    def recent_sessions(self) -> list[str]:
        return self.recent_menu.paths()

    def add_recent(self, path: str | Path) -> None:
        self.recent_menu.add(path)

    def clear_recent(self) -> None:
        self.recent_menu.clear_list()

    # --- dialogs (the menu actions) ---------------------------------------------------------
    def open_session_dialog(self) -> None:
        path = open_file_name(self.win, "Open session", SESSION_FILTER)
        if path:
            self.open_session(path)

    def save_session_dialog(self) -> None:
        path, _ = save_file_name(self.win, "Save session", "interference-session.json", SESSION_FILTER)
        if path:
            if not Path(path).suffix:
                path += ".json"
            self.save_session(path, wait=False)
