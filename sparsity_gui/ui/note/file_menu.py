"""The note window's File menu: its sessions (the menu is both windows'
ui/session_menu.py; the note's parts here: the run on screen, the session's text with the
replayed run's regime, an opened session's run), W(0) from a file, and its Presets menu.

`FileMenu`'s methods take paths (save_session, open_session, load_w0, apply_preset, ...):
the menu actions call them after a dialog, tests call them directly. They never raise on
bad input: they report through the window's fail (a non-modal message), leave the current
run untouched and return False. A new run is always started through the window's
start_run.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.changes import RunScript
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
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.weights_files import ArrayInfo
from sparsity_gui.ui.session_menu import SessionMenu
from sparsity_gui.ui.weights_dialog import ArrayChoiceDialog


class FileMenu(SessionMenu):
    RECENT_KEY = "recent/sessions"
    FILE_FILTER = "sparsity-gui session (*.json);;All files (*)"
    FILE_NAME = "session.json"
    OPEN_TIP = "Open a saved session and reproduce its run (Ctrl+O)"
    SAVE_TIP = "Save the run (parameters, W(0), live changes, time) as a JSON session (Ctrl+S)"

    def _build(self, menu: QtWidgets.QMenu) -> None:
        """The sessions at the top of ``menu`` (ui/session_menu.py); the Presets menu."""
        super()._build(menu)
        win = self.win
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

    # --- sessions: the note's parts ----------------------------------------------------------
    def script(self) -> tuple[RunScript, W0Source]:
        return self.win.current_script()

    def session_text(self, script, source, pins: list, style) -> str:
        """With the regime and the constants of the replayed run (as Export all writes them:
        a function of the session alone; the screen's fit is of the wall-clock history)."""
        run = self.win.exports.replayed(script)
        return session_text(script, source, pins, results_entry(run.regime, run.fit), style)

    def saved_text(self, script) -> str:
        return f"t = {script.t:.6g}"

    def load_session(self, path: Path):
        return load_session(path)

    def start_session(self, session, path: Path) -> None:
        script = session.script
        self.win.start_run(
            session.params,
            script.w0 if session.source.kind == "file" else None,
            source=session.source,
            script=script,
            stop_at_one=session.params.t_end is None,
        )

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


# what a preset's description always names; its λ(t), end and W(0) only when it has them
_DESCRIBED = ("m", "lam", "lam_warmup", "lam_schedule", "sigma", "seed", "method", "eta", "t_end", "w0_path")
_NAMED_WHEN_SET = ("lam_warmup", "lam_schedule", "t_end", "w0_path")


def _describe(params: SimParams) -> str:
    """'m = 1,000, λ = 1.0e-3, σ = 0.9, seed = 0, method = gd, η = 0.05', each setting as
    its row of the settings table writes it (η only under gradient descent)."""
    texts = []
    for name in _DESCRIBED:
        setting = NOTE_SETTINGS[name]
        value = setting.value(params)
        if (name in _NAMED_WHEN_SET and value in (None, 0)) or (name == "eta" and params.method != "gd"):
            continue
        texts.append(setting.text(value))
    return ", ".join(texts)
