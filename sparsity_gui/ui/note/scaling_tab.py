"""The scaling tab of the note's window: a grid of m, lam and seeds, Start / Cancel, a progress
bar with the time left, the three scaling figures (lam*T, the fitted c, the relative-variance
plateau against m) drawn as each run finishes, a table of the means, and Save.

The grid runs `core.note.scaling.run_scaling` in its own thread (which starts its worker
threads or, with a scheduler given, runs a session of tasks on a dask.distributed cluster:
core/cluster.py, the extra `cluster`). Nothing crosses threads as a signal: the progress
callback only stores the latest ScalingProgress and appends finished rows (immutable
ScalingRows) under a lock; a GUI timer polls them ten times a second. Cancel sets an event
that every run checks between pieces of its solve (on a cluster: the pending tasks are
cancelled); the finished rows stay shown and can be saved.
"""

from __future__ import annotations

import math
import threading
import time
import traceback
from collections.abc import Callable

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.checks import default_workers, parse_m_values, parse_number_list
from sparsity_gui.core.cluster import EXTRA_HINT, Scheduler, usable_scheduler
from sparsity_gui.core.errors import InputError, RunsCancelled
from sparsity_gui.core.note.params import LAM_MAX, M_MAX, SimParams
from sparsity_gui.core.note.scaling import (
    ScalingGrid,
    ScalingProgress,
    ScalingRow,
    run_scaling,
    summarize,
)
from sparsity_gui.core.text import format_duration, short_number
from sparsity_gui.plots.scaling import SCALING_PANEL_TYPES, power_text
from sparsity_gui.ui.fields import Field, parse_int_in
from sparsity_gui.ui.window import show_warning

POLL_MS = 100
JOIN_SECONDS = 10.0
BAR_STEPS = 1000
PAUSE_TIP = (
    "The grid runs in threads of its own. With this box checked the live run is paused "
    "meanwhile (both compete for the CPU otherwise) and resumes when the grid ends."
)
TABLE_COLUMNS = (
    ("m", None),
    ("λ", None),
    ("runs", None),
    ("λ·T", "lam_t_one"),
    ("fitted c", "fitted_c"),
    ("RV mean", "rel_var_mean"),
    ("balance", "balance_ratio"),
)


def parse_grid_m(text: str) -> tuple[int, ...]:
    values = parse_m_values(text)
    bad = [m for m in values if not 1 <= m <= M_MAX]
    if bad:
        raise InputError("m", f"every m must be from 1 to {short_number(M_MAX)}, got {bad[0]}")
    return values


def parse_grid_lam(text: str) -> tuple[float, ...]:
    values = parse_number_list("lam", text)
    bad = [lam for lam in values if not 0.0 < lam <= LAM_MAX]
    if bad:
        raise InputError("lam", f"every λ must be > 0 and at most {LAM_MAX:g}, got {bad[0]:g}")
    return values


def _mean_sd(mean: float, sd: float) -> str:
    if not math.isfinite(mean):
        return "–"
    return f"{mean:.4g} ± {sd:.2g}" if math.isfinite(sd) else f"{mean:.4g}"


class ScalingWidget(QtWidgets.QWidget):
    """The note's constants across m and λ; σ and the first seed come from the window's
    current parameters (``current()``). ``live`` (the window) is paused while the grid runs
    if the box says so."""

    statusChanged = QtCore.Signal(str)  # a short text for the window's status bar

    def __init__(self, current: Callable[[], SimParams], live=None, parent=None):
        super().__init__(parent)
        self._current = current
        self._live = live
        self._paused_live = False
        self.setToolTip(
            "λ·T, the fitted decay constant c and the relative-variance plateau against m, "
            "one curve per λ, several seeds each: the constants behind the note's Θs"
        )
        self.grid: ScalingGrid | None = None
        self.rows: list[ScalingRow] = []
        self.outcome = ""  # "", running, done, cancelled, error
        self.error = ""
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._progress: ScalingProgress | None = None
        self._worker_rows: list[ScalingRow] = []
        self._result: tuple[str, list[ScalingRow], str] | None = None
        self._shown_rows = -1
        self._started_at = 0.0
        self.error_box: QtWidgets.QMessageBox | None = None
        self.ran_on: Scheduler | None = None  # where the rows shown ran (scaling.json's scheduler)

        # --- the form -----------------------------------------------------------------
        form_box = QtWidgets.QWidget()
        form_box.setMaximumWidth(300)
        form = QtWidgets.QFormLayout(form_box)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.m = Field(
            "scaling_m",
            parse_grid_m,
            "m values: a list like 1000,10000, powers like 1e3,1e4,1e5,1e6, or a range "
            f"start:stop:step (stop included); each 1 … {short_number(M_MAX)}",
        )
        self.lam = Field(
            "scaling_lam",
            parse_grid_lam,
            f"λ values: a list like 1e-4,1e-3,1e-2; each > 0 and at most {LAM_MAX:g}",
        )
        self.seeds = Field(
            "scaling_seeds",
            parse_int_in("seeds", 1, 1000),
            "Runs per (m, λ), with seeds s0 … s0+seeds-1 (s0: the seed in the Parameters "
            "dock); every λ of one m starts from the same W(0)",
        )
        form.addRow("m values", self.m)
        form.addRow("λ values", self.lam)
        form.addRow("seeds", self.seeds)
        self.fields = {"m": self.m, "lam": self.lam, "seeds": self.seeds}
        self.workers = QtWidgets.QSpinBox()
        self.workers.setObjectName("scaling_workers")
        self.workers.setRange(1, 32)
        self.workers.setValue(default_workers())
        self.workers.setToolTip("Runs side by side, each in its own thread (about one per core is fastest)")
        form.addRow("parallel runs", self.workers)
        self.scheduler = Field(
            "scaling_scheduler",
            usable_scheduler,
            "Optional: solve every run as a task on a dask.distributed cluster. The address "
            "of a running scheduler (tcp://HOST:8786, started with `dask scheduler`), or "
            "local:N for N worker processes on this machine. Empty: this machine's threads "
            f"(parallel runs). Needs the extra: {EXTRA_HINT}",
        )
        self.scheduler.edit.setPlaceholderText("optional: tcp://host:8786 or local:2")
        self.scheduler.accepted.connect(self._scheduler_changed)
        form.addRow("scheduler", self.scheduler)
        self.cluster_label = QtWidgets.QLabel("")
        self.cluster_label.setObjectName("scaling_cluster")
        self.cluster_label.setWordWrap(True)
        self.cluster_label.setToolTip("The cluster's workers, as its scheduler counts them during a grid")
        form.addRow(self.cluster_label)
        self.base_label = QtWidgets.QLabel()
        self.base_label.setObjectName("scaling_base")
        self.base_label.setWordWrap(True)
        self.base_label.setStyleSheet("color: #444; font-size: 8pt;")
        self.base_label.setToolTip("Taken from the Parameters dock when the grid starts")
        form.addRow(self.base_label)
        self.pause_live = QtWidgets.QCheckBox("pause the live run meanwhile")
        self.pause_live.setObjectName("scaling_pause_live")
        self.pause_live.setChecked(True)
        self.pause_live.setToolTip(PAUSE_TIP)
        form.addRow(self.pause_live)
        buttons = QtWidgets.QHBoxLayout()
        self.start_button = QtWidgets.QPushButton("Start")
        self.start_button.setObjectName("scaling_start")
        self.start_button.setToolTip("Run the exact solver for every (m, λ, seed). " + PAUSE_TIP)
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setObjectName("scaling_cancel")
        self.cancel_button.setToolTip("Stop now; finished runs stay shown and can be saved")
        self.cancel_button.setEnabled(False)
        self.save_button = QtWidgets.QPushButton("Save…")
        self.save_button.setObjectName("scaling_save")
        self.save_button.setToolTip(
            "Write scaling.csv, scaling.json and the figures (lam_t_one, fitted_c, rel_var; PNG and SVG)"
        )
        self.save_button.setEnabled(False)
        for b in (self.start_button, self.cancel_button, self.save_button):
            buttons.addWidget(b)
        form.addRow(buttons)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setObjectName("scaling_progress")
        self.progress.setRange(0, BAR_STEPS)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setToolTip("Share of the grid's work done (a run costs about m·log m)")
        form.addRow(self.progress)
        self.info = QtWidgets.QLabel("")
        self.info.setObjectName("scaling_info")
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.info)

        # --- the figures and the table ---------------------------------------------------------
        self.panels = [cls() for cls in SCALING_PANEL_TYPES]
        self.table = QtWidgets.QTableWidget(0, len(TABLE_COLUMNS))
        self.table.setObjectName("scaling_table")
        self.table.setHorizontalHeaderLabels([name for name, _ in TABLE_COLUMNS])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.table.setToolTip("Mean ± sample standard deviation over the seeds of each (m, λ)")
        figures = QtWidgets.QGridLayout()
        figures.setSpacing(3)
        for i, w in enumerate([*self.panels, self.table]):
            figures.addWidget(w, i // 2, i % 2)
        lay = QtWidgets.QHBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(form_box)
        lay.addLayout(figures, 1)

        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button.clicked.connect(self.save_dialog)
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self.poll)

        self.m.set_text("1e3,1e4,1e5,1e6")
        self.lam.set_text("1e-4,1e-3,1e-2")
        self.seeds.set_text("3")
        self.refresh_base()
        for f in self.fields.values():
            f.accepted.connect(self._preview)
        self._preview()

    def showEvent(self, event) -> None:
        self.refresh_base()  # the dock's σ and seed may have changed meanwhile
        super().showEvent(event)

    @QtCore.Slot()
    def _preview(self, *_args) -> None:
        """Before any run: the axes and legend of the grid typed."""
        if self.rows or self.running:
            return
        try:
            m_values, lam_values = parse_grid_m(self.m.text()), parse_grid_lam(self.lam.text())
        except (InputError, ValueError, OverflowError):
            return
        self._show_rows([], m_values, lam_values)

    def refresh_base(self) -> None:
        p = self._current()
        self.base_label.setText(
            f"from the Parameters dock: σ = {p.sigma:g}, first seed {p.seed}; exact solver to one "
            f"weight left, as the run command"
        )

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

    def make_grid(self, scheduler: Scheduler | None = None) -> ScalingGrid | None:
        """The grid of the fields and the window's σ and seed; a bad value is shown at its
        field (or under the buttons) and None returned. With a ``scheduler`` the threads'
        count does not apply (run_scaling checks what local:N needs)."""
        ok = all([f.commit() for f in self.fields.values()])  # a list: every field shows its error
        if not ok:
            return None
        p = self._current()
        try:
            grid = ScalingGrid(
                m_values=parse_grid_m(self.m.text()),
                lam_values=parse_grid_lam(self.lam.text()),
                seeds=int(self.seeds._parse(self.seeds.text().strip())),
                seed=p.seed,
                sigma=p.sigma,
            )
            grid.check_memory(self.workers.value() if scheduler is None else 1)
        except InputError as exc:
            field = self.fields.get(exc.field)
            if field is not None:
                field.show_error(exc.message)
            else:
                self._show_info(str(exc), error=True)
            return None
        return grid

    # --- running -------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @QtCore.Slot()
    def start(self) -> bool:
        if self.running:
            return False
        self.refresh_base()
        good, scheduler = self._scheduler_value()
        grid = self.make_grid(scheduler)
        if grid is None or not good:
            return False
        self.grid = grid
        self.ran_on = scheduler
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
        for panel in self.panels:
            panel.reset_ranges()
        self._show_rows([], grid.m_values, grid.lam_values)
        self.progress.setValue(0)
        self.progress.setFormat(f"0%  ·  0 / {len(grid.runs())} runs")
        self._show_info("starting…" if scheduler is None else f"connecting to {scheduler}…")
        self.cluster_label.setText("" if scheduler is None else f"on the cluster {scheduler}: connecting…")
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.save_button.setEnabled(False)
        for f in (*self.fields.values(), self.scheduler):
            f.setEnabled(False)
        self.workers.setEnabled(False)
        live = self._live
        self._paused_live = bool(self.pause_live.isChecked() and live is not None and live.playing)
        if self._paused_live:
            live.set_playing(False)
        self.thread = threading.Thread(
            target=self._work,
            args=(grid, self._stop, self.workers.value(), scheduler),
            name="scaling",
            daemon=True,
        )
        self.thread.start()
        self.timer.start(POLL_MS)
        return True

    def _work(
        self, grid: ScalingGrid, stop: threading.Event, workers: int, scheduler: Scheduler | None
    ) -> None:
        """The grid's thread (run_scaling starts and joins its own workers, or runs a cluster
        session in this thread): touches no widget."""
        try:
            rows = run_scaling(
                grid,
                on_progress=self._on_progress,
                should_stop=stop.is_set,
                workers=workers,
                scheduler=scheduler,
            )
            result = ("done", list(rows), "")
        except RunsCancelled as exc:
            result = ("cancelled", list(exc.rows), "")
        except InputError as exc:
            result = ("error", [], str(exc))
        except Exception as exc:  # shown in the GUI; the window stays usable
            result = ("error", [], f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}")
        with self._lock:
            if result[0] == "error":
                result = (result[0], list(self._worker_rows), result[2])
            self._result = result

    def _on_progress(self, progress: ScalingProgress) -> None:
        """From run_scaling's threads: only stores (the GUI timer polls)."""
        with self._lock:
            self._progress = progress
            if progress.row is not None:
                self._worker_rows.append(progress.row)

    @QtCore.Slot()
    def cancel(self) -> None:
        if self.running:
            self._stop.set()
            self.cancel_button.setEnabled(False)
            self._show_info(
                "cancelling the runs not finished on the cluster…" if self.ran_on else "cancelling…"
            )

    @QtCore.Slot()
    def poll(self) -> None:
        with self._lock:
            progress = self._progress
            rows = list(self._worker_rows)
            result = self._result
        grid = self.grid
        if grid is None:
            return
        if result is not None:
            rows = result[1]
        if len(rows) != self._shown_rows:
            self._shown_rows = len(rows)
            self.rows = rows
            self._show_rows(rows, grid.m_values, grid.lam_values)
        total = len(grid.runs())
        if progress is not None and progress.workers is not None:  # the last count, also at the end
            self.cluster_label.setText(
                f"on the cluster {self.ran_on}: {progress.workers} "
                f"worker{'s' if progress.workers != 1 else ''}, {progress.running} running"
            )
        if progress is not None and result is None:
            self.progress.setValue(int(round(progress.fraction * BAR_STEPS)))
            self.progress.setFormat(
                f"{100 * progress.fraction:.0f}%  ·  {progress.done_runs} / {progress.total_runs} runs  ·  "
                f"{format_duration(progress.eta_seconds)} left"
            )
            if progress.current is None and progress.workers is not None and not self._stop.is_set():
                self._show_info(
                    f"{progress.running} run(s) running on the cluster "
                    f"({format_duration(progress.elapsed)} so far)"
                )
            if progress.current is not None and not self._stop.is_set():
                m, lam, seed = progress.current
                self._show_info(
                    f"running m = {m:,}, λ = {lam:g}, seed {seed} "
                    f"({format_duration(progress.elapsed)} so far)"
                )
            self.statusChanged.emit(f"scaling {100 * progress.fraction:.0f}% ({progress.done_runs}/{total})")
        if result is not None and self.thread is not None:
            self.thread.join(JOIN_SECONDS)
            self._finish(result, total)

    def _finish(self, result, total: int) -> None:
        kind, rows, message = result
        self.timer.stop()
        self.thread = None
        self.rows = list(rows)
        self.outcome = kind
        took = format_duration(time.perf_counter() - self._started_at)
        if kind == "done":
            self.progress.setValue(BAR_STEPS)
            self.progress.setFormat(f"100%  ·  {len(rows)} / {total} runs  ·  done")
            self._show_info(f"done: {len(rows)} runs in {took}")
            self.statusChanged.emit(f"scaling done ({len(rows)} runs)")
        elif kind == "cancelled":
            self.progress.setFormat(f"cancelled  ·  {len(rows)} / {total} runs")
            self._show_info(
                f"cancelled after {len(rows)} of {total} runs ({took}); the finished runs are shown "
                "and can be saved"
            )
            self.statusChanged.emit(f"scaling cancelled ({len(rows)}/{total})")
        else:
            self.error = message
            self.progress.setFormat(f"failed  ·  {len(rows)} / {total} runs")
            self._show_info(message.partition("\n\n")[0], error=True)
            if message.startswith("scheduler: "):  # unreachable, or a cluster that failed: at the field too
                self.scheduler.show_error(message.removeprefix("scheduler: "))
            self.statusChanged.emit("scaling failed")
            self._message("Scaling stopped", message)
        self.start_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.save_button.setEnabled(bool(self.rows))
        for f in (*self.fields.values(), self.scheduler):
            f.setEnabled(True)
        self.workers.setEnabled(not self.scheduler.text().strip())
        live = self._live
        if self._paused_live and live is not None and not live.closed and not live.playing:
            live.set_playing(True)
        self._paused_live = False

    def _show_rows(self, rows, m_values, lam_values) -> None:
        for panel in self.panels:
            panel.show_rows(rows, m_values=m_values, lam_values=lam_values)
        cells = summarize(rows)
        self.table.setRowCount(len(cells))
        for i, c in enumerate(cells):
            texts = [f"{c.m:,}", power_text(c.lam), str(c.runs)]
            texts += [_mean_sd(c.mean[col], c.std[col]) for _name, col in TABLE_COLUMNS[3:]]
            for j, text in enumerate(texts):
                item = QtWidgets.QTableWidgetItem(text)
                item.setTextAlignment(
                    QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
                )
                self.table.setItem(i, j, item)

    def _show_info(self, text: str, error: bool = False) -> None:
        self.info.setStyleSheet("color: #c0392b;" if error else "")
        self.info.setText(text)

    def _message(self, title: str, message: str) -> None:
        self.error_box = show_warning(self, self.error_box, title, message)

    # --- saving ----------------------------------------------------------------------------
    def save(self, folder) -> bool:
        """scaling.csv, scaling.json and the figures of the rows shown into ``folder``."""
        from sparsity_gui.core.note.scaling import write_scaling
        from sparsity_gui.plots.scaling import scaling_figure_files

        if self.grid is None or not self.rows:
            self._show_info("nothing to save yet: run a grid first", error=True)
            return False
        try:
            rows = list(self.rows)
            written = write_scaling(
                folder,
                self.grid,
                rows,
                command_line="sparsity-gui (desktop app, scaling tab)",
                figures=scaling_figure_files(self.grid, rows),
                scheduler=self.ran_on,
            )
        except InputError as exc:
            self._message("Cannot save the scaling runs", exc.message)
            return False
        except OSError as exc:
            self._message("Cannot save the scaling runs", f"{folder}: {exc.strerror or exc}")
            return False
        self._show_info(f"saved {len(written)} files to {folder}")
        return True

    @QtCore.Slot()
    def save_dialog(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Save the scaling runs into folder")
        if folder:
            self.save(folder)

    # --- shutdown ----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Cancel a running grid and join its thread (every run checks the flag within ms)."""
        self._stop.set()
        self.timer.stop()
        if self.thread is not None:
            self.thread.join(JOIN_SECONDS)
            self.thread = None
