"""The note window's File menu (sessions and recent sessions, W(0) from a file) and its
Presets menu.

`FileMenu`'s methods take paths (save_session, open_session, load_w0, apply_preset, ...):
the menu actions call them after a dialog, tests call them directly. They never raise on
bad input: they report through the window's fail (a non-modal message), leave the current
run untouched and return False. A new run is always started through the window's
start_run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes
from sparsity_gui.core.note.initial import MAX_FILE_WEIGHTS, load_w0, needs_row, w0_arrays
from sparsity_gui.core.note.metrics import results_entry
from sparsity_gui.core.note.params import SimParams, check_memory, check_run_work
from sparsity_gui.core.note.presets import (
    BUILTIN,
    delete_user_preset,
    find_preset,
    load_user_presets,
    save_user_preset,
)
from sparsity_gui.core.note.runner import default_speed
from sparsity_gui.core.note.session import W0Source, load_session, session_text
from sparsity_gui.core.weights_files import ArrayInfo
from sparsity_gui.ui.dialogs import UNCHANGED, RecentMenu, open_file_name, save_file_name
from sparsity_gui.ui.weights_dialog import ArrayChoiceDialog

RECENT_KEY = "recent/sessions"
RECENT_MAX = 8
SESSION_FILTER = "sparsity-gui session (*.json);;All files (*)"


class FileMenu(QtCore.QObject):
    def __init__(self, window, menu: QtWidgets.QMenu):
        super().__init__(window)
        self.win = window
        self._build(menu)

    # --- menus --------------------------------------------------------------------------
    def _action(self, text: str, slot: Callable, shortcut=None, tip: str = "") -> QtGui.QAction:
        act = QtGui.QAction(text, self.win)
        if shortcut is not None:
            act.setShortcut(QtGui.QKeySequence(shortcut))
            act.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        if tip:
            act.setToolTip(tip)
            act.setStatusTip(tip)
        act.triggered.connect(lambda _checked=False: slot())
        return act

    def _build(self, menu: QtWidgets.QMenu) -> None:
        win = self.win
        first = menu.actions()[0] if menu.actions() else None
        self.act_open_session = self._action(
            "Open session…",
            self.open_session_dialog,
            QtGui.QKeySequence.StandardKey.Open,
            "Open a saved session and reproduce its run (Ctrl+O)",
        )
        self.act_open_session.setObjectName("act_open_session")
        self.act_save_session = self._action(
            "Save session…",
            self.save_session_dialog,
            QtGui.QKeySequence.StandardKey.Save,
            "Save the run (parameters, W(0), live changes, time) as a JSON session (Ctrl+S)",
        )
        self.act_save_session.setObjectName("act_save_session")
        self.recent_menu = RecentMenu(win, RECENT_KEY, self.open_session, RECENT_MAX)
        menu.insertAction(first, self.act_open_session)
        menu.insertMenu(first, self.recent_menu)
        menu.insertAction(first, self.act_save_session)
        menu.insertSeparator(first)

        self.presets_menu = QtWidgets.QMenu("&Presets", win)
        self.presets_menu.setObjectName("menu_presets")
        self.presets_menu.aboutToShow.connect(self._fill_presets)
        win.menuBar().addMenu(self.presets_menu)
        self.presets_problem = ""  # why the user's presets file cannot be read, if it cannot
        self._fill_presets()
        if self.presets_problem:  # said once, at the start; the menu says it while it lasts
            win.fail(
                "Your presets cannot be read",
                f"{self.presets_problem}\n\nThe file is left as it is. The built-in presets work; "
                "saving a preset needs the file repaired or moved away first.",
            )

    def _fill_presets(self) -> None:
        menu = self.presets_menu
        menu.clear()
        for preset in BUILTIN:
            act = menu.addAction(preset.name)
            act.setToolTip(preset.description)
            act.setStatusTip(preset.description)
            act.triggered.connect(lambda _c=False, n=preset.name: self.apply_preset(n))
        menu.addSeparator()
        self.presets_problem = ""
        try:
            user = load_user_presets()
        except InputError as exc:
            self.presets_problem = exc.message
            user = []
            bad = menu.addAction("(your presets file cannot be read)")
            bad.setToolTip(exc.message)
            bad.setEnabled(False)
        for preset in user:
            act = menu.addAction(preset.name)
            act.setToolTip(preset.description or _describe(preset.params()))
            act.triggered.connect(lambda _c=False, n=preset.name: self.apply_preset(n))
        menu.addSeparator()
        save = menu.addAction("Save current parameters as preset…")
        save.triggered.connect(self.save_preset_dialog)
        delete = menu.addMenu("Delete preset")
        delete.setEnabled(bool(user))
        for preset in user:
            act = delete.addAction(preset.name)
            act.triggered.connect(lambda _c=False, n=preset.name: self.delete_preset(n))

    # --- sessions ---------------------------------------------------------------------------
    def save_session(self, path: str | Path, wait: bool = True) -> bool:
        """The session into ``path``, with the regime and the constants of the replayed run
        (as Export all writes them: a function of the session alone; the screen's fit is of
        the wall-clock history). Replayed and written beside the GUI, as an export
        (``wait``: see PanelExports.run_job)."""
        win = self.win
        path = Path(path)
        title = "Cannot save the session"
        try:
            script, source = win.current_script()
            pins = list(win.pin_control.pins)
            style = win.exports.style()
        except InputError as exc:
            return win.fail(title, exc.message)

        def work(job) -> None:
            run = win.exports.replayed(script)
            job.check()
            text = session_text(script, source, pins, results_entry(run.regime, run.fit), style)
            atomic_write_bytes(path, text.encode("utf-8"))

        def finish(outcome) -> bool:
            error = outcome.error
            if outcome.ok:
                self.add_recent(path)
                return win.done(
                    f"Saved the session (t = {script.t:.6g}, {len(script.changes)} live change(s), "
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
        """Reproduce a saved run: the window shows it at the saved time, paused. A bad file
        shows what is wrong and leaves the current run as it was."""
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
        # the worker builds the run already replayed to the saved time
        win.start_run(
            session.params,
            script.w0 if session.source.kind == "file" else None,
            source=session.source,
            script=script,
            stop_at_one=session.params.t_end is None,
        )
        win.pin_control.restore(session.pins)  # the session as saved, pinned runs included
        self.add_recent(path)
        unused = ""  # a style file gone: said (in a box too), the run opens anyway
        if session.style not in (None, win.exports.style()) and not win.exports.set_style(session.style):
            unused = f"; its figure style is not used: {win.last_error}"
        # its series of snapshots read again (beside the GUI); one that is gone: said here
        gone = win.checkpoints.reopen(session.series)
        if gone:
            unused += f"; {gone}"
        return win.done(f"Opened {path}: t = {script.t:.6g}, {len(script.changes)} live change(s){unused}")

    def recent_sessions(self) -> list[str]:
        return self.recent_menu.paths()

    def add_recent(self, path: str | Path) -> None:
        self.recent_menu.add(path)

    def clear_recent(self) -> None:
        self.recent_menu.clear_list()

    # --- presets ----------------------------------------------------------------------------
    def apply_preset(self, name: str) -> bool:
        """Start a new run with a preset's parameters (W(0) a normal draw) at a speed that
        reaches one weight in about 20 s; it runs, paused before or not (choosing one is
        asking to see it)."""
        win = self.win
        try:
            params = find_preset(name).params()
            check_memory(params.m)
            check_run_work(params)
        except InputError as exc:
            return win.fail("Cannot use the preset", exc.message)
        speed = default_speed(params.lam)
        win.on_speed_changed(speed)
        if not win.playing:
            win.set_playing(True)
        win.start_run(params, stop_at_one=params.t_end is None)
        win.controls.show_params(params, speed)
        return win.done(f"Preset {name}: {_describe(params)}")

    def save_preset(self, name: str, description: str = "") -> bool:
        try:
            save_user_preset(name, self.win.params, description)
        except InputError as exc:
            return self.win.fail("Cannot save the preset", exc.message)
        self._fill_presets()
        return self.win.done(f"Saved preset {name.strip()!r}")

    def delete_preset(self, name: str) -> bool:
        try:
            delete_user_preset(name)
        except InputError as exc:
            return self.win.fail("Cannot delete the preset", exc.message)
        self._fill_presets()
        return self.win.done(f"Deleted preset {name!r}")

    # --- W(0) from a file --------------------------------------------------------------------
    def load_w0(self, path: str | Path, row: int | None = None, array: str | None = None) -> bool:
        """Start a run with W(0) from a weights file (.npy, .npz, .safetensors, PyTorch,
        CSV/text). A file with several arrays or tensors, or a matrix, opens the dialog that
        picks the array and the row (unless ``array`` and ``row`` say). A bad file shows
        why; the current run goes on."""
        win = self.win
        path = str(path)
        try:
            kind, infos = w0_arrays(path)
            if array is not None:
                info = next((i for i in infos if i.name == array), None)
            else:
                info = infos[0] if len(infos) == 1 else None
            if (array is None and len(infos) > 1) or (info is not None and needs_row(info) and row is None):
                dialog = ArrayChoiceDialog(
                    win,
                    path,
                    kind,
                    infos,
                    usable=_usable_for_w0,
                    explain=_explain_w0,
                    needs_row=needs_row,
                    selected=array,
                )
                if dialog.exec() != QtWidgets.QDialog.DialogCode.Accepted:
                    win.controls.show_params(win.params)
                    return False
                array, row = dialog.choice()
            w0 = load_w0(path, row, array)
            params = win.params.with_changes(w0_path=path, m=int(w0.size))
        except InputError as exc:
            win.controls.show_params(win.params)
            return win.fail("Cannot load W(0)", exc.message)
        source = W0Source("file", path, array, row)
        win.start_run(params, w0, source=source)
        return win.done(f"W(0) from {source.describe()}: m = {w0.size}")

    # --- dialogs (the menu actions) ------------------------------------------------------------
    def open_session_dialog(self) -> None:
        path = open_file_name(self.win, "Open session", SESSION_FILTER)
        if path:
            self.open_session(path)

    def save_session_dialog(self) -> None:
        path, _ = save_file_name(self.win, "Save session", "session.json", SESSION_FILTER)
        if path:
            if not Path(path).suffix:
                path += ".json"
            self.save_session(path, wait=False)

    def save_preset_dialog(self) -> None:
        name, ok = QtWidgets.QInputDialog.getText(
            self.win, "Save preset", f"Name for {_describe(self.win.params)}:"
        )
        if ok and name.strip():
            self.save_preset(name)


def _usable_for_w0(info: ArrayInfo) -> str | None:
    """Why an array cannot hold the note's W(0) (a vector, or one row of a matrix), or None."""
    if len(info.shape) > 2:
        return f"{len(info.shape)}-D: W(0) is a vector or one row of a matrix"
    if info.size == 0:
        return "empty"
    width = info.shape[-1] if info.shape else 1
    if (info.size if not needs_row(info) else width) > MAX_FILE_WEIGHTS:
        return f"more than {MAX_FILE_WEIGHTS:.0e} weights"
    return None


def _explain_w0(info: ArrayInfo, row: int | None) -> str:
    name = info.name if info.name is not None else "the array"
    if row is not None:
        return f"W(0) = row {row} of {name} ({info.shape[0]} × {info.shape[1]}): m = {info.shape[1]:,}"
    return f"W(0) = {name}: m = {max(info.size, 1):,}"


def _describe(params: SimParams) -> str:
    return (
        f"m = {params.m:,}, λ = {params.lam:g}, σ = {params.sigma:g}, seed = {params.seed}, "
        f"{params.method}" + (f", η = {params.eta:g}" if params.method == "gd" else "")
    )
