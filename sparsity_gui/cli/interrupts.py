"""Ctrl+C, SIGTERM and SIGHUP while a command runs: each ends the command with the status a
shell expects (128 + the signal's number), after the cleanup, whatever Python is doing when
it arrives (a signal raised in a weakref callback is kept, not swallowed); a second signal
right after the first cannot cut the cleanup short."""

from __future__ import annotations

import contextlib
import math
import sys
import time
from collections.abc import Iterator


class Interrupted(KeyboardInterrupt):
    """SIGINT (Ctrl+C), SIGTERM or SIGHUP (the terminal closed) while a command runs: a
    KeyboardInterrupt, so that every ``except KeyboardInterrupt`` acts on all three, that
    knows the exit status a shell expects of it (128 + the signal's number)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def status(self) -> int:
        return 128 + self.signum


def exit_status(interrupt: BaseException) -> int:
    """The exit status of an interrupt: 130 for Ctrl+C, 143 for SIGTERM, 129 for SIGHUP."""
    return interrupt.status if isinstance(interrupt, Interrupted) else 130


REPEAT_IGNORED_SECONDS = 2.0  # a second signal this soon after the first does not cut the cleanup


class _Interrupts:
    """The commands' signal handler: the first signal raises Interrupted, except inside
    ``interrupts_deferred()`` (drawing the figure: an exception raised in a Qt paint callback
    is printed by Qt, not propagated), which raises it on leaving. Another signal within
    REPEAT_IGNORED_SECONDS of the first (a second Ctrl+C, a SIGTERM from the shell that
    closes) is ignored, so that it cannot interrupt the removal of the temporary folder."""

    deferred = False
    pending: int | None = None
    first_at = -math.inf
    depth = 0  # interrupt_handlers() entered and not left
    # a signal whose Interrupted Python swallowed: raised in a weakref callback or a
    # __del__, it goes to sys.unraisablehook ("Exception ignored") and the code goes on
    swallowed: int | None = None

    @classmethod
    def handler(cls, signum, _frame) -> None:
        now = time.monotonic()
        if now - cls.first_at < REPEAT_IGNORED_SECONDS:
            return
        cls.first_at = now
        if cls.deferred:
            cls.pending = signum
            return
        raise Interrupted(signum)


def _handled_signals() -> list:
    """SIGINT and SIGTERM always, even when ignored on entry (a command started in the
    background with `&` ignores SIGINT, yet `kill -INT` should still end it cleanly), and
    SIGHUP unless ignored on entry (nohup asks for that: a closed terminal must not end it)."""
    import signal

    wanted = [signal.SIGINT, signal.SIGTERM]
    hup = getattr(signal, "SIGHUP", None)
    if hup is not None and signal.getsignal(hup) is not signal.SIG_IGN:
        wanted.append(hup)
    return wanted


@contextlib.contextmanager
def interrupt_handlers() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise Interrupted (unless deferred) while inside."""
    import signal

    if _Interrupts.depth == 0:  # a new command (tests run several in one process)
        _Interrupts.first_at, _Interrupts.pending, _Interrupts.swallowed = -math.inf, None, None
    _Interrupts.depth += 1
    saved = []
    for sig in _handled_signals():
        with contextlib.suppress(ValueError):  # not the main thread (called from a test harness)
            saved.append((sig, signal.signal(sig, _Interrupts.handler)))
    unraisable = sys.unraisablehook

    def quiet_interrupt(info) -> None:
        # raised in a weakref callback or __del__ and swallowed by Python: kept, for
        # write_headless to end the command; no "Exception ignored" traceback
        if isinstance(info.exc_value, Interrupted):
            _Interrupts.swallowed = info.exc_value.signum
        else:
            unraisable(info)

    sys.unraisablehook = quiet_interrupt
    try:
        yield
    finally:
        _Interrupts.depth -= 1
        sys.unraisablehook = unraisable
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
        if not outer and _Interrupts.pending is not None:
            signum, _Interrupts.pending = _Interrupts.pending, None
            raise Interrupted(signum)


def raise_swallowed() -> None:
    """Raise the Interrupted of a signal that arrived while Python ran a weakref callback
    or a __del__ (which swallow exceptions), if one did, inside interrupt_handlers()."""
    if _Interrupts.swallowed is not None:
        raise Interrupted(_Interrupts.swallowed)
