"""Long work beside the GUI, written once: a worker thread, its progress, Cancel, and its
value or error handed to the GUI thread by a timer of the GUI thread. No nested event loop:
the window's own loop runs throughout, so no slot can run inside another. Both windows'
exports, the movie dialog and the grid tabs use it.

The work is a function of the job. In the worker it may call `job.report(progress)` (the
latest report wins: the GUI reads it on its timer) and `job.check()`, which raises
`JobCancelled` once Cancel was asked for. The job's `on_progress(progress)` and
`on_done(outcome)` run on the GUI thread; `on_done` runs exactly once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6 import QtCore, QtWidgets

POLL_MS = 50  # how often the GUI looks at a job: 20 updates a second
JOIN_SECONDS = 5.0  # a cancelled job's worker checks its flag within ms; this is a bound


class JobCancelled(Exception):
    """Raised by `BackgroundJob.check()` in the worker once Cancel was asked for."""


@dataclass(frozen=True)
class JobOutcome:
    """How a job ended: its value, or the exception it raised (JobCancelled, or the work's
    own), and whether Cancel ended it."""

    value: Any = None
    error: BaseException | None = None
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.cancelled


class BackgroundJob(QtCore.QObject):
    """`work(job)` in a daemon thread named `name`; `on_progress` and `on_done` on the GUI
    thread (polled every `interval_ms`). Start it with `start()`."""

    def __init__(
        self,
        parent: QtCore.QObject,
        work: Callable[[BackgroundJob], Any],
        *,
        name: str,
        on_done: Callable[[JobOutcome], None],
        on_progress: Callable[[Any], None] | None = None,
        interval_ms: int = POLL_MS,
    ):
        super().__init__(parent)
        self.setObjectName(f"job_{name}")
        self._work, self._on_done, self._on_progress = work, on_done, on_progress
        self._cancel = threading.Event()
        self._result: tuple[Any, BaseException | None] | None = None
        self._progress: Any = None
        self._shown: Any = None
        self.outcome: JobOutcome | None = None  # set on the GUI thread when it ended
        self.worker = threading.Thread(target=self._run, name=name, daemon=True)
        self._timer = QtCore.QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._poll)

    # --- the worker's side ---------------------------------------------------------------------
    def report(self, progress: Any) -> None:
        """From the worker: the newest progress (one reference: the GUI reads the latest)."""
        self._progress = progress

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        """From the worker, between pieces of work: stop here if Cancel was asked for."""
        if self._cancel.is_set():
            raise JobCancelled

    def _run(self) -> None:
        try:
            self._result = (self._work(self), None)
        except BaseException as exc:  # handed to the GUI thread, which says it
            self._result = (None, exc)

    # --- the GUI's side ------------------------------------------------------------------------
    def start(self) -> BackgroundJob:
        self.worker.start()
        self._timer.start()
        return self

    @property
    def progress(self) -> Any:
        """The newest progress the work reported (None before its first)."""
        return self._progress

    @property
    def running(self) -> bool:
        return self.outcome is None

    def cancel(self) -> None:
        """Ask the work to stop at its next check; on_done still comes, with cancelled set."""
        self._cancel.set()

    @QtCore.Slot()
    def _poll(self) -> None:
        progress = self._progress
        if progress is not self._shown and self._on_progress is not None:
            self._shown = progress
            self._on_progress(progress)
        if self.worker.is_alive() or self.outcome is not None:
            return
        self._deliver()

    def _deliver(self) -> None:
        self._timer.stop()
        value, error = self._result if self._result is not None else (None, RuntimeError("the work stopped"))
        # ended by Cancel: the work stopped at a check (or failed once asked to stop); work
        # that finished before it saw the request stands
        cancelled = isinstance(error, JobCancelled) or (error is not None and self._cancel.is_set())
        self.outcome = JobOutcome(value, error, cancelled)
        self._on_done(self.outcome)

    def wait(self, timeout: float | None = None) -> JobOutcome | None:
        """Join the worker (no event loop runs meanwhile) and hand its outcome over now:
        for a caller that wants the result at once, a closing window, and tests. None if
        the worker is still running after `timeout` seconds."""
        if self.outcome is not None:
            return self.outcome
        self.worker.join(timeout)
        if self.worker.is_alive():
            return None
        self._poll()
        return self.outcome

    def shutdown(self, timeout: float = JOIN_SECONDS) -> None:
        """Cancel and join (a window closing, a test's teardown)."""
        self.cancel()
        self.wait(timeout)


class StatusProgress:
    """A progress bar and a Cancel button in a window's status bar, for a job that writes
    files while the window stays live (both windows' exports); `close()` removes them."""

    def __init__(self, window: QtWidgets.QMainWindow, total: int, on_cancel: Callable[[], None], tip: str):
        self.status = window.statusBar()
        self.bar = QtWidgets.QProgressBar()
        self.bar.setObjectName("export_progress")
        self.bar.setRange(0, max(total, 0))  # 0 to 0: a busy bar for work of unknown length
        self.bar.setMaximumWidth(220)
        self.button = QtWidgets.QPushButton("Cancel")
        self.button.setObjectName("export_cancel")
        self.button.setToolTip(tip)
        self.button.clicked.connect(on_cancel)
        self.status.addPermanentWidget(self.bar)
        self.status.addPermanentWidget(self.button)

    def show(self, done: int, what: str) -> None:
        if self.bar.maximum() > 0:
            self.bar.setValue(min(done, self.bar.maximum()))
        self.status.showMessage(what)

    def close(self) -> None:
        for widget in (self.bar, self.button):
            self.status.removeWidget(widget)
            widget.deleteLater()
        self.status.clearMessage()
