"""*File → Export movie…*, shared by both windows: the panel, the time range, the spacing
of the frame times, the length, the frame rate and the format, then the movie drawn beside
the GUI (ui/background.py) with a progress bar and Cancel while the live run goes on untouched (the
movie replays the run's script in its own Simulation; the window's engine is never read).

Each window supplies a `MovieSource`: the panels it offers, the run's span and a
`write(path, panel, settings, t_range, cancelled, progress)` made on the GUI thread from
what is on screen, safe to call from the worker. Without PyAV (the [movie] extra) the
menu item opens a dialog that names the extra."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import os_reason
from sparsity_gui.figures.movie import (
    DEFAULT_FPS,
    DEFAULT_SECONDS,
    MISSING_TEXT,
    MovieCancelled,
    MovieExtraMissing,
    movie_settings,
    require_encoder,
)
from sparsity_gui.ui.background import BackgroundJob, JobOutcome
from sparsity_gui.ui.dialogs import in_last_folder, remember_folder


@dataclass(frozen=True)
class MovieSource:
    """What a window offers a movie of: panel names and the titles the dialog shows (the
    layout last), the run's end (in its time unit: t, or steps), and the writer of a movie
    of it."""

    panels: Mapping[str, str]
    end: float
    unit: str  # "t" or "step"
    write: Callable  # (path, panel, settings, t_range, cancelled, progress) -> (width, height)
    name: str = "movie"


class MovieDialog(QtWidgets.QDialog):
    """The options, then the export in a thread: progress, Cancel, the outcome at the end."""

    def __init__(self, parent: QtWidgets.QWidget, source: MovieSource):
        super().__init__(parent)
        self.setObjectName("movie_dialog")
        self.setWindowTitle("Export movie")
        self.source = source
        self.outcome = ""  # "written", "cancelled" or "failed" once an export ended
        self.message = ""
        self.job: BackgroundJob | None = None

        form = QtWidgets.QFormLayout()
        self.panel = QtWidgets.QComboBox(objectName="movie_panel")
        for name, title in source.panels.items():
            self.panel.addItem(title, name)
        form.addRow("Panel", self.panel)
        unit = "steps" if source.unit == "step" else "t"
        self.start = QtWidgets.QLineEdit("0", objectName="movie_start")
        self.end = QtWidgets.QLineEdit(f"{source.end:.10g}", objectName="movie_end")
        span = QtWidgets.QHBoxLayout()
        span.addWidget(self.start)
        span.addWidget(QtWidgets.QLabel("to"))
        span.addWidget(self.end)
        form.addRow(f"Time range ({unit})", span)
        self.spacing = QtWidgets.QComboBox(objectName="movie_spacing")
        self.spacing.addItem("evenly spaced", "linear")
        self.spacing.addItem("log-spaced (decades)", "log")
        form.addRow("Frame times", self.spacing)
        self.seconds = QtWidgets.QDoubleSpinBox(
            objectName="movie_seconds", decimals=1, minimum=0.1, maximum=600.0
        )
        self.seconds.setValue(DEFAULT_SECONDS)
        self.seconds.setSuffix(" s")
        form.addRow("Length", self.seconds)
        self.fps = QtWidgets.QSpinBox(objectName="movie_fps", minimum=1, maximum=120)
        self.fps.setValue(DEFAULT_FPS)
        form.addRow("Frames per second", self.fps)
        self.format = QtWidgets.QComboBox(objectName="movie_format")
        self.format.addItem("MP4 (H.264)", "mp4")
        self.format.addItem("GIF", "gif")
        form.addRow("Format", self.format)
        self.error = QtWidgets.QLabel("", objectName="movie_error")
        self.error.setStyleSheet("color: #b00020")
        self.error.setWordWrap(True)
        self.bar = QtWidgets.QProgressBar(objectName="movie_progress")
        self.bar.setVisible(False)
        self.buttons = QtWidgets.QDialogButtonBox()
        self.export_button = self.buttons.addButton(
            "Export…", QtWidgets.QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.cancel_button = self.buttons.addButton(QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        self.export_button.clicked.connect(self.ask_path)
        self.cancel_button.clicked.connect(self.cancel)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.bar)
        layout.addWidget(self.buttons)

    # --- the options -----------------------------------------------------------------------
    def options(self):
        """(panel, settings, t_range) from the fields; InputError names the bad one."""
        try:
            start, end = float(self.start.text()), float(self.end.text())
        except ValueError:
            raise InputError("range", "the time range needs two numbers") from None
        if end > self.source.end and float(f"{self.source.end:.10g}") == end:
            end = self.source.end  # the end as the field shows it, rounded to 10 digits
        if not (0 <= start < end <= self.source.end):
            raise InputError(
                "range", f"must lie within the run, 0 to {self.source.end:.6g}, start before end"
            )
        settings = movie_settings(
            float(self.seconds.value()),
            int(self.fps.value()),
            self.spacing.currentData(),
            self.format.currentData(),
        )
        return self.panel.currentData(), settings, (start, end)

    def ask_path(self) -> None:
        try:
            panel, settings, _ = self.options()
        except InputError as exc:
            self.error.setText(exc.message)
            return
        suffix = settings.fmt
        # offered in the last folder used (not the working directory), which it then becomes
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export movie", in_last_folder(f"{panel}.{suffix}"), f"{suffix.upper()} movie (*.{suffix})"
        )
        if path:
            remember_folder(path)
            self.start_export(path if Path(path).suffix else f"{path}.{suffix}")

    # --- the export beside the GUI ----------------------------------------------------------------
    def select_panel(self, name: str) -> None:
        """Show the panel ``name`` (its title in the list)."""
        self.panel.setCurrentIndex(self.panel.findData(name))

    def _inputs(self) -> tuple:
        return (self.panel, self.start, self.end, self.spacing, self.seconds, self.fps, self.format)

    def start_export(self, path: str | Path) -> bool:
        """Start writing `path` in a worker; False (the reason shown) on bad options."""
        try:
            panel, settings, t_range = self.options()
        except InputError as exc:
            self.error.setText(exc.message)
            return False
        self.error.setText("")
        self.path = Path(path)
        write, target = self.source.write, self.path

        def work(job: BackgroundJob):
            return write(
                target, panel, settings, t_range, job.cancelled, lambda done, total: job.report((done, total))
            )

        for w in self._inputs():
            w.setEnabled(False)
        self.export_button.setEnabled(False)
        self.bar.setRange(0, settings.frames)
        self.bar.setValue(0)
        self.bar.setVisible(True)
        self.job = BackgroundJob(
            self, work, name="movie-export", on_done=self._ended, on_progress=self._show_progress
        ).start()
        return True

    def _show_progress(self, progress: tuple[int, int]) -> None:
        done, total = progress
        self.bar.setMaximum(total)
        self.bar.setValue(done)

    @property
    def running(self) -> bool:
        return self.job is not None and self.job.running

    def _ended(self, outcome: JobOutcome) -> None:
        error = outcome.error
        if error is None:
            width, height = outcome.value
            self.outcome, self.message = "written", f"Wrote {self.path} ({width}×{height})"
            self.accept()
            return
        if isinstance(error, MovieCancelled) or outcome.cancelled:
            self.outcome, self.message = "cancelled", "Movie export cancelled; nothing was written"
            self.reject()
            return
        self.outcome = "failed"
        if isinstance(error, OSError):
            self.message = f"Cannot write {self.path}: {os_reason(error)}. Nothing was written."
        elif isinstance(error, InputError):
            self.message = error.message
        elif isinstance(error, (ValueError, RuntimeError, MemoryError)):
            self.message = f"The movie could not be made: {error}"
        else:
            raise error
        for w in self._inputs():
            w.setEnabled(True)
        self.export_button.setEnabled(True)
        self.bar.setVisible(False)
        self.error.setText(self.message)

    def wait(self, timeout: float = 300.0) -> None:
        """Block until the export ends (tests, and closing the dialog while it runs)."""
        if self.job is not None:
            self.job.wait(timeout)

    def cancel(self) -> None:
        if self.running:
            self.job.cancel()  # the worker stops before its next frame; the end closes the dialog
        else:
            self.reject()

    def closeEvent(self, event) -> None:
        if self.running:
            self.job.shutdown(300.0)
        super().closeEvent(event)


def open_movie_dialog(window, source_of: Callable[[], MovieSource]) -> MovieDialog | None:
    """The menu item's action: the dialog (modeless: the run goes on), or the reason none
    can be made (the extra missing, the run not started) in a dialog."""
    try:
        require_encoder()
    except MovieExtraMissing:
        QtWidgets.QMessageBox.warning(window, "Export movie", MISSING_TEXT)
        return None
    try:
        source = source_of()
    except InputError as exc:
        QtWidgets.QMessageBox.warning(window, "Export movie", exc.message)
        return None
    dialog = MovieDialog(window, source)
    dialog.finished.connect(
        lambda _r: dialog.message and window.statusBar().showMessage(dialog.message, 8000)
    )
    dialog.setModal(False)
    dialog.show()
    return dialog


def add_movie_action(window, menu: QtWidgets.QMenu, before, source_of: Callable[[], MovieSource]):
    """*Export movie…* in `menu` (before the action `before`, or at the end)."""
    act = QtGui.QAction("Export movie…", window)
    act.setObjectName("act_export_movie")
    act.setStatusTip("A movie of a panel over the run (MP4 or GIF), drawn by the figure functions")
    act.triggered.connect(
        lambda _c=False: setattr(window, "movie_dialog", open_movie_dialog(window, source_of))
    )
    if before is None:
        menu.addAction(act)
    else:
        menu.insertAction(before, act)
    return act
