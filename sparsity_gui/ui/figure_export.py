"""`PanelExports`, the figure half of each model's File menu exports: a panel or the whole
window as a figure file, from the Export figure menu and its save dialog; the one way
either window's exports run beside the GUI (`run_job`: one at a time, progress and Cancel in
the status bar); and the one *Export all* of both windows (`export_all`: what it refuses,
the temporary folder its files are made in, the window's PNG, how it ends), each model
adding its figures and data (`export_all_parts`)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import Payload, make_temp_dir, write_payload
from sparsity_gui.ui.background import BackgroundJob, JobOutcome, StatusProgress
from sparsity_gui.ui.dialogs import UNCHANGED, FolderDialog, choose_folder, in_last_folder, remember_folder
from sparsity_gui.ui.figure_style import chosen_formats, remember_formats

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


# Export all's files: a model's work makes them as {name: payload}, names relative to the
# folder ("figures/x.png" inside it); calling step(text) once per unit of its progress
ExportFiles = dict[str, Payload]
ExportWork = Callable[[BackgroundJob, Callable[[str], None]], tuple[ExportFiles, ExportFiles]]


class WriteFailed(Exception):
    """A file of an export that could not be written: where, and the OSError."""

    def __init__(self, path: Path, error: OSError):
        super().__init__(str(path))
        self.path, self.error = path, error


def os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def file_stem(title: str) -> str:
    """A panel's title as the name its figure's file is offered under: 'L1 decay' -> l1_decay."""
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_") or "panel"


def _made_and_moved(
    job: BackgroundJob, make: ExportWork, window_png: bytes, tmp: Path, folder: Path
) -> list[str]:
    """Export all's work, in its worker: the model's files and the window's PNG made and
    written into ``tmp`` (a step of progress per data file), then each moved atomically
    into ``folder``; the names written."""
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        job.report((done, what))
        job.check()

    job.report((0, "Drawing the figures…"))
    figures, data = make(job, step)
    job.check()
    data["window.png"] = window_png
    items = [*((name, payload, False) for name, payload in figures.items())]
    items += [(name, payload, True) for name, payload in data.items()]
    for name, payload, counted in items:
        (tmp / name).parent.mkdir(exist_ok=True)
        try:
            write_payload(tmp / name, payload)
        except OSError as exc:
            raise WriteFailed(folder / name, exc) from None
        if counted:
            step(f"Writing {name}…")
    for name, _payload, _counted in items:  # each one atomically into place
        (folder / name).parent.mkdir(exist_ok=True)
        os.replace(tmp / name, folder / name)
    return [name for name, _payload, _counted in items]


class ExportAllDialog(FolderDialog):
    """Export all's folder chooser (a new folder's name too) with the figures' formats
    under it: a box per format (figures/save.py FORMATS), checked as last chosen. Choosing
    a folder with no box checked is refused under the boxes and the dialog stays open."""

    def __init__(self, parent: QtWidgets.QWidget | None, title: str, formats: Sequence[str]):
        from sparsity_gui.figures.save import FORMATS

        super().__init__(parent, title)
        self.setObjectName("export_all_dialog")
        self.formats: tuple[str, ...] = ()
        row = QtWidgets.QWidget(self)
        row.setObjectName("figure_formats")
        line = QtWidgets.QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(QtWidgets.QLabel("Figures as:", row))
        self.format_boxes: dict[str, QtWidgets.QCheckBox] = {}
        for fmt in FORMATS:
            box = QtWidgets.QCheckBox(fmt.upper(), row)
            box.setObjectName(f"format_{fmt}")
            box.setChecked(fmt in formats)
            box.setToolTip(
                f"Write each figure as {FORMAT_FILTERS[fmt].split(' (')[0]}; its script writes it too"
            )
            box.toggled.connect(self._say_formats)
            line.addWidget(box)
            self.format_boxes[fmt] = box
        self.format_note = QtWidgets.QLabel("", row)
        self.format_note.setObjectName("formats_note")
        self.format_note.setStyleSheet("color: #b00020")
        line.addWidget(self.format_note)
        line.addStretch(1)
        grid = self.layout()
        assert isinstance(grid, QtWidgets.QGridLayout)  # Qt's own dialog (not native) lays out in one
        grid.addWidget(row, grid.rowCount(), 0, 1, grid.columnCount())

    def checked_formats(self) -> tuple[str, ...]:
        """The formats checked now (InputError when none is)."""
        from sparsity_gui.figures.save import figure_formats

        return figure_formats([fmt for fmt, box in self.format_boxes.items() if box.isChecked()])

    def _say_formats(self) -> None:
        try:
            self.checked_formats()
        except InputError:
            self.format_note.setText("check at least one format")
        else:
            self.format_note.setText("")

    def accept(self) -> None:
        try:
            formats = self.checked_formats()
        except InputError:
            self._say_formats()
            return
        super().accept()
        if self.result() == QtWidgets.QDialog.DialogCode.Accepted:
            self.formats = formats


def choose_export_folder(parent: QtWidgets.QWidget, title: str) -> tuple[str, tuple[str, ...]]:
    """(the folder the user picks or names, the figure formats checked), ("", ()) when
    cancelled; the dialog opens in the last folder used with the last formats chosen, and
    remembers both."""
    dialog = ExportAllDialog(parent, title, chosen_formats())
    folder = choose_folder(parent, title, dialog)
    if not folder:
        return "", ()
    return folder, remember_formats(dialog.formats)


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

    # --- Export all ---------------------------------------------------------------------
    def export_all_parts(self, formats: tuple[str, ...]) -> tuple[int, ExportWork]:
        """The model's half of Export all, read on the GUI thread (InputError, ValueError or
        RuntimeError: it cannot start, said): the number of its progress steps, one per
        figure drawn plus one per data file, and the work that makes, in the export's
        worker, (figures in ``formats``, data files), calling step(text) once per figure drawn."""
        raise NotImplementedError

    def export_all(self, folder: str | Path, wait: bool = True, formats=None) -> bool:
        """One folder: the model's figures (in ``formats``, a comma list or names; None:
        the formats last chosen, figure_style.chosen_formats) and data files
        (export_all_parts), the window as window.png and the session as session.json among
        them. Refused while an export runs, when ``folder`` is a file or ``formats`` are
        not figures/save.py's. Made beside the GUI behind a progress bar with
        Cancel in the status bar (``wait``: see run_job), into a temporary folder inside
        ``folder``, then moved in file by file: a cancelled or failed export leaves the
        folder as it was (files of the same names from before are replaced only once all
        are made)."""
        win = self.win
        folder = Path(folder)
        title = "Cannot export"
        refused = self.cannot_export_into(folder)
        if refused:
            return win.fail(title, refused)
        try:
            from sparsity_gui.figures.save import figure_formats

            formats = chosen_formats() if formats is None else figure_formats(formats)
            total, make = self.export_all_parts(formats)
            window_png = self.window_png(1.0)
        except InputError as exc:
            return win.fail(title, exc.message)
        except (ValueError, RuntimeError, TypeError) as exc:
            return win.fail(title, str(exc))
        created = [p for p in (folder, folder / "figures") if not p.exists()]
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = make_temp_dir(folder, "export")
        except OSError as exc:
            return win.fail(title, f"{folder}: {os_reason(exc)}. {UNCHANGED}")

        def work(job: BackgroundJob) -> list[str]:
            return _made_and_moved(job, make, window_png, tmp, folder)

        def finish(outcome: JobOutcome) -> bool:
            shutil.rmtree(tmp, ignore_errors=True)
            for made in reversed(created):  # a folder this export made and left empty
                if made.is_dir() and not any(made.iterdir()):
                    made.rmdir()
            if outcome.ok:
                return win.done(f"Exported {len(outcome.value)} files to {folder}")
            return self._export_all_failed(outcome, folder, title)

        return self.run_job(work, "Drawing the figures…", finish, total=total + 1, wait=wait, title=title)

    def _export_all_failed(self, outcome: JobOutcome, folder: Path, title: str) -> bool:
        """An Export all that did not finish, said: cancelled (in the status bar), or its
        reason in a dialog; an error no export expects is raised again (the excepthook)."""
        win, error = self.win, outcome.error
        if outcome.cancelled:
            win.done(f"Export cancelled: nothing was written; {folder} is as it was")
            win.last_error = "Export cancelled"  # not written: the caller is told so
            return False
        if isinstance(error, WriteFailed):
            return win.fail(
                title,
                f"{error.path}: {os_reason(error.error)}. No file was written; "
                "earlier files of the same names are intact.",
            )
        if isinstance(error, OSError):
            return win.fail(title, f"{error.filename or folder}: {os_reason(error)}")
        if isinstance(error, InputError):
            return win.fail(title, error.message)
        if isinstance(error, (ValueError, RuntimeError, MemoryError)):
            return win.fail(title, f"cannot draw the figures: {error}")
        assert error is not None
        raise error

    def export_all_dialog(self) -> None:
        folder, formats = choose_export_folder(self.win, "Export all into folder")  # a new folder's name too
        if folder:
            self.export_all(folder, wait=False, formats=formats)

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
        return png_bytes(image)

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
