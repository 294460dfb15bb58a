"""Worker threads that a grid of runs (core/note/scaling.py, core/interference/sweep.py)
starts and joins, every one of them, before it returns or raises.

The calling thread waits by sleeping and reading a flag that each thread sets as its last
act, not on Thread.join, is_alive or an Event: Ctrl+C (KeyboardInterrupt) lands between any
two bytecodes of the calling thread, and one that lands inside threading's own lock
handling leaves it broken. On Python 3.11 an interrupted join marks a still-running thread
as stopped (CPython gh-90882), so every later join returns at once; an interrupted
Event.wait can end in "RuntimeError: release unlocked lock" instead of the interrupt
(seen in CI). time.sleep and a list item hold no lock. Thread.join is called only once a
thread has set its flag, when nothing is left for it to do but leave threading's list.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sparsity_gui.core.errors import InputError, RunsCancelled, RunsFailed

POLL_SECONDS = 0.02  # short sleeps keep Ctrl+C responsive and add little to a grid's end


def run_in_threads(work: Callable[[], None], count: int, name: str, stop: threading.Event) -> None:
    """``work()`` in ``count`` daemon threads named ``name-0``, ``name-1``, …; returns once
    all have ended. An exception in the calling thread while it waits (KeyboardInterrupt)
    sets ``stop`` (``work`` must check it), waits for every thread started, and propagates."""
    done = [False] * count  # done[k]: thread k has finished work() (a plain store: no lock)
    threads: list[threading.Thread] = []

    def run_and_mark(k: int) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            finally:
                done[k] = True

        return run

    try:
        for k in range(count):
            thread = threading.Thread(target=run_and_mark(k), name=f"{name}-{k}", daemon=True)
            threads.append(thread)
            thread.start()
        while not all(done):
            time.sleep(POLL_SECONDS)
    except BaseException:
        stop.set()
        raise
    finally:
        _join_all(threads, done)


def _join_all(threads: list[threading.Thread], done: list[bool]) -> None:
    for k, thread in enumerate(threads):
        while not done[k]:
            if thread not in threading.enumerate():  # its start() was interrupted before it ran
                break
            time.sleep(POLL_SECONDS)
        if done[k]:
            thread.join()


@dataclass(frozen=True)
class GridProgress:
    """Where a grid of runs is, as its on_progress hears it: when a run starts (``current``,
    the run) and when one ends (``row``, its row); on a cluster, also when the scheduler
    says how many workers it has."""

    done_runs: int
    total_runs: int
    fraction: float  # of the total cost
    elapsed: float
    eta_seconds: float  # estimated time left (NaN until there is a rate)
    current: Any  # the run just started (the grid's run: (m, lam, seed), InterferenceParams), if any
    row: Any = None  # set when a run has just finished
    workers: int | None = None  # on a cluster: its workers now (None: local threads)
    running: int | None = None  # on a cluster: runs being done now


class GridBook:
    """What a grid of runs (the sweep, the scaling grid) keeps while its runs go, under one
    lock: the finished rows by key, the cost done, the next run to hand out, the stop flag
    (also set once ``should_stop()`` says so), the failures and a cluster's last status;
    and the progress it reports, the time left estimated from the cost done in this call.

    ``runs`` are all the grid's runs in order, ``key(run)`` names a run in ``done`` (its
    rows so far, filled in here), ``cost(run)`` is its share of ``total_cost``; progress
    is reported as GridProgress."""

    def __init__(
        self,
        runs: Sequence[Any],
        key: Callable[[Any], Any],
        done: dict,
        cost: Callable[[Any], float],
        total_cost: float,
        on_progress: Callable[[Any], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        self.runs, self.key, self.done, self.cost = list(runs), key, done, cost
        self.todo = [run for run in self.runs if key(run) not in done]
        self.total = total_cost
        self.on_progress, self.should_stop = on_progress, should_stop
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.failures: list[BaseException] = []
        self.done_cost = sum(cost(run) for run in self.runs if key(run) in done)
        self._cost_at_start = self.done_cost
        self._next = 0
        self._started = time.perf_counter()
        self._status: Any = None  # the cluster's last ClusterStatus

    def report(self, current: Any, row: Any = None) -> None:
        """on_progress, with the lock held."""
        if self.on_progress is None:
            return
        elapsed = time.perf_counter() - self._started
        worked = self.done_cost - self._cost_at_start
        eta = (self.total - self.done_cost) * elapsed / worked if worked > 0 and elapsed > 0 else math.nan
        status = self._status
        self.on_progress(
            GridProgress(
                len(self.done),
                len(self.runs),
                self.done_cost / self.total if self.total else 1.0,
                elapsed,
                eta,
                current,
                row,
                workers=status.workers if status is not None else None,
                running=status.running if status is not None else None,
            )
        )

    def stopping(self) -> bool:
        if not self.stop.is_set() and self.should_stop is not None and self.should_stop():
            self.stop.set()
        return self.stop.is_set()

    def claim(self) -> Any:
        """The next run for a worker thread to do (reported as started), or None."""
        with self.lock:
            if self._next >= len(self.todo):
                return None
            run = self.todo[self._next]
            self._next += 1
            self.report(run)
            return run

    def add_cost(self, amount: float, current: Any) -> None:
        """Part of a run's cost done (a sweep's run reports its steps as it goes)."""
        with self.lock:
            self.done_cost += amount
            self.report(current)

    def finished(self, run: Any, row: Any, counted: bool = False) -> None:
        """A run's row; its cost is added unless ``counted`` already, as it went."""
        with self.lock:
            self.done[self.key(run)] = row
            if not counted:
                self.done_cost += self.cost(run)
            self.report(None, row)

    def failed(self, exc: BaseException) -> None:
        """A run raised: kept for the calling thread to re-raise, and every run stops."""
        with self.lock:
            self.failures.append(exc)
        self.stop.set()

    def on_result(self, index: int, row: Any) -> None:
        """A cluster's task (core/cluster.run_tasks) for todo[index] came back, in this thread."""
        self.finished(self.todo[index], row)

    def on_status(self, status: Any) -> None:
        """What the cluster's scheduler said last (its workers, the tasks running)."""
        with self.lock:
            self._status = status
            self.report(None)

    def finished_rows(self) -> list:
        """The rows of the runs that finished, in the grid's order."""
        return [self.done[self.key(run)] for run in self.runs if self.key(run) in self.done]

    def rows(self) -> list:
        """The rows of every run, in the grid's order; raises the first failure, or
        RunsCancelled (with the finished rows) if some run did not finish."""
        finished = self.finished_rows()
        if self.failures:
            raise self.failures[0]
        if len(finished) < len(self.runs):
            raise RunsCancelled(finished)
        return finished

    def cluster_failed(self, exc: InputError) -> RunsFailed:
        """The grid's cluster failed it (core/cluster.ClusterFailed): its reason, with the
        rows of every run that finished (their results came back through on_result)."""
        return RunsFailed(exc.field, exc.message, self.finished_rows())
