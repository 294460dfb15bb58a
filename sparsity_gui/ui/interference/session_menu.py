"""The interference window's sessions: File → Save session… (Ctrl+S), Open session…
(Ctrl+O) and Open recent (the menu is both windows' ui/session_menu.py). What is the
model's: the run on screen as a script with where its W(0) came from, the session's text
(core/interference/session.py), and an opened session's run, which the worker trains
again to the saved step."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.initial import W0File, w0_label
from sparsity_gui.core.interference.session import InterferenceScript, load_session, session_text
from sparsity_gui.ui.session_menu import SessionMenu


class InterferenceSessionMenu(SessionMenu):
    RECENT_KEY = "recent/interference_sessions"  # the note's window keeps its own list
    FILE_FILTER = "sparsity-gui interference session (*.json);;All files (*)"
    FILE_NAME = "interference-session.json"
    OPEN_TIP = "Open a saved session and train its run again to the saved step (Ctrl+O)"
    SAVE_TIP = "Save the run (parameters, W(0), live changes, step, pinned runs) as a JSON session (Ctrl+S)"

    def script(self) -> tuple[InterferenceScript, dict]:
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

    def session_text(self, script, source, pins: list, style) -> str:
        return session_text(script, source, pins, style)

    def saved_text(self, script) -> str:
        return f"step {script.step:,}"

    def load_session(self, path: Path):
        return load_session(path)

    def start_session(self, session, path: Path) -> None:
        win, script = self.win, session.script
        if session.source["source"] == "file":
            where = session.source.get("path")
            label = w0_label(where, session.source.get("tensor")) if where else "embedded weights"
            win.w0_file = W0File(script.w0, f"{label} (from {path.name})", dict(session.source))
        else:
            win.w0_file = None
        win.start_run(session.params, script.w0, script=script)

    def session_maker(self) -> Callable[[], str]:
        """The run on screen as a session file's text (Export all's session.json): what it
        needs read now, on the GUI thread; the text made by the function returned, in any
        thread. InputError while the run is starting."""
        script, source = self.script()
        pins = list(self.win.pin_control.pins)
        style = self.win.exports.style()
        return lambda: session_text(script, source, pins, style)
