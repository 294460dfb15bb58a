"""The interference model's engine loop behind its window: commands in, snapshots out,
Qt-free.

The protocol (start_run, set_params, play, single_step, stop; errors as snapshots) is
core.mailbox's, as for the note's Runner: the GUI hosts `run_forever` in a thread, tests
may call `step_once`. A run that cannot start leaves the previous run on screen, under the
new run's id and an error state.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sparsity_gui.core.interference import (
    kept_products,
    kept_selection,
    kernels,
    mechanisms,
    residual_products,
    sparse_kernels,
)
from sparsity_gui.core.interference.mechanisms import SPARSITY_COLUMNS
from sparsity_gui.core.interference.params import InterferenceParams, needs_restart
from sparsity_gui.core.interference.run import HISTORY_COLUMNS, InterferenceRun, Measurement
from sparsity_gui.core.interference.session import LiveChange, ReplayStopped, live_change_of, replay
from sparsity_gui.core.interference.settings import OPTIMIZERS
from sparsity_gui.core.mailbox import Mail, MailboxEngine, StartRun, error_message
from sparsity_gui.core.warm_up import KernelSet

CHUNK_SECONDS = 0.015  # one kernel call at most this long before the mailbox is read
RECORD_SECONDS = 0.1  # a history row at least this often while running
RECORD_ROWS = 500  # and one every steps/RECORD_ROWS steps (each row costs one W W^T)


def _train_every_optimizer() -> None:
    for optimizer in OPTIMIZERS:
        run = InterferenceRun(InterferenceParams(n=4, m=8, steps=8, optimizer=optimizer))
        run.advance(8)
        run.measure(with_loss=True)
    noisy = InterferenceRun(InterferenceParams(n=4, m=8, steps=8, noise="bernoulli", noise_sigma=0.1))
    noisy.advance(8)
    # TopK keeping few units (the products as loops over them) and many (BLAS); JumpReLU
    # with its thresholds stored both ways
    for k in (1, 8):
        InterferenceRun(InterferenceParams(n=4, m=16, steps=8, l1=0.0, sparsity="topk", k=k)).advance(8)
    for param in ("plain", "log"):
        jump = InterferenceParams(n=4, m=16, steps=8, l1=0.0, sparsity="jumprelu", threshold_param=param)
        InterferenceRun(jump).advance(8)
    # and the loops' products over R's nonzeros, which a run takes once its residuals are
    # mostly zero (never in 8 steps on its own; JumpReLU's loops call the same kernels)
    few = InterferenceRun(InterferenceParams(n=4, m=16, steps=8, l1=0.0, sparsity="topk", k=1))
    assert few.mechanism is not None  # a TopK run has its mechanism's state
    few.mechanism.residuals_below = math.inf
    few.advance(8)


INTERFERENCE_KERNELS = KernelSet(
    name="interference",
    what="the interference model's training kernels",
    sources=tuple(
        Path(str(module.__file__))
        for module in (kernels, sparse_kernels, mechanisms, kept_selection, kept_products, residual_products)
    ),
    compile_all=_train_every_optimizer,
    typical_seconds=15.0,  # a cold compile on 2 busy cores (make bench-warm-up)
)
_warmed = False


def warm_up_kernels() -> None:
    """Compile (or load from cache) every kernel on tiny runs, once per process."""
    global _warmed
    if not _warmed:
        INTERFERENCE_KERNELS.warm_up()
        _warmed = True


@dataclass(frozen=True)
class InterferenceSnapshot:
    """Everything the window draws, copied out of the worker."""

    run_id: int
    seq: int
    state: str  # compiling | running | paused | finished | error
    params: InterferenceParams
    step: int
    W: np.ndarray  # n x m, a copy
    counts: np.ndarray  # active features per neuron
    history: np.ndarray  # rows of run.HISTORY_COLUMNS
    latest: Measurement | None  # None: no run could be built yet (then the rest is empty)
    steps_per_second: float
    message: str = ""
    w0: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # the run's W(0), read-only
    steps_to_sparse: int | None = None  # the optimizer lab's readouts (readouts.py)
    rail_share_mean: float = float("nan")
    # the run's start and its live changes (a session replays them: core/interference/session.py)
    initial_params: InterferenceParams | None = None
    changes: tuple[LiveChange, ...] = ()
    # a TopK or JumpReLU run's record (run.sparsity_history), copies: rows of
    # mechanisms.SPARSITY_COLUMNS, and every threshold at those steps; empty under l1
    sparsity_rows: np.ndarray = field(default_factory=lambda: np.zeros((0, len(SPARSITY_COLUMNS))))
    thresholds: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    # an l1 run's: the note's threshold (readouts.note_thresholds) at the history's steps,
    # rows of readouts.NOTE_THRESHOLD_COLUMNS
    note_thresholds: np.ndarray = field(default_factory=lambda: np.zeros((0, 5)))
    # a JumpReLU run's (step, l0 in force) at the history's steps (run.l0_history); else None
    l0_rows: np.ndarray | None = None


class InterferenceWorker(MailboxEngine):
    def __init__(
        self,
        params: InterferenceParams,
        *,
        playing: bool = True,
        w0: np.ndarray | None = None,
        run_id: int = 1,
    ):
        super().__init__(Mail(start=StartRun(params, run_id, w0)))
        self.params = params
        self.playing = playing
        self.state = "running" if playing else "paused"
        self.message = ""
        self.run: InterferenceRun | None = None
        self.run_id = 0
        self._first_run_id = run_id  # a first launch's "compiling" snapshot is this run's
        self._warm_up = not _warmed
        self._seq = 0
        self._chunk_steps = 1
        self._last_record = 0.0
        self._rate: tuple[float, int] | None = None  # (time, step) at the window's start
        self._steps_per_second = 0.0
        self._failed = False  # the error stays the state until a run starts
        self.initial_params: InterferenceParams | None = None  # the run's at step 0
        self.changes: list[LiveChange] = []  # its live changes, in step order
        self._thresholds_copy: tuple[tuple, np.ndarray] | None = None  # (what it is of, the copy)

    # --- the loop ------------------------------------------------------------------
    def run_forever(self) -> None:
        while not self._stop.is_set():
            if not self.step_once():
                self._wake.wait(0.05)
                self._wake.clear()
            else:
                time.sleep(0.0005)  # hands the GIL to the GUI thread between chunks

    def _step(self, now: float | None) -> bool:  # not paced: the clock is the chunk's own
        if self._warm_up:
            self._warm_up = False
            self._compile()
        single = self._apply_mail()
        run = self.run
        if run is None or self._failed:
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

    def _compile(self) -> None:
        """A first launch compiles the kernels before the first run, saying so."""
        playing_state = self.state
        self.run_id = self._first_run_id
        self.state, self.message = "compiling", INTERFERENCE_KERNELS.status()
        self._publish(force=True)
        warm_up_kernels()
        self.state, self.message = playing_state, ""

    def _fail(self, message: str) -> None:
        self._failed = True  # until a run starts
        super()._fail(message)

    def _apply_mail(self) -> int:
        mail = self._take_mail()
        if mail.playing is not None:
            self.playing = mail.playing
        self._apply_run_mail(mail)
        if mail.playing is not None or mail.start is not None or mail.params is not None:
            self._set_state()
            self._publish(force=True)
        return mail.steps

    def _start(self, start: StartRun) -> None:
        """A new run under the caller's id; if it cannot be built, the old run stays."""
        self.run_id = start.run_id
        self.params = start.params
        try:
            if start.script is not None:  # a session: trained again to its step
                run = replay(start.script, self._stop.is_set, RECORD_ROWS)
            else:
                run = InterferenceRun(start.params, w0=start.w0)
        except ReplayStopped:  # the window is closing
            return
        except Exception as exc:  # e.g. a run that does not fit in memory
            self._fail(error_message(exc, starting=True))
            return
        self.run = run
        if start.script is not None:
            self.initial_params, self.changes = start.script.params, list(start.script.changes)
            self.params = run.params
        else:
            self.initial_params, self.changes = start.params, []
        self._failed = False
        self._chunk_steps = 1
        self._rate = None
        self._steps_per_second = 0.0
        self.message = ""

    def _apply_params(self, params: InterferenceParams) -> None:
        """A live change (same n, m, optimizer: the kernel takes it next chunk); one that
        needs a new run starts it under the same id."""
        if self.run is None or needs_restart(self.run.params, params):
            self._start(StartRun(params, self.run_id))
            return
        change = live_change_of(self.run.params, params)
        if change:  # recorded at the step it takes effect after (a session replays it)
            self.changes.append(LiveChange(self.run.step, tuple(change.items())))
        self.run.params = params
        self.params = params
        self._failed = False
        if self.run.failure is None:
            self.message = ""

    def _set_state(self) -> None:
        run = self.run
        if self._failed:
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
        assert run is not None  # a chunk ran on it
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
        shows = (self.run_id, self.state, self.message, self.params, run.step if run is not None else None)
        if force or (self._wants_snapshot() and self._is_news(shows)):
            self._offer(self.make_snapshot(), shows)

    def make_snapshot(self) -> InterferenceSnapshot:
        run = self.run
        self._seq += 1
        if run is None:
            return InterferenceSnapshot(
                run_id=self.run_id,
                seq=self._seq,
                state=self.state,
                params=self.params,
                step=0,
                W=np.zeros((0, 0)),
                counts=np.zeros(0, np.int64),
                history=np.zeros((0, len(HISTORY_COLUMNS))),
                latest=None,
                steps_per_second=0.0,
                message=self.message,
            )
        latest = run.measure(with_loss=False)  # also refreshes run.counts
        return InterferenceSnapshot(
            run_id=self.run_id,
            seq=self._seq,
            state=self.state,
            params=run.params,
            step=run.step,
            W=run.W.copy(),
            counts=run.counts.copy(),
            history=run.history_array(),
            latest=latest,
            steps_per_second=self._steps_per_second,
            message=self.message,
            w0=run.w0_shared,
            steps_to_sparse=run.steps_to_sparse,
            rail_share_mean=run.rail_share_mean,
            initial_params=self.initial_params,
            changes=tuple(self.changes),
            l0_rows=run.l0_history.array() if run.l0_history is not None else None,
            **self._sparsity_record(run),
        )

    def _sparsity_record(self, run: InterferenceRun) -> dict:
        """The mechanism's record, copied; every threshold (up to tens of MB) only when a
        row was recorded since the last copy (the snapshots between share it, read-only)."""
        record = run.sparsity_history
        if record is None:
            assert run.note_threshold_history is not None  # an l1 run keeps this instead
            return {"note_thresholds": run.note_threshold_history.array()}
        rows = record.rows.array()
        of = (id(record), len(record.thresholds), float(rows[-1, 0]) if len(rows) else -1.0)
        if self._thresholds_copy is None or self._thresholds_copy[0] != of:
            thresholds = record.thresholds.array()
            thresholds.setflags(write=False)
            self._thresholds_copy = (of, thresholds)
        return {"sparsity_rows": rows, "thresholds": self._thresholds_copy[1]}
