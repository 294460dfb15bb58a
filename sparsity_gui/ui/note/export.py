"""The note window's exports: every panel or the whole window as PNG (at a chosen scale),
SVG or PDF; the run's data (timeseries, weights, deaths, tracked weights, run.json); and
*Export all* into one folder.

Exported data come from re-simulating the run's script (parameters at t = 0, W(0), the
schedule of live changes, evenly spaced sample times), taken from the snapshot on screen,
not from the GUI's history (whose sampling depends on the wall clock): the same run or
session always exports the same numbers, and every exported figure can be redrawn from
the exported files. The replay and the writing run in a thread while the window paints.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes, atomic_write_chunks, atomic_write_with, json_text
from sparsity_gui.core.note.files import (
    deaths_npz,
    iter_deaths_csv,
    iter_weights_csv,
    run_metadata,
    timeseries_csv,
    tracked_csv,
    weights_npz,
)
from sparsity_gui.core.note.headless import resolved_format
from sparsity_gui.core.note.metrics import results_entry
from sparsity_gui.core.note.sampled import SampledRun, replay_script
from sparsity_gui.core.note.session import W0Source, session_text
from sparsity_gui.core.note.simulation import RunScript
from sparsity_gui.ui.window import UNCHANGED, PanelExports, choose_folder

NPZ_FILTER = "NumPy arrays (*.npz)"
DATA_KINDS = {
    # kind: (file name, menu text, dialog filter); weights and deaths also as .npz
    "timeseries": ("timeseries.csv", "Time series (CSV)…", "CSV (*.csv)"),
    "weights": ("weights.csv", "Current weights k, w0, w_now (CSV or NPZ)…", "CSV (*.csv)"),
    "deaths": ("deaths.csv", "Death events (CSV or NPZ)…", "CSV (*.csv)"),
    "tracked": ("tracked.csv", "Tracked weights |W_k|(t) (CSV)…", "CSV (*.csv)"),
    "run": ("run.json", "Run metadata (run.json)…", "JSON (*.json)"),
}
TABLE_KINDS = ("weights", "deaths")  # a row per weight: CSV or .npz
COMMAND_LINE = "sparsity-gui (desktop app export)"


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


class _Binary:
    """A file written by a function of the open binary file (an .npz)."""

    def __init__(self, write: Callable) -> None:
        self.write = write


class _WriteFailed(Exception):
    def __init__(self, path: Path, error: OSError, written: list[Path]):
        super().__init__(str(path))
        self.path, self.error, self.written = path, error, list(written)


class NoteExports(PanelExports):
    FORMATS = ("png", "svg", "pdf")
    ASK_PNG_SCALE = True

    def __init__(self, window) -> None:
        super().__init__(window)
        self._cache: tuple | None = None

    # --- menus --------------------------------------------------------------------------
    def build_menus(self, file_menu: QtWidgets.QMenu, before: QtGui.QAction | None) -> None:
        """Export all (Ctrl+E), Export figure and Export data, inserted before ``before``."""
        win = self.win
        self.act_export_all = win.action(
            "act_export_all",
            "Export all…",
            lambda _c=False: self.export_all_dialog(),
            "Ctrl+E",
            "Write every panel (PNG, SVG), the window (PNG), the data (CSV; weights and deaths "
            "as .npz above 10^6 weights), run.json and the session into one folder",
        )
        self.act_export_all.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        figures = self.figure_menu()
        data = QtWidgets.QMenu("Export data", win)
        data.setObjectName("menu_export_data")
        for kind, (_name, text, _flt) in DATA_KINDS.items():
            act = data.addAction(text)
            act.triggered.connect(lambda _c=False, k=kind: self.export_data_dialog(k))
        file_menu.insertAction(before, self.act_export_all)
        file_menu.insertMenu(before, figures)
        file_menu.insertMenu(before, data)
        file_menu.insertSeparator(before)
        self._hook_panel_menus()

    def _hook_panel_menus(self) -> None:
        """pyqtgraph's own right-click "Export..." offers its SVG exporter, which raises
        with current PySide6: point it at ours."""
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

    # --- the run, replayed ------------------------------------------------------------------
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
        status = self.win.statusBar()
        status.showMessage(message)
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.WaitCursor)
        try:
            worker.start()
            while worker.is_alive():
                worker.join(0.02)
                QtWidgets.QApplication.processEvents(
                    QtCore.QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents, 20
                )
        finally:
            QtWidgets.QApplication.restoreOverrideCursor()
            status.clearMessage()
        if "error" in result:
            raise result["error"]
        return result["value"]

    # --- data -------------------------------------------------------------------------------
    def data_files(self, script: RunScript, source: W0Source, fmt: str = "auto") -> dict[str, object]:
        """Every data file of the run: name -> a function giving its text in pieces (large
        CSVs are streamed, never held whole), or a _Binary for weights and deaths as .npz
        (``fmt``: "csv", "npz" or "auto", by m as in `run --format`). Safe to call from a
        worker thread."""
        run = self.replayed(script)
        sim = run.sim
        shown = self.tracked_shown()
        if resolved_format(fmt, sim.m) == "npz":
            table_files: dict[str, object] = {
                "weights.npz": _Binary(weights_npz(sim.init.w0, sim.solver.weights, "w_now")),
                "deaths.npz": _Binary(lambda f: deaths_npz(sim)(f)),  # its columns made when written
            }
        else:
            table_files = {
                "weights.csv": lambda: iter_weights_csv(sim.init.w0, sim.solver.weights(), "w_now"),
                "deaths.csv": lambda: iter_deaths_csv(sim),
            }
        return {
            "timeseries.csv": lambda: [timeseries_csv(run.rows)],
            **table_files,
            "tracked.csv": lambda: [tracked_csv(run, shown)],
            "run.json": lambda: [json_text(run_metadata(run, script.params, COMMAND_LINE, source))],
            "session.json": lambda: [
                session_text(script, source, self.win.pin_control.pins, results_entry(run.regime, run.fit))
            ],
        }

    def tracked_shown(self) -> int | None:
        """How many tracked weights the window's threshold panel draws: tracked.csv holds
        those, not every weight recorded."""
        return next((p.count.value() for p in self.win.panels if hasattr(p, "shown_tracked")), None)

    def _write(self, items: list[tuple[Path, object]]) -> list[Path]:
        """Write (path, bytes or text-piece producer) pairs atomically, in a worker thread
        (a CSV of 10^7 weights takes a while). An OSError comes back as _WriteFailed."""

        def work() -> list[Path]:
            written: list[Path] = []
            for path, payload in items:
                try:
                    if isinstance(payload, bytes):
                        atomic_write_bytes(path, payload)
                    elif isinstance(payload, _Binary):
                        atomic_write_with(path, payload.write)
                    else:
                        atomic_write_chunks(path, payload())
                except OSError as exc:
                    raise _WriteFailed(path, exc, written) from None
                written.append(path)
            return written

        return self._in_thread(work, f"Writing {len(items)} file(s)…")

    def export_data(self, kind: str, path: str | Path) -> bool:
        """One data file: timeseries, weights, deaths, tracked or run (run.json); weights
        and deaths as .npz when the path ends in .npz, as CSV otherwise."""
        win = self.win
        path = Path(path)
        if kind not in DATA_KINDS:
            return win.fail("Cannot export data", f"unknown kind of data {kind!r}")
        name = DATA_KINDS[kind][0]
        npz = path.suffix.lower() == ".npz"
        if npz and kind not in TABLE_KINDS:
            return win.fail(
                "Cannot export data", f"{name} is written as {name.split('.')[-1].upper()} only, not .npz"
            )
        try:
            files = self.data_files(*win.current_script(), fmt="npz" if npz else "csv")
            self._write([(path, files[name.replace(".csv", ".npz") if npz else name])])
        except InputError as exc:
            return win.fail("Cannot export data", exc.message)
        except _WriteFailed as exc:
            return win.fail("Cannot export data", f"{path}: {_os_reason(exc.error)}. {UNCHANGED}")
        return win.done(f"Wrote {path}")

    def export_all(self, folder: str | Path, scale: float = 2.0) -> bool:
        """One folder: every panel as PNG and SVG (drawn from the exported data, with the
        live panels' toggles), the window as PNG, timeseries.csv, weights.csv, deaths.csv
        (weights.npz and deaths.npz above 10^6 weights, as `run` writes them),
        tracked.csv, run.json and session.json. Each file is written atomically; on an error
        the files already there stay intact and the message names the file."""
        from sparsity_gui.plots.figures import FigureSet, panel_view_state, sampled_snapshot

        win = self.win
        folder = Path(folder)
        try:
            if folder.exists() and not folder.is_dir():
                raise InputError("", f"{folder} is a file, not a folder")
            script, source = win.current_script()
            files = self.data_files(script, source)
            run = self.replayed(script)
            blobs: dict[str, bytes] = {}
            pins = win.pin_control
            views = [panel_view_state(p) for p in win.panels]
            with FigureSet(sampled_snapshot(run), views, pins=pins.pins, pin_labels=pins.labels) as figs:
                blobs.update(figs.files(("png", "svg"), scale, layout_name=None))
            blobs["window.png"] = self.figure_bytes("window", "png", 1.0)
        except InputError as exc:
            return win.fail("Cannot export", exc.message)
        except (ValueError, RuntimeError) as exc:
            return win.fail("Cannot export", str(exc))
        items: list[tuple[Path, object]] = [(folder / name, data) for name, data in blobs.items()]
        items += [(folder / name, produce) for name, produce in files.items()]
        items += [(folder / name, lambda t=text: [t]) for name, text in win.pin_control.files().items()]
        try:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise _WriteFailed(folder, exc, []) from None
            written = self._write(items)
        except _WriteFailed as exc:
            return win.fail(
                "Cannot export",
                f"{exc.path}: {_os_reason(exc.error)}. "
                f"{len(exc.written)} of {len(items)} files were written; every file is "
                "either whole or untouched (earlier files of the same names are intact).",
            )
        return win.done(f"Exported {len(written)} files to {folder}")

    # --- dialogs ----------------------------------------------------------------------------
    def export_data_dialog(self, kind: str) -> None:
        name, _text, flt = DATA_KINDS[kind]
        filters = [flt]
        if kind in TABLE_KINDS:
            filters.append(NPZ_FILTER)
            snap = self.win.snapshot
            if snap is not None and resolved_format("auto", snap.m) == "npz":  # CSV: minutes
                filters.reverse()
                name = name.replace(".csv", ".npz")
        path, chosen = QtWidgets.QFileDialog.getSaveFileName(
            self.win, "Export data", name, ";;".join([*filters, "All files (*)"]), filters[0]
        )
        if path and not Path(path).suffix and chosen == NPZ_FILTER:
            path += ".npz"  # a bare name typed under the NumPy filter means arrays
        if path:
            self.export_data(kind, path)

    def export_all_dialog(self) -> None:
        folder = choose_folder(self.win, "Export all into folder")  # a new folder's name too
        if folder:
            self.export_all(folder)
