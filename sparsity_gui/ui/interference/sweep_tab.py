"""The sweep over m in the interference window: fields, Start / Cancel, a progress bar and
the count-against-m figure (SweepPanel), updated as each run finishes.

The sweep runs `core.interference.sweep.run_sweep` in its own thread: its runs train in
threads of this process, or, with a scheduler given, as tasks on a dask.distributed
cluster (core/cluster.py; the extra `cluster`), whose worker count is shown. Nothing crosses threads as a
signal: the worker's progress callback only stores the latest SweepProgress and appends
finished rows (immutable SweepRows) under a lock; a GUI timer polls them ~10 times a
second. Cancel sets an event that run_sweep checks between chunks (should_stop); the rows
finished so far stay shown and can be saved.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.checks import default_workers, parse_m_values
from sparsity_gui.core.cluster import EXTRA_HINT, Scheduler, usable_scheduler
from sparsity_gui.core.errors import InputError, RunsCancelled
from sparsity_gui.core.interference.params import M_MAX, N_MAX, OPTIMIZER_LABELS, InterferenceParams
from sparsity_gui.core.interference.sweep import (
    SweepProgress,
    SweepRow,
    SweepSpec,
    run_sweep,
)
from sparsity_gui.core.text import format_duration
from sparsity_gui.plots.sweep import SweepPanel
from sparsity_gui.ui.fields import Field, parse_int_in
from sparsity_gui.ui.window import choose_folder, show_warning

POLL_MS = 100
JOIN_SECONDS = 10.0
BAR_STEPS = 1000
PAUSE_TIP = (
    "The sweep trains in its own thread. With this box checked the live run is paused "
    "while the sweep runs (both compete for the CPU otherwise) and resumes when it ends; "
    "unchecked, both run side by side."
)


def _m_values(text: str) -> tuple[int, ...]:
    values = parse_m_values(text)
    bad = [m for m in values if not 1 <= m <= M_MAX]
    if bad:
        raise InputError("m", f"every m must be from 1 to {M_MAX}, got {bad[0]}")
    return values


class SweepWidget(QtWidgets.QWidget):
    """Sweep over m for fixed n; optimizer, l1, lr, σ, interference, weight decay and the
    first seed come from the window's current parameters (`current()`)."""

    started = QtCore.Signal(bool)  # whether the live run should pause meanwhile
    finished = QtCore.Signal()
    statusChanged = QtCore.Signal(str)  # a short text for the window's status bar

    def __init__(self, current: Callable[[], InterferenceParams], parent=None):
        super().__init__(parent)
        self._current = current
        self.setToolTip(
            "Polysemantic neurons against m for fixed n, several seeds per m: the "
            "paper's count-against-m figure with the prediction n²/(4m)"
        )
        self.spec: SweepSpec | None = None
        self.rows: list[SweepRow] = []
        self.outcome = ""  # "", running, done, cancelled, error
        self.error = ""
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._progress: SweepProgress | None = None
        self._worker_rows: list[SweepRow] = []
        self._result: tuple[str, list[SweepRow], str, str] | None = None  # kind, rows, message, field
        self._shown_rows = -1
        self._started_at = 0.0
        self.error_box: QtWidgets.QMessageBox | None = None

        # --- the form -----------------------------------------------------------------
        form_box = QtWidgets.QWidget()
        form_box.setMaximumWidth(330)
        form = QtWidgets.QFormLayout(form_box)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.n = Field(
            "sweep_n", parse_int_in("n", 1, N_MAX), f"n: features, fixed for the whole sweep (1 … {N_MAX})"
        )
        self.m = Field(
            "sweep_m",
            _m_values,
            "m values: a list like 64,128,256 or a range start:stop:step (stop included), "
            "e.g. 256:4096:256 as in the paper",
        )
        self.seeds = Field(
            "sweep_seeds",
            parse_int_in("seeds", 1, 1000),
            "Runs per m, with seeds s0 … s0+seeds-1 (s0: the seed in the Parameters dock)",
        )
        self.steps = Field("sweep_steps", parse_int_in("steps", 1, 10**8), "Training steps of every run")
        form.addRow("n", self.n)
        form.addRow("m values", self.m)
        form.addRow("seeds per m", self.seeds)
        form.addRow("steps", self.steps)
        self.fields = {"n": self.n, "m": self.m, "seeds": self.seeds, "steps": self.steps}
        self.workers = QtWidgets.QSpinBox()
        self.workers.setObjectName("sweep_workers")
        self.workers.setRange(1, 32)
        self.workers.setValue(default_workers())
        self.workers.setToolTip(
            "Runs trained side by side, each in its own thread with one BLAS "
            "thread (about one per core is fastest). With the live run still "
            "playing, one fewer leaves it a core."
        )
        form.addRow("parallel runs", self.workers)
        self.scheduler = Field(
            "sweep_scheduler",
            usable_scheduler,
            "Optional: train every run as a task on a dask.distributed cluster. The address "
            "of a running scheduler (tcp://HOST:8786, started with `dask scheduler`), or "
            "local:N for N worker processes on this machine. Empty: this machine's threads "
            f"(parallel runs). Needs the extra: {EXTRA_HINT}",
        )
        self.scheduler.edit.setPlaceholderText("optional: tcp://host:8786 or local:2")
        self.scheduler.accepted.connect(self._scheduler_changed)
        form.addRow("scheduler", self.scheduler)
        self.cluster_label = QtWidgets.QLabel("")
        self.cluster_label.setObjectName("sweep_cluster")
        self.cluster_label.setWordWrap(True)
        self.cluster_label.setToolTip("The cluster's workers, as its scheduler counts them during a sweep")
        form.addRow(self.cluster_label)
        self.base_label = QtWidgets.QLabel()
        self.base_label.setObjectName("sweep_base")
        self.base_label.setWordWrap(True)
        self.base_label.setStyleSheet("color: #444; font-size: 8pt;")
        self.base_label.setToolTip("Taken from the Parameters dock when the sweep starts")
        form.addRow(self.base_label)
        self.pause_live = QtWidgets.QCheckBox("pause the live run while sweeping")
        self.pause_live.setObjectName("sweep_pause_live")
        self.pause_live.setChecked(True)
        self.pause_live.setToolTip(PAUSE_TIP)
        form.addRow(self.pause_live)
        buttons = QtWidgets.QHBoxLayout()
        self.start_button = QtWidgets.QPushButton("Start sweep")
        self.start_button.setObjectName("sweep_start")
        self.start_button.setToolTip("Train every run of the sweep in a background thread. " + PAUSE_TIP)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setObjectName("sweep_cancel")
        self.cancel_button.setToolTip("Stop after the current chunk of steps; finished runs stay shown")
        self.cancel_button.setEnabled(False)
        self.save_button = QtWidgets.QPushButton("Save sweep…")
        self.save_button.setObjectName("sweep_save")
        self.save_button.setToolTip("Write sweep.csv, sweep.json, sweep.png and sweep.svg into a folder")
        self.save_button.setEnabled(False)
        for b in (self.start_button, self.cancel_button, self.save_button):
            buttons.addWidget(b)
        form.addRow(buttons)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setObjectName("sweep_progress")
        self.progress.setRange(0, BAR_STEPS)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setToolTip("Share of the sweep's cost done (a run costs about n²·m·steps)")
        form.addRow(self.progress)
        self.info = QtWidgets.QLabel("")
        self.info.setObjectName("sweep_info")
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.info)

        self.panel = SweepPanel()
        lay = QtWidgets.QHBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(form_box)
        lay.addWidget(self.panel, 1)

        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button.clicked.connect(self.save_dialog)
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self.poll)

        p = current()
        self.n.set_text(str(min(p.n, 64)))
        self.m.set_text("64,128,256,512,1024")
        self.seeds.set_text("3")
        self.steps.set_text(str(p.steps))
        self.set_base(p)
        for f in self.fields.values():
            f.accepted.connect(self._preview)
        self._preview()

    @QtCore.Slot()
    def _preview(self, *_args) -> None:
        """Before any sweep: the plan's prediction line over the m values typed."""
        if self.rows or self.running:
            return
        try:
            n = int(self.n._parse(self.n.text().strip()))
            m_values = _m_values(self.m.text())
        except (InputError, ValueError, OverflowError):
            return
        self.panel.show_rows([], n=n, m_values=m_values)

    @QtCore.Slot(object)
    def _scheduler_changed(self, scheduler: Scheduler | None) -> None:
        """A cluster runs the runs: the threads' count no longer applies."""
        self.workers.setEnabled(scheduler is None and not self.running)
        self.cluster_label.setText("" if scheduler is None else f"on the cluster {scheduler}")

    def _scheduler_value(self) -> tuple[bool, Scheduler | None]:
        """(whether the field is good, its scheduler), its reason shown at the field."""
        if not self.scheduler.commit():
            return False, None
        try:
            return True, usable_scheduler(self.scheduler.text())
        except InputError as exc:
            self.scheduler.show_error(exc.message)
            return False, None

    # --- parameters ----------------------------------------------------------------------
    def set_base(self, p: InterferenceParams) -> None:
        wd = "" if p.optimizer in ("gd-zero", "gd") else f", weight decay {p.effective_weight_decay:g}"
        self.base_label.setText(
            f"from the Parameters dock: {OPTIMIZER_LABELS[p.optimizer]}, l1 = {p.l1:g}, lr = {p.lr:g}, "
            f"σ = {p.sigma:g}, interference {'on' if p.interference else 'off'}{wd}, "
            f"first seed {p.seed}{', float32' if p.dtype == 'float32' else ''}"
        )

    def make_spec(self) -> SweepSpec | None:
        """The spec of the fields and the window's parameters; a bad value is shown at its
        field and None returned."""
        ok = all([f.commit() for f in self.fields.values()])  # a list: every field shows its error
        if not ok:
            return None
        try:
            n = int(self.n._parse(self.n.text().strip()))
            steps = int(self.steps._parse(self.steps.text().strip()))
            m_values = _m_values(self.m.text())
            seeds = int(self.seeds._parse(self.seeds.text().strip()))
            base = self._current().with_changes(n=n, m=m_values[0], steps=steps)
            spec = SweepSpec(base=base, m_values=m_values, seeds=seeds)
            if not self.scheduler.text().strip():
                spec.check_memory(self.workers.value())
        except InputError as exc:
            field = self.fields.get(exc.field, self.m if exc.field == "m" else None)
            if field is not None:
                field.show_error(exc.message)
            else:
                self._show_info(str(exc), error=True)
            return None
        return spec

    # --- running -------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @QtCore.Slot()
    def start(self) -> bool:
        if self.running:
            return False
        spec = self.make_spec()
        good, scheduler = self._scheduler_value()
        if spec is None or not good:
            return False
        self.spec = spec
        self.rows = []
        self.outcome = "running"
        self.error = ""
        self._stop = threading.Event()
        with self._lock:
            self._progress = None
            self._worker_rows = []
            self._result = None
        self._shown_rows = -1
        self._started_at = time.perf_counter()
        self.panel.reset_ranges()
        self.panel.show_rows([], n=spec.base.n, m_values=spec.m_values)
        self.progress.setValue(0)
        self.progress.setFormat(f"0%  ·  0 / {len(spec.runs())} runs")
        self._show_info("starting…" if scheduler is None else f"connecting to {scheduler}…")
        self.cluster_label.setText("" if scheduler is None else f"on the cluster {scheduler}: connecting…")
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.save_button.setEnabled(False)
        for f in (*self.fields.values(), self.scheduler):
            f.setEnabled(False)
        self.workers.setEnabled(False)
        self.started.emit(self.pause_live.isChecked())
        self.thread = threading.Thread(
            target=self._work,
            args=(spec, self._stop, self.workers.value(), scheduler),
            name="sweep",
            daemon=True,
        )
        self.thread.start()
        self.timer.start(POLL_MS)
        return True

    def _work(
        self, spec: SweepSpec, stop: threading.Event, workers: int, scheduler: Scheduler | None
    ) -> None:
        """The sweep thread (run_sweep starts `workers` threads of its own and joins them
        before it returns, or runs a cluster session in this thread): touches no widget."""
        try:
            rows = run_sweep(
                spec,
                on_progress=self._on_progress,
                should_stop=stop.is_set,
                workers=workers,
                scheduler=scheduler,
            )
            result = ("done", list(rows), "", "")
        except RunsCancelled as exc:
            result = ("cancelled", list(exc.rows), "", "")
        except InputError as exc:
            result = ("error", [], str(exc), exc.field)
        except Exception as exc:  # shown in the GUI; the window stays usable
            result = ("error", [], f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}", "")
        with self._lock:
            if result[0] == "error":
                result = (result[0], list(self._worker_rows), result[2], result[3])
            self._result = result

    def _on_progress(self, progress: SweepProgress) -> None:
        """From run_sweep's threads: only stores (the GUI timer polls)."""
        with self._lock:
            self._progress = progress
            if progress.row is not None:
                self._worker_rows.append(progress.row)

    @QtCore.Slot()
    def cancel(self) -> None:
        if self.running:
            self._stop.set()
            self.cancel_button.setEnabled(False)
            if self.scheduler.text().strip():
                self._show_info("cancelling the runs not finished on the cluster…")
            else:
                self._show_info("cancelling after the current chunk of steps…")

    @QtCore.Slot()
    def poll(self) -> None:
        with self._lock:
            progress = self._progress
            rows = list(self._worker_rows)
            result = self._result
        spec = self.spec
        if spec is None:
            return
        if result is not None:
            rows = result[1]
        if len(rows) != self._shown_rows:
            self._shown_rows = len(rows)
            self.rows = rows
            self.panel.show_rows(rows, n=spec.base.n, m_values=spec.m_values, planned_runs=len(spec.runs()))
        total = len(spec.runs())
        if progress is not None and progress.workers is not None:  # the last count, also at the end
            self.cluster_label.setText(
                f"on the cluster {self.scheduler.text().strip()}: {progress.workers} "
                f"worker{'s' if progress.workers != 1 else ''}, {progress.running} training"
            )
        if progress is not None and result is None:
            self.progress.setValue(int(round(progress.fraction * BAR_STEPS)))
            left = format_duration(progress.eta_seconds)
            self.progress.setFormat(
                f"{100 * progress.fraction:.0f}%  ·  {progress.done_runs} / "
                f"{progress.total_runs} runs  ·  {left} left"
            )
            cur = progress.current
            if cur is None and progress.workers is not None and not self._stop.is_set():
                self._show_info(
                    f"{progress.running} run(s) training on the cluster "
                    f"({format_duration(progress.elapsed)} so far)"
                )
            if cur is not None and not self._stop.is_set():
                self._show_info(
                    f"training m = {cur.m}, seed {cur.seed} ({format_duration(progress.elapsed)} so far)"
                )
            self.statusChanged.emit(f"sweep {100 * progress.fraction:.0f}% ({progress.done_runs}/{total})")
        if result is not None and self.thread is not None:
            self.thread.join(JOIN_SECONDS)
            self._finish(result, total)

    def _finish(self, result, total: int) -> None:
        kind, rows, message, field = result
        self.timer.stop()
        self.thread = None
        self.rows = list(rows)
        self.outcome = kind
        took = format_duration(time.perf_counter() - self._started_at)
        if kind == "done":
            self.progress.setValue(BAR_STEPS)
            self.progress.setFormat(f"100%  ·  {len(rows)} / {total} runs  ·  done")
            self._show_info(f"done: {len(rows)} runs in {took}")
            self.statusChanged.emit(f"sweep done ({len(rows)} runs)")
        elif kind == "cancelled":
            self.progress.setFormat(f"cancelled  ·  {len(rows)} / {total} runs")
            self._show_info(
                f"cancelled after {len(rows)} of {total} runs ({took}); "
                "the finished runs are shown and can be saved"
            )
            self.statusChanged.emit(f"sweep cancelled ({len(rows)}/{total})")
            self._mark_cancelled()
        else:
            self.error = message
            self.progress.setFormat(f"failed  ·  {len(rows)} / {total} runs")
            self._show_info(message.partition("\n\n")[0], error=True)
            if field == "scheduler":  # unreachable, or a cluster that failed: said at the field too
                self.scheduler.show_error(message.removeprefix("scheduler: "))
            self.statusChanged.emit("sweep failed")
            self._message("Sweep stopped", message)
        self.start_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.save_button.setEnabled(bool(self.rows))
        for f in (*self.fields.values(), self.scheduler):
            f.setEnabled(True)
        self.workers.setEnabled(not self.scheduler.text().strip())
        self.finished.emit()

    def _mark_cancelled(self) -> None:
        """The figure says the sweep was cancelled and which m it holds runs for."""
        spec = self.spec
        self.panel.show_rows(
            self.rows, n=spec.base.n, m_values=spec.m_values, planned_runs=len(spec.runs()), cancelled=True
        )

    def _show_info(self, text: str, error: bool = False) -> None:
        self.info.setStyleSheet("color: #c0392b;" if error else "")
        self.info.setText(text)

    def _message(self, title: str, message: str) -> None:
        self.error_box = show_warning(self, self.error_box, title, message)

    # --- saving ----------------------------------------------------------------------------
    def save(self, folder) -> bool:
        """sweep.csv, sweep.json, sweep.png and sweep.svg of the rows shown into `folder`."""
        from sparsity_gui.core.interference.files import write_sweep
        from sparsity_gui.plots.figures import sweep_figure_files

        if self.spec is None or not self.rows:
            self._show_info("nothing to save yet: run a sweep first", error=True)
            return False
        try:
            rows = list(self.rows)
            written = write_sweep(
                folder,
                self.spec,
                rows,
                figures=sweep_figure_files(self.spec, rows, cancelled=self.outcome == "cancelled"),
                command_line="sparsity-gui --model interference (desktop app)",
            )
        except InputError as exc:
            self._message("Cannot save the sweep", exc.message)
            return False
        except OSError as exc:
            self._message("Cannot save the sweep", f"{folder}: {exc.strerror or exc}")
            return False
        self._show_info(f"saved {len(written)} files to {folder}")
        return True

    @QtCore.Slot()
    def save_dialog(self) -> None:
        folder = choose_folder(self, "Save the sweep into folder")  # a new folder's name too
        if folder:
            self.save(folder)

    # --- shutdown ----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Cancel a running sweep and join its thread (run_sweep checks between chunks)."""
        self._stop.set()
        self.timer.stop()
        if self.thread is not None:
            self.thread.join(JOIN_SECONDS)
            self.thread = None
