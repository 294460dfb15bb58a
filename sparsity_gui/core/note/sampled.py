"""The headless run: sample a Simulation at K evenly spaced times (its files are written
by core.note.files).

`replay_script` is the general case the GUI's exports and sessions use: the same
sampling with a schedule of live changes (lam, eta, method) replayed at their exact times,
so that the time series is a deterministic function of the script."""

from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass, field

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note import kernels as K
from sparsity_gui.core.note.changes import RunScript
from sparsity_gui.core.note.metrics import DecayFit
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import ReplayStopped, Simulation
from sparsity_gui.core.note.solvers import ExactSolver


@dataclass
class SampledRun:
    sim: Simulation
    rows: np.ndarray
    t_end: float
    t_one: float
    wall_seconds: float
    fit: DecayFit  # fitted_c, fitted_c_bulk, fit_max_rel_dev of the rows
    nonzero_final: int
    extra: dict = field(default_factory=dict)

    @classmethod
    def of(cls, sim: Simulation, rows, t_end: float, t_one: float, wall: float, extra=None) -> SampledRun:
        """The run `sim` ended with, its rows sampled: the decay law fitted to them."""
        return cls(
            sim=sim,
            rows=rows,
            t_end=float(t_end),
            t_one=float(t_one),
            wall_seconds=wall,
            fit=sim.decay_fit(rows, exported=True),
            nonzero_final=sim.moments().nonzero,
            extra={} if extra is None else extra,
        )

    @property
    def fitted_c(self) -> float:
        return self.fit.c

    @property
    def regime(self) -> dict:
        """Whether the note's premise holds (metrics.regime_of), at t = 0 and each change of
        lam, theta measured on the rows (and the run's start)."""
        return self.sim.regime(self.rows, probe=True)


def sample_times_of(
    sim: Simulation, times: np.ndarray, changes=(), progress=None, should_stop=None
) -> tuple[np.ndarray, float]:
    """Replay `changes` on `sim` and take a row at each of `times` (Simulation.replay),
    with an optional progress bar; ``should_stop()`` is asked between chunks of the solve
    (ReplayStopped). Returns (rows, solver wall seconds)."""

    def on_sample(i: int) -> None:
        if progress is not None and i % 4 == 0:
            progress.update(i + 1)

    start = time.perf_counter()
    times = np.asarray(times, dtype=np.float64)
    if _snapshot_sampling_applies(sim, times, changes):
        # one exact solve to the end, each row from the last snapshot before it: the same
        # rows as the `run` command's single solve (which first solves to one weight left)
        assert isinstance(sim.solver, ExactSolver)  # snapshot sampling is the exact flow's
        snap_t, snaps = _solve_with_snapshots(
            sim.solver, float(times[-1]), -1, _snapshot_gap(sim, times.shape[0]), should_stop
        )
        sim.note_snapshots(snap_t, snaps)
        rows = _rows_from_snapshots(sim, snap_t, snaps, times, progress, should_stop)
        return rows, time.perf_counter() - start
    try:
        rows = sim.replay(changes, times, on_sample=on_sample, should_stop=should_stop)
    finally:
        if progress is not None:
            progress.close()
    return rows, time.perf_counter() - start


def simulate_samples(
    params: SimParams, w0: np.ndarray | None, samples: int, progress_cls=None, should_stop=None
) -> SampledRun:
    """The `run` command: K rows evenly spaced from 0 to t_end, no live changes.
    ``should_stop()`` (the scaling grid's Cancel, a signal to `run`) is asked between pieces
    of the solve, exact or gradient descent, and raises ReplayStopped when true; it never
    changes the result."""
    # the idealized W(0) (1.3 s at m = 10^7) is derived while the exact solve runs
    sim = Simulation(params, w0, defer_ideal=True)
    if params.t_end is None and _solves_once(sim):
        progress = progress_cls(samples, params.method) if progress_cls else None
        sim.init.derive_in_background()  # the solve needs neither the order nor the ideal W(0)
        try:
            t_one, t_end, rows, wall = _sample_exact_once(sim, samples, progress, should_stop)
        finally:
            sim.init.finish_deriving()  # no thread outlives the call, even a cancelled one
        return SampledRun.of(sim, rows, t_end, t_one, wall)
    sim.complete_ideal_bounds()
    # otherwise the default end needs a separate exact solve to one weight; with --t-end the
    # run's own time of reaching one weight is reported instead (NaN if it does not by t_end)
    t_one = math.nan if params.t_end is not None else sim.time_to_nonzero(1, should_stop)
    if params.t_end is not None:
        t_end = params.t_end
    elif math.isinf(t_one):
        why = (
            (
                "the λ schedule ends at 0, after which no weight dies"
                if params.lam_schedule
                else "with lam = 0 no weight ever dies"
            )
            if params.lam == 0
            else "the largest weights of W(0) are tied and settle together, so one weight is never left"
        )
        raise InputError("t_end", f"{why}; there is no default end time, give --t-end")
    else:
        t_end = 1.1 * t_one if t_one > 0 else 10.0
    times = np.linspace(0.0, t_end, samples)
    progress = progress_cls(samples, params.method) if progress_cls else None
    rows, wall = sample_times_of(sim, times, (), progress, should_stop)
    if sim.solver.diverged:
        raise InputError("eta", sim.solver.diverged)
    if params.t_end is not None:
        t_one = one_left_time(sim)
    return SampledRun.of(sim, rows, t_end, t_one, wall)


SNAPSHOTS_PER_SAMPLE = 4  # snapshots of the exact state per sample of the time series


def _solves_once(sim: Simulation) -> bool:
    """The plain case of the default end, which one exact solve serves: the exact method,
    lam > 0, more than one weight alive, the largest weight alone (no tied top group)."""
    solver = sim.solver
    u = sim.init.u
    return (
        isinstance(solver, ExactSolver)
        and sim.params.lam > 0.0  # (under a schedule, the λ it ends at)
        and sim.init.nonzero0 > 1
        and u.shape[0] > 1
        and u[0] != u[1]
    )


def _snapshot_gap(sim: Simulation, samples: int) -> int:
    return max(64, sim.init.m // (SNAPSHOTS_PER_SAMPLE * samples))


def _solve_with_snapshots(
    solver: ExactSolver, t_target: float, stop_nonzero: int, gap: int, should_stop=None
):
    """Advance the exact solver like one advance_to(t_target, stop_nonzero), copying its
    whole state (the small fs/ist arrays: the sorted u and prefix sums never change) every
    `gap` steps. Stopping between steps changes nothing: the kernel's next step depends only
    on that state. Returns (snapshot times, snapshots)."""
    snap_t = [solver.t]
    snaps = [(solver.fs.copy(), solver.ist.copy())]
    while True:
        if should_stop is not None and should_stop():
            raise ReplayStopped
        code = solver.advance_to(t_target, stop_nonzero=stop_nonzero, max_work=gap)
        snap_t.append(solver.t)
        snaps.append((solver.fs.copy(), solver.ist.copy()))
        if code != K.REACHED_MAX_STEPS:
            return snap_t, snaps


def _rows_from_snapshots(
    sim: Simulation, snap_t, snaps, times: np.ndarray, progress=None, should_stop=None
) -> np.ndarray:
    """A row at each of `times` (ascending): restart from the last snapshot at or before
    t_i and land on t_i. Every death up to t_i is the one of the snapshotted solve, bit for
    bit, and a sample costs at most one snapshot gap; the solver ends at times[-1]."""
    solver = sim.solver
    assert isinstance(solver, ExactSolver)  # snapshots are the exact solver's state
    rows = np.empty((times.shape[0], sim.history._data.shape[1]))
    try:
        for i, t in enumerate(times):
            if should_stop is not None and i % 16 == 0 and should_stop():
                raise ReplayStopped
            j = bisect.bisect_right(snap_t, t) - 1
            solver.fs[:] = snaps[j][0]
            solver.ist[:] = snaps[j][1]
            solver.advance_to(float(t))
            rows[i] = sim.metrics_row()
            if progress is not None and i % 4 == 0:
                progress.update(i + 1)
    finally:
        if progress is not None:
            progress.close()
    return rows


def _snapshot_sampling_applies(sim: Simulation, times: np.ndarray, changes) -> bool:
    return (
        not changes
        and isinstance(sim.solver, ExactSolver)
        and sim.solver.t == 0.0
        and times.shape[0] > 0
        and times[0] >= 0.0
        and bool(np.all(np.diff(times) >= 0.0))
        and math.isfinite(times[-1])
    )


def _sample_exact_once(sim: Simulation, samples: int, progress=None, should_stop=None):
    """The default-end run from one exact solve: solve to one weight left (t_one) with
    snapshots, then sample t_i = i*t_end/(K-1) from them (the same rows as sampling a
    solve to t_end: sample_times_of). Returns (t_one, t_end, rows, solver seconds)."""
    start = time.perf_counter()
    gap = _snapshot_gap(sim, samples)
    assert isinstance(sim.solver, ExactSolver)  # the default end is found by the exact flow
    snap_t, snaps = _solve_with_snapshots(sim.solver, math.inf, 1, gap, should_stop)
    sim.note_snapshots(snap_t, snaps)
    sim.complete_ideal_bounds()  # before the rows, which carry the idealized bounds
    t_one = sim.solver.t
    t_end = 1.1 * t_one
    times = np.linspace(0.0, t_end, samples)
    rows = _rows_from_snapshots(sim, snap_t, snaps, times, progress, should_stop)
    return t_one, t_end, rows, time.perf_counter() - start


def one_left_time(sim: Simulation) -> float:
    """When m' reached 1 (the last death but one), or NaN if it has not yet."""
    if sim.init.nonzero0 <= 1:
        return 0.0
    if sim.moments().nonzero > 1:
        return math.nan
    death_t = sim.solver.death_t
    finite = death_t[np.isfinite(death_t)]
    return float(finite.max()) if finite.size else math.nan


def death_count_time(sim: Simulation, count: int) -> float:
    """When the ``count``-th weight died, from the solver's exact death times (never from
    sampled rows, which only bound it from above); NaN if fewer have died."""
    death_t = sim.solver.death_t
    finite = np.sort(death_t[np.isfinite(death_t)])
    return float(finite[count - 1]) if 1 <= count <= finite.size else math.nan


def replay_script(script: RunScript, progress=None) -> SampledRun:
    """The run a RunScript describes (a saved session, or the GUI's run up to now), sampled
    at script.sample_times(): the exported time series of the GUI. Unlike the `run`
    command, a diverged gradient descent is reported in `extra`, not raised."""
    sim = Simulation(script.params, script.w0)
    rows, wall = sample_times_of(sim, script.sample_times(), script.changes, progress)
    extra: dict[str, float | str] = {"t_session": float(script.t)}
    if sim.solver.diverged:
        extra["diverged"] = sim.solver.diverged
    return SampledRun.of(sim, rows, script.t, one_left_time(sim), wall, extra)
