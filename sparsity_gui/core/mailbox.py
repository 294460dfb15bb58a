"""The engine protocol both models' loops follow (core.note.runner.Runner and
core.interference.worker.InterferenceWorker). Qt-free.

Commands arrive from any thread in a latest-wins mailbox:

- ``start_run(params, run_id, w0=..., script=...)``: a new run, numbered by the caller (the
  window), so that it can tell the new run's snapshots from the old one's;
- ``set_params(params)``: a live change of the current run (a change that needs a new run
  is the caller's to start; an engine that gets one anyway starts it under the same id);
- ``play``, ``single_step``, ``stop``.

Results leave as snapshots, copies that are safe on another thread: the newest waits in
``latest`` until the GUI's paint timer takes it. Every snapshot carries its run id and a
``state``; an error of any kind (a run that cannot start, a diverged run, an exception in
the loop) is a snapshot with state "error" and a ``message``, under the id of the run that
was asked for. The error stays the state until a run starts.
"""

from __future__ import annotations

import threading
import traceback
from dataclasses import dataclass
from typing import Any

from sparsity_gui.core.errors import InputError


@dataclass(frozen=True)
class StartRun:
    params: Any
    run_id: int
    w0: Any = None  # W(0) as an array (None: drawn from the parameters)
    script: Any = None  # a recorded run to rebuild first (a session), where the model has them


@dataclass
class Mail:
    """Commands posted since the loop last looked; engines extend it with their own."""

    start: StartRun | None = None
    params: Any = None  # a live change
    playing: bool | None = None
    steps: int = 0


def error_message(exc: BaseException, starting: bool = False) -> str:
    """What the window shows: a bad input in words, anything else with its traceback (under
    Details)."""
    if isinstance(exc, InputError):
        return f"cannot start the run: {exc}" if starting else str(exc)
    return f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"


class MailboxEngine:
    """Subclasses define `_step` (a chunk, which `step_once` runs: an exception becomes an
    error snapshot, `_fail`), read the mail with `_take_mail` and hand snapshots to
    `_offer`; they keep ``state``, ``playing`` and ``message`` and define `_publish`."""

    def __init__(self, mail: Mail):
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._mail = mail
        self.latest: Any = None
        self._taken = True  # the GUI has taken the latest snapshot: a new one is worth making
        self._shown: Any = None  # what the last snapshot offered shows (see _is_news)

    # --- commands (any thread) -----------------------------------------------------------
    def _post(self, **fields: Any) -> None:
        with self._lock:
            for name, value in fields.items():
                setattr(self._mail, name, value)
        self._wake.set()

    def start_run(self, params: Any, run_id: int, *, w0: Any = None, script: Any = None) -> None:
        """A new run, numbered ``run_id``; it replaces any change still waiting."""
        with self._lock:
            self._mail.start = StartRun(params, run_id, w0, script)
            self._mail.params = None
        self._wake.set()

    def set_params(self, params: Any) -> None:
        """A live change of the current run (folded into a new run still waiting: a live
        change must not cancel a restart)."""
        with self._lock:
            start = self._mail.start
            if start is not None:
                self._mail.start = StartRun(params, start.run_id, start.w0, start.script)
            else:
                self._mail.params = params
        self._wake.set()

    def play(self, playing: bool = True) -> None:
        self._post(playing=playing)

    def single_step(self) -> None:
        with self._lock:
            self._mail.steps += 1
            self._mail.playing = False
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def take_latest(self) -> Any:
        with self._lock:
            self._taken = True
            return self.latest

    # --- the loop's side -----------------------------------------------------------------
    def _take_mail(self) -> Any:
        """Everything posted since the last call, as one mailbox (the fields that were not
        posted keep their empty defaults)."""
        with self._lock:
            mail = self._mail
            self._mail = type(mail)()
        return mail

    def step_once(self, now: float | None = None) -> bool:
        """Apply pending commands, then run one bounded chunk (`_step`). Returns True while
        there is more to do (so the loop should not sleep). ``now``: the wall clock a paced
        engine reads (tests give it). An exception reaches the GUI as an error snapshot
        (`_fail`), and the loop goes on."""
        try:
            return self._step(now)
        except Exception as exc:
            self._fail(error_message(exc))
            return False

    def _step(self, now: float | None) -> bool:
        raise NotImplementedError

    def _apply_run_mail(self, mail: Mail) -> None:
        """The new run or the live change the mail holds (start_run drops a change still
        waiting, and set_params folds a change into a new run still waiting)."""
        if mail.start is not None:
            self._start(mail.start)
        if mail.params is not None:
            self._apply_params(mail.params)

    def _start(self, start: StartRun) -> None:
        raise NotImplementedError

    def _apply_params(self, params: Any) -> None:
        raise NotImplementedError

    def _fail(self, message: str) -> None:
        """The error becomes the state (paused), offered at once."""
        self.state = "error"
        self.playing = False
        self.message = message
        self._publish(force=True)

    def _publish(self, force: bool = False) -> None:
        raise NotImplementedError

    def _wants_snapshot(self) -> bool:
        with self._lock:
            return self._taken

    def _is_news(self, shows: Any) -> bool:
        """Whether a snapshot that ``shows`` this (run, state, time, ...) would differ from
        the last one offered: a paused or finished run offers nothing, so the GUI paints
        nothing and the app is idle."""
        return shows != self._shown

    def _offer(self, snapshot: Any, shows: Any = None) -> None:
        with self._lock:
            self.latest = snapshot
            self._taken = False
        self._shown = shows
