"""The note window's exports: every panel as PNG (at a chosen DPI), SVG or PDF drawn by
matplotlib (figures/note/figures.py, the same figures as `run --figures`, each with the JSON it was
drawn from and the script that redraws it), the whole window as a PNG screenshot; the
run's data (timeseries, weights, deaths, tracked weights, run.json); and *Export all* into
one folder. Each runs as a job beside the GUI (ui/background.py, through
PanelExports.run_job): a progress bar with Cancel in the status bar, one export at a time.

Exported data come from re-simulating the run's script (parameters at t = 0, W(0), the
schedule of live changes, evenly spaced sample times), taken from the snapshot on screen,
not from the GUI's history (whose sampling depends on the wall clock): the same run or
session always exports the same numbers, and every exported figure can be redrawn from
the exported files. The replay, the drawing and the writing run in the job's worker while
the window paints; what they need from the window is read on the GUI thread first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import Payload, Streamed, write_payload
from sparsity_gui.core.note.changes import RunScript
from sparsity_gui.core.note.files import run_files, tracked_csv
from sparsity_gui.core.note.headless import resolved_format
from sparsity_gui.core.note.metrics import results_entry
from sparsity_gui.core.note.sampled import SampledRun, replay_script
from sparsity_gui.core.note.session import W0Source, session_text
from sparsity_gui.ui.background import BackgroundJob, JobOutcome
from sparsity_gui.ui.dialogs import UNCHANGED, save_file_name
from sparsity_gui.ui.figure_export import PanelExports, os_reason
from sparsity_gui.ui.figure_style import FigureStyleChoice

# each live panel's toggles as the figure's view (figures/note/figures.py DEFAULT_VIEWS)
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


class _WriteFailed(Exception):
    def __init__(self, path: Path, error: OSError, written: list[Path]):
        super().__init__(str(path))
        self.path, self.error, self.written = path, error, list(written)


def _write_items(items: list[tuple[Path, Payload]]) -> list[Path]:
    """(path, payload) pairs written atomically in turn; an OSError comes back as
    _WriteFailed naming the path (the files before it stay written)."""
    written: list[Path] = []
    for path, payload in items:
        try:
            write_payload(path, payload)
        except OSError as exc:
            raise _WriteFailed(path, exc, written) from None
        written.append(path)
    return written


class NoteExports(FigureStyleChoice, PanelExports):
    FORMATS = ("png", "svg", "pdf")

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
            "Write every panel (PNG, SVG, PDF: the formats checked in its dialog; each with "
            "the script that redraws it), the "
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
        """The run re-simulated from the script in the calling thread (an export's worker),
        cached: exporting several files replays once."""
        cached = self._cached(script)
        if cached is not None:
            return cached
        run = replay_script(script)
        self._cache = ((script.params, script.t, script.changes, script.samples), script.w0, run)
        return run

    def _cached(self, script: RunScript) -> SampledRun | None:
        key = (script.params, script.t, script.changes, script.samples)
        cache = self._cache
        if cache is not None and cache[0] == key and cache[1] is script.w0:
            return cache[2]
        return None

    # --- data -------------------------------------------------------------------------------
    def data_files(
        self, script: RunScript, source: W0Source, fmt: str = "auto", run: SampledRun | None = None
    ) -> dict[str, Payload]:
        """Every data file of the run (replayed here if not given): see `data_maker`."""
        return self.data_maker(script, source, fmt)(self.replayed(script) if run is None else run)

    def data_maker(
        self, script: RunScript, source: W0Source, fmt: str = "auto"
    ) -> Callable[[SampledRun], dict[str, Payload]]:
        """What the data files need from the window, read now (on the GUI thread), and the
        function that makes them from the replayed run in any thread: the run's files
        (core/note/files.run_files, weights and deaths as .npz with ``fmt`` "npz", or by m
        with "auto", as `run --format`), tracked.csv and session.json."""
        pins = list(self.win.pin_control.pins)
        shown = self.tracked_shown()
        style = self.style()

        def files(run: SampledRun) -> dict[str, Payload]:
            # the run's own files, as `run` writes them; then the window's: tracked, session
            made = run_files(run, script.params, COMMAND_LINE, source, fmt)
            made["tracked.csv"] = Streamed(lambda: [tracked_csv(run, shown)])
            made["session.json"] = session_text(
                script, source, pins, results_entry(run.regime, run.fit), style
            )
            return made

        return files

    def tracked_shown(self) -> int | None:
        """How many tracked weights the window's threshold panel draws: tracked.csv holds
        those, not every weight recorded."""
        return next((p.count.value() for p in self.win.panels if hasattr(p, "shown_tracked")), None)

    def export_data(self, kind: str, path: str | Path, wait: bool = True) -> bool:
        """One data file: timeseries, weights, deaths, tracked or run (run.json); weights
        and deaths as .npz when the path ends in .npz, as CSV otherwise. Replayed and
        written beside the GUI (``wait``: see PanelExports.run_job)."""
        win = self.win
        path = Path(path)
        title = "Cannot export data"
        if kind not in DATA_KINDS:
            return win.fail(title, f"unknown kind of data {kind!r}")
        name = DATA_KINDS[kind][0]
        npz = path.suffix.lower() == ".npz"
        if npz and kind not in TABLE_KINDS:
            return win.fail(title, f"{name} is written as {name.split('.')[-1].upper()} only, not .npz")
        try:
            script, source = win.current_script()
            make = self.data_maker(script, source, fmt="npz" if npz else "csv")
        except InputError as exc:
            return win.fail(title, exc.message)
        key = name.replace(".csv", ".npz") if npz else name

        def work(job: BackgroundJob) -> list[Path]:
            files = make(self.replayed(script))
            job.check()
            return _write_items([(path, files[key])])

        def finish(outcome: JobOutcome) -> bool:
            if outcome.ok:
                return win.done(f"Wrote {path}")
            return self._said(outcome, title, f"Export cancelled; {path} is as it was")

        return self.run_job(work, f"Writing {path.name}…", finish, wait=wait, title=title)

    def _said(self, outcome: JobOutcome, title: str, cancelled: str) -> bool:
        """A job that did not succeed, said: cancelled (in the status bar), or its reason in
        a dialog; an error no export expects is raised again (the app's excepthook)."""
        win, error = self.win, outcome.error
        if outcome.cancelled:
            win.done(cancelled)
            win.last_error = "Export cancelled"  # not written: the caller is told so
            return False
        if isinstance(error, _WriteFailed):
            return win.fail(title, f"{error.path}: {os_reason(error.error)}. {UNCHANGED}")
        if isinstance(error, InputError):
            return win.fail(title, error.message)
        if isinstance(error, OSError):
            return win.fail(title, f"{error.filename or ''}: {os_reason(error)}")
        if isinstance(error, (ValueError, RuntimeError)):
            return win.fail(title, str(error))
        assert error is not None
        raise error

    # --- figures ----------------------------------------------------------------------
    def views(self) -> dict[str, dict]:
        """Each panel's toggles on screen, as its figure's view."""
        from sparsity_gui.figures.note.figures import TITLES

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
        from sparsity_gui.figures.note.figures import fit_constants, panel_data, run_snapshot

        views, pins, labels = job
        return panel_data(run_snapshot(run), views, pins, labels, fit_constants(run))

    def panel_name(self, target) -> str | None:
        """The figure name of a target (a panel, its index, "layout"), or None: "window"."""
        from sparsity_gui.figures.note.figures import TITLES

        if target in ("layout", "window"):
            return None if target == "window" else "layout"
        panel = self.panel(target)
        by_title = {title: name for name, title in TITLES.items()}
        return by_title.get(panel.title) if panel is not None else None

    def figure_bytes(self, target, fmt: str, scale: float = 2.0) -> bytes:
        """A panel's (or the layout's) figure in `fmt` at 150·scale dpi, drawn by
        matplotlib from the exported data; the window as a PNG screenshot."""
        return self.figure_files(target, fmt, dpi=150.0 * scale)[f"figure.{fmt}"]

    def figure_files(self, target, fmt: str, dpi: float, name: str = "figure") -> dict[str, bytes]:
        """{<name>.<fmt>, <name>.json, <name>.py} of a panel or the layout;
        {<name>.png} of the window (a screenshot: PNG only). Drawn in the calling thread."""
        return self.figure_maker(target, fmt, dpi, name)()

    def figure_maker(self, target, fmt: str, dpi: float, name: str) -> Callable[[], dict[str, bytes]]:
        """What `figure_files` draws from, read now on the GUI thread, and the function that
        draws it in any thread."""
        figure = self.panel_name(target)
        if figure is None:
            if fmt != "png":
                raise ValueError(
                    "the whole window is exported as PNG; for SVG or PDF export a panel or the layout"
                )
            png = self.window_png(dpi / 150.0)
            return lambda: {f"{name}.png": png}
        script, _source = self.win.current_script()
        job = self._figure_job()
        style = self.style()

        def draw() -> dict[str, bytes]:
            from sparsity_gui.figures.note.figures import note_figure_files

            data = self._figure_data(self.replayed(script), job)
            names = [] if figure == "layout" else [figure]
            files = note_figure_files(
                data, style, dpi=dpi, formats=(fmt,), names=names, layout=figure == "layout"
            )
            return {f"{name}{Path(k).suffix}": v for k, v in files.items()}

        return draw

    def export_figure(
        self, target, path, scale: float = 2.0, dpi: float | None = None, wait: bool = True
    ) -> bool:
        """A panel or the layout to ``path`` (its suffix picks PNG, SVG or PDF; a PNG at
        ``dpi``, by default 150·scale), with <stem>.json and <stem>.py beside it (the
        script redraws it); the window as a PNG screenshot. Drawn and written beside the
        GUI (``wait``: see PanelExports.run_job); each file atomically, an error leaves
        earlier files."""
        win = self.win
        path = Path(path)
        title = "Cannot export the figure"
        dpi = dpi if dpi is not None else 150.0 * scale
        fmt = self.figure_format(path)
        if fmt is None:
            return False
        try:
            draw = self.figure_maker(target, fmt, dpi, path.stem)
        except InputError as exc:
            return win.fail(title, exc.message)
        except (ValueError, RuntimeError) as exc:
            return win.fail(title, str(exc))

        def work(job: BackgroundJob) -> list[Path]:
            files = draw()
            job.check()
            return _write_items([(path.with_name(name), data) for name, data in files.items()])

        def finish(outcome: JobOutcome) -> bool:
            if outcome.ok:
                more = f" and its data and script ({path.stem}.json, .py)" if len(outcome.value) > 1 else ""
                return win.done(f"Wrote {path}{more}")
            return self._said(outcome, title, f"Export cancelled; {path} is as it was")

        return self.run_job(work, "Drawing the figure…", finish, wait=wait, title=title)

    def export_all_parts(self, formats):
        """Export all's figures and data (PanelExports.export_all writes them, the window's
        PNG among them): every panel in ``formats`` (PNG at 300 dpi, SVG, PDF), each with its JSON and
        script (figures/note/figures.py, drawn from the exported data with the live panels'
        toggles, pins and style), timeseries.csv, weights.csv, deaths.csv (weights.npz and
        deaths.npz above 10^6 weights, as `run` writes them), tracked.csv, run.json,
        session.json and the pinned runs."""
        script, source = self.win.current_script()
        figure_job = self._figure_job()
        style = self.style()
        pin_files = self.win.pin_control.files()
        make_data = self.data_maker(script, source)
        data_count = 6  # timeseries, weights, deaths, tracked, run.json, session.json

        def make(job: BackgroundJob, step) -> tuple[dict, dict]:
            from sparsity_gui.figures.note.figures import note_figure_files

            job.report((0, "Re-simulating the run…"))
            run = self.replayed(script)
            job.check()
            files = make_data(run)
            data = self._figure_data(run, figure_job)
            # the layout figure is left to Export figure and run --figures: the window's PNG
            # stands for it here
            figures = note_figure_files(
                data,
                style,
                formats=formats,
                layout=False,
                cancelled=job.cancelled,
                progress=lambda d, t: step(f"Drawing the figures ({d} of {t})…"),
            )
            return figures, {**files, **pin_files}

        return len(VIEW_TOGGLES) + data_count + len(pin_files), make

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
        self.export_figure(target, path, dpi=dpi, wait=False)

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
            self.export_data(kind, path, wait=False)
