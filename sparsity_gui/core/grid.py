"""A grid of runs, as both models make one: the note's scaling grid (core/note/scaling.py)
and the interference sweep (core/interference/sweep.py). What they share is decided here,
once: the m values a grid takes, the runs side by side (checked, and fitted to the memory
available), where the runs go (threads of this process, each with one BLAS thread, or tasks
on a dask cluster), and the bookkeeping of their rows (core/threads.GridBook).

A model's plan (ScalingGrid, SweepSpec) is a GridPlan: it says what its runs are, what they
cost and how much memory they need; the rules above are the base class's. Qt-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sparsity_gui.core.blas import limit_blas_threads
from sparsity_gui.core.checks import default_workers, list_text, parse_m_values
from sparsity_gui.core.cluster import (
    ClusterFailed,
    Scheduler,
    TasksStopped,
    check_cluster_run,
    parse_scheduler,
    run_tasks,
)
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.threads import GridBook, GridProgress, run_in_threads

JOBS_MAX = 64  # runs side by side that a user may ask for
MAX_RUNS = 10_000  # runs in one grid


def grid_m_values(m: str | int | Sequence[int], m_max: int) -> tuple[int, ...]:
    """The m values of a grid, as text ('1e3,1e4', '256:4096:256') or as numbers: the one
    parser of both grids and every front end (core/checks.parse_m_values)."""
    return parse_m_values(list_text(m), m_max)


def check_workers(workers: Any) -> int:
    """Runs side by side in threads, as GridPlan.run takes them: a whole number
    of at least 1 (not a bool, though a bool is an int)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError("jobs", f"must be a whole number of at least 1, got {workers!r}")
    return workers


def check_jobs(jobs: Any) -> None:
    """``jobs`` as a user gives it (--jobs, the API's jobs=): None or 1 to JOBS_MAX."""
    whole = isinstance(jobs, int) and not isinstance(jobs, bool)
    if jobs is not None and not (whole and 1 <= jobs <= JOBS_MAX):
        raise InputError("jobs", f"must be from 1 to {JOBS_MAX}, got {jobs}")


@dataclass(frozen=True)
class GridOrder:
    """What a grid's front door (core/note/headless.scaling_order,
    core/interference/headless.sweep_order) hands back to every surface: the checked plan,
    the runs it makes side by side (None on a cluster) and where they go (None: threads of
    this process)."""

    plan: Any  # a GridPlan
    jobs: int | None
    scheduler: Scheduler | None


def given_options(options: Mapping[str, Any], known: Sequence[str], command: str) -> dict[str, Any]:
    """The options of a grid's front door that were given (None: not given), an unknown
    name refused as the ``command`` would refuse it; a False flag is not given either."""
    for name in options:
        if name not in known:
            raise InputError(name, f"is not an option of {command} (its options: {', '.join(known)})")
    return {k: v for k, v in options.items() if v is not None and v is not False}


def scheduler_of(value: Any) -> Scheduler | None:
    """A door's scheduler: as given (a Scheduler), or its text ('' or None: this machine)."""
    if value is None or isinstance(value, Scheduler):
        return value
    return parse_scheduler(str(value))


def option_argv(options: Mapping[str, Any]) -> list[str]:
    """The command-line options of ``options`` (name: value, as a door takes them): a True
    flag alone, a float as the shortest text that reads back bit for bit, a list joined by
    commas, anything else as its text; None and False are left out."""
    argv: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, float):
            argv += [flag, repr(value)]
        elif isinstance(value, (list, tuple)):
            argv += [flag, ",".join(repr(v) if isinstance(v, float) else str(v) for v in value)]
        else:
            argv += [flag, str(value)]
    return argv


class GridPlan:
    """The rules every grid of runs keeps. A subclass gives ``runs()``, ``cost(run)``,
    ``run_key(run)`` and ``row_key(row)`` (the same key for a run and its row),
    ``check_memory(workers)`` (its ``workers`` largest runs side by side, or InputError),
    ``check_work()`` (its longest run within the limit of bounded work), ``largest()`` (its
    largest run, as a message names it), ``train(run, book)`` (one run in a thread of this
    process), ``task`` and ``task_args(run)`` (one run on a cluster), and the class
    attributes below."""

    what = "a grid"  # as messages name it
    work = "solve"  # what a worker does with a run
    doing = "running"  # what the runs under way are doing, as a progress line says
    label = "grid"  # names its threads and cluster tasks
    one_blas_thread = False  # its runs use BLAS: one thread each (core/blas.py)

    def runs(self) -> list:
        raise NotImplementedError

    def cost(self, run: Any) -> float:
        raise NotImplementedError

    def run_key(self, run: Any) -> Any:
        raise NotImplementedError

    def row_key(self, row: Any) -> Any:
        raise NotImplementedError

    def check_memory(self, workers: int = 1) -> None:
        raise NotImplementedError

    def check_work(self) -> None:
        raise NotImplementedError

    def largest(self) -> str:
        raise NotImplementedError

    def train(self, run: Any, book: GridBook) -> None:
        """Train ``run`` in this thread to its row, given to book.finished; or return early
        once book.stopping() says so. Raises InputError (naming the run) when it fails."""
        raise NotImplementedError

    # one run as a cluster task, in a worker process: a top-level function (picklable) of
    # task_args(run) that returns its row, equal to train's digit for digit
    task: Callable[[Any], Any]

    def task_args(self, run: Any) -> Any:
        return run

    def total_cost(self) -> float:
        return sum(self.cost(run) for run in self.runs())

    def in_order(self, rows: Sequence[Any]) -> list:
        """``rows`` in the order of the grid's runs."""
        order = {self.run_key(run): i for i, run in enumerate(self.runs())}
        return sorted(rows, key=lambda row: order[self.row_key(row)])

    def book(
        self,
        done_rows: Sequence[Any],
        on_progress: Callable[[Any], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> GridBook:
        """The book of a run of this grid (core/threads.GridBook): ``done_rows`` are kept
        and their runs skipped."""
        done = {self.row_key(row): row for row in done_rows}
        return GridBook(
            self.runs(), self.run_key, done, self.cost, self.total_cost(), on_progress, should_stop
        )

    def workers_that_fit(self, wanted: int) -> int:
        """The most runs, up to ``wanted``, that fit side by side (at least one: a run too
        big on its own is refused by check_memory)."""
        workers = max(1, min(wanted, len(self.runs())))
        while workers > 1:
            try:
                self.check_memory(workers)
                return workers
            except InputError:
                workers -= 1
        return 1

    def settle_jobs(self, jobs: int | None, scheduler: Scheduler | None) -> int | None:
        """The runs side by side of a grid a user asked for (the `scaling` and `sweep`
        commands, the API): ``jobs`` (1 to JOBS_MAX), at most one per run, or (None) as
        many as fit in memory, at most one per core up to 8. With a ``scheduler`` the
        cluster's workers run them: jobs must be None and so is the answer. Checks the
        grid's work and that its largest run fits here (on a running cluster, the workers'
        memory is theirs to judge); the runs side by side are run's to check."""
        check_cluster_run(scheduler, jobs, self.what, self.work)
        check_jobs(jobs)
        if scheduler is None or scheduler.local_workers:
            self.check_memory(1)  # its own message: the largest run on its own is too big
        self.check_work()
        if scheduler is not None:
            return None
        if jobs is None:
            return self.workers_that_fit(default_workers())
        return min(jobs, len(self.runs()))

    def check_side_by_side(self, workers: int, scheduler: Scheduler | None) -> None:
        """Refuse ``workers`` threads (or a local cluster's workers) whose runs side by side
        cannot fit in the memory available now."""
        if scheduler is None:
            check_workers(workers)
            self.check_memory(workers)
        elif scheduler.local_workers:  # side by side on this machine
            side_by_side = min(scheduler.local_workers, len(self.runs()))
            if self.workers_that_fit(side_by_side) < side_by_side:
                raise InputError(
                    "scheduler",
                    f"{side_by_side} runs of {self.largest()} side by side do not fit in the "
                    f"memory available; use fewer workers",
                )
        # on a running cluster, the workers' memory is theirs to judge

    def run(
        self,
        on_progress: Callable[[GridProgress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        done_rows: Sequence[Any] = (),
        workers: int = 1,
        scheduler: Scheduler | None = None,
    ) -> list:
        """Every run of the grid, and a row per run in the grid's order. Runs of
        ``done_rows`` (the same key) are skipped, so a cancelled grid can be resumed.

        In ``workers`` threads of this process (the kernels, the products and the sort
        release the GIL), each calling ``train(run, book)`` with one BLAS thread where the
        runs use BLAS (one_blas_thread: OpenBLAS's own threads collapse when something else
        loads the machine, core/blas.py);
        ``on_progress`` is called under a lock from them, as a run starts and ends (with
        its row). With a ``scheduler`` each run is instead a task ``task(task_args(run))``
        on a dask.distributed cluster (core/cluster.py) and ``workers`` is not used: the
        progress comes in this thread as each run finishes, and a stop cancels the pending
        tasks; the rows are the same digit for digit. Raises RunsCancelled (with the
        finished rows) once should_stop() says so, InputError when a run fails (naming the
        run), the first other failure as it is, and RunsFailed (the finished rows) when
        the cluster fails the grid."""
        book = self.book(done_rows, on_progress, should_stop)
        self.check_side_by_side(workers, scheduler)
        if scheduler is None:
            if self.one_blas_thread:
                limit_blas_threads(1)

            def worker() -> None:
                while not book.stopping():
                    run = book.claim()
                    if run is None:
                        return
                    try:
                        self.train(run, book)
                    except BaseException as exc:  # re-raised in the calling thread
                        book.failed(exc)
                        return

            run_in_threads(worker, min(workers, len(book.todo)), self.label, book.stop)
            return book.rows()
        try:
            if book.todo:  # nothing left to run needs no cluster
                run_tasks(
                    scheduler,
                    self.task,
                    [self.task_args(run) for run in book.todo],
                    on_result=book.on_result,
                    should_stop=book.stopping,
                    on_status=book.on_status,
                    label=f"{self.label}-run",
                )
        except TasksStopped:
            pass
        except ClusterFailed as exc:  # the finished runs are kept: RunsFailed carries them
            raise book.cluster_failed(exc) from None
        return book.rows()
