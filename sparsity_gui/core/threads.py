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

import threading
import time
from collections.abc import Callable

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
