"""The interference window's exports: a panel (the sweep's too) or the whole layout as a
matplotlib figure (PNG, SVG or PDF, with the data it is drawn from and the script that
redraws it beside it), *Export all* (Ctrl+E: every figure, the shown run's data, the window
as window.png, the session as session.json and the pinned runs, into one folder, beside
the GUI with a progress bar and Cancel in the status bar: PanelExports.export_all, as the
note window's) and the shown run's data alone: the history of the counts (CSV), W (.npy)
and the active features per neuron (CSV), all from the snapshot on screen."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes
from sparsity_gui.core.interference.files import snapshot_files
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.interference.settings import run_settings
from sparsity_gui.core.interference.thresholds import snapshot_threshold_curves
from sparsity_gui.ui.background import BackgroundJob
from sparsity_gui.ui.dialogs import UNCHANGED
from sparsity_gui.ui.figure_export import PanelExports
from sparsity_gui.ui.figure_style import FigureStyleChoice

DATA_KINDS = {
    # kind: (file name, menu text, dialog filter): the run's files, as `interference` names them
    "history": ("history.csv", "History of the counts (CSV)…", "CSV (*.csv)"),
    "weights": ("w_final.npy", "Weights W, n × m (.npy)…", "NumPy array (*.npy)"),
    "w0": ("w0.npy", "Initial weights W(0), n × m (.npy)…", "NumPy array (*.npy)"),
    "counts": ("neuron_counts.csv", "Active features per neuron (CSV)…", "CSV (*.csv)"),
    "run": ("run.json", "Run metadata (run.json)…", "JSON (*.json)"),
}
COMMAND_LINE = "sparsity-gui (desktop app export)"
PIN_LABEL_CHARS = 28  # a legend's pin name at most; the whole name is in pins.json


def short_label(text: str, chars: int = PIN_LABEL_CHARS) -> str:
    """A pin's name cut to at most `chars`, after its last whole 'name = value' that fits,
    with an ellipsis (the whole name is in pins.json)."""
    if len(text) <= chars:
        return text
    parts = text.split(", ")
    kept = parts[0] if len(parts[0]) < chars else parts[0][: chars - 1].rstrip()
    for part in parts[1:]:
        if len(kept) + 2 + len(part) + 2 > chars:
            break
        kept += ", " + part
    return kept + ", …" if len(kept) + 3 <= chars else kept + "…"


class InterferenceExports(FigureStyleChoice, PanelExports):
    WINDOW_FIGURE = "layout"
    FORMATS = ("png", "svg", "pdf")

    def build_menus(self, file_menu: QtWidgets.QMenu) -> None:
        self.act_export_all = self.win.action(
            "act_export_all",
            "Export all…",
            lambda _c=False: self.export_all_dialog(),
            "Ctrl+E",
            "Every panel's figure (PNG, SVG, PDF: the formats checked in its dialog; its data "
            "and the script that redraws it), "
            "the layout, the sweep's figure, the run's data, the window (PNG), the session and "
            "the pinned runs, into one folder (Ctrl+E)",
        )
        self.act_export_all.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        file_menu.addAction(self.act_export_all)
        figure_menu = self.figure_menu()
        self.add_style_menu(figure_menu)
        file_menu.addMenu(figure_menu)
        menu = file_menu.addMenu("Export data")
        menu.setObjectName("menu_export_data")
        for kind, (_name, text, _filter) in DATA_KINDS.items():
            act = menu.addAction(text)
            act.triggered.connect(lambda _c=False, k=kind: self.export_data_dialog(k))

    # --- what the figures draw -----------------------------------------------------------
    def run_data(self) -> dict[str, dict]:
        """Each live panel's data: the shown snapshot, the pinned runs, the live changes of
        l1 and lr, and the panels' toggles (neurons ordered by feature, log histogram)."""
        from sparsity_gui.figures.interference.figures import run_data

        win = self.win
        snap = win.snapshot
        if snap is None or snap.latest is None:
            raise InputError("", "the run is still starting; try again in a moment")
        weights, active, poly = win.panels[0], win.panels[1], win.panels[2]
        pins = win.pin_control
        labels = {
            number: (short_label(text), text)
            for number, text in ((p.number, pins.labels.get(p.number, f"pin {p.number}")) for p in pins.pins)
        }
        # what the step panels mark, in their words (the settings table's): a schedule's
        # turns passed, then the live changes
        changes = poly.change_markers(snap)
        return run_data(
            snap.history,
            HISTORY_COLUMNS,
            snap.W,
            snap.counts,
            snap.params.n,
            pins=pins.pins,
            pin_labels=labels,
            changes=changes,
            ordered=weights.order.isChecked(),
            log_histogram=active.log_hist.isChecked(),
            w0=snap.w0 if weights.overlap.isChecked() else None,
            settings=run_settings(snap.params, win.run_w0_source),
            thresholds=snapshot_threshold_curves(snap),  # the Thresholds panel's data
        )

    def sweep_files(self, name: str = "sweep", formats=("png", "svg", "pdf")) -> dict[str, bytes]:
        """The sweep's figure on screen as `name`.<fmt>, .json and .py: the count against m,
        or for a sweep over more than m the heatmap (two varied options) or the curves of
        the readout chosen in the tab, as `sweep` draws them."""
        tab = self.win.sweep
        if tab.spec is None or not tab.rows:
            raise InputError("", "the sweep has no runs yet: run a sweep first")
        files = tab.figure_files(list(tab.rows), style=self.style(), formats=formats, extras=False)
        shown = tab.figure_name  # sweep, heatmap or curves
        return {
            name + file[len(shown) :]: data for file, data in files.items() if file.startswith(shown + ".")
        }

    def figure_files(self, target, name: str, formats=("png", "svg", "pdf")) -> dict[str, bytes]:
        """A panel (or "window": the layout of the tab shown) as `name`.<fmt>, `name`.json
        and `name`.py."""
        from sparsity_gui.figures.interference import figures as fi
        from sparsity_gui.figures.scripted import figure_files, panel_size

        panel = self.panel(target)
        win = self.win
        if panel is win.sweep.panel or (panel is None and win.tabs.currentIndex() == 1):
            return self.sweep_files(name, formats)
        data = self.run_data()
        if panel is None:
            whole = fi.layout_data(data)
            size = fi.layout_size(self.style())
            return figure_files(
                name, fi.layout, whole, self.style(), size, formats=formats, functions=fi.SCRIPT_FUNCTIONS
            )
        key = fi.PANEL_ORDER[win.panels.index(panel)]
        function, title = fi.PANELS[key][0], fi.panel_title(key, data[key])
        return figure_files(
            name,
            function,
            data[key],
            self.style(),
            panel_size(self.style()),
            formats=formats,
            title=title,
            functions=fi.SCRIPT_FUNCTIONS,
        )

    def figure_bytes(self, target, fmt: str, scale: float = 2.0) -> bytes:
        return self.figure_files(target, "figure", (fmt,))[f"figure.{fmt}"]

    def export_figure(self, target, path, scale: float = 2.0) -> bool:
        """A panel or "window" to ``path`` (its suffix picks the format), with the data it
        is drawn from (.json) and the script that redraws it (.py) beside it."""
        win = self.win
        path = Path(path)
        files = self.figure_files_for(path, lambda fmt: self.figure_files(target, path.stem, (fmt,)))
        if files is None:
            return False
        written = []
        try:
            for name, data in files.items():
                atomic_write_bytes(path.with_name(name), data)
                written.append(path.with_name(name))
        except OSError as exc:
            for done in written:
                done.unlink(missing_ok=True)
            return win.fail("Cannot export the figure", f"{path}: {exc.strerror or exc}. {UNCHANGED}")
        return win.done(
            f"Wrote {path} (with {path.stem}.json and {path.stem}.py, the script that redraws it)"
        )

    # --- Export all ------------------------------------------------------------------------
    def export_all_parts(self, formats):
        """Export all's figures and data (PanelExports.export_all writes them, the window's
        PNG among them): every panel and the layout (and the sweep's figures, if it has
        runs) in figures/ in ``formats``, the run's data, session.json and the pinned runs."""
        from sparsity_gui.figures.interference import figures as fi
        from sparsity_gui.figures.scripted import figure_files, panel_size

        win = self.win
        data = self.run_data()
        data_files: dict = dict(self.run_files())
        make_session = win.sessions.session_maker()
        data_files.update({name: text.encode("utf-8") for name, text in win.pin_control.files().items()})
        style = self.style()
        tab = win.sweep
        sweep = (  # read here, on the GUI thread: the files are drawn beside it
            (tab.spec, list(tab.rows), tab.outcome == "cancelled", tab.readout_name)
            if tab.spec is not None and tab.rows
            else None
        )

        def make(job: BackgroundJob, step) -> tuple[dict, dict]:
            figures: dict[str, bytes] = {}
            for key in fi.PANEL_ORDER:
                function, panel_title = fi.PANELS[key][0], fi.panel_title(key, data[key])
                files = figure_files(
                    key,
                    function,
                    data[key],
                    style,
                    panel_size(style),
                    formats=formats,
                    title=panel_title,
                    functions=fi.SCRIPT_FUNCTIONS,
                )
                figures.update({f"figures/{name}": blob for name, blob in files.items()})
                step(f"Drew {panel_title}…")
            whole = fi.layout_data(data)
            files = figure_files(
                "layout",
                fi.layout,
                whole,
                style,
                fi.layout_size(style),
                formats=formats,
                functions=fi.SCRIPT_FUNCTIONS,
            )
            figures.update({f"figures/{name}": blob for name, blob in files.items()})
            step("Drew the layout…")
            if sweep is not None:  # the figures `sweep` draws for it (a grid's: its readout's)
                from sparsity_gui.figures.interference.grid import sweep_figures

                spec, rows, cancelled, readout = sweep
                files = sweep_figures(spec, rows, readout, cancelled=cancelled, style=style, formats=formats)
                figures.update({f"figures/{name}": blob for name, blob in files.items()})
                step("Drew the sweep…")
            return figures, {**data_files, "session.json": make_session()}

        drawn = len(fi.PANEL_ORDER) + 1 + (sweep is not None)
        return drawn + len(data_files) + 1, make

    # --- data --------------------------------------------------------------------------------
    def run_files(self) -> dict[str, bytes]:
        """The shown run's files, as the `interference` command writes them (core's
        snapshot_files): history.csv, w0.npy, w_final.npy, neuron_counts.csv, run.json."""
        snap = self.win.snapshot
        if snap is None or snap.latest is None:
            raise InputError("", "the run is still starting; try again in a moment")
        return snapshot_files(snap, self.win.run_w0_source, COMMAND_LINE)

    def data_bytes(self, kind: str) -> bytes:
        """One of the shown run's files (DATA_KINDS)."""
        if kind not in DATA_KINDS:
            raise InputError("", f"unknown kind of data {kind!r}")
        return self.run_files()[DATA_KINDS[kind][0]]

    def export_data(self, kind: str, path) -> bool:
        path = Path(path)
        try:
            atomic_write_bytes(path, self.data_bytes(kind))
        except InputError as exc:
            return self.win.fail("Cannot export data", exc.message)
        except OSError as exc:
            return self.win.fail("Cannot export data", f"{path}: {exc.strerror or exc}. {UNCHANGED}")
        return self.win.done(f"Wrote {path}")

    def export_data_dialog(self, kind: str) -> None:
        name, _text, flt = DATA_KINDS[kind]
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self.win, "Export data", name, f"{flt};;All files (*)"
        )
        if path:
            self.export_data(kind, path)
