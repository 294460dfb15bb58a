"""The note model's engine loop behind the GUI: commands in, snapshots out, Qt-free.

The GUI hosts `Runner.run_forever` in a thread; tests and scripts can call
`Runner.step_once` synchronously and exercise the same code. The protocol (start_run,
set_params, play, single_step, stop; errors as snapshots) is core.mailbox's; this model
adds the pace (simulated time per wall second) and whether to stop at one weight.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.mailbox import Mail, MailboxEngine, StartRun, error_message
from sparsity_gui.core.note import kernels as K
from sparsity_gui.core.note.changes import LamChange, LiveChange, RunScript, lam_schedule
from sparsity_gui.core.note.metrics import COLUMNS, DecayFit
from sparsity_gui.core.note.params import METHODS, SimParams
from sparsity_gui.core.note.simulation import ReplayStopped, Simulation
from sparsity_gui.core.warm_up import KernelSet

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
    tracked_death_t: np.ndarray
    ranks: np.ndarray  # decimated ranks of the sorted |W|
    sorted_abs: np.ndarray  # |W| at those ranks
    changes: tuple[LiveChange, ...]  # every live change of lam, eta and method, in order
    fitted_c: float
    steps_per_second: float
    message: str = ""
    fit: DecayFit = DecayFit()  # fitted_c (= fit.c), fitted_c_bulk, fit_max_rel_dev, flags
    regime: dict | None = None  # metrics.regime_of: the note's premise, at t = 0 and each lam change
    growing: int = 0  # weights with |W_k| >= theta now (counted on the solver's state, all m)
    # the run's start, for exports and sessions: parameters at t = 0 and W(0) (never
    # written after the run is built, so shared rather than copied)
    initial_params: SimParams | None = None
    w0: np.ndarray | None = None

    @property
    def lam_changes(self) -> tuple[LamChange, ...]:
        """lam at t = 0 and at each live change of it (the panels' markers)."""
        if self.initial_params is None:
            return lam_schedule(self.lam, self.changes)
        return lam_schedule(self.initial_params.lam, self.changes, self.initial_params.lam_schedule)

    def script(self, samples: int) -> RunScript:
        """This run up to the snapshot's instant, as a script to re-simulate (exports,
        sessions): the engine's objects are never read from another thread."""
        if self.initial_params is None or self.w0 is None:
            raise InputError("", "the run is still starting; try again in a moment")
        return RunScript(
            self.initial_params.with_changes(t_end=self.params.t_end),
            self.w0,
            tuple(c for c in self.changes if c.t <= self.t),
            self.t,
            samples,
        )


@dataclass
class _Mailbox(Mail):
    speed: float | None = None  # <= 0: as fast as possible
    stop_at_one: bool | None = None


def snapshot_of(
    sim: Simulation | None,
    params: SimParams,
    *,
    run_id: int,
    seq: int,
    state: str,
    message: str = "",
    steps_per_second: float = 0.0,
    history: np.ndarray | None = None,
    fit: DecayFit | None = None,
) -> Snapshot:
    """A copy of everything the panels draw of ``sim`` (also a sampled run's, headless:
    pass its rows as ``history``)."""
    if sim is None:
        return Snapshot(
            run_id=run_id,
            seq=seq,
            state=state,
            params=params,
            m=params.m,
            t=0.0,
            lam=params.lam,
            nonzero=0,
            norm1=math.nan,
            norm2_sq=math.nan,
            s=math.nan,
            theta=math.nan,
            history=np.zeros((0, len(COLUMNS))),
            tracked_ranks=np.zeros(0, np.int64),
            tracked_death_t=np.zeros(0),
            ranks=np.zeros(0, np.int64),
            sorted_abs=np.zeros(0),
            changes=(),
            fitted_c=math.nan,
            steps_per_second=0.0,
            message=message,
        )
    mo = sim.moments()
    ranks = decimated_ranks(mo.nonzero, sim.m)
    history = sim.history.array() if history is None else np.array(history, copy=True)
    fit = sim.decay_fit(history) if fit is None else fit
    return Snapshot(
        run_id=run_id,
        seq=seq,
        state=state,
        params=sim.params,
        m=sim.m,
        t=mo.t,
        lam=mo.lam,
        nonzero=mo.nonzero,
        norm1=mo.norm1,
        norm2_sq=mo.norm2_sq,
        s=mo.s,
        theta=mo.theta,
        history=history,
        tracked_ranks=sim.tracked.copy(),
        tracked_death_t=sim.solver.death_t[sim.tracked].copy(),
        ranks=ranks,
        sorted_abs=sim.solver.abs_at_ranks(ranks),
        changes=tuple(sim.changes),
        fitted_c=fit.c,
        steps_per_second=steps_per_second,
        message=message,
        fit=fit,
        regime=sim.regime(history),
        growing=sim.weights_at_or_above(mo.theta),
        initial_params=sim.initial_params,
        w0=sim.init.w0,
    )


class Runner(MailboxEngine):
    def __init__(
        self,
        params: SimParams,
        w0: np.ndarray | None = None,
        *,
        playing: bool = True,
        speed: float | None = None,
        stop_at_one: bool = True,
        run_id: int = 1,
        warm_up: bool = True,
    ):
        super().__init__(_Mailbox(start=StartRun(params, run_id, w0)))
        self.sim: Simulation | None = None
        self.run_id = 0
        self._first_run_id = run_id  # a first launch's "compiling" snapshot is this run's
        self.params = params
        self.playing = playing
        self.speed = default_speed(params.lam) if speed is None else speed
        self.stop_at_one = stop_at_one
        self.state = "compiling" if warm_up else "paused"
        self.message = ""
        self._warm_up = warm_up
        self._seq = 0
        self._run_seq0 = 0
        self._caught_up = True
        self._chunk_work = 20_000  # adapted so a chunk takes about CHUNK_SECONDS
        self._last_publish = 0.0
        self._rate_window: list[tuple[float, int]] = []
        self._wall_anchor: tuple[float, float] | None = None  # (wall, sim) time at (re)start

    # --- commands (any thread; start_run, set_params, play, ... are MailboxEngine's) ------
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

    def _step(self, now: float | None) -> bool:
        if self._warm_up:
            self._warm_up = False
            if not _warmed:  # a first launch: say what is compiled, and for about how long
                self.run_id, self.message = self._first_run_id, NOTE_KERNELS.status()
            self._publish_state("compiling")
            warm_up_kernels()
            if self.state == "compiling":
                self.state = "running" if self.playing else "paused"
                self.message = ""
        self._apply_mail()
        if self.sim is None:
            return False
        return self._chunk(time.perf_counter() if now is None else now)

    def _apply_mail(self) -> None:
        mail = self._take_mail()
        if mail.speed is not None:
            self.speed = mail.speed
            self._rate_window.clear()
        if mail.stop_at_one is not None:
            self.stop_at_one = mail.stop_at_one
        self._apply_run_mail(mail)
        if mail.playing is not None:
            self.playing = mail.playing
            if self.state in ("running", "paused"):
                self.state = "running" if self.playing else "paused"
            self._wall_anchor = None
            self._publish(force=True)
        for _ in range(mail.steps):
            self._single_step()

    def _start(self, start: StartRun) -> None:
        """A new run under the caller's id. One that cannot be built (a W(0) file gone, a
        W(0) the solver refuses) is reported under that id: the window shows the error
        instead of dropping it as a snapshot of some other run."""
        self.run_id = start.run_id
        self.params = start.params
        self._wall_anchor = None
        try:
            if start.script is not None:
                sim = Simulation.from_script(start.script, should_stop=self._stop.is_set)
            else:
                sim = Simulation(start.params, start.w0, defer_ideal=True)
        except ReplayStopped:
            return
        except Exception as exc:
            self.sim = None
            self._fail(error_message(exc, starting=True))
            return
        self.sim = sim
        self.message = ""
        self.state = "running" if self.playing else "paused"
        self._run_seq0 = self._seq  # snapshots after this one are the new run's
        self._publish(force=True)

    def _apply_params(self, params: SimParams) -> None:
        """A live change; one that needs a new run (the simulation's answer: Simulation.apply)
        starts it under the same id."""
        if self.sim is None or not self.sim.apply_live(params):
            self._start(StartRun(params, self.run_id))
            return
        self.params = params  # before judging the end: a later t_end lets a finished run go on
        if self.state == "error":
            self.state = "paused"
        if self.state == "finished" and not self._finished():
            self.state = "running" if self.playing else "paused"
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

    def _single_step(self) -> None:
        """One GD step (gd), or one frame's worth of simulated time (exact)."""
        sim = self.sim
        if sim is None or self.state == "error" or self._finished():
            return
        if sim.method == "gd":
            dt = sim.params.eta
        else:
            dt = (self.speed if self.speed > 0 else default_speed(sim.lam)) / 30.0
        # never past t_end: at a tiny lam one frame's time is astronomically long
        sim.advance(min(sim.t + dt * 1.0000001, self._end_time()), self._stop_nonzero(), 2**62)
        sim.record()
        self._after_progress()
        self._publish(force=True)

    def _stop_nonzero(self) -> int:
        sim = self.sim
        return 1 if (sim is not None and self.stop_at_one and sim.init.nonzero0 > 1) else -1

    def _chunk(self, now: float) -> bool:
        sim = self.sim
        assert sim is not None
        if self.state == "finished" or self.state == "error" or not self.playing:
            self._publish()
            return False
        if sim.ideal_pending and self._seq > self._run_seq0 and self._wants_snapshot():
            # the run's first frame is up: now the idealized bounds (seconds at m = 10^7)
            sim.complete_ideal_bounds()
            self._wall_anchor = None  # the clock restarts after that pause
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
                # ahead of the clock, or its anchor just set (a live change, a resume): nap
                # until the next tick. As "nothing to do" the loop napped 50 ms, as when
                # idle: three frames without news after every change of λ
                self._publish()
                self._caught_up = True
                return True
        else:
            t_target = math.inf
        start = time.perf_counter()
        # rows on the simulated-time grid however far this chunk goes, and now (provisional)
        status = sim.advance_recording(
            min(t_target, self._end_time()), self._stop_nonzero(), self._chunk_work
        )
        elapsed = time.perf_counter() - start
        # behind the wall clock (the work limit stopped the chunk): no nap before the next
        self._caught_up = status != K.REACHED_MAX_STEPS
        # adapt the work per chunk so that one chunk takes about CHUNK_SECONDS
        if status == K.REACHED_MAX_STEPS:
            if elapsed < CHUNK_SECONDS / 2:
                self._chunk_work = min(self._chunk_work * 2, 2**40)
            elif elapsed > CHUNK_SECONDS * 1.5:
                self._chunk_work = max(self._chunk_work // 2, 64)
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
        sim = self.sim
        shows = (self.run_id, self.state, self.message, self.params, sim.t if sim is not None else None)
        if not force and not self._is_news(shows):
            return  # paused or finished: nothing new to paint
        self._last_publish = now
        self._offer(self.make_snapshot(now), shows)

    def _steps_per_second(self, now: float) -> float:
        """Solver steps per wall second over the last second."""
        if self.sim is None:
            return 0.0
        self._rate_window.append((now, self._work_count()))
        while len(self._rate_window) > 2 and now - self._rate_window[0][0] > 1.0:
            self._rate_window.pop(0)
        (t0, s0), (t1, s1) = self._rate_window[0], self._rate_window[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0

    def make_snapshot(self, now: float | None = None) -> Snapshot:
        """A copy of everything the GUI draws (also usable synchronously in tests)."""
        self._seq += 1
        sps = self._steps_per_second(time.perf_counter() if now is None else now)
        if self.state != "running":
            sps = 0.0  # the last snapshot of a pause must not show the rate before it
        return snapshot_of(
            self.sim,
            self.params,
            run_id=self.run_id,
            seq=self._seq,
            state=self.state,
            message=self.message,
            steps_per_second=sps,
        )


_warmed = False


def _run_every_method() -> None:
    w0 = np.array([0.5, -0.3, 0.2, 0.1, 0.05, 0.0])
    for method in METHODS:
        sim = Simulation(SimParams(m=w0.size, lam=0.05, method=method, eta=0.1), w0)
        sim.advance(2.0, -1)
        sim.record()


NOTE_KERNELS = KernelSet(
    name="note",
    what="the note's solvers (exact flow, gradient descent)",
    sources=(Path(K.__file__),),
    compile_all=_run_every_method,
    typical_seconds=20.0,  # a cold compile on 2 busy cores (make bench-warm-up)
)


def warm_up_kernels() -> None:
    """Compile (or load from cache) every kernel on a tiny problem, once per process."""
    global _warmed
    if _warmed:
        return
    NOTE_KERNELS.warm_up()
    _warmed = True
