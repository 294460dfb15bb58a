"""core/cluster.py: scheduler addresses, and tasks run on a real dask scheduler with real
workers (subprocesses on 127.0.0.1, tests/dask_processes.py): results, stop, errors, status.
The functions mapped are the standard library's, which every worker can import."""

from __future__ import annotations

import math
import time

import pytest
from helpers import free_port

from sparsity_gui.core.cluster import (
    Scheduler,
    TasksStopped,
    parse_scheduler,
    run_tasks,
)
from sparsity_gui.core.errors import InputError


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", None),
        ("   ", None),
        ("tcp://127.0.0.1:8786", Scheduler(address="tcp://127.0.0.1:8786")),
        (" tcp://node-7.lab.example:8786 ", Scheduler(address="tcp://node-7.lab.example:8786")),
        ("127.0.0.1:9000", Scheduler(address="tcp://127.0.0.1:9000")),
        ("tcp://[::1]:8786", Scheduler(address="tcp://[::1]:8786")),
        ("local:1", Scheduler(local_workers=1)),
        ("local:8", Scheduler(local_workers=8)),
        ("LOCAL:2", Scheduler(local_workers=2)),
        ("local:4e0", Scheduler(local_workers=4)),
    ],
)
def test_parse_scheduler_accepts(text, expected):
    assert parse_scheduler(text) == expected


@pytest.mark.parametrize(
    "text, reason",
    [
        ("local:0", "1 to 64 workers, got 0"),
        ("local:65", "1 to 64 workers, got 65"),
        ("local:two", "whole number of worker processes"),
        ("local:1.5", "whole number"),
        ("local:", "whole number"),
        ("tcp://host", "tcp://HOST:PORT"),
        ("tls://127.0.0.1:8786", "tcp://HOST:PORT"),
        ("tcp://127.0.0.1:0", "port must be from 1 to 65535, got 0"),
        ("tcp://127.0.0.1:70000", "port must be from 1 to 65535, got 70000"),
        ("tcp://:8786", "tcp://HOST:PORT"),
        ("tcp://a b:8786", "tcp://HOST:PORT"),
        ("8786", "tcp://HOST:PORT"),
    ],
)
def test_parse_scheduler_refuses_naming_the_field(text, reason):
    with pytest.raises(InputError) as info:
        parse_scheduler(text)
    assert info.value.field == "scheduler"
    assert reason in info.value.message, info.value.message
    assert str(info.value) == f"scheduler: {info.value.message}"  # core/checks.py's style


def test_str_of_a_scheduler_is_what_parses_back():
    for text in ("tcp://127.0.0.1:8786", "local:3"):
        assert str(parse_scheduler(text)) == text


def test_an_unreachable_scheduler_is_refused_within_the_timeout():
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(InputError) as info:
        run_tasks(Scheduler(address=address), math.factorial, [3], connect_timeout=1.0)
    assert info.value.field == "scheduler"
    assert info.value.message == f"no scheduler answered at {address} within 1 s"


def test_results_come_back_by_index_with_a_callback_each(dask_cluster):
    tasks = [5, 0, 12, 7, 20, 1]
    seen = []
    statuses = []
    results = run_tasks(
        Scheduler(address=dask_cluster.address),
        math.factorial,
        tasks,
        on_result=lambda i, r: seen.append((i, r)),
        on_status=statuses.append,
    )
    assert results == {i: math.factorial(t) for i, t in enumerate(tasks)}
    assert sorted(seen) == sorted(results.items()) and len(seen) == len(tasks)
    last = statuses[-1]  # the status after the last result
    assert (last.workers, last.threads, last.done, last.total, last.running) == (2, 2, 6, 6, 0)
    assert last.scheduler == dask_cluster.address


def test_a_task_that_raises_raises_here(dask_cluster):
    with pytest.raises(ValueError, match="negative"):
        run_tasks(Scheduler(address=dask_cluster.address), math.factorial, [3, -1, 4])


def test_stop_cancels_the_pending_tasks_and_keeps_the_finished(dask_cluster):
    """Two quick tasks, then six of two seconds each: stop once the quick ones are back.
    The slow ones are cancelled (the call returns long before 12 s of work could be done,
    and their results never arrive); the quick ones' results are kept."""
    tasks = [0.0, 0.0] + [2.0] * 6
    results = []

    def stop() -> bool:
        return len(results) >= 2

    started = time.monotonic()
    with pytest.raises(TasksStopped) as info:
        run_tasks(
            Scheduler(address=dask_cluster.address),
            time.sleep,
            tasks,
            on_result=lambda i, r: results.append(i),
            should_stop=stop,
        )
    took = time.monotonic() - started
    assert sorted(info.value.results) == [0, 1] == sorted(results)
    assert info.value.results == {0: None, 1: None}  # time.sleep's own result
    assert took < 6 * 2.0, f"took {took:.1f} s: the slow tasks were waited for"


def test_a_session_leaves_no_thread_of_distributed_behind(dask_cluster):
    """The client runs on an asyncio loop in the calling thread: once run_tasks returns, no
    thread it started is alive (checked here explicitly; the autouse fixture checks every
    test the same way)."""
    import threading

    before = {t.ident for t in threading.enumerate()}
    assert run_tasks(Scheduler(address=dask_cluster.address), math.factorial, [4]) == {0: 24}
    left = [t.name for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert left == []
