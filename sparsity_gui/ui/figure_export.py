"""`PanelExports`, the figure half of each model's File menu exports: a panel or the whole
window as a figure file, from the Export figure menu and its save dialog; and the one way
either window's exports run beside the GUI (`run_job`: one at a time, progress and Cancel in
the status bar)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.ui.background import BackgroundJob, JobOutcome, StatusProgress
from sparsity_gui.ui.dialogs import in_last_folder, remember_folder

BUSY = "an export is running: wait for it or cancel it"

FORMAT_FILTERS = {
    "png": "PNG image (*.png)",
    "svg": "SVG vector image (*.svg)",
    "pdf": "PDF document (*.pdf)",
}


def png_bytes(image) -> bytes:
    """A QImage or QPixmap encoded as PNG (RuntimeError when Qt cannot)."""
    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise RuntimeError("Qt could not encode the PNG image")
    return bytes(buf.data())


def file_stem(title: str) -> str:
    """A panel's title as the name its figure's file is offered under: 'L1 decay' -> l1_decay."""
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_") or "panel"


class PanelExports(QtCore.QObject):
    """A window's figure exports: a panel (an index into the window's all_panels(), or the
    panel itself) or "window", written atomically in a format its suffix picks. Each
    model's exports add their data files. Problems are reported through the window's
    fail/done and never raise."""

    FORMATS: tuple[str, ...] = ("png", "svg")
    WINDOW_FIGURE = "window"  # the file name offered for the whole window

    def __init__(self, window) -> None:
        super().__init__(window)
        self.win = window
        self.job: BackgroundJob | None = None  # the export running, if any
        self.progress: StatusProgress | None = None

    def cannot_export_into(self, folder: Path) -> str | None:
        """Why an Export all into ``folder`` cannot start, or None: one is running (a
        second is refused, not queued), or the name is a file's."""
        if self.job is not None:
            return BUSY
        if folder.exists() and not folder.is_dir():
            return f"{folder} is a file, not a folder"
        return None

    def run_job(
        self,
        work: Callable[[BackgroundJob], object],
        what: str,
        finish: Callable[[JobOutcome], bool],
        *,
        total: int = 0,
        wait: bool = True,
        title: str = "Cannot export",
    ) -> bool:
        """``work(job)`` in a worker (ui/background.py) behind a progress bar and Cancel in the
        status bar (``total`` steps, which the work reports as (done, text); 0: a busy bar);
        ``finish(outcome)`` says on the GUI thread how it ended. One export at a time: a
        second is refused with a message. With ``wait`` the caller gets finish's answer (the
        worker joined: no event loop runs meanwhile); without, True once it has started and
        the answer goes to the status bar or a dialog when it ends."""
        if self.job is not None:
            return self.win.fail(title, BUSY)
        answer: dict[str, bool] = {}

        def done(outcome: JobOutcome) -> None:
            self.job = None
            if self.progress is not None:
                self.progress.close()
                self.progress = None
            answer["ok"] = finish(outcome)

        def progress(state: tuple[int, str]) -> None:
            if self.progress is not None:
                self.progress.show(*state)

        job = BackgroundJob(self, work, name="export", on_done=done, on_progress=progress)
        tip = "Stop the export: the folder is left as it was"
        self.progress = StatusProgress(self.win, total, job.cancel, tip)
        self.progress.show(0, what)
        self.job = job.start()
        if not wait:
            return True
        job.wait()
        return answer.get("ok", False)

    def panel(self, target):
        """The panel a target names, or None for the whole window."""
        if target == "window":
            return None
        if isinstance(target, int):
            return self.win.all_panels()[target]
        return target

    def figure_bytes(self, target, fmt: str, scale: float = 2.0) -> bytes:
        """A panel's (or "window"'s) figure in ``fmt``: each model's, drawn by matplotlib."""
        raise NotImplementedError

    def export_figure(self, target, path, scale: float = 2.0) -> bool:
        """A panel or "window" to ``path``; its suffix picks the format. An unknown suffix
        or a failed write leaves any earlier file."""
        raise NotImplementedError

    def figure_format(self, path: Path) -> str | None:
        """The format ``path``'s suffix picks, or None once an unknown one is shown."""
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in self.FORMATS:
            names = ", ".join(f".{f}" for f in self.FORMATS[:-1]) + f" or .{self.FORMATS[-1]}"
            self.win.fail(
                "Cannot export the figure",
                f"{path.name}: unknown format {path.suffix or '(no extension)'}; use {names}",
            )
            return None
        return fmt

    def figure_files_for(self, path: Path, draw: Callable[[str], dict]) -> dict[str, bytes] | None:
        """The files ``draw(fmt)`` makes for ``path``, whose suffix picks the format fmt;
        None once the problem (an unknown suffix, bad input, a failed drawing) is shown."""
        fmt = self.figure_format(path)
        if fmt is None:
            return None
        try:
            return draw(fmt)
        except InputError as exc:
            self.win.fail("Cannot export the figure", exc.message)
        except (ValueError, RuntimeError) as exc:
            self.win.fail("Cannot export the figure", str(exc))
        return None

    def figure_menu(self) -> QtWidgets.QMenu:
        """Export figure: an entry per panel, and the whole window."""
        menu = QtWidgets.QMenu("Export figure", self.win)
        menu.setObjectName("menu_export_figure")
        kinds = ", ".join(f.upper() for f in self.FORMATS)
        for i, panel in enumerate(self.win.all_panels()):
            act = menu.addAction(f"{panel.title}…")
            act.setToolTip(f"The {panel.title} panel as {kinds}")
            act.triggered.connect(lambda _c=False, i=i: self.export_figure_dialog(i))
        menu.addSeparator()
        act = menu.addAction("Whole window…")
        act.setToolTip(f"The whole window as {kinds}")
        act.triggered.connect(lambda _c=False: self.export_figure_dialog("window"))
        return menu

    def export_figure_dialog(self, target) -> None:
        panel = self.panel(target)
        name = self.WINDOW_FIGURE if panel is None else file_stem(panel.title)
        path = self.ask_figure_path(name, self.FORMATS)
        if path:
            self.export_figure(target, path)

    def ask_figure_path(self, name: str, formats: Sequence[str]) -> str | None:
        """The save dialog for figure ``name`` in ``formats``, in the last folder: the path
        with the chosen filter's suffix if none was typed, or None when cancelled."""
        filters = ";;".join(FORMAT_FILTERS[f] for f in formats)
        path, chosen = QtWidgets.QFileDialog.getSaveFileName(
            self.win, "Export figure", in_last_folder(f"{name}.png"), filters
        )
        if not path:
            return None
        remember_folder(path)
        if not Path(path).suffix:
            path += {"S": ".svg", "P": ".pdf"}.get(chosen[:1], ".png")
        return path
