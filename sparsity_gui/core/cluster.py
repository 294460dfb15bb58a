"""Independent tasks run on a dask.distributed cluster: a running scheduler
(``tcp://host:port``) or a LocalCluster of N worker processes started here (``local:N``).

Model-free and Qt-free: a caller hands over a top-level (picklable) function and its tasks,
and gets each result back through a callback as it finishes. dask and distributed are the
optional extra ``cluster`` and are imported only when a cluster is asked for, so the app
and every local run work without them.

The whole session (client, and the LocalCluster's scheduler and nannies) runs on an
asyncio loop in the calling thread: no I/O thread of distributed's outlives it, a
connection that fails leaves nothing running, and the callbacks come from the caller's
own thread. (For local:N the scheduler runs in this process too and starts distributed's
one process-wide offload thread, which it keeps for reuse until the process exits.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import signal
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sparsity_gui.core.checks import parse_whole
from sparsity_gui.core.errors import InputError

EXTRA_HINT = "pip install 'sparsity-gui[cluster]'"
CONNECT_TIMEOUT = 3.0  # seconds: an unreachable scheduler is refused quickly
MAX_LOCAL_WORKERS = 64
STATUS_SECONDS = 0.5  # between two questions to the scheduler (workers, tasks running)
POLL_SECONDS = 0.1  # between two looks at the stop flag
CANCEL_SECONDS = 2.0  # for the scheduler to take the cancellation of the pending tasks
CLOSE_SECONDS = 5.0  # for a client to close (a scheduler that went away cannot answer)

_TCP = re.compile(r"^(?:tcp://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d+)$")


@dataclass(frozen=True)
class Scheduler:
    """Where tasks run: ``address`` of a running scheduler, or ``local_workers`` worker
    processes of a LocalCluster started for the session (exactly one is set)."""

    address: str = ""
    local_workers: int = 0

    def __str__(self) -> str:
        return self.address or f"local:{self.local_workers}"


def parse_scheduler(text: str) -> Scheduler | None:
    """'' (run locally: None), 'tcp://HOST:PORT' ('HOST:PORT' means the same) or 'local:N'."""
    text = text.strip()
    if not text:
        return None
    if text.lower().startswith("local:"):
        count = text[len("local:") :]
        try:
            workers = parse_whole(count)
        except ValueError:
            raise InputError(
                "scheduler", f"local:N needs a whole number of worker processes, got {text!r}"
            ) from None
        if not 1 <= workers <= MAX_LOCAL_WORKERS:
            raise InputError("scheduler", f"local:N needs 1 to {MAX_LOCAL_WORKERS} workers, got {workers}")
        return Scheduler(local_workers=workers)
    found = _TCP.match(text)
    if found is None:
        raise InputError(
            "scheduler", f"expected a scheduler address tcp://HOST:PORT or local:N (N workers), got {text!r}"
        )
    host, port = found.group(1), int(found.group(2))
    if not 1 <= port <= 65535:
        raise InputError("scheduler", f"the port must be from 1 to 65535, got {port}")
    return Scheduler(address=f"tcp://{host}:{port}")


def require_distributed() -> None:
    """Refuse, naming the extra to install, when dask.distributed is missing."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError(
            "scheduler", f"running on a cluster needs dask.distributed, not installed here: {EXTRA_HINT}"
        ) from None


def usable_scheduler(text: str) -> Scheduler | None:
    """parse_scheduler's answer, refused at once (naming the extra) when a scheduler is given
    but dask.distributed is missing: what a --scheduler option or a scheduler field accepts."""
    scheduler = parse_scheduler(text)
    if scheduler is not None:
        require_distributed()
    return scheduler


def check_cluster_run(scheduler: Scheduler | None, jobs: int | None, runs: str, work: str) -> None:
    """A grid of ``runs`` (a sweep, a grid) on ``scheduler``: its workers ``work`` the runs,
    so jobs (this machine's threads) must not be given, and dask.distributed must be
    installed. Nothing to check without a scheduler."""
    if scheduler is None:
        return
    if jobs is not None:
        raise InputError(
            "jobs", f"sets the threads of {runs} on this machine; with --scheduler the workers {work}"
        )
    require_distributed()


@dataclass(frozen=True)
class ClusterStatus:
    """What the scheduler said last: its workers and the tasks of this session."""

    scheduler: str  # the scheduler's address (a local cluster's own)
    workers: int
    threads: int  # task slots: one per worker with --nthreads 1
    running: int  # tasks being run on a worker now (at most one per thread)
    done: int
    total: int


class ClusterFailed(InputError):
    """The cluster failed the session, not a task: the scheduler went away, cancelled a task,
    or a task's workers kept dying. ``results`` maps the index of every task that had
    finished to its result, for the caller to keep."""

    def __init__(self, message: str, results: dict[int, Any] | None = None):
        super().__init__("scheduler", message)
        self.results = dict(results or {})

    def __reduce__(self):
        return (type(self), (self.message, self.results))


class TasksStopped(Exception):
    """``run_tasks`` was asked to stop: the pending tasks were cancelled; ``results``
    maps the index of every task that had finished to its result."""

    def __init__(self, results: dict[int, Any]):
        super().__init__(f"stopped with {len(results)} task(s) finished")
        self.results = results


def run_tasks(
    scheduler: Scheduler,
    fn: Callable[[Any], Any],
    tasks: Sequence[Any],
    on_result: Callable[[int, Any], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_status: Callable[[ClusterStatus], None] | None = None,
    label: str = "task",
    connect_timeout: float = CONNECT_TIMEOUT,
) -> dict[int, Any]:
    """``fn(task)`` for every task, each a dask task on ``scheduler``'s workers; returns
    {index: result}. Blocks the calling thread, which receives every callback:
    ``on_result(index, result)`` as each task finishes, ``on_status`` about twice a
    second. ``fn`` and the tasks must pickle (a module-level function, frozen data), and
    the workers must be able to import ``fn``'s module.

    A worker that dies has its task run again elsewhere (dask's own rule, up to
    distributed.scheduler.allowed-failures times). When should_stop() says so, the tasks not
    yet finished are cancelled and TasksStopped carries the finished results. A task's
    exception is raised here (the rest cancelled); a scheduler that cannot be reached and
    greet within ``connect_timeout`` seconds, or a LocalCluster that cannot start, raises
    InputError; a cluster that fails the session once it has begun (its scheduler killed,
    say) raises ClusterFailed with the finished results. distributed's own log is passed on
    as its configuration says; quiet_logs() silences it."""
    require_distributed()
    if connect_timeout <= 0 or not math.isfinite(connect_timeout):
        raise InputError("scheduler", f"the connect timeout must be > 0 s, got {connect_timeout}")
    session = _Session(scheduler, fn, list(tasks), on_result, should_stop, on_status, label, connect_timeout)
    return asyncio.run(session.run())


@dataclass
class _Session:
    """One run_tasks call, as it goes: its arguments and the results so far."""

    scheduler: Scheduler
    fn: Callable[[Any], Any]
    tasks: list
    on_result: Callable[[int, Any], None] | None
    should_stop: Callable[[], bool] | None
    on_status: Callable[[ClusterStatus], None] | None
    label: str
    connect_timeout: float
    results: dict[int, Any] = field(default_factory=dict)

    async def run(self) -> dict[int, Any]:
        cluster = await self._local_cluster() if self.scheduler.local_workers else None
        try:
            client = await self._client(cluster)
            try:
                return await self._map(client)
            finally:
                await _close_quietly(client, CLOSE_SECONDS)
        finally:
            if cluster is not None:
                await cluster.close()

    async def _local_cluster(self):
        from distributed import LocalCluster

        try:
            return await LocalCluster(
                n_workers=self.scheduler.local_workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                # no dashboard; its HTTP server on a free port of this machine only, not :8787
                dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                # what matters comes back as an exception; Dask's log only for --verbose
                silence_logs=logging.INFO
                if logging.getLogger("sparsity_gui").isEnabledFor(logging.DEBUG)
                else logging.CRITICAL,
                preload=[__name__],  # dask_setup below, in each worker process
                asynchronous=True,
            )
        except Exception as exc:  # ports, memory, processes: the reason as the user sees it
            raise InputError(
                "scheduler", f"cannot start {self.scheduler.local_workers} local worker(s): {exc}"
            ) from None

    async def _client(self, cluster):
        """A client connected to the scheduler. Connecting and the handshake together are
        bounded by connect_timeout (distributed bounds each step by it, but a listener that
        accepts and never answers held it for minutes), and the stop flag is looked at
        meanwhile: a signal does not wait for the scheduler."""
        from distributed import Client

        target = cluster if cluster is not None else self.scheduler.address
        client = Client(target, asynchronous=True, timeout=self.connect_timeout, set_as_default=False)
        connecting = asyncio.ensure_future(_connected(client))
        deadline = time.monotonic() + self.connect_timeout
        stopped = False
        while not connecting.done():
            left = deadline - time.monotonic()
            stopped = self.should_stop is not None and self.should_stop()
            if left <= 0 or stopped:
                break
            await asyncio.wait({connecting}, timeout=min(POLL_SECONDS, left))
        if connecting.done() and not stopped:
            try:
                return connecting.result()
            except OSError as exc:  # TimeoutError too
                await _close_quietly(client)
                reason = "" if "Timed out" in _reason(exc) else f" ({_reason(exc)})"
                raise InputError("scheduler", self._unanswered(reason)) from None
            except Exception as exc:  # garbage read as a message: a huge length, a bad frame
                await _close_quietly(client)
                raise InputError(
                    "scheduler",
                    f"what answered at {self.scheduler} is not a Dask scheduler (its reply could not be "
                    f"read: {type(exc).__name__}: {_reason(exc)})",
                ) from None
            except BaseException:
                await _close_quietly(client)
                raise
        connecting.cancel()
        await _close_quietly(client)
        if stopped:
            raise TasksStopped({})
        raise InputError("scheduler", self._unanswered(""))

    def _unanswered(self, reason: str) -> str:
        return f"no scheduler answered at {self.scheduler} within {self.connect_timeout:g} s{reason}"

    async def _map(self, client) -> dict[int, Any]:
        total = len(self.tasks)
        token = uuid.uuid4().hex[:8]
        futures = [
            client.submit(self.fn, task, key=f"{self.label}-{token}-{i}", pure=False, priority=total - i)
            for i, task in enumerate(self.tasks)
        ]
        waiting = {asyncio.ensure_future(_settled(f, self.scheduler)): i for i, f in enumerate(futures)}
        last_status = -math.inf
        try:
            while waiting:
                if self.should_stop is not None and self.should_stop():
                    raise TasksStopped(dict(self.results))
                finished, _ = await asyncio.wait(
                    waiting, timeout=POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                for waiter in sorted(finished, key=lambda w: waiting[w]):  # in the tasks' order
                    i = waiting.pop(waiter)
                    self.results[i] = waiter.result()  # a task's exception is raised here
                    if self.on_result is not None:
                        self.on_result(i, self.results[i])
                if self.on_status is not None and time.monotonic() - last_status >= STATUS_SECONDS:
                    last_status = time.monotonic()
                    self.on_status(await self._status(client, futures))
            if self.on_status is not None:
                self.on_status(await self._status(client, futures))
        except BaseException as exc:
            for waiter in waiting:
                waiter.cancel()
            with contextlib.suppress(Exception):  # a scheduler that went away cannot be told: do not wait
                await asyncio.wait_for(client.cancel([futures[i] for i in waiting.values()]), CANCEL_SECONDS)
            if isinstance(exc, ClusterFailed):
                exc.results = dict(self.results)
            raise
        return self.results

    async def _status(self, client, futures) -> ClusterStatus:
        try:
            nthreads = await client.nthreads()
            processing = await client.processing()
        except OSError:  # distributed's CommClosedError too: the scheduler went away
            raise ClusterFailed(f"lost the connection to the scheduler at {self.scheduler}") from None
        keys = {f.key for f in futures}
        # a worker holds a few more tasks than it has threads (dask's worker-saturation):
        # the rest wait there, not train
        running = sum(
            min(sum(1 for key in tasks if key in keys), nthreads.get(worker, 0))
            for worker, tasks in processing.items()
        )
        return ClusterStatus(
            scheduler=client.scheduler.address,
            workers=len(nthreads),
            threads=sum(nthreads.values()),
            running=running,
            done=len(self.results),
            total=len(futures),
        )


async def _connected(client):
    await client
    return client


async def _close_quietly(client, seconds: float = 1.0) -> None:
    """Close a client that may be half connected or have lost its scheduler, giving up
    after ``seconds``."""
    with contextlib.suppress(Exception):  # whatever a half-made client raises on close: it is gone
        await asyncio.wait_for(client.close(), seconds)


async def _settled(future, scheduler: Scheduler):
    """The task's result (its exception raised), a cancellation by the scheduler named."""
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError

    try:
        return await future
    except FutureCancelledError as exc:
        if "scheduler-connection-lost" in str(exc):
            raise ClusterFailed(f"lost the connection to the scheduler at {scheduler}") from None
        raise ClusterFailed(f"the cluster cancelled a task ({_reason(exc)})") from None
    except OSError:  # distributed's CommClosedError: the scheduler went away while gathering
        raise ClusterFailed(f"lost the connection to the scheduler at {scheduler}") from None
    except KilledWorker as exc:  # its worker died each time it ran: a crash, not chance
        raise ClusterFailed(f"a task's workers died every time it ran ({_reason(exc)})") from None


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """While inside, the records of distributed's loggers (and of the asyncio and tornado
    loops it runs on) go nowhere: what matters comes back as an exception (ClusterFailed),
    not as its tracebacks on stderr. The loggers are put back as they were on leaving."""
    with contextlib.suppress(ImportError):
        import distributed  # noqa: F401  (its import adds its handlers: first, so they are replaced)
    roots = ("distributed", "tornado", "bokeh", "asyncio")
    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in roots]
    saved = []
    for name in sorted({*roots, *names}):  # distributed gives some children handlers of their own
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        # a NullHandler, not none: a record that finds no handler at all is printed anyway
        logger.handlers[:] = [logging.NullHandler()]
        logger.propagate = False
    try:
        yield
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers[:] = handlers
            logger.propagate = propagate


def dask_setup(worker) -> None:
    """Run in each worker process of local:N once it has started (its preload). Ctrl+C
    reaches every process of the terminal's group: the workers leave it to the process that
    started them, which cancels the pending tasks and closes them. (A signal mask would not
    do: a spawned process starts with every signal unblocked.)"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
