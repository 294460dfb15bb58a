"""The engine loop behind the interference window: commands in, snapshots out, Qt-free.

Same contract as `runner.Runner`: the GUI hosts `run_forever` in a thread (tests may call
`step_once`); parameters arrive as frozen snapshots in a latest-wins mailbox; results
leave as copied snapshots that the GUI's paint timer takes when it is ready.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass

import numpy as np

from sparsity_gui.core.mailbox import MailboxEngine
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun, Measurement
from sparsity_gui.core.interference.params import needs_restart

CHUNK_SECONDS = 0.015  # one kernel call at most this long before the mailbox is read
RECORD_SECONDS = 0.1  # a history row at least this often while running
RECORD_ROWS = 500  # and one every steps/RECORD_ROWS steps (each row costs one W W^T)




@dataclass(frozen=True)
class InterferenceSnapshot:
    """Everything the window draws, copied out of the worker."""

    run_id: int
    seq: int
    state: str  # running | paused | finished | error
    params: InterferenceParams
    step: int
    W: np.ndarray  # n x m, a copy
    counts: np.ndarray  # active features per neuron
    history: np.ndarray  # rows of interference.HISTORY_COLUMNS
    latest: Measurement
    steps_per_second: float
    message: str = ""


@dataclass
class _Mailbox:
    params: InterferenceParams | None = None
    w0: np.ndarray | None = None
    restart: bool = False
    playing: bool | None = None
    steps: int = 0


class InterferenceWorker(MailboxEngine):
    def __init__(self, params: InterferenceParams, *, playing: bool = True,
                 w0: np.ndarray | None = None):
        super().__init__(_Mailbox(params=params, w0=w0, restart=True))
        self.params = params
        self.playing = playing
        self.state = "running" if playing else "paused"
        self.message = ""
        self.run: InterferenceRun | None = None
        self.run_id = 0
        self._seq = 0
        self._chunk_steps = 1
        self._last_record = 0.0
        self._rate: tuple[float, int] | None = None  # (time, step) at the window's start
        self._steps_per_second = 0.0
        self._pending_error: str | None = None
        self._crashed = False

    # --- commands (any thread) -------------------------------------------------------
    def set_params(self, params: InterferenceParams, restart: bool = False,
                   w0: np.ndarray | None = None) -> None:
        """Apply a parameter snapshot: live when only LIVE_FIELDS changed, else a new run."""
        with self._lock:
            self._mail.params = params
            if restart or w0 is not None:
                self._mail.restart = True
                self._mail.w0 = w0
        self._wake.set()

    def take_error(self) -> str | None:
        """The message of an exception in the worker since the last call (once), or None."""
        with self._lock:
            message, self._pending_error = self._pending_error, None
        return message

    # --- the loop ------------------------------------------------------------------
    def run_forever(self) -> None:
        while not self._stop.is_set():
            if not self.step_once():
                self._wake.wait(0.05)
                self._wake.clear()
            else:
                time.sleep(0.0005)  # hands the GIL to the GUI thread between chunks

    def step_once(self) -> bool:
        """Apply pending commands, then run one bounded chunk. True while there is more."""
        try:
            single = self._apply_mail()
            run = self.run
            if run is None:
                return False
            if single:
                run.advance(single)
                self._after_chunk(force=True)
            if not self.playing or run.finished:
                self._publish()
                return False
            start = time.perf_counter()
            # a chunk never runs past the next history row, so short, fast runs still get
            # RECORD_ROWS rows (recording by wall clock alone gave a fast run three rows)
            every = max(1, run.params.steps // RECORD_ROWS)
            to_row = every - run.step % every
            done = run.advance(min(self._chunk_steps, to_row))
            took = time.perf_counter() - start
            if done and took > 0:
                # adapt so one chunk takes about CHUNK_SECONDS
                per_step = took / done
                self._chunk_steps = int(min(max(1, CHUNK_SECONDS / per_step), 100_000))
            self._after_chunk(force=run.finished, row_due=run.step % every == 0)
            return not run.finished
        except Exception as exc:  # reaches the GUI as a message; the loop goes on
            self.state = "error"
            self.playing = False
            if isinstance(exc, InputError):  # e.g. a new run that does not fit in memory
                self.message = f"cannot start the run: {exc}"
            else:
                self.message = f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
            with self._lock:
                # also when no snapshot can carry it (no run yet, or the old run's id)
                self._pending_error = self.message
            self._crashed = True  # the error stays the state until a run starts
            self._publish(force=True)
            return False

    def _apply_mail(self) -> int:
        mail = self._take_mail()
        if mail.playing is not None:
            self.playing = mail.playing
        if mail.params is not None:
            new = mail.params
            if mail.restart or self.run is None or needs_restart(self.run.params, new):
                self.run = InterferenceRun(new, w0=mail.w0)
                self._crashed = False
                self.run_id += 1
                self._chunk_steps = 1
                self._rate = None
                self._steps_per_second = 0.0
                self.message = ""
            else:
                self.run.params = new  # same n, m, optimizer: the kernel takes it next chunk
                self._crashed = False
                if self.run.failure is None:
                    self.message = ""
            self.params = new
            self._publish(force=True)
        if mail.playing is not None or mail.params is not None:
            self._set_state()
            self._publish(force=True)
        return mail.steps

    def _set_state(self) -> None:
        run = self.run
        if self._crashed:
            self.state = "error"  # play/pause must not hide why the last command failed
        elif run is not None and run.failure is not None:
            # playing stays as the user set it: a restart after a failure plays on
            self.state, self.message = "error", run.failure
        elif run is not None and run.finished:
            self.state = "finished"
        else:
            self.state = "running" if self.playing else "paused"

    def _after_chunk(self, force: bool = False, row_due: bool = False) -> None:
        run = self.run
        now = time.perf_counter()
        if self._rate is None or not self.playing:
            self._rate = (now, run.step)
        elif now - self._rate[0] >= 0.5:
            self._steps_per_second = (run.step - self._rate[1]) / (now - self._rate[0])
            self._rate = (now, run.step)
        if force or row_due or now - self._last_record >= RECORD_SECONDS:
            run.record()
            self._last_record = now
        self._set_state()
        self._publish(force=force)

    def _publish(self, force: bool = False) -> None:
        run = self.run
        if run is None:
            return
        if force or self._wants_snapshot():
            self._offer(self.make_snapshot())

    def make_snapshot(self) -> InterferenceSnapshot:
        run = self.run
        self._seq += 1
        latest = run.measure(with_loss=False)  # also refreshes run.counts
        return InterferenceSnapshot(
            run_id=self.run_id, seq=self._seq, state=self.state, params=run.params,
            step=run.step, W=run.W.copy(), counts=run.counts.copy(),
            history=run.history_array(), latest=latest,
            steps_per_second=self._steps_per_second, message=self.message)
