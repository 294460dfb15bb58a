"""The headless run: sample a Simulation at K evenly spaced times (its files are written
by core.note.files).

`replay_script` is the general case the GUI's exports and sessions use: the same
sampling with a schedule of live changes (lam, eta, method) replayed at their exact times,
so that the time series is a deterministic function of the script."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.metrics import fit_decay_constant
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import RunScript, Simulation


@dataclass
class SampledRun:
    sim: Simulation
    rows: np.ndarray
    t_end: float
    t_one: float
    wall_seconds: float
    fitted_c: float
    nonzero_final: int
    extra: dict = field(default_factory=dict)


def sample_times_of(
    sim: Simulation, times: np.ndarray, changes=(), progress=None
) -> tuple[np.ndarray, float]:
    """Replay `changes` on `sim` and take a row at each of `times` (Simulation.replay),
    with an optional progress bar. Returns (rows, solver wall seconds)."""

    def on_sample(i: int) -> None:
        if progress is not None and i % 4 == 0:
            progress.update(i + 1)

    start = time.perf_counter()
    try:
        rows = sim.replay(changes, times, on_sample=on_sample)
    finally:
        if progress is not None:
            progress.close()
    return rows, time.perf_counter() - start


def simulate_samples(params: SimParams, w0: np.ndarray | None, samples: int, progress_cls=None) -> SampledRun:
    """The `run` command: K rows evenly spaced from 0 to t_end, no live changes."""
    sim = Simulation(params, w0)
    # the default end needs a separate exact solve to one weight; with --t-end the run's
    # own time of reaching one weight is reported instead (NaN if it does not by t_end)
    t_one = math.nan if params.t_end is not None else sim.time_to_nonzero(1)
    if params.t_end is not None:
        t_end = params.t_end
    elif math.isinf(t_one):
        why = (
            "with lam = 0 no weight ever dies"
            if params.lam == 0
            else "the largest weights of W(0) are tied and settle together, so one weight is never left"
        )
        raise InputError("t_end", f"{why}; there is no default end time, give --t-end")
    else:
        t_end = 1.1 * t_one if t_one > 0 else 10.0
    times = np.linspace(0.0, t_end, samples)
    progress = progress_cls(samples, params.method) if progress_cls else None
    rows, wall = sample_times_of(sim, times, (), progress)
    if sim.solver.diverged:
        raise InputError("eta", sim.solver.diverged)
    if params.t_end is not None:
        t_one = one_left_time(sim)
    return SampledRun(
        sim=sim,
        rows=rows,
        t_end=float(t_end),
        t_one=float(t_one),
        wall_seconds=wall,
        fitted_c=fit_decay_constant(rows),
        nonzero_final=sim.moments().nonzero,
    )


def one_left_time(sim: Simulation) -> float:
    """When m' reached 1 (the last death but one), or NaN if it has not yet."""
    if sim.init.nonzero0 <= 1:
        return 0.0
    if sim.moments().nonzero > 1:
        return math.nan
    death_t = sim.solver.death_t
    finite = death_t[np.isfinite(death_t)]
    return float(finite.max()) if finite.size else math.nan


def replay_script(script: RunScript, progress=None) -> SampledRun:
    """The run a RunScript describes (a saved session, or the GUI's run up to now), sampled
    at script.sample_times(): the exported time series of the GUI. Unlike the `run`
    command, a diverged gradient descent is reported in `extra`, not raised."""
    sim = Simulation(script.params, script.w0)
    rows, wall = sample_times_of(sim, script.sample_times(), script.changes, progress)
    extra = {"t_session": float(script.t)}
    if sim.solver.diverged:
        extra["diverged"] = sim.solver.diverged
    return SampledRun(
        sim=sim,
        rows=rows,
        t_end=float(script.t),
        t_one=one_left_time(sim),
        wall_seconds=wall,
        fitted_c=fit_decay_constant(rows),
        nonzero_final=sim.moments().nonzero,
        extra=extra,
    )
