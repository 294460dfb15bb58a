"""The headless run: sample a Simulation at K evenly spaced times and write its files."""
from __future__ import annotations

import math
import platform
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .. import __version__
from .errors import InputError
from .files import ResultDir, deaths_csv, json_text, timeseries_csv, weights_csv
from .params import SimParams
from .simulation import Simulation, fit_decay_constant


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


def simulate_samples(params: SimParams, w0: np.ndarray | None, samples: int,
                     progress_cls=None) -> SampledRun:
    sim = Simulation(params, w0)
    t_one = sim.time_to_nonzero(1)
    if params.t_end is not None:
        t_end = params.t_end
    elif math.isinf(t_one):
        raise InputError("t_end", "with lam = 0 no weight ever dies, so there is no default end "
                         "time; give --t-end")
    else:
        t_end = 1.1 * t_one if t_one > 0 else 10.0
    times = np.linspace(0.0, t_end, samples)
    rows = np.empty((samples, sim.history._data.shape[1]))
    progress = progress_cls(samples, params.method) if progress_cls else None
    start = time.perf_counter()
    try:
        for i, t in enumerate(times):
            sim.advance(t)
            rows[i] = sim.metrics_row()
            if progress and i % 4 == 0:
                progress.update(i + 1)
    finally:
        if progress:
            progress.close()
    wall = time.perf_counter() - start
    if sim.solver.diverged:
        raise InputError("eta", sim.solver.diverged)
    return SampledRun(sim=sim, rows=rows, t_end=float(t_end), t_one=float(t_one),
                      wall_seconds=wall, fitted_c=fit_decay_constant(rows),
                      nonzero_final=sim.moments().nonzero)


def run_metadata(run: SampledRun, params: SimParams, command_line: str) -> dict:
    import numba
    import scipy

    return {
        "program": "sparsity-gui",
        "version": __version__,
        "command_line": command_line,
        "parameters": {**params.as_dict(), "m": run.sim.m},
        "t_end": run.t_end,
        "t_one_weight_left": run.t_one,
        "samples": int(run.rows.shape[0]),
        "fitted_c": run.fitted_c,
        "nonzero_final": run.nonzero_final,
        "solver_wall_seconds": run.wall_seconds,
        "solver_steps": int(getattr(run.sim.solver, "steps", 0)),
        "lam_changes": [[c.t, c.lam] for c in run.sim.lam_changes],
        "platform": {"python": sys.version.split()[0], "numpy": np.__version__,
                     "numba": numba.__version__, "scipy": scipy.__version__,
                     "machine": platform.machine()},
    }


def write_results(out: ResultDir, run: SampledRun, params: SimParams, include_weights: bool,
                  command_line: str) -> None:
    sim = run.sim
    out.write_text("timeseries.csv", timeseries_csv(run.rows))
    if include_weights:
        out.write_text("weights.csv", weights_csv(sim.init.w0, sim.solver.weights()))
    out.write_text("deaths.csv", deaths_csv(np.abs(sim.init.w0), sim.solver.death_times()))
    out.write_text("run.json", json_text(run_metadata(run, params, command_line)))
