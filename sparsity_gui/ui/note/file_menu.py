"""The File menu's sessions, presets and exports, and W(0) from a file.

`install_file_actions(window, menu)` adds the entries to the window's File menu (and a
Presets menu) and gives the window `window.files`, a FileActions whose methods take paths
(save_session, open_session, export_all, export_figure, export_data, apply_preset, ...):
the menu actions call them after a file dialog, and tests call them directly. They never
raise on bad input: they show a non-modal message (kept in `files.error_box`, the text in
`files.last_error`), leave the current run untouched and return False.

Exported data come from re-simulating the run's script (parameters at t = 0, W(0), the
schedule of live changes, evenly spaced sample times), not from the GUI's history (whose
sampling depends on the wall clock): the same run or session always exports the same
numbers, and every exported figure can be redrawn from the exported files.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes, atomic_write_chunks, json_text
from sparsity_gui.core.note.files import iter_deaths_csv, iter_weights_csv, timeseries_csv
from sparsity_gui.core.note.initial import load_array, npz_array_names, vector_from
from sparsity_gui.core.note.params import SimParams, check_memory
from sparsity_gui.core.note.presets import (
    BUILTIN,
    all_presets,
    delete_user_preset,
    find_preset,
    load_user_presets,
    save_user_preset,
)
from sparsity_gui.core.note.sampled import SampledRun, replay_script
from sparsity_gui.core.note.files import run_metadata
from sparsity_gui.core.note.runner import default_speed
from sparsity_gui.core.note.session import DEFAULT_SAMPLES, W0Source, load_session, session_text
from sparsity_gui.core.note.simulation import RunScript
from sparsity_gui.ui.window import export_figure_file, show_warning

RECENT_KEY = "recent/sessions"
RECENT_MAX = 8
SESSION_FILTER = "sparsity-gui session (*.json);;All files (*)"
FIGURE_FILTER = "PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf)"
DATA_KINDS = {
    # kind: (file name, menu text, dialog filter)
    "timeseries": ("timeseries.csv", "Time series (CSV)…", "CSV (*.csv)"),
    "weights": ("weights.csv", "Current weights k, w0, w_now (CSV)…", "CSV (*.csv)"),
    "deaths": ("deaths.csv", "Death events (CSV)…", "CSV (*.csv)"),
    "tracked": ("tracked.csv", "Tracked weights |W_k|(t) (CSV)…", "CSV (*.csv)"),
    "run": ("run.json", "Run metadata (run.json)…", "JSON (*.json)"),
}
COMMAND_LINE = "sparsity-gui (desktop app export)"


def install_file_actions(window, menu: QtWidgets.QMenu) -> "FileActions":
    """Add sessions, presets and exports to `menu` (the File menu) and a Presets menu to
    the menu bar; set `window.files` and path-taking shortcuts on the window."""
    files = FileActions(window, menu)
    window.files = files
    for name in ("save_session", "open_session", "export_all", "export_figure", "export_data",
                 "apply_preset", "save_preset"):
        setattr(window, name, getattr(files, name))
    return files


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


class _WriteFailed(Exception):
    def __init__(self, path: Path, error: OSError, written: list[Path]):
        super().__init__(str(path))
        self.path, self.error, self.written = path, error, list(written)


class FileActions(QtCore.QObject):
    def __init__(self, window, menu: QtWidgets.QMenu):
        super().__init__(window)
        self.win = window
        self.last_error = ""
        self.error_box: QtWidgets.QMessageBox | None = None
        self.last_written: list[Path] = []
        self.w0_source = W0Source("normal")
        self._cache: tuple | None = None
        self._build(menu)
        self._hook_panel_menus()

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
        before_quit = getattr(win, "act_quit", None)
        self.act_open_session = self._action("Open session…", self.open_session_dialog,
                                             QtGui.QKeySequence.StandardKey.Open,
                                             "Open a saved session and reproduce its run (Ctrl+O)")
        self.act_open_session.setObjectName("act_open_session")
        self.act_save_session = self._action("Save session…", self.save_session_dialog,
                                             QtGui.QKeySequence.StandardKey.Save,
                                             "Save the run (parameters, W(0), live changes, time) "
                                             "as a JSON session (Ctrl+S)")
        self.act_save_session.setObjectName("act_save_session")
        self.recent_menu = QtWidgets.QMenu("Open recent", win)
        self.recent_menu.setObjectName("menu_recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        menu.insertAction(first, self.act_open_session)
        menu.insertMenu(first, self.recent_menu)
        menu.insertAction(first, self.act_save_session)
        menu.insertSeparator(first)

        self.act_export_all = self._action("Export all…", self.export_all_dialog, "Ctrl+E",
                                           "Write every panel (PNG, SVG), the window (PNG), the "
                                           "data (CSV), run.json and the session into one folder")
        self.act_export_all.setObjectName("act_export_all")
        self.figure_menu = QtWidgets.QMenu("Export figure", win)
        self.figure_menu.setObjectName("menu_export_figure")
        for i, panel in enumerate(win.panels):
            act = self._action(f"{panel.title}…", lambda i=i: self.export_figure_dialog(i),
                               tip=f"The {panel.title} panel as PNG (choose a scale), SVG or PDF")
            self.figure_menu.addAction(act)
        self.figure_menu.addSeparator()
        self.figure_menu.addAction(self._action("Whole window…", lambda: self.export_figure_dialog("window"),
                                                tip="The whole window as PNG, SVG or PDF"))
        self.data_menu = QtWidgets.QMenu("Export data", win)
        self.data_menu.setObjectName("menu_export_data")
        for kind, (_name, text, _flt) in DATA_KINDS.items():
            self.data_menu.addAction(self._action(text, lambda k=kind: self.export_data_dialog(k)))
        menu.insertAction(before_quit, self.act_export_all)
        menu.insertMenu(before_quit, self.figure_menu)
        menu.insertMenu(before_quit, self.data_menu)
        menu.insertSeparator(before_quit)

        self.presets_menu = QtWidgets.QMenu("&Presets", win)
        self.presets_menu.setObjectName("menu_presets")
        self.presets_menu.aboutToShow.connect(self._fill_presets)
        win.menuBar().addMenu(self.presets_menu)
        self._fill_presets()

    def _hook_panel_menus(self) -> None:
        """pyqtgraph's own right-click "Export..." offers its SVG exporter, which fails with
        current Qt: point it at ours."""
        for i, panel in enumerate(self.win.panels):
            scene = panel.graphics.scene()
            actions = getattr(scene, "contextMenu", None)
            if not actions:
                continue
            act = actions[0]
            try:
                act.triggered.disconnect(scene.showExportDialog)
            except (RuntimeError, TypeError):
                continue
            act.setText("Export panel…")
            act.triggered.connect(lambda _c=False, i=i: self.export_figure_dialog(i))

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = self.recent_sessions()
        for path in paths:
            act = self.recent_menu.addAction(path)
            act.triggered.connect(lambda _c=False, p=path: self.open_session(p))
        if not paths:
            none = self.recent_menu.addAction("(none yet)")
            none.setEnabled(False)
        self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("Clear list")
        clear.setEnabled(bool(paths))
        clear.triggered.connect(self.clear_recent)

    def _fill_presets(self) -> None:
        menu = self.presets_menu
        menu.clear()
        for preset in BUILTIN:
            act = menu.addAction(preset.name)
            act.setToolTip(preset.description)
            act.setStatusTip(preset.description)
            act.triggered.connect(lambda _c=False, n=preset.name: self.apply_preset(n))
        menu.addSeparator()
        try:
            user = load_user_presets()
        except InputError as exc:
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

    # --- messages -----------------------------------------------------------------------
    def fail(self, title: str, message: str) -> bool:
        """Show a problem without blocking (a non-modal box), remember it, return False."""
        self.last_error = message
        self.error_box = show_warning(self.win, self.error_box, title, message)
        self.win.statusBar().showMessage(message.splitlines()[0], 10_000)
        return False

    def done(self, message: str) -> bool:
        self.last_error = ""
        self.win.statusBar().showMessage(message, 6000)
        return True

    # --- the run as a script ----------------------------------------------------------------
    def current_script(self, samples: int = DEFAULT_SAMPLES) -> tuple[RunScript, W0Source]:
        """The shown run up to the shown instant: parameters at t = 0, W(0), live changes."""
        win = self.win
        snap = win.snapshot
        runner = win.runner
        sim = runner.sim
        if snap is None or sim is None or snap.run_id != win.run_id or runner.run_id != win.run_id:
            raise InputError("", "the run is still starting; try again in a moment")
        script = sim.script(t=snap.t, samples=samples)
        params = script.params
        if params.w0_path is None:
            source = W0Source("normal")
        elif self.w0_source.kind == "file" and self.w0_source.path == params.w0_path:
            source = self.w0_source
        else:
            source = W0Source("file", params.w0_path)
        return script, source

    def replayed(self, script: RunScript) -> SampledRun:
        """The run re-simulated from the script (cached: exporting several files replays once).
        The work runs in a thread; the window keeps painting meanwhile."""
        key = (script.params, script.t, script.changes, script.samples)
        if self._cache is not None and self._cache[0] == key and self._cache[1] is script.w0:
            return self._cache[2]
        run = self._in_thread(lambda: replay_script(script), "Re-simulating the run for export…")
        self._cache = (key, script.w0, run)
        return run

    def _in_thread(self, fn: Callable, message: str):
        result: dict = {}

        def target() -> None:
            try:
                result["value"] = fn()
            except BaseException as exc:  # re-raised on the GUI thread
                result["error"] = exc

        worker = threading.Thread(target=target, name="export", daemon=True)
        self.win.statusBar().showMessage(message)
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.WaitCursor)
        try:
            worker.start()
            while worker.is_alive():
                worker.join(0.02)
                QtWidgets.QApplication.processEvents(
                    QtCore.QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents, 20)
        finally:
            QtWidgets.QApplication.restoreOverrideCursor()
            self.win.statusBar().clearMessage()
        if "error" in result:
            raise result["error"]
        return result["value"]

    # --- sessions ---------------------------------------------------------------------------
    def save_session(self, path: str | Path) -> bool:
        path = Path(path)
        try:
            script, source = self.current_script()
            text = session_text(script, source)
            atomic_write_bytes(path, text.encode("utf-8"))
        except InputError as exc:
            return self.fail("Cannot save the session", exc.message)
        except OSError as exc:
            return self.fail("Cannot save the session", f"{path}: {_os_reason(exc)}. Nothing was "
                             "written; an earlier file of that name is unchanged.")
        self.add_recent(path)
        return self.done(f"Saved the session (t = {script.t:.6g}, {len(script.changes)} live "
                         f"change(s)) to {path}")

    def open_session(self, path: str | Path) -> bool:
        """Reproduce a saved run: the window shows it at the saved time, paused. A bad file
        shows what is wrong and leaves the current run as it was."""
        path = Path(path)
        try:
            session = load_session(path)
        except InputError as exc:
            return self.fail("Cannot open the session", exc.message)
        win = self.win
        script = session.script
        params = session.params
        win.set_playing(False)
        win.run_id += 1
        win.params = params
        win.w0 = script.w0 if session.source.kind == "file" else None
        self.w0_source = session.source
        win.runner.set_stop_at_one(params.t_end is None)
        # the worker builds the run already replayed to the saved time (Simulation(RunScript))
        win.runner.set_params(params, run_id=win.run_id, w0=script)
        win.controls.show_params(params)
        self.add_recent(path)
        return self.done(f"Opened {path}: t = {script.t:.6g}, {len(script.changes)} live change(s)")

    def recent_sessions(self) -> list[str]:
        from sparsity_gui.ui.window import settings

        value = settings().value(RECENT_KEY)
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in value if v]

    def add_recent(self, path: str | Path) -> None:
        from sparsity_gui.ui.window import settings

        path = str(Path(path).resolve())
        paths = [path, *[p for p in self.recent_sessions() if p != path]][:RECENT_MAX]
        s = settings()
        s.setValue(RECENT_KEY, paths)
        s.sync()

    def clear_recent(self) -> None:
        from sparsity_gui.ui.window import settings

        s = settings()
        s.remove(RECENT_KEY)
        s.sync()

    # --- figures ----------------------------------------------------------------------------
    def _target(self, target):
        if target == "window":
            return None
        if isinstance(target, int):
            return self.win.panels[target]
        return target

    def figure_bytes(self, target, fmt: str, scale: float = 2.0) -> bytes:
        from sparsity_gui.plots.render import render_panel, render_widget

        panel = self._target(target)
        if panel is None:
            return render_widget(self.win, fmt, scale, self.win.panels)
        return render_panel(panel, fmt, scale)

    def export_figure(self, target, path: str | Path, scale: float = 2.0) -> bool:
        """A panel (an index, a Panel) or "window", to .png (at `scale`), .svg or .pdf."""
        return export_figure_file(self, target, path, scale, ("png", "svg", "pdf"))

    # --- data -------------------------------------------------------------------------------
    def data_files(self, script: RunScript, source: W0Source) -> dict[str, Callable[[], Iterable[str]]]:
        """Every data file of the run: name -> a function giving its text in pieces (large
        CSVs are streamed, never held whole). Safe to call from a worker thread."""
        from sparsity_gui.core.note.files import tracked_csv

        run = self.replayed(script)
        sim = run.sim
        return {
            "timeseries.csv": lambda: [timeseries_csv(run.rows)],
            "weights.csv": lambda: iter_weights_csv(sim.init.w0, sim.solver.weights(), "w_now"),
            "deaths.csv": lambda: iter_deaths_csv(np.abs(sim.init.w0), sim.solver.death_times()),
            "tracked.csv": lambda: [tracked_csv(run)],
            "run.json": lambda: [json_text(run_metadata(run, script.params, COMMAND_LINE))],
            "session.json": lambda: [session_text(script, source)],
        }

    def _write(self, items: list[tuple[Path, object]]) -> list[Path]:
        """Write (path, bytes or text-piece producer) pairs atomically, in a worker thread
        (a CSV of 10^7 weights takes a while). An OSError comes back as _WriteFailed."""
        def work() -> list[Path]:
            written: list[Path] = []
            for path, payload in items:
                try:
                    if isinstance(payload, bytes):
                        atomic_write_bytes(path, payload)
                    else:
                        atomic_write_chunks(path, payload())
                except OSError as exc:
                    raise _WriteFailed(path, exc, written) from None
                written.append(path)
            return written

        return self._in_thread(work, f"Writing {len(items)} file(s)…")

    def export_data(self, kind: str, path: str | Path) -> bool:
        """One data file: timeseries, weights, deaths, tracked or run (run.json)."""
        path = Path(path)
        if kind not in DATA_KINDS:
            return self.fail("Cannot export data", f"unknown kind of data {kind!r}")
        try:
            files = self.data_files(*self.current_script())
            self._write([(path, files[DATA_KINDS[kind][0]])])
        except InputError as exc:
            return self.fail("Cannot export data", exc.message)
        except _WriteFailed as exc:
            return self.fail("Cannot export data", f"{path}: {_os_reason(exc.error)}. Nothing was "
                             "written; an earlier file of that name is unchanged.")
        self.last_written = [path]
        return self.done(f"Wrote {path}")

    def export_all(self, folder: str | Path, scale: float = 2.0) -> bool:
        """One folder: every panel as PNG and SVG (drawn from the exported data, with the
        live panels' toggles), the window as PNG, timeseries.csv, weights.csv, deaths.csv,
        tracked.csv, run.json and session.json. Each file is written atomically; on an error
        the files already there stay intact and the message names the file."""
        from sparsity_gui.plots.figures import FigureSet, panel_view_state, snapshot_of

        folder = Path(folder)
        try:
            if folder.exists() and not folder.is_dir():
                raise InputError("", f"{folder} is a file, not a folder")
            script, source = self.current_script()
            files = self.data_files(script, source)
            run = self.replayed(script)
            blobs: dict[str, bytes] = {}
            with FigureSet(snapshot_of(run), [panel_view_state(p) for p in self.win.panels]) as figs:
                blobs.update(figs.files(("png", "svg"), scale, layout_name=None))
            blobs["window.png"] = self.figure_bytes("window", "png", 1.0)
        except InputError as exc:
            return self.fail("Cannot export", exc.message)
        except (ValueError, RuntimeError) as exc:
            return self.fail("Cannot export", str(exc))
        items: list[tuple[Path, object]] = [(folder / name, data) for name, data in blobs.items()]
        items += [(folder / name, produce) for name, produce in files.items()]
        try:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise _WriteFailed(folder, exc, []) from None
            written = self._write(items)
        except _WriteFailed as exc:
            self.last_written = exc.written
            return self.fail("Cannot export", f"{exc.path}: {_os_reason(exc.error)}. "
                             f"{len(exc.written)} of {len(items)} files were written; every file is "
                             "either whole or untouched (earlier files of the same names are intact).")
        self.last_written = written
        return self.done(f"Exported {len(written)} files to {folder}")

    # --- presets ----------------------------------------------------------------------------
    def preset_names(self) -> list[str]:
        try:
            return [p.name for p in all_presets()]
        except InputError:
            return [p.name for p in BUILTIN]

    def apply_preset(self, name: str) -> bool:
        """Start a new run with a preset's parameters (W(0) a normal draw) at a speed that
        reaches one weight in about 20 s."""
        try:
            params = find_preset(name).params()
            check_memory(params.m)
        except InputError as exc:
            return self.fail("Cannot use the preset", exc.message)
        win = self.win
        speed = default_speed(params.lam)
        win.on_speed_changed(speed)
        win.runner.set_stop_at_one(params.t_end is None)
        self.w0_source = W0Source("normal")
        win.start_new_run(params)
        win.controls.show_params(params, speed)
        return self.done(f"Preset {name}: {_describe(params)}")

    def save_preset(self, name: str, description: str = "") -> bool:
        try:
            save_user_preset(name, self.win.params, description)
        except InputError as exc:
            return self.fail("Cannot save the preset", exc.message)
        self._fill_presets()
        return self.done(f"Saved preset {name.strip()!r}")

    def delete_preset(self, name: str) -> bool:
        try:
            delete_user_preset(name)
        except InputError as exc:
            return self.fail("Cannot delete the preset", exc.message)
        self._fill_presets()
        return self.done(f"Deleted preset {name!r}")

    # --- W(0) from a file --------------------------------------------------------------------
    def load_w0(self, path: str | Path, row: int | None = None, array: str | None = None) -> bool:
        """Start a run with W(0) from .npy, .npz or CSV/text. A .npz with several arrays
        asks which one (unless `array` is given), a matrix asks for the row (unless `row`
        is given). A bad file shows why; the current run goes on."""
        win = self.win
        path = str(path)
        try:
            if array is None:
                names = npz_array_names(path)
                if len(names) > 1:
                    array, ok = QtWidgets.QInputDialog.getItem(
                        win, "Pick an array", f"{Path(path).name} holds {len(names)} arrays.\n"
                        "Which one holds W(0)?", names, 0, False)
                    if not ok:
                        win.controls.show_params(win.params)
                        return False
            arr = load_array(path, array)
            if arr.ndim == 2 and 1 not in arr.shape and row is None:
                row, ok = QtWidgets.QInputDialog.getInt(
                    win, "Pick a row", f"{Path(path).name} holds a {arr.shape[0]}×{arr.shape[1]} "
                    "matrix.\nWhich row is W(0)?", 0, 0, arr.shape[0] - 1)
                if not ok:
                    win.controls.show_params(win.params)
                    return False
            where = path + (f" [{array}]" if array else "")
            w0 = vector_from(arr, where, row)
            params = win.params.with_changes(w0_path=path, m=int(w0.size))
        except InputError as exc:
            win.controls.show_params(win.params)
            return self.fail("Cannot load W(0)", exc.message)
        self.w0_source = W0Source("file", path, array, row)
        win.start_new_run(params, w0)
        return self.done(f"W(0) from {self.w0_source.describe()}: m = {w0.size}")

    # --- dialogs (the menu actions) ------------------------------------------------------------
    def _dir(self) -> str:
        recent = self.recent_sessions()
        return str(Path(recent[0]).parent) if recent else ""

    def open_session_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.win, "Open session", self._dir(),
                                                        SESSION_FILTER)
        if path:
            self.open_session(path)

    def save_session_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.win, "Save session",
                                                        str(Path(self._dir()) / "session.json"),
                                                        SESSION_FILTER)
        if path:
            if not Path(path).suffix:
                path += ".json"
            self.save_session(path)

    def export_figure_dialog(self, target) -> None:
        panel = self._target(target)
        name = "window" if panel is None else panel.title.lower().replace(" ", "_").replace(",", "")
        path, chosen = QtWidgets.QFileDialog.getSaveFileName(self.win, "Export figure",
                                                             f"{name}.png", FIGURE_FILTER)
        if not path:
            return
        if not Path(path).suffix:
            path += {"S": ".svg", "P": ".pdf"}.get(chosen[:1], ".png") if chosen else ".png"
        scale = 2.0
        if path.lower().endswith(".png"):
            scale, ok = QtWidgets.QInputDialog.getDouble(
                self.win, "PNG scale", "Scale (1 = screen size, 2 = twice as many pixels):",
                2.0, 0.5, 8.0, 1)
            if not ok:
                return
        self.export_figure(target, path, scale)

    def export_data_dialog(self, kind: str) -> None:
        name, _text, flt = DATA_KINDS[kind]
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.win, "Export data", name,
                                                        f"{flt};;All files (*)")
        if path:
            self.export_data(kind, path)

    def export_all_dialog(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self.win, "Export all into folder")
        if folder:
            self.export_all(folder)

    def save_preset_dialog(self) -> None:
        name, ok = QtWidgets.QInputDialog.getText(self.win, "Save preset",
                                                  f"Name for {_describe(self.win.params)}:")
        if ok and name.strip():
            self.save_preset(name)


def _describe(params: SimParams) -> str:
    return (f"m = {params.m:,}, λ = {params.lam:g}, σ = {params.sigma:g}, seed = {params.seed}, "
            f"{params.method}" + (f", η = {params.eta:g}" if params.method == "gd" else ""))
