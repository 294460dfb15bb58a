"""Worker threads that a grid of runs (core/note/scaling.py, core/interference/sweep.py)
starts and joins, every one of them, before it returns or raises.

The wait is on an Event per thread, not on Thread.join or is_alive: on Python 3.11 a join
interrupted by Ctrl+C marks the still-running thread as stopped (CPython gh-90882), so
every later join returns at once and the caller would raise with the thread still running.
Thread.join is called only once a thread has set its Event, when nothing is left for it
to do but leave threading's list.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

POLL_SECONDS = 0.1  # short waits keep Ctrl+C responsive


def run_in_threads(work: Callable[[], None], count: int, name: str, stop: threading.Event) -> None:
    """``work()`` in ``count`` daemon threads named ``name-0``, ``name-1``, …; returns once
    all have ended. An exception in the calling thread while it waits (KeyboardInterrupt)
    sets ``stop`` (``work`` must check it), waits for every thread started, and propagates."""
    threads: list[tuple[threading.Thread, threading.Event]] = []

    def ended_when_done(ended: threading.Event) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            finally:
                ended.set()

        return run

    try:
        for k in range(count):
            ended = threading.Event()
            thread = threading.Thread(target=ended_when_done(ended), name=f"{name}-{k}", daemon=True)
            threads.append((thread, ended))
            thread.start()
        for _thread, ended in threads:
            while not ended.wait(POLL_SECONDS):
                pass
    except BaseException:
        stop.set()
        raise
    finally:
        _join_all(threads)


def _join_all(threads: list[tuple[threading.Thread, threading.Event]]) -> None:
    for thread, ended in threads:
        while not ended.wait(POLL_SECONDS):
            if thread not in threading.enumerate():  # its start() was interrupted before it ran
                break
        if ended.is_set():
            thread.join()
