"""The engine loop behind the GUI: commands in, snapshots out, Qt-free.

The GUI hosts `Runner.run_forever` in a thread; tests and scripts can call
`Runner.step_once` synchronously and exercise the same code. Both ends keep only the
latest value: the newest parameter snapshot waits in the mailbox, the newest result
snapshot waits in `latest` for the GUI's paint timer.
"""
from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass

import numpy as np

from sparsity_gui.core.note import kernels as K
from sparsity_gui.core.mailbox import MailboxEngine
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import LamChange, ReplayStopped, Simulation
from sparsity_gui.core.note.params import needs_restart
from sparsity_gui.core.note.metrics import COLUMNS
from sparsity_gui.core.note.params import METHODS

# How long one chunk of simulation may run before the loop looks at its mailbox again.
CHUNK_SECONDS = 0.010
SORTED_POINTS = 2500  # drawn points of the sorted-weights curve (decimated for large m)
PUBLISH_INTERVAL = 1.0 / 120.0  # faster than the GUI paints, so every frame has news
TICK_SECONDS = 1.0 / 100.0  # a paced run advances at most this often


def default_speed(lam: float) -> float:
    """Simulated time per wall second so that a run to one weight takes ~20 s."""
    return 0.075 / lam if lam > 0 else 5.0


def decimated_ranks(nonzero: int, m: int, points: int = SORTED_POINTS) -> np.ndarray:
    """Ranks to draw of a sorted curve: every rank at the top (the largest weights are
    always drawn), log-spaced further down, and the survivor/dead boundary exactly."""
    if m <= points:
        return np.arange(m, dtype=np.int64)
    head = np.arange(min(points // 3, m), dtype=np.int64)
    tail = np.geomspace(max(head.size, 1), m, points - head.size).astype(np.int64) - 1
    edges = [r for r in (nonzero - 2, nonzero - 1, nonzero, m - 1) if 0 <= r < m]
    return np.unique(np.concatenate([head, tail, np.array(edges, dtype=np.int64)]))


@dataclass(frozen=True)
class Snapshot:
    """Everything the GUI draws, copied out of the worker (safe across threads)."""

    run_id: int
    seq: int
    state: str  # compiling | running | paused | finished | error
    params: SimParams
    m: int
    t: float
    lam: float
    nonzero: int
    norm1: float
    norm2_sq: float
    s: float
    theta: float
    history: np.ndarray  # rows of COLUMNS + tracked |W_k|
    tracked_ranks: np.ndarray
    tracked_u: np.ndarray  # |W_k(0)| of the tracked weights
    tracked_death_t: np.ndarray
    ranks: np.ndarray  # decimated ranks of the sorted |W|
    sorted_abs: np.ndarray  # |W| at those ranks
    lam_changes: tuple[LamChange, ...]
    fitted_c: float
    steps_per_second: float
    sim_time_per_second: float
    message: str = ""
    steps_total: int = 0


@dataclass
class _Mailbox:
    params: SimParams | None = None
    params_w0: np.ndarray | None = None
    params_run_id: int | None = None
    playing: bool | None = None
    steps: int = 0
    speed: float | None = None  # <= 0: as fast as possible
    stop_at_one: bool | None = None
    reset_run_id: int | None = None


class Runner(MailboxEngine):
    def __init__(self, params: SimParams, w0: np.ndarray | None = None, *, playing: bool = True,
                 speed: float | None = None, stop_at_one: bool = True, run_id: int = 1,
                 warm_up: bool = True):
        super().__init__(_Mailbox(params=params, params_w0=w0, params_run_id=run_id))
        self.sim: Simulation | None = None
        self.run_id = 0
        self.params = params
        self.playing = playing
        self.speed = default_speed(params.lam) if speed is None else speed
        self.stop_at_one = stop_at_one
        self.state = "compiling" if warm_up else "paused"
        self.message = ""
        self._warm_up = warm_up
        self._seq = 0
        self._caught_up = True
        self._chunk_work = 20_000  # adapted so a chunk takes about CHUNK_SECONDS
        self._last_publish = 0.0
        self._rate_window: list[tuple[float, int, float]] = []

    # --- commands (any thread) -------------------------------------------------------
    def set_params(self, params: SimParams, run_id: int | None = None,
                   w0: np.ndarray | None = None) -> None:
        """Apply a parameter snapshot. A new run_id forces a new run (reset)."""
        with self._lock:
            self._mail.params = params
            # a live change must not cancel a restart still waiting in the mailbox
            if run_id is not None or self._mail.params_run_id is None:
                self._mail.params_w0 = w0
                self._mail.params_run_id = run_id
        self._wake.set()

    def set_speed(self, speed: float) -> None:
        self._post(speed=speed)

    def set_stop_at_one(self, stop_at_one: bool) -> None:
        self._post(stop_at_one=stop_at_one)

    # --- the loop ------------------------------------------------------------------
    def run_forever(self) -> None:
        while not self._stop.is_set():
            start = time.perf_counter()
            busy = self.step_once()
            if not busy:
                self._wake.wait(0.05)
                self._wake.clear()
                continue
            # A paced run does one chunk per tick and naps in between; flat out, a short
            # nap still hands the GIL to the GUI thread (otherwise every Qt call there
            # waits for the worker's Python between numba chunks: frames of 300 ms).
            remaining = TICK_SECONDS - (time.perf_counter() - start)
            if self.speed > 0 and remaining > 0 and self._caught_up:
                self._wake.wait(remaining)
                self._wake.clear()
            else:
                time.sleep(0.0005)

    def step_once(self, now: float | None = None) -> bool:
        """Apply pending commands, then run one bounded chunk. Returns True while there is
        more simulating to do (so the loop should not sleep)."""
        try:
            if self._warm_up:
                self._warm_up = False
                self._publish_state("compiling")
                warm_up_kernels()
                if self.state == "compiling":
                    self.state = "running" if self.playing else "paused"
            self._apply_mail()
            if self.sim is None:
                return False
            return self._chunk(time.perf_counter() if now is None else now)
        except Exception as exc:  # reaches the GUI as a message, the loop goes on
            self.state = "error"
            self.playing = False
            self.message = f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
            self._publish(force=True)
            return False

    def _apply_mail(self) -> None:
        mail = self._take_mail()
        if mail.speed is not None:
            self.speed = mail.speed
            self._rate_window.clear()
        if mail.stop_at_one is not None:
            self.stop_at_one = mail.stop_at_one
        if mail.params is not None:
            self._apply_params(mail.params, mail.params_w0, mail.params_run_id)
        if mail.playing is not None:
            self.playing = mail.playing
            if self.state in ("running", "paused"):
                self.state = "running" if self.playing else "paused"
            self._wall_anchor = None
            self._publish(force=True)
        for _ in range(mail.steps):
            self._single_step()

    def _apply_params(self, params: SimParams, w0, run_id) -> None:
        restart = self.sim is None or run_id is not None or needs_restart(self.params, params)
        if restart:
            new_id = run_id if run_id is not None else self.run_id + 1
            try:
                sim = Simulation(params, w0 if w0 is not None else None,
                                 should_stop=self._stop.is_set)
            except ReplayStopped:
                return
            except Exception as exc:
                # the failed run gets its id, so the window shows the error instead of
                # dropping it as a snapshot of some other run
                self.sim = None
                self.run_id = new_id
                self.params = params
                self.state = "error"
                self.playing = False
                self.message = str(exc) if isinstance(exc, InputError) else \
                    f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}"
                self._publish(force=True)
                return
            self.sim = sim
            self.run_id = new_id
            self.message = ""
            self.state = "running" if self.playing else "paused"
        else:
            assert self.sim is not None
            self.sim.apply(params)
            if self.state == "error":
                self.state = "paused"
            if self.state == "finished" and not self._finished():
                self.state = "running" if self.playing else "paused"
        self.params = params
        self._wall_anchor = None
        self._publish(force=True)

    # --- simulating ------------------------------------------------------------------
    def _finished(self) -> bool:
        sim = self.sim
        if sim is None:
            return False
        if sim.solver.diverged:
            return True
        if self.stop_at_one and sim.moments().nonzero <= 1 and sim.init.nonzero0 > 1:
            return True
        t_end = self.params.t_end
        return t_end is not None and sim.t >= t_end * (1 - 1e-12)

    def _end_time(self) -> float:
        return self.params.t_end if self.params.t_end is not None else math.inf

    def _advance(self, t_target: float, max_work: int) -> int:
        sim = self.sim
        assert sim is not None
        stop_nonzero = 1 if (self.stop_at_one and sim.init.nonzero0 > 1) else -1
        t_target = min(t_target, self._end_time())
        return sim.advance(t_target, stop_nonzero, max_work)

    def _single_step(self) -> None:
        """One GD step (gd), or one frame's worth of simulated time (exact)."""
        sim = self.sim
        if sim is None or self.state == "error" or self._finished():
            return
        if sim.method == "gd":
            dt = sim.params.eta
        else:
            dt = (self.speed if self.speed > 0 else default_speed(sim.lam)) / 30.0
        sim.advance(sim.t + dt * 1.0000001, self._stop_nonzero(), 2**62)
        sim.record()
        self._after_progress()
        self._publish(force=True)

    def _stop_nonzero(self) -> int:
        sim = self.sim
        return 1 if (sim is not None and self.stop_at_one and sim.init.nonzero0 > 1) else -1

    _wall_anchor: tuple[float, float] | None = None

    def _chunk(self, now: float) -> bool:
        sim = self.sim
        assert sim is not None
        if self.state == "finished" or self.state == "error" or not self.playing:
            self._publish()
            return False
        if self._finished():
            self._after_progress()
            self._publish(force=True)
            return False
        if self.speed > 0:
            # simulated time follows the wall clock from an anchor set at (re)start
            if self._wall_anchor is None:
                self._wall_anchor = (now, sim.t)
            t_target = self._wall_anchor[1] + self.speed * (now - self._wall_anchor[0])
            if t_target <= sim.t:
                self._publish()
                return False  # ahead of the clock: the loop naps
        else:
            t_target = math.inf
        start = time.perf_counter()
        status = self._advance(t_target, self._chunk_work)
        elapsed = time.perf_counter() - start
        # behind the wall clock (the work limit stopped the chunk): no nap before the next
        self._caught_up = status != K.REACHED_MAX_STEPS
        # adapt the work per chunk so that one chunk takes about CHUNK_SECONDS
        if status == K.REACHED_MAX_STEPS:
            if elapsed < CHUNK_SECONDS / 2:
                self._chunk_work = min(self._chunk_work * 2, 2**40)
            elif elapsed > CHUNK_SECONDS * 1.5:
                self._chunk_work = max(self._chunk_work // 2, 64)
        sim.record()
        self._after_progress()
        self._publish()
        return True

    def _work_count(self) -> int:
        s = self.sim.solver if self.sim else None
        return int(getattr(s, "steps", 0)) if s is not None else 0

    def _after_progress(self) -> None:
        if self._finished():
            sim = self.sim
            if sim is not None and sim.solver.diverged:
                self.state = "error"
                self.message = sim.solver.diverged
                self.playing = False
            else:
                self.state = "finished"

    # --- publishing ----------------------------------------------------------------
    def _publish_state(self, state: str) -> None:
        self.state = state
        self._publish(force=True)

    def _publish(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and (now - self._last_publish < PUBLISH_INTERVAL or not self._taken):
            return  # too soon, or the GUI has not looked at the last one yet
        self._last_publish = now
        self._offer(self.make_snapshot(now))

    def _rates(self, now: float) -> tuple[float, float]:
        sim = self.sim
        if sim is None:
            return 0.0, 0.0
        self._rate_window.append((now, self._work_count(), sim.t))
        while len(self._rate_window) > 2 and now - self._rate_window[0][0] > 1.0:
            self._rate_window.pop(0)
        (t0, s0, st0), (t1, s1, st1) = self._rate_window[0], self._rate_window[-1]
        if t1 - t0 <= 0:
            return 0.0, 0.0
        return (s1 - s0) / (t1 - t0), (st1 - st0) / (t1 - t0)

    def make_snapshot(self, now: float | None = None) -> Snapshot:
        """A copy of everything the GUI draws (also usable synchronously in tests)."""
        self._seq += 1
        sim = self.sim
        params = self.params
        if sim is None:
            return Snapshot(run_id=self.run_id, seq=self._seq, state=self.state, params=params,
                            m=params.m, t=0.0, lam=params.lam, nonzero=0, norm1=math.nan,
                            norm2_sq=math.nan, s=math.nan, theta=math.nan,
                            history=np.zeros((0, len(COLUMNS))), tracked_ranks=np.zeros(0, np.int64),
                            tracked_u=np.zeros(0), tracked_death_t=np.zeros(0),
                            ranks=np.zeros(0, np.int64), sorted_abs=np.zeros(0), lam_changes=(),
                            fitted_c=math.nan, steps_per_second=0.0, sim_time_per_second=0.0,
                            message=self.message)
        mo = sim.moments()
        ranks = decimated_ranks(mo.nonzero, sim.m)
        history = sim.history.array()
        sps, tps = self._rates(time.perf_counter() if now is None else now)
        return Snapshot(
            run_id=self.run_id, seq=self._seq, state=self.state, params=sim.params, m=sim.m,
            t=mo.t, lam=mo.lam, nonzero=mo.nonzero, norm1=mo.norm1, norm2_sq=mo.norm2_sq,
            s=mo.s, theta=mo.theta, history=history, tracked_ranks=sim.tracked.copy(),
            tracked_u=sim.init.u[sim.tracked].copy(),
            tracked_death_t=sim.solver.death_t[sim.tracked].copy(),
            ranks=ranks, sorted_abs=sim.solver.abs_at_ranks(ranks),
            lam_changes=tuple(sim.lam_changes), fitted_c=sim.fitted_c(history),
            steps_per_second=sps, sim_time_per_second=tps, message=self.message,
            steps_total=self._work_count(),
        )


_warmed = False


def warm_up_kernels() -> None:
    """Compile (or load from cache) every kernel on a tiny problem."""
    global _warmed
    if _warmed:
        return
    w0 = np.array([0.5, -0.3, 0.2, 0.1, 0.05, 0.0])
    for method in METHODS:
        sim = Simulation(SimParams(m=w0.size, lam=0.05, method=method, eta=0.1), w0)
        sim.advance(2.0, -1)
        sim.record()
    _warmed = True
