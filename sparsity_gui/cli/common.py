"""What the headless commands share: a parser whose errors are one `error:` line, the
number parsers, the progress bar, Ctrl+C and SIGTERM handling, the worker thread a
command runs in, and the guard that turns failures into exit statuses.

Nothing in cli/ imports Qt at module level: figures are drawn (through plots/) only when
asked for, and the GUI is imported by __main__ only when it is asked for.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import NoReturn, TypeVar

from sparsity_gui.core.checks import parse_whole
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import ResultDir
from sparsity_gui.core.text import format_duration

T = TypeVar("T")


class CleanParser(argparse.ArgumentParser):
    """argparse, but a usage error is one `error:` line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        fail(message)


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"error: {message}\n")
    raise SystemExit(2)


def add_output_options(group) -> None:
    """--out DIR and --force, as every headless command takes them (see write_headless)."""
    group.add_argument("--out", required=True, metavar="DIR", help="folder to write (must be new or empty)")
    group.add_argument("--force", action="store_true", help="replace a non-empty DIR")


def whole_arg(text: str) -> int:
    """argparse type: a whole number ('250', '1e6'); its range is checked later, with the
    other parameters."""
    try:
        return parse_whole(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def number_arg(text: str) -> float:
    """argparse type: any float (inf and nan are refused later, naming the option)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


class Progress:
    """A one-line progress bar on stderr, shown only on a terminal and only once a run
    has taken more than a second.

    ``update(done)`` shows done/total; a sweep passes what it knows better: the fraction
    of the total cost done, the time left and a detail (runs done, the current run)."""

    MIN_INTERVAL = 0.1  # seconds between redraws

    def __init__(self, total: int, label: str):
        self.total = max(total, 1)
        self.label = label
        self.start = time.perf_counter()
        self.enabled = sys.stderr.isatty()
        # quick commands stay quiet; SPARSITY_GUI_PROGRESS_AFTER (seconds) changes when the bar
        # first shows (tests set 0 so that a fast machine still shows one)
        try:
            self.after = float(os.environ.get("SPARSITY_GUI_PROGRESS_AFTER", "1"))
        except ValueError:
            self.after = 1.0
        self.shown = False
        self._last = -math.inf
        self._width = 0

    def update(
        self, done: int, fraction: float | None = None, eta: float | None = None, detail: str = ""
    ) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self.start
        if elapsed < self.after and not self.shown:
            return
        frac = done / self.total if fraction is None else fraction
        frac = min(max(frac, 0.0), 1.0)
        if now - self._last < self.MIN_INTERVAL and frac < 1.0:
            return
        self._last = now
        self.shown = True
        bar = "#" * int(30 * frac)
        if eta is None:
            eta = elapsed / frac - elapsed if frac > 0 else math.nan
        line = (
            f"{self.label} [{bar:<30}] {detail + '  ' if detail else ''}{100 * frac:5.1f}%  "
            f"{format_duration(elapsed)} elapsed, about {format_duration(eta)} left"
        )
        pad = max(self._width - len(line), 0)
        self._width = len(line)
        sys.stderr.write("\r" + line + " " * pad)
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.shown = False


class _Interrupts:
    """Ctrl+C and SIGTERM for `sweep` and `interference`: both raise KeyboardInterrupt,
    except inside ``interrupts_deferred()`` (drawing the figure: an exception raised in a
    Qt paint callback is printed by Qt, not propagated), which raises it on leaving."""

    deferred = False
    pending = False

    @classmethod
    def handler(cls, _signum, _frame) -> None:
        if cls.deferred:
            cls.pending = True
            return
        raise KeyboardInterrupt


@contextlib.contextmanager
def interrupt_handlers() -> Iterator[None]:
    """Ctrl+C and SIGTERM raise KeyboardInterrupt (unless deferred) while inside."""
    import signal

    saved = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            saved.append((sig, signal.signal(sig, _Interrupts.handler)))
        except ValueError:  # not the main thread (called from a test harness)
            pass
    try:
        yield
    finally:
        for sig, old in saved:
            signal.signal(sig, old)


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    outer = _Interrupts.deferred
    _Interrupts.deferred = True
    try:
        yield
    finally:
        _Interrupts.deferred = outer
        if not outer and _Interrupts.pending:
            _Interrupts.pending = False
            raise KeyboardInterrupt


# one Event per worker thread, set when its function has returned. Not Thread.is_alive():
# on Python 3.11 a join interrupted by Ctrl+C or SIGTERM marks the still-running thread as
# stopped (CPython gh-90882), and every later is_alive() and join() believes it.
_WORKERS: list = []


def run_in_worker(fn, stop=None):
    """fn() on a worker thread while the main thread waits, so that Ctrl+C and SIGTERM
    (handled on the main thread only) act at once even while a compiled kernel runs a
    long chunk of steps (the kernels release the GIL). On KeyboardInterrupt ``stop`` is
    set and the interrupt propagates; the daemon worker stops at its next check or dies
    with the process. fn's exception, if any, is raised here."""
    import threading

    result: dict = {}
    ended = threading.Event()

    def target() -> None:
        try:
            result["value"] = fn()
        except BaseException as exc:  # handed to the main thread
            result["error"] = exc
        finally:
            ended.set()

    worker = threading.Thread(target=target, name="sparsity-gui-cli-worker", daemon=True)
    _WORKERS[:] = [e for e in _WORKERS if not e.is_set()]
    _WORKERS.append(ended)
    worker.start()
    try:
        while not ended.wait(0.2):
            pass
    except KeyboardInterrupt:
        if stop is not None:
            stop.set()
        raise
    if "error" in result:
        raise result["error"]
    return result.get("value")


def _leave_if_worker_running(rc: int) -> None:
    """After an interrupt: a worker still inside a compiled kernel (the stop flag acts
    between chunks) would keep the interpreter's shutdown waiting in native code, so the
    process ends at once (the temporary folder is already gone)."""
    running = [e for e in _WORKERS if not e.is_set()]
    for e in running:
        e.wait(0.5)
    if any(not e.is_set() for e in running):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)


def write_headless(out: str, replace: bool, body: Callable[[ResultDir], T]) -> T:
    """The frame of every headless command: DIR made new (or, with ``replace``, emptied),
    ``body(result_dir)`` writing into its temporary folder with Ctrl+C and SIGTERM handled,
    and DIR committed at once. Bad input, an output location that cannot be used (checked
    before ``body`` runs) or a write error (naming the file and the reason): the temporary
    folder removed, DIR as it was, one `error:` line, status 2. An interrupt: nothing
    written, status 130 (SystemExit)."""
    try:
        result_dir = ResultDir(out, replace)
    except InputError as exc:
        fail(str(exc))
    with interrupt_handlers():
        try:
            value = body(result_dir)
            result_dir.commit()
        except KeyboardInterrupt:
            result_dir.abort()
            sys.stderr.write("\nerror: interrupted; nothing was written\n")
            _leave_if_worker_running(130)
            raise SystemExit(130) from None
        except InputError as exc:
            result_dir.abort()
            fail(str(exc))
        except OSError as exc:  # a full disk, a file size limit, DIR taken meanwhile, ...
            result_dir.abort()
            fail(f"{result_dir.describe(exc)}; nothing was written")
        except BaseException:
            result_dir.abort()
            raise
    return value
