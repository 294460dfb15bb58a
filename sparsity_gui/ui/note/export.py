"""The note window's exports: every panel as PNG (at a chosen DPI), SVG or PDF drawn by
matplotlib (figures/note.py, the same figures as `run --figures`, each with the JSON it was
drawn from and the script that redraws it), the whole window as a PNG screenshot; the
run's data (timeseries, weights, deaths, tracked weights, run.json); and *Export all* into
one folder, in a worker thread behind a progress bar with Cancel.

Exported data come from re-simulating the run's script (parameters at t = 0, W(0), the
schedule of live changes, evenly spaced sample times), taken from the snapshot on screen,
not from the GUI's history (whose sampling depends on the wall clock): the same run or
session always exports the same numbers, and every exported figure can be redrawn from
the exported files. The replay and the writing run in a thread while the window paints.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import (
    atomic_write_bytes,
    atomic_write_chunks,
    atomic_write_with,
    json_text,
    make_temp_dir,
)
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
from sparsity_gui.ui.dialogs import UNCHANGED, choose_folder, save_file_name
from sparsity_gui.ui.figure_export import PanelExports
from sparsity_gui.ui.figure_style import FigureStyleChoice

EXPORT_ALL_FORMATS = ("png", "svg", "pdf")  # of each panel in Export all
# each live panel's toggles as the figure's view (figures/note.py DEFAULT_VIEWS)
VIEW_TOGGLES = {
    "weights_sorted": ("log_x", "log_y"),
    "threshold_crossing": ("log_y",),
    "norm_balance": ("log_y",),
    "l1_decay": ("show_w", "log_x", "log_y"),
    "relative_variance": ("log_x",),
    "sparsity_force": (),
    "phase_plane": ("log_y", "gap_x"),
}

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


class _Cancelled(Exception):
    """Export all was cancelled: nothing is moved into the folder."""


def _write_one(path: Path, payload: object) -> None:
    """Bytes, a _Binary's writer or a producer of text pieces, atomically at `path`."""
    if isinstance(payload, bytes):
        atomic_write_bytes(path, payload)
    elif isinstance(payload, _Binary):
        atomic_write_with(path, payload.write)
    else:
        atomic_write_chunks(path, payload())


class _WriteFailed(Exception):
    def __init__(self, path: Path, error: OSError, written: list[Path]):
        super().__init__(str(path))
        self.path, self.error, self.written = path, error, list(written)


def beside_gui(work: Callable, poll: Callable[[], None]):
    """`work()` in a worker thread while the GUI thread calls `poll()` (which keeps the
    window painting) every 20 ms; its value, or its exception raised again here."""
    result: dict = {}

    def target() -> None:
        try:
            result["value"] = work()
        except BaseException as exc:  # re-raised on the GUI thread
            result["error"] = exc

    worker = threading.Thread(target=target, name="export", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.02)
        poll()
    if "error" in result:
        raise result["error"]
    return result["value"]


class NoteExports(FigureStyleChoice, PanelExports):
    FORMATS = ("png", "svg", "pdf")

    def __init__(self, window) -> None:
        super().__init__(window)
        self._cache: tuple | None = None
        self.progress: tuple[QtWidgets.QProgressBar, QtWidgets.QPushButton] | None = None

    # --- menus --------------------------------------------------------------------------
    def build_menus(self, file_menu: QtWidgets.QMenu, before: QtGui.QAction | None) -> None:
        """Export all (Ctrl+E), Export figure and Export data, inserted before ``before``."""
        win = self.win
        self.act_export_all = win.action(
            "act_export_all",
            "Export all…",
            lambda _c=False: self.export_all_dialog(),
            "Ctrl+E",
            "Write every panel (PNG, SVG, each with the script that redraws it), the "
            "window (PNG), the data (CSV; weights and deaths as .npz above "
            "10^6 weights), run.json and the session into one folder",
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
        cached = self._cached(script)
        if cached is not None:
            return cached
        return self._in_thread(lambda: self.replay_now(script), "Re-simulating the run for export…")

    def _cached(self, script: RunScript) -> SampledRun | None:
        key = (script.params, script.t, script.changes, script.samples)
        cache = self._cache
        if cache is not None and cache[0] == key and cache[1] is script.w0:
            return cache[2]
        return None

    def replay_now(self, script: RunScript) -> SampledRun:
        """The replay in the calling thread (a worker's), through the same cache."""
        cached = self._cached(script)
        if cached is not None:
            return cached
        run = replay_script(script)
        self._cache = ((script.params, script.t, script.changes, script.samples), script.w0, run)
        return run

    def _in_thread(self, fn: Callable, message: str):
        status = self.win.statusBar()
        status.showMessage(message)
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.WaitCursor)
        try:
            return beside_gui(
                fn,
                lambda: QtWidgets.QApplication.processEvents(
                    QtCore.QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents, 20
                ),
            )
        finally:
            QtWidgets.QApplication.restoreOverrideCursor()
            status.clearMessage()

    # --- data -------------------------------------------------------------------------------
    def data_files(
        self, script: RunScript, source: W0Source, fmt: str = "auto", run: SampledRun | None = None
    ) -> dict[str, object]:
        """Every data file of the run: name -> a function giving its text in pieces (large
        CSVs are streamed, never held whole), or a _Binary for weights and deaths as .npz
        (``fmt``: "csv", "npz" or "auto", by m as in `run --format`). Made on the GUI
        thread (it reads the window); the files are produced in any thread."""
        run = self.replayed(script) if run is None else run
        sim = run.sim
        pins = list(self.win.pin_control.pins)
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
        style = self.style()  # read here, on the GUI thread: the files are made in a worker
        return {
            "timeseries.csv": lambda: [timeseries_csv(run.rows)],
            **table_files,
            "tracked.csv": lambda: [tracked_csv(run, shown)],
            "run.json": lambda: [json_text(run_metadata(run, script.params, COMMAND_LINE, source))],
            "session.json": lambda: [
                session_text(script, source, pins, results_entry(run.regime, run.fit), style)
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
                    _write_one(path, payload)
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

    # --- figures ----------------------------------------------------------------------
    def views(self) -> dict[str, dict]:
        """Each panel's toggles on screen, as its figure's view."""
        from sparsity_gui.figures.note import TITLES

        by_title = {title: name for name, title in TITLES.items()}
        out: dict[str, dict] = {}
        for panel in self.win.panels:
            name = by_title.get(panel.title)
            if name is None:
                continue
            out[name] = {toggle: getattr(panel, toggle).isChecked() for toggle in VIEW_TOGGLES[name]}
            if hasattr(panel, "shown_tracked"):
                out[name]["tracked"] = panel.count.value()
        return out

    def _figure_job(self):
        """What the figures are drawn from, read on the GUI thread: (views, pins, labels)."""
        pins = self.win.pin_control
        return self.views(), list(pins.pins), dict(pins.labels)

    @staticmethod
    def _figure_data(run: SampledRun, job) -> dict:
        from sparsity_gui.figures.note import fit_constants, panel_data, run_snapshot

        views, pins, labels = job
        return panel_data(run_snapshot(run), views, pins, labels, fit_constants(run))

    def panel_name(self, target) -> str | None:
        """The figure name of a target (a panel, its index, "layout"), or None: "window"."""
        from sparsity_gui.figures.note import TITLES

        if target in ("layout", "window"):
            return None if target == "window" else "layout"
        panel = self.panel(target)
        by_title = {title: name for name, title in TITLES.items()}
        return by_title.get(panel.title) if panel is not None else None

    def window_png(self, scale: float = 1.0) -> bytes:
        """The whole window as a PNG screenshot (a record of the session on screen)."""
        win = self.win
        if not (0 < scale <= 8):
            raise ValueError(f"PNG scale must be > 0 and at most 8, got {scale}")
        image = QtGui.QImage(
            max(int(round(win.width() * scale)), 1),
            max(int(round(win.height() * scale)), 1),
            QtGui.QImage.Format.Format_ARGB32,
        )
        image.fill(QtGui.QColor("white"))
        painter = QtGui.QPainter(image)
        try:
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
            painter.scale(scale, scale)
            win.render(painter, QtCore.QPoint(0, 0))
        finally:
            painter.end()
        buf = QtCore.QBuffer()
        buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
        if not image.save(buf, "PNG"):
            raise RuntimeError("Qt could not encode the PNG image")
        return bytes(buf.data())

    def figure_bytes(self, target, fmt: str, scale: float = 2.0) -> bytes:
        """A panel's (or the layout's) figure in `fmt` at 150·scale dpi, drawn by
        matplotlib from the exported data; the window as a PNG screenshot."""
        return self.figure_files(target, fmt, dpi=150.0 * scale)[f"figure.{fmt}"]

    def figure_files(self, target, fmt: str, dpi: float, name: str = "figure") -> dict[str, bytes]:
        """{<name>.<fmt>, <name>.json, <name>.py} of a panel or the layout;
        {<name>.png} of the window (a screenshot: PNG only)."""
        from sparsity_gui.figures.note import note_figure_files

        figure = self.panel_name(target)
        if figure is None:
            if fmt != "png":
                raise ValueError(
                    "the whole window is exported as PNG; for SVG or PDF export a panel or the layout"
                )
            return {f"{name}.png": self.window_png(dpi / 150.0)}
        script, _source = self.win.current_script()
        job = self._figure_job()
        style = self.style()

        def work() -> dict[str, bytes]:
            data = self._figure_data(self.replay_now(script), job)
            names = [] if figure == "layout" else [figure]
            files = note_figure_files(
                data, style, dpi=dpi, formats=(fmt,), names=names, layout=figure == "layout"
            )
            return {f"{name}{Path(k).suffix}": v for k, v in files.items()}

        return self._in_thread(work, "Drawing the figure…")

    def export_figure(self, target, path, scale: float = 2.0, dpi: float | None = None) -> bool:
        """A panel or the layout to ``path`` (its suffix picks PNG, SVG or PDF; a PNG at
        ``dpi``, by default 150·scale), with <stem>.json and <stem>.py beside it (the
        script redraws it); the window as a PNG screenshot. Each file is written
        atomically; an error leaves earlier files."""
        win = self.win
        path = Path(path)
        dpi = dpi if dpi is not None else 150.0 * scale
        files = self.figure_files_for(path, lambda fmt: self.figure_files(target, fmt, dpi, path.stem))
        if files is None:
            return False
        try:
            self._write([(path.with_name(name), data) for name, data in files.items()])
        except _WriteFailed as exc:
            return win.fail("Cannot export the figure", f"{exc.path}: {_os_reason(exc.error)}. {UNCHANGED}")
        return win.done(
            f"Wrote {path}" + (f" and its data and script ({path.stem}.json, .py)" if len(files) > 1 else "")
        )

    def export_all(self, folder: str | Path, scale: float = 2.0) -> bool:
        """One folder: every panel as PNG (300 dpi), SVG and PDF, each with its JSON and script
        (figures/note.py, drawn from the exported data with the live panels' toggles, pins
        and style), the window as PNG, timeseries.csv, weights.csv, deaths.csv (weights.npz
        and deaths.npz above 10^6 weights, as `run` writes them), tracked.csv, run.json,
        session.json and the pinned runs. Made in a worker thread behind a progress bar
        with Cancel (in the status bar), into a temporary folder inside `folder`, then moved
        in file by file: a cancelled or failed export leaves the folder as it was."""
        win = self.win
        folder = Path(folder)
        try:
            if folder.exists() and not folder.is_dir():
                raise InputError("", f"{folder} is a file, not a folder")
            script, source = win.current_script()
            run = self._cached(script)
            job = self._figure_job()
            style = self.style()
            window_png = self.window_png(1.0)
            pin_files = win.pin_control.files()
            if run is None:
                run = self.replayed(script)
            files = self.data_files(script, source, run=run)
        except InputError as exc:
            return win.fail("Cannot export", exc.message)
        except (ValueError, RuntimeError) as exc:
            return win.fail("Cannot export", str(exc))
        created = not folder.exists()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = make_temp_dir(folder, "export")
        except OSError as exc:
            return win.fail("Cannot export", f"{folder}: {_os_reason(exc)}. {UNCHANGED}")
        state = {"done": 0, "total": 8 + len(files) + len(pin_files), "what": "Drawing the figures…"}
        cancel = threading.Event()

        def step(what: str) -> None:
            state["done"] += 1
            state["what"] = what
            if cancel.is_set():
                raise _Cancelled

        def work() -> list[str]:
            from sparsity_gui.figures.note import note_figure_files

            data = self._figure_data(run, job)
            names: list[str] = []

            def drew(done: int, total: int) -> None:
                step(f"Drawing the figures ({done} of {total})…")

            # the layout figure is left to Export figure and run --figures: the window's PNG
            # stands for it here
            figures = note_figure_files(
                data, style, formats=EXPORT_ALL_FORMATS, layout=False, cancelled=cancel.is_set, progress=drew
            )
            if cancel.is_set():
                raise _Cancelled
            items: list[tuple[str, object]] = [*figures.items(), ("window.png", window_png)]
            items += list(files.items())
            items += [(name, lambda t=text: [t]) for name, text in pin_files.items()]
            for name, payload in items:
                try:
                    _write_one(tmp / name, payload)
                except OSError as exc:
                    raise _WriteFailed(folder / name, exc, []) from None
                names.append(name)
                if not name.endswith((".png", ".svg", ".pdf", ".py")) or name == "window.png":
                    step(f"Writing {name}…")
            return names

        try:
            names = self._with_progress(work, state, cancel)
            for name in names:  # each one atomically into place
                os.replace(tmp / name, folder / name)
        except _Cancelled:
            win.done(f"Export cancelled; {folder} is as it was")
            win.last_error = "Export cancelled"  # not written: the caller is told so
            return False
        except _WriteFailed as exc:
            return win.fail(
                "Cannot export",
                f"{exc.path}: {_os_reason(exc.error)}. No file was written; "
                "earlier files of the same names are intact.",
            )
        except OSError as exc:
            return win.fail("Cannot export", f"{folder}: {_os_reason(exc)}")
        except InputError as exc:
            return win.fail("Cannot export", exc.message)
        except (ValueError, RuntimeError) as exc:
            return win.fail("Cannot export", str(exc))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if created and not any(folder.iterdir()):
                folder.rmdir()
        return win.done(f"Exported {len(names)} files to {folder}")

    def _with_progress(self, work: Callable, state: dict, cancel: threading.Event):
        """`work()` in a worker thread behind a progress bar with Cancel in the status bar
        (the window keeps painting; Cancel sets `cancel`, which the work checks between
        files)."""
        # in the status bar, not a modal dialog: the window stays live and usable
        status = self.win.statusBar()
        bar = QtWidgets.QProgressBar()
        bar.setObjectName("export_progress")
        bar.setRange(0, state["total"])
        bar.setMaximumWidth(220)
        button = QtWidgets.QPushButton("Cancel")
        button.setObjectName("export_cancel")
        button.setToolTip("Stop the export: the folder is left as it was")
        button.clicked.connect(cancel.set)
        status.addPermanentWidget(bar)
        status.addPermanentWidget(button)
        self.progress = (bar, button)  # tests press its Cancel

        def show_progress() -> None:
            bar.setValue(min(state["done"], state["total"]))
            status.showMessage(state["what"])
            QtWidgets.QApplication.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
            if getattr(self.win, "closed", False):
                cancel.set()  # the window closes: stop between files

        try:
            return beside_gui(work, show_progress)
        finally:
            for widget in (bar, button):
                status.removeWidget(widget)
                widget.deleteLater()
            status.clearMessage()
            self.progress = None

    # --- dialogs ----------------------------------------------------------------------------
    def figure_menu(self) -> QtWidgets.QMenu:
        """Export figure: each panel, the layout of six, the window (PNG), and the style
        of every exported figure (paper, talk or a .mplstyle file; remembered)."""
        menu = super().figure_menu()
        first_after_panels = menu.actions()[len(self.win.all_panels())]
        act = QtGui.QAction("Layout (the six panels)…", menu)
        act.setToolTip("The grid of six panels as one figure (7 in wide), PNG, SVG or PDF")
        act.triggered.connect(lambda _c=False: self.export_figure_dialog("layout"))
        menu.insertAction(first_after_panels, act)
        self.add_style_menu(menu)
        return menu

    def export_figure_dialog(self, target) -> None:
        """Save as PNG (asking its DPI), SVG or PDF; the script and data go beside it."""
        name = self.panel_name(target) or self.WINDOW_FIGURE
        path = self.ask_figure_path(name, ("png",) if name == "window" else self.FORMATS)
        if not path:
            return
        dpi = 300.0
        if path.lower().endswith(".png"):
            dpi, ok = QtWidgets.QInputDialog.getDouble(
                self.win,
                "PNG resolution",
                "Dots per inch (300 for print, 600 for line art):",
                300.0,
                50.0,
                1200.0,
                0,
            )
            if not ok:
                return
        self.export_figure(target, path, dpi=dpi)

    def export_data_dialog(self, kind: str) -> None:
        name, _text, flt = DATA_KINDS[kind]
        filters = [flt]
        if kind in TABLE_KINDS:
            filters.append(NPZ_FILTER)
            snap = self.win.snapshot
            if snap is not None and resolved_format("auto", snap.m) == "npz":  # CSV: minutes
                filters.reverse()
                name = name.replace(".csv", ".npz")
        path, chosen = save_file_name(
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
