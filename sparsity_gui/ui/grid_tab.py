"""What the two models' grid tabs share (the note's scaling tab, ui/note/scaling_tab.py, and
the interference sweep, ui/interference/sweep_tab.py): the parallel-runs count, the scheduler
field (tcp://HOST:PORT or local:N, core/cluster.py) with the cluster's worker count, Start /
Cancel / Save, the progress bar with the time left, and the grid's own thread.

The grid runs as a job beside the GUI (ui/background.py: its plan's run, core/grid.py, which
starts and joins its worker threads or runs a session of tasks on a dask.distributed
cluster). Nothing crosses threads as a signal: the progress callback appends finished rows
(immutable) under a lock and leaves the latest progress for the job's timer, which draws
them ten times a second. Cancel sets the flag the runs check (on a cluster: the pending
tasks are cancelled); the finished rows stay shown
and can be saved. A subclass lays out its own fields and figures and says how to plan, run
and draw its grid.
"""

from __future__ import annotations

import shlex
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.checks import default_workers
from sparsity_gui.core.cluster import EXTRA_HINT, Scheduler, usable_scheduler
from sparsity_gui.core.errors import InputError, RunsCancelled
from sparsity_gui.core.grid import GridPlan
from sparsity_gui.core.text import format_duration
from sparsity_gui.ui.background import BackgroundJob
from sparsity_gui.ui.dialogs import show_warning
from sparsity_gui.ui.fields import Field

POLL_MS = 100
JOIN_SECONDS = 10.0
BAR_STEPS = 1000


@dataclass(frozen=True)
class GridTabTexts:
    """The words a grid tab differs by (its nouns and verbs are its plan's: core/grid.py)."""

    workers_tip: str
    pause_tip: str
    start_tip: str  # the pause tip follows
    figures: str  # what Save writes into figures/
    cost: str  # what a run costs, as the progress bar's tip says
    pause_text: str = "pause the live run meanwhile"
    start_text: str = "Start"
    save_text: str = "Save…"
    cancel_tip: str = "Stop now; finished runs stay shown and can be saved"
    cancelling: str = "cancelling…"  # the info line after Cancel, on this machine's threads
    form_width: int = 300


class GridTab(QtWidgets.QWidget):
    """A grid of runs in a thread of its own; ``plan`` is the grid last started (its
    ``runs()`` counts them), ``rows`` the finished runs shown, ``ran_on`` the scheduler they
    ran on (None: this machine's threads)."""

    statusChanged = QtCore.Signal(str)  # a short text for the window's status bar

    def __init__(self, texts: GridTabTexts, plan_type: type[GridPlan], parent=None):
        super().__init__(parent)
        self.texts = texts
        # the plan's words: "scaling" / "sweep", "grid" / "sweep", "solve" / "train", "running" / "training"
        self.name = name = plan_type.label
        self.grid_word = plan_type.what.split()[-1]
        self.doing = plan_type.doing
        self.plan: Any = None
        self.rows: list = []
        self._preview_due = False  # preview() came while the tab was hidden
        self.outcome = ""  # "", running, done, cancelled, error
        self.error = ""
        self.job: BackgroundJob | None = None  # the grid running beside the GUI, if any
        self._lock = threading.Lock()  # the grid's threads report finished runs at once
        self._worker_rows: list = []
        self._shown_rows = -1
        self._started_at = 0.0
        self.error_box: QtWidgets.QMessageBox | None = None
        self.ran_on: Scheduler | None = None
        self.fields: dict[str, Field] = {}  # the grid's own, by the name an InputError gives

        self.workers = QtWidgets.QSpinBox()
        self.workers.setObjectName(f"{name}_workers")
        self.workers.setRange(1, 32)
        self.workers.setValue(default_workers())
        self.workers.setToolTip(texts.workers_tip)
        self.scheduler = Field(
            f"{name}_scheduler",
            usable_scheduler,
            f"Optional: {plan_type.work} every run as a task on a dask.distributed cluster. The address "
            "of a running scheduler (tcp://HOST:8786, started with `dask scheduler`), or "
            "local:N for N worker processes on this machine. Empty: this machine's threads "
            f"(parallel runs). Needs the extra: {EXTRA_HINT}",
        )
        self.scheduler.edit.setPlaceholderText("optional: tcp://host:8786 or local:2")
        self.scheduler.accepted.connect(self._scheduler_changed)
        self.cluster_label = QtWidgets.QLabel("")
        self.cluster_label.setObjectName(f"{name}_cluster")
        self.cluster_label.setWordWrap(True)
        self.cluster_label.setToolTip(
            f"The cluster's workers, as its scheduler counts them during a {self.grid_word}"
        )
        self.base_label = QtWidgets.QLabel()
        self.base_label.setObjectName(f"{name}_base")
        self.base_label.setWordWrap(True)
        self.base_label.setStyleSheet("color: #444; font-size: 8pt;")
        self.base_label.setToolTip(f"Taken from the Parameters dock when the {self.grid_word} starts")
        self.pause_live = QtWidgets.QCheckBox(texts.pause_text)
        self.pause_live.setObjectName(f"{name}_pause_live")
        self.pause_live.setChecked(True)
        self.pause_live.setToolTip(texts.pause_tip)
        self.start_button = QtWidgets.QPushButton(texts.start_text)
        self.start_button.setObjectName(f"{name}_start")
        self.start_button.setToolTip(texts.start_tip + texts.pause_tip)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setObjectName(f"{name}_cancel")
        self.cancel_button.setToolTip(texts.cancel_tip)
        self.cancel_button.setEnabled(False)
        self.save_button = QtWidgets.QPushButton(texts.save_text)
        self.save_button.setObjectName(f"{name}_save")
        self.save_button.setToolTip(
            f"Write {name}.csv, {name}.json and figures/ ({texts.figures}) into a folder"
        )
        self.save_button.setEnabled(False)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setObjectName(f"{name}_progress")
        self.progress.setRange(0, BAR_STEPS)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setToolTip(
            f"Share of the {self.grid_word}'s work done (a run costs about {texts.cost})"
        )
        self.info = QtWidgets.QLabel("")
        self.info.setObjectName(f"{name}_info")
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)

        # the command of the same grid, from the mapping the tab hands its front door
        self.command = QtWidgets.QLineEdit()
        self.command.setObjectName(f"{name}_command")
        self.command.setReadOnly(True)
        self._command_tip = (
            f"The `sparsity-gui {name}` command of the {self.grid_word} typed here, the Parameters "
            "dock's values included: it runs the same runs headless and writes into DIR"
        )
        self.command.setToolTip(self._command_tip)
        self.copy_button = QtWidgets.QPushButton("Copy")
        self.copy_button.setObjectName(f"{name}_copy_command")
        self.copy_button.setToolTip("Copy the command line to the clipboard")
        self.copy_button.clicked.connect(self.copy_command)
        self.workers.valueChanged.connect(self.refresh_command)

        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button.clicked.connect(self.save_dialog)

    def lay_out(
        self, fields: list[tuple[str, QtWidgets.QWidget]], figures: QtWidgets.QLayout | QtWidgets.QWidget
    ) -> None:
        """The form (``fields``, then the rows every grid tab has) on the left, ``figures``
        beside it; a field without a label (a box of fields) spans the form's width."""
        form_box = QtWidgets.QWidget()
        form_box.setMaximumWidth(self.texts.form_width)
        form = QtWidgets.QFormLayout(form_box)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for label, field in fields:
            if label:
                form.addRow(label, field)
            else:
                form.addRow(field)
        form.addRow("parallel runs", self.workers)
        form.addRow("scheduler", self.scheduler)
        form.addRow(self.cluster_label)
        form.addRow(self.base_label)
        command = QtWidgets.QHBoxLayout()
        command.addWidget(self.command, 1)
        command.addWidget(self.copy_button)
        form.addRow("command", command)
        form.addRow(self.pause_live)
        buttons = QtWidgets.QHBoxLayout()
        for b in (self.start_button, self.cancel_button, self.save_button):
            buttons.addWidget(b)
        form.addRow(buttons)
        form.addRow(self.progress)
        form.addRow(self.info)
        lay = QtWidgets.QHBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(form_box)
        if isinstance(figures, QtWidgets.QLayout):
            lay.addLayout(figures, 1)
        else:
            lay.addWidget(figures, 1)

    def fill_fields(self, texts: dict[str, str]) -> None:
        """The grid's fields filled in (by name), each redrawing the preview once accepted."""
        for name, text in texts.items():
            self.fields[name].set_text(text)
        for field in self.fields.values():
            field.accepted.connect(self.preview)
        self.preview()

    @QtCore.Slot()
    def preview(self, *_args) -> None:
        """Before any run: the figures of the grid typed (nothing while a field is wrong);
        the command line of the grid typed, always."""
        self.refresh_command()
        if self.rows or self.running:
            return
        # a hidden tab draws when shown: its figures cost a third of a window's opening, and
        # the sweep tab's were redrawn at every change of the dock
        self._preview_due = not self.isVisible()
        if self._preview_due:
            return
        try:
            self.draw_preview()
        except (InputError, ValueError, OverflowError):
            return

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._preview_due:
            self.preview()

    # --- what a grid tab says itself ---------------------------------------------------------
    def draw_preview(self) -> None:
        """Draws the figures of the fields' grid before it runs; raises InputError or
        ValueError for a field that is wrong."""
        raise NotImplementedError

    def make_plan(self, scheduler: Scheduler | None) -> Any:
        """The grid (a core.grid.GridPlan) of the fields, whose values are committed; raises
        InputError naming the field."""
        raise NotImplementedError

    def grid_options(self, scheduler: Any) -> dict[str, Any]:
        """The grid of the fields and the window's parameters as the mapping its front door
        takes (core/note/headless.scaling_order, core/interference/headless.sweep_order);
        ``scheduler``: a Scheduler, its text or None. Raises InputError or ValueError for a
        field that is wrong."""
        raise NotImplementedError

    def command_argv(self) -> list[str]:
        """The options of the grid's command for grid_options (without --out)."""
        raise NotImplementedError

    def write_files(self, folder, rows: list) -> list:
        """Writes the grid's files of ``rows`` into ``folder`` (as its command does) and
        returns their paths; raises InputError or OSError."""
        raise NotImplementedError

    def show_rows(self, rows: list, plan, started: bool = False) -> None:
        """Draws ``rows`` of ``plan`` (``started``: a new grid, its figures reset)."""
        raise NotImplementedError

    def current_text(self, current) -> str:
        """The info line for the run a progress report says has just started."""
        raise NotImplementedError

    def run_started(self) -> None:
        """A grid has just started (the live run may pause)."""

    def run_ended(self, kind: str) -> None:
        """The grid has ended: done, cancelled or error."""

    def grid_jobs(self, scheduler: Any) -> int | None:
        """The runs side by side of grid_options: the parallel runs, or None on a cluster."""
        return None if scheduler else self.workers.value()

    # --- the command line ------------------------------------------------------------------
    def command_text(self) -> str:
        """`sparsity-gui NAME ... --out DIR`: the grid typed here as its command, from the
        same mapping Start hands the grid's front door. Raises InputError or ValueError for
        a field that is wrong."""
        return shlex.join(["sparsity-gui", self.name, *self.command_argv(), "--out", "DIR"])

    @QtCore.Slot()
    def refresh_command(self, *_args) -> None:
        try:
            text = self.command_text()
        except (InputError, ValueError, OverflowError):
            text = ""
        self.command.setText(text)
        self.command.setCursorPosition(0)
        self.command.setToolTip(f"{text}\n\n{self._command_tip}" if text else self._command_tip)
        self.command.setPlaceholderText("" if text else "(a field is not valid yet)")
        self.copy_button.setEnabled(bool(text))

    @QtCore.Slot()
    def copy_command(self) -> None:
        self.refresh_command()
        if self.command.text():
            QtWidgets.QApplication.clipboard().setText(self.command.text())
            self._show_info("copied the command line (write the folder in place of DIR)")

    # --- the scheduler ---------------------------------------------------------------------
    @QtCore.Slot(object)
    def _scheduler_changed(self, scheduler: Scheduler | None) -> None:
        """A cluster runs the runs: the threads' count no longer applies."""
        self.workers.setEnabled(scheduler is None and not self.running)
        self.cluster_label.setText("" if scheduler is None else f"on the cluster {scheduler}")
        self.refresh_command()

    def _scheduler_value(self) -> tuple[bool, Scheduler | None]:
        """(whether the field is good, its scheduler), its reason shown at the field."""
        if not self.scheduler.commit():
            return False, None
        try:
            return True, usable_scheduler(self.scheduler.text())
        except InputError as exc:
            self.scheduler.show_error(exc.message)
            return False, None

    def show_input_error(self, exc: InputError) -> None:
        """At the field it names, or under the buttons."""
        field = self.fields.get(exc.field)
        if field is not None:
            field.show_error(exc.message)
        else:
            self._show_info(str(exc), error=True)

    def checked_plan(self, scheduler: Scheduler | None = None) -> Any:
        """The grid of the fields, checked by the grid's rules (core/grid.py) with the
        threads' count (or the ``scheduler``); None with the reason shown at its field (or
        under the buttons)."""
        if not all([f.commit() for f in self.fields.values()]):  # noqa: C419 (a list: every field says why)
            return None
        try:
            plan = self.make_plan(scheduler)
            plan.check_work()
            plan.check_side_by_side(self.workers.value(), scheduler)
        except InputError as exc:
            self.show_input_error(exc)
            return None
        return plan

    # --- running -------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.job is not None and self.job.running

    @QtCore.Slot()
    def start(self) -> bool:
        if self.running:
            return False
        good, scheduler = self._scheduler_value()
        plan = self.checked_plan(scheduler)
        if plan is None or not good:
            return False
        self.plan = plan
        self.ran_on = scheduler
        self.rows = []
        self.outcome = "running"
        self.error = ""
        with self._lock:
            self._worker_rows = []
        self._shown_rows = -1
        self._started_at = time.perf_counter()
        self.show_rows([], plan, started=True)
        self.progress.setValue(0)
        self.progress.setFormat(f"0%  ·  0 / {len(plan.runs())} runs")
        self._show_info("starting…" if scheduler is None else f"connecting to {scheduler}…")
        self.cluster_label.setText("" if scheduler is None else f"on the cluster {scheduler}: connecting…")
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.save_button.setEnabled(False)
        for f in (*self.fields.values(), self.scheduler):
            f.setEnabled(False)
        self.workers.setEnabled(False)
        self.run_started()
        workers = self.workers.value()
        self.job = BackgroundJob(
            self,
            lambda job: self._work(job, plan, workers, scheduler),
            name=self.name,
            on_done=self._ended,
            on_progress=self._show_progress,
            interval_ms=POLL_MS,
        ).start()
        return True

    def _work(self, job: BackgroundJob, plan, workers: int, scheduler: Scheduler | None):
        """The grid (it starts and joins its own workers, or runs a cluster session in
        this thread): touches no widget. Its end as (kind, rows, message, field)."""
        try:
            rows = plan.run(self._on_progress_from(job), job.cancelled, workers=workers, scheduler=scheduler)
            return ("done", list(rows), "", "")
        except RunsCancelled as exc:
            return ("cancelled", list(exc.rows), "", "")
        except InputError as exc:
            with self._lock:
                return ("error", list(self._worker_rows), str(exc), exc.field)
        except Exception as exc:  # shown in the GUI; the window stays usable
            with self._lock:
                rows = list(self._worker_rows)
            return ("error", rows, f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}", "")

    def _on_progress_from(self, job: BackgroundJob):
        """The grid's progress callback: called from its threads, it only stores (a run's
        row at once, under the lock; the newest report for the GUI's timer)."""

        def on_progress(progress) -> None:
            with self._lock:
                if progress.row is not None:
                    self._worker_rows.append(progress.row)
            job.report(progress)

        return on_progress

    @QtCore.Slot()
    def cancel(self) -> None:
        if self.running:
            self.job.cancel()
            self.cancel_button.setEnabled(False)
            self._show_info(
                "cancelling the runs not finished on the cluster…" if self.ran_on else self.texts.cancelling
            )

    def _show_rows_now(self, rows: list) -> None:
        if len(rows) != self._shown_rows:
            self._shown_rows = len(rows)
            self.rows = rows
            self.show_rows(rows, self.plan)

    def _show_progress(self, progress) -> None:
        """On the GUI thread (the job's timer): the finished runs drawn, the bar, the info."""
        with self._lock:
            rows = list(self._worker_rows)
        self._show_rows_now(rows)
        self._show_cluster(progress)
        stopping = self.job is not None and self.job.cancelled()
        doing, name = self.doing, self.name
        total = len(self.plan.runs())
        self.progress.setValue(int(round(progress.fraction * BAR_STEPS)))
        self.progress.setFormat(
            f"{100 * progress.fraction:.0f}%  ·  {progress.done_runs} / {progress.total_runs} runs  ·  "
            f"{format_duration(progress.eta_seconds)} left"
        )
        so_far = f"({format_duration(progress.elapsed)} so far)"
        if progress.current is None and progress.workers is not None and not stopping:
            self._show_info(f"{progress.running} run(s) {doing} on the cluster {so_far}")
        if progress.current is not None and not stopping:
            self._show_info(f"{self.current_text(progress.current)} {so_far}")
        self.statusChanged.emit(f"{name} {100 * progress.fraction:.0f}% ({progress.done_runs}/{total})")

    def _show_cluster(self, progress) -> None:
        if progress is not None and progress.workers is not None:  # the last count, also at the end
            self.cluster_label.setText(
                f"on the cluster {self.ran_on}: {progress.workers} "
                f"worker{'s' if progress.workers != 1 else ''}, {progress.running} {self.doing}"
            )

    def _ended(self, outcome) -> None:
        """The job's end, on the GUI thread."""
        if outcome.error is not None:  # _work catches what a grid raises: this is a bug
            raise outcome.error
        self._show_rows_now(outcome.value[1])
        self._show_cluster(self.job.progress if self.job is not None else None)
        self._finish(outcome.value, len(self.plan.runs()))

    def _finish(self, result, total: int) -> None:
        kind, rows, message, field = result
        name = self.name
        self.job = None
        self.rows = list(rows)
        self.outcome = kind
        took = format_duration(time.perf_counter() - self._started_at)
        if kind == "done":
            self.progress.setValue(BAR_STEPS)
            self.progress.setFormat(f"100%  ·  {len(rows)} / {total} runs  ·  done")
            self._show_info(f"done: {len(rows)} runs in {took}")
            self.statusChanged.emit(f"{name} done ({len(rows)} runs)")
        elif kind == "cancelled":
            self.progress.setFormat(f"cancelled  ·  {len(rows)} / {total} runs")
            self._show_info(
                f"cancelled after {len(rows)} of {total} runs ({took}); the finished runs are shown "
                "and can be saved"
            )
            self.statusChanged.emit(f"{name} cancelled ({len(rows)}/{total})")
        else:
            self.error = message
            self.progress.setFormat(f"failed  ·  {len(rows)} / {total} runs")
            self._show_info(message.partition("\n\n")[0], error=True)
            if field == "scheduler":  # unreachable, or a cluster that failed: said at the field too
                self.scheduler.show_error(message.removeprefix("scheduler: "))
            self.statusChanged.emit(f"{name} failed")
            self._message(f"{name.capitalize()} stopped", message)
        self.start_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.save_button.setEnabled(bool(self.rows))
        for f in (*self.fields.values(), self.scheduler):
            f.setEnabled(True)
        self.workers.setEnabled(not self.scheduler.text().strip())
        self.run_ended(kind)

    def _show_info(self, text: str, error: bool = False) -> None:
        self.info.setStyleSheet("color: #c0392b;" if error else "")
        self.info.setText(text)

    def _message(self, title: str, message: str) -> None:
        self.error_box = show_warning(self, self.error_box, title, message)

    def save(self, folder) -> bool:
        """The grid's files of the rows shown into ``folder``, and its figures (PNG, SVG,
        PDF, their data and scripts) into ``folder``/figures/, as its command writes them."""
        if self.plan is None or not self.rows:
            self._show_info(f"nothing to save yet: run a {self.grid_word} first", error=True)
            return False
        title = f"Cannot save the {self.name} runs"
        try:
            written = self.write_files(folder, list(self.rows))
        except InputError as exc:
            self._message(title, exc.message)
            return False
        except OSError as exc:
            self._message(title, f"{folder}: {exc.strerror or exc}")
            return False
        self._show_info(f"saved {len(written)} files to {folder}")
        return True

    @QtCore.Slot()
    def save_dialog(self) -> None:
        raise NotImplementedError

    # --- shutdown ----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Cancel a running grid and join its thread (the runs check the flag within ms)."""
        if self.job is not None:
            self.job.shutdown(JOIN_SECONDS)
