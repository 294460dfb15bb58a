"""The interference window's exports: a panel (the sweep's too) or the whole layout as a
matplotlib figure (PNG, SVG or PDF, with the data it is drawn from and the script that
redraws it beside it), *Export all* (every figure, the shown run's data and the pinned
runs, into one folder, in a worker thread with a progress bar and Cancel) and the shown
run's data alone: the history of the counts (CSV), W (.npy) and the active features per
neuron (CSV), all from the snapshot on screen."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes
from sparsity_gui.core.interference.files import history_csv, neuron_counts_csv
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.ui.dialogs import UNCHANGED, choose_folder
from sparsity_gui.ui.figure_export import PanelExports
from sparsity_gui.ui.figure_style import FigureStyleChoice

DATA_KINDS = {
    # kind: (file name, menu text, dialog filter)
    "history": ("interference_history.csv", "History of the counts (CSV)…", "CSV (*.csv)"),
    "weights": ("W.npy", "Weights W, n × m (.npy)…", "NumPy array (*.npy)"),
    "counts": ("neuron_counts.csv", "Active features per neuron (CSV)…", "CSV (*.csv)"),
}
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


def change_text(text: str) -> str:
    """A live change's marker text for a figure: 'l1=0.002 lr=0.01' -> mathtext."""
    names = {"l1": "$\\ell_1$", "lr": "lr"}
    parts = []
    for part in text.split():
        name, _, value = part.partition("=")
        parts.append(f"{names.get(name, name)} = {value}")
    return ", ".join(parts)


class ExportJob(QtCore.QObject):
    """Files made one by one in a worker thread (``parts`` yields (label, {name: bytes})),
    then written into ``folder`` only if nothing failed and nobody cancelled: a cancelled
    export writes nothing, and a write that fails takes back what it wrote. ``finished``
    carries (ok, message)."""

    finished = QtCore.Signal(bool, str)

    def __init__(self, parent, folder: Path, parts: Callable[[], Iterator], count: int):
        super().__init__(parent)
        self.folder, self.parts, self.count = folder, parts, count
        self.cancelled = threading.Event()
        self.done = 0  # parts made so far (read by the GUI thread's timer)
        self.label = "Drawing the figures…"
        self.result: tuple[bool, str] | None = None
        self.thread = threading.Thread(target=self._work, name="export-all", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def cancel(self) -> None:
        self.cancelled.set()

    def _work(self) -> None:
        files: dict[str, bytes] = {}
        try:
            for label, part in self.parts():
                if self.cancelled.is_set():
                    self.result = (False, "Export cancelled: nothing was written")
                    return
                files.update(part)
                self.done += 1
                self.label = label
            if self.cancelled.is_set():
                self.result = (False, "Export cancelled: nothing was written")
                return
            self.label = f"Writing {len(files)} files…"
            self.result = self._write(files)
        except InputError as exc:
            self.result = (False, exc.message)
        except (ValueError, RuntimeError, MemoryError) as exc:
            self.result = (False, f"cannot draw the figures: {exc}")

    def _write(self, files: dict[str, bytes]) -> tuple[bool, str]:
        created: list[Path] = []
        written: list[Path] = []
        try:
            for folder in (self.folder, self.folder / "figures"):
                if not folder.exists():
                    folder.mkdir(parents=True)
                    created.append(folder)
            for name, data in files.items():
                path = self.folder / name
                if path.exists():
                    raise FileExistsError(17, "a file of that name is in the folder", str(path))
                atomic_write_bytes(path, data)
                written.append(path)
        except OSError as exc:
            for path in written:  # all of it or nothing
                path.unlink(missing_ok=True)
            for folder in reversed(created):
                try:
                    folder.rmdir()
                except OSError:
                    pass
            where = exc.filename or self.folder
            return (False, f"{where}: {exc.strerror or exc}. Nothing was written.")
        return (True, f"Exported {len(written)} files to {self.folder}")


class InterferenceExports(FigureStyleChoice, PanelExports):
    WINDOW_FIGURE = "layout"
    FORMATS = ("png", "svg", "pdf")

    def __init__(self, window) -> None:
        super().__init__(window)
        self.job: ExportJob | None = None
        self.progress: QtWidgets.QProgressDialog | None = None

    def build_menus(self, file_menu: QtWidgets.QMenu) -> None:
        self.act_export_all = file_menu.addAction("Export all…")
        self.act_export_all.setObjectName("act_export_all")
        self.act_export_all.setToolTip(
            "Every panel's figure (PNG, SVG, PDF, its data and the script that redraws it), "
            "the layout, the sweep's figure, the run's data and the pinned runs, into one folder"
        )
        self.act_export_all.triggered.connect(lambda _c=False: self.export_all_dialog())
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
        from sparsity_gui.figures.interference import run_data

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
        changes = [(step, change_text(text)) for step, text in getattr(poly, "_changes", [])]
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
        )

    def sweep_files(self, name: str = "sweep", formats=("png", "svg", "pdf")) -> dict[str, bytes]:
        from sparsity_gui.figures.sweep import sweep_figure_files

        tab = self.win.sweep
        if tab.spec is None or not tab.rows:
            raise InputError("", "the sweep has no runs yet: run a sweep first")
        files = sweep_figure_files(
            tab.spec,
            list(tab.rows),
            style=self.style(),
            formats=formats,
            cancelled=tab.outcome == "cancelled",
        )
        return {name + file[len("sweep") :]: data for file, data in files.items()}

    def figure_files(self, target, name: str, formats=("png", "svg", "pdf")) -> dict[str, bytes]:
        """A panel (or "window": the layout of the tab shown) as `name`.<fmt>, `name`.json
        and `name`.py."""
        from sparsity_gui.figures import interference as fi
        from sparsity_gui.figures.scripted import figure_files, panel_size

        panel = self.panel(target)
        win = self.win
        if panel is win.sweep.panel or (panel is None and win.tabs.currentIndex() == 1):
            return self.sweep_files(name, formats)
        data = self.run_data()
        if panel is None:
            whole = {"panels": [data[p] for p in fi.PANEL_ORDER]}
            size = fi.layout_size(self.style())
            return figure_files(
                name, fi.layout, whole, self.style(), size, formats=formats, functions=fi.SCRIPT_FUNCTIONS
            )
        key = fi.PANEL_ORDER[win.panels.index(panel)]
        function, title = fi.PANELS[key]
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
    def export_all(self, folder) -> ExportJob | None:
        """Start writing every figure, the run's data and the pinned runs into ``folder``
        (new, or without files of those names); returns the job (None when it could not
        start: the reason is shown). The window keeps painting; Cancel writes nothing."""
        from sparsity_gui.figures import interference as fi
        from sparsity_gui.figures.scripted import figure_files, panel_size

        win = self.win
        folder = Path(folder)
        if self.job is not None:
            win.fail("Cannot export", "an export is running: wait for it or cancel it")
            return None
        if folder.exists() and not folder.is_dir():
            win.fail("Cannot export", f"{folder} is a file, not a folder")
            return None
        try:
            data = self.run_data()
            data_files = {
                "history.csv": self.data_bytes("history"),
                "w_final.npy": self.data_bytes("weights"),
                "neuron_counts.csv": self.data_bytes("counts"),
            }
            data_files.update({name: text.encode("utf-8") for name, text in win.pin_control.files().items()})
        except InputError as exc:
            win.fail("Cannot export", exc.message)
            return None
        style = self.style()
        tab = win.sweep
        sweep = (
            (tab.spec, list(tab.rows), tab.outcome == "cancelled")
            if tab.spec is not None and tab.rows
            else None
        )

        def parts() -> Iterator[tuple[str, dict[str, bytes]]]:
            yield "the run's data", data_files
            for key in fi.PANEL_ORDER:
                function, title = fi.PANELS[key]
                files = figure_files(
                    key,
                    function,
                    data[key],
                    style,
                    panel_size(style),
                    title=title,
                    functions=fi.SCRIPT_FUNCTIONS,
                )
                yield title, {f"figures/{name}": blob for name, blob in files.items()}
            whole = {"panels": [data[p] for p in fi.PANEL_ORDER]}
            files = figure_files(
                "layout", fi.layout, whole, style, fi.layout_size(style), functions=fi.SCRIPT_FUNCTIONS
            )
            yield "the layout", {f"figures/{name}": blob for name, blob in files.items()}
            if sweep is not None:
                from sparsity_gui.figures.sweep import sweep_figure_files

                files = sweep_figure_files(sweep[0], sweep[1], style=style, cancelled=sweep[2])
                yield "the sweep", {f"figures/{name}": blob for name, blob in files.items()}

        count = 2 + len(fi.PANEL_ORDER) + (sweep is not None)
        job = ExportJob(self, folder, parts, count)
        self.job = job
        self._show_progress(job)
        job.start()
        return job

    def _show_progress(self, job: ExportJob) -> None:
        dialog = QtWidgets.QProgressDialog("Drawing the figures…", "Cancel", 0, job.count, self.win)
        dialog.setObjectName("export_progress")
        dialog.setWindowTitle("Export all")
        dialog.setMinimumDuration(300)  # a quick export shows no dialog
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.canceled.connect(job.cancel)
        self.progress = dialog
        timer = QtCore.QTimer(self)
        timer.setInterval(50)

        def poll() -> None:
            dialog.setValue(min(job.done, job.count - 1))
            dialog.setLabelText(job.label)
            if job.result is not None or not job.thread.is_alive():
                timer.stop()
                self._finish(job)

        timer.timeout.connect(poll)
        timer.start()

    def _finish(self, job: ExportJob) -> None:
        ok, message = job.result if job.result is not None else (False, "the export stopped")
        self.job = None
        if self.progress is not None:
            self.progress.reset()
            self.progress.deleteLater()
            self.progress = None
        if ok:
            self.win.done(message)
        elif job.cancelled.is_set():
            self.win.done(message)  # asked for: no warning box
        else:
            self.win.fail("Cannot export", message)
        job.finished.emit(ok, message)

    def export_all_dialog(self) -> None:
        folder = choose_folder(self.win, "Export all into folder")  # a new folder's name too
        if folder:
            self.export_all(folder)

    # --- data --------------------------------------------------------------------------------
    def data_bytes(self, kind: str) -> bytes:
        """The shown snapshot's data: history (CSV), weights (W as .npy), counts (CSV)."""
        snap = self.win.snapshot
        if snap is None:
            raise InputError("", "the run is still starting; try again in a moment")
        if kind == "history":
            return history_csv(snap.history).encode("utf-8")
        if kind == "weights":
            buf = io.BytesIO()
            np.save(buf, snap.W, allow_pickle=False)
            return buf.getvalue()
        if kind == "counts":
            return neuron_counts_csv(snap.counts).encode("utf-8")
        raise InputError("", f"unknown kind of data {kind!r}")

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
