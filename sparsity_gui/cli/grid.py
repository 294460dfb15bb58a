"""What the two grid commands share (`scaling`, cli/scaling.py; `sweep`, cli/sweep.py): the
grid run in a worker thread with its progress bar, Ctrl+C and SIGTERM keeping the runs that
finished, and the frame that writes the grid's files and figures into DIR."""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sparsity_gui.cli.common import (
    Progress,
    add_figure_options,
    add_output_options,
    figures_kept_apart,
    report_figure_failures,
    run_in_worker,
    say_error,
    whole_arg,
    write_headless,
)
from sparsity_gui.cli.interrupts import exit_status, interrupts_deferred
from sparsity_gui.core.cluster import EXTRA_HINT, quiet_logs
from sparsity_gui.core.errors import RunsCancelled, RunsFailed


@dataclass(frozen=True)
class GridRun:
    """What run_grid hands back: the rows, the seconds they took, whether Ctrl+C or SIGTERM
    stopped the grid (the rows are then the runs that finished) and, on a cluster, the most
    workers it counted."""

    rows: list
    seconds: float
    interrupted: bool = False
    cluster_workers: int | None = None
    status: int = 0  # the exit status of the interrupt, when interrupted
    failure: str = ""  # why the cluster failed the grid (the rows are the runs that finished)

    def ran_on(self, jobs: int | None, scheduler) -> str:
        """How the summary line says where the runs ran."""
        if scheduler is None:
            return f"with {jobs} job(s)"
        workers = f"{self.cluster_workers} worker(s) of " if self.cluster_workers is not None else ""
        return f"on {workers}{scheduler}"

    def say_interrupted(self, total_runs: int, out: str, json_name: str, hint: str = "") -> None:
        say_error(
            f"\nerror: interrupted; wrote the {len(self.rows)} of {total_runs} runs that finished "
            f"to {out} ({json_name} says complete: false){hint}\n"
        )

    def ended_early(self, total_runs: int, out: str, json_name: str, hint: str = "") -> int | None:
        """The exit status of a grid that did not finish, once it has said why in one
        `error:` line (interrupted: 130, 143 or 129; its cluster failed it: 2), or None."""
        if self.interrupted:
            self.say_interrupted(total_runs, out, json_name, hint)
            return self.status
        if self.failure:
            say_error(
                f"\nerror: {self.failure}; wrote the {len(self.rows)} of {total_runs} runs that "
                f"finished to {out} ({json_name} says complete: false){hint}\n"
            )
            return 2
        return None


def grid_wait_seconds(scheduler) -> float:
    """How long an interrupted grid is given to come back with its finished rows before they
    are taken as reported: 1 s on this machine (its runs stop between chunks of milliseconds;
    one still loading its compiled kernels or drawing a large W(0) cannot stop, and is left
    to end with the process), 10 s on a running cluster (the pending tasks cancelled, the
    client closed), 60 s with local:N (its worker processes close, on a loaded machine
    slowly)."""
    if scheduler is None:
        return 1.0
    return 60.0 if scheduler.local_workers else 10.0


def run_grid(
    run: Callable[[Callable[[Any], None], Callable[[], bool]], list],
    *,
    label: str,
    describe: Callable[[Any], str],
    doing: str,
    wait_seconds: float,
    kept: int = 0,
    in_order: Callable[[list], list] | None = None,
    quiet_cluster_log: bool = False,
) -> GridRun:
    """A grid of runs for `scaling` and `sweep`: ``run(on_progress, should_stop)`` (the
    command's plan.run) in a worker thread (run_in_worker) with the
    progress bar ``label`` [...] ``runs 3/12  describe(current)``; on a cluster the bar shows
    its workers and how many runs are ``doing`` ("running", "training").

    Ctrl+C or SIGTERM sets should_stop; once the grid has come back (RunsCancelled with the
    finished rows), or after ``wait_seconds``, the finished rows are kept (interrupted) if
    there are more than the ``kept`` ones it resumed from; otherwise the interrupt propagates
    and nothing is written. ``in_order`` puts the rows reported finished in the grid's order,
    for a grid that has not come back within the wait (None: none are kept then).

    A cluster that fails the grid (RunsFailed: its scheduler went away) keeps the finished
    rows in the same way, with the reason in ``failure``. With ``quiet_cluster_log``
    distributed's own log is silenced meanwhile (core/cluster.quiet_logs)."""
    import threading

    progress = Progress(1.0, label)  # the share of the grid's cost done
    stop = threading.Event()
    ended = threading.Event()  # not Thread.join: see _WORKERS
    cancelled: dict = {}
    finished: list = []  # rows as they end: kept on Ctrl+C even while a long run is being set up
    workers: list[int] = []

    def on_progress(pr) -> None:  # under the grid's lock
        if pr.row is not None:
            finished.append(pr.row)
        if stop.is_set():
            return
        where = describe(pr.current) if pr.current is not None else ""
        if pr.workers is not None:  # on a cluster: its progress, run by run
            workers.append(pr.workers)
            where = f" on {pr.workers} worker(s), {pr.running} {doing}"
        progress.update(
            pr.fraction, 1.0, eta=pr.eta_seconds, detail=f"runs {pr.done_runs}/{pr.total_runs}{where}"
        )

    def work() -> list:
        try:
            return run(on_progress, stop.is_set)
        except RunsCancelled as exc:
            cancelled["rows"] = exc.rows
            raise
        finally:
            ended.set()

    started = time.perf_counter()
    status = 0
    failure = ""
    try:
        with quiet_logs() if quiet_cluster_log else contextlib.nullcontext():
            try:
                rows = run_in_worker(work, stop)
            except KeyboardInterrupt:
                # the worker closes the cluster after an interrupt: wait for it here, so that
                # its closing log (and distributed's tracebacks of the streams it cuts) stay
                # quiet too; the one wait of the interrupt
                ended.wait(wait_seconds)
                raise
    except KeyboardInterrupt as exc:
        rows = cancelled.get("rows") or (in_order(list(finished)) if in_order is not None else [])
        if len(rows) <= kept:
            raise  # nothing new: leave DIR as it was
        status = exit_status(exc)
    except RunsFailed as exc:
        if len(exc.rows) <= kept:
            raise  # nothing new: one error line, DIR as it was
        rows, failure = exc.rows, str(exc)
    finally:
        progress.close()
    cluster_workers = max(workers) if workers else None
    return GridRun(rows, time.perf_counter() - started, status != 0, cluster_workers, status, failure)


def add_grid_options(parser, jobs_help: str, work: str, figures: str):
    """The options of both grid commands, after the grid's own: "running" (--jobs,
    ``jobs_help``; --scheduler, whose workers ``work`` each run) and "output" (DIR, --force,
    --no-figure skipping DIR/figures/ with ``figures``, the figures' style). Returns the
    output group, for a command's own output options."""
    r = parser.add_argument_group("running")
    jobs_tip = f"{jobs_help}; the results do not depend on it"
    r.add_argument("--jobs", type=whole_arg, default=None, metavar="J", help=jobs_tip)
    r.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help=f"{work} each run as a task on a dask.distributed cluster instead: the address "
        "of a running scheduler (tcp://HOST:8786, started with `dask scheduler`), or "
        "local:N to start N worker processes on this machine. Needs the extra: "
        f"{EXTRA_HINT}. The results are the same as without it",
    )
    o = parser.add_argument_group("output")
    add_output_options(o)
    o.add_argument("--no-figure", action="store_true", help=f"skip DIR/figures/ ({figures})")
    add_figure_options(o)
    return o


def grid_command(
    name: str,
    argv: Sequence[str],
    args,
    plan,
    jobs: int | None,
    write: Callable[[Any, list, str], Any],
    figure_files: Callable[[list, bool], dict] | None,
    *,
    describe: Callable[[Any], str],
    done_rows: Sequence[Any] = (),
    hint: str = "",
) -> tuple[GridRun, int | None]:
    """The `name` command (`scaling`, `sweep`) of ``plan`` (a core.grid.GridPlan), its
    options ``args`` parsed and checked: its runs (plan.run) in ``jobs``
    threads or on args.scheduler, skipping ``done_rows`` (kept: --resume); then
    ``write(result_dir, rows, command_line)`` and, without --no-figure, the files of
    ``figure_files(rows, interrupted)`` in DIR/figures/. Returns the grid's run and the
    exit status of a grid that did not finish (None when it did), said in one `error:`
    line (``hint``: how to continue it)."""
    command_line = shlex.join(["sparsity-gui", name, *argv])
    state: dict = {}

    def body(result_dir) -> None:
        outcome = run_grid(
            lambda on_progress, should_stop: plan.run(
                on_progress=on_progress,
                should_stop=should_stop,
                done_rows=done_rows,
                workers=jobs or 1,
                scheduler=args.scheduler,
            ),
            label=name,
            describe=describe,
            doing=plan.doing,
            wait_seconds=grid_wait_seconds(args.scheduler),
            kept=len(done_rows),
            in_order=lambda rows: plan.in_order([*done_rows, *rows]),
            quiet_cluster_log=args.scheduler is not None and not args.verbose,
        )
        state["outcome"] = outcome
        with interrupts_deferred():  # the runs that finished are written whole
            write(result_dir, outcome.rows, command_line)
            if figure_files is not None and not args.no_figure:
                from sparsity_gui.figures.save import write_files

                folder = result_dir.path("figures")
                figures_kept_apart(
                    folder,
                    lambda: write_files(folder, figure_files(outcome.rows, outcome.interrupted)),
                    figure_failures,
                )

    figure_failures: list[str] = []
    write_headless(args.out, args.force or bool(done_rows) or getattr(args, "resume", False), body)
    outcome = state["outcome"]
    report_figure_failures(figure_failures, args.out)
    return outcome, outcome.ended_early(len(plan.runs()), args.out, f"{name}.json", hint)
