"""theta of a run's start, measured on a copy of its solver from t = 0 (Simulation.regime).

An exported run's rows (501 evenly spaced over t ~ 2/lam) can step over the whole of an
initial fall of theta, which lasts t ~ 1 (||W||^2 relaxes at rate ~2). The window's history
is dense there (its log grid); an exact solve sampled from snapshots has theta at each
snapshot, dense where deaths are (from m = PROBE_SNAPSHOTS_M_MIN on that is enough);
otherwise a copy of the solver from t = 0 measures it at PROBE_PER_DECADE instants a decade
(at most PROBE_DECADES decades), where that is cheap: the exact copy redoes the deaths of the
start (1 s at m = 10^6, 14 s at 10^7), the gradient-descent one holds m weights and steps them
all (0.4 s to t ~ 1.5 at m = 10^6, eta = 0.05).
"""

from __future__ import annotations

import math

import numpy as np

from sparsity_gui.core.note.metrics import theta_rise_condition
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.schedule import lowers_lam
from sparsity_gui.core.note.solvers import ExactSolver, GDSolver, InitialState, Solver, lam_knots_of

PROBE_PER_DECADE = 40
PROBE_DECADES = 12
PROBE_SNAPSHOTS_M_MIN = 100_000
PROBE_EXACT_M_MAX = 1_000_000
PROBE_GD_M_MAX = 10_000_000


def theta_at_start(
    init: InitialState, params: SimParams, start: float, have_snapshots: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(t, theta) of the run from t = 0 (``params`` at t = 0), on a copy of its solver (the
    same trajectory: the solvers are deterministic), log-spaced from ``start`` until the
    feature push on ||W||^2 is at least the regularization push: under the flow theta cannot
    fall after that while lam stays (metrics.theta_rise_condition), so a fall at the start,
    however short, is measured whatever rows the run records. Empty where the run's own
    snapshots already have it, or where a copy would cost too much."""
    empty = (np.zeros(0), np.zeros(0))
    p, m = params, init.m
    lam0 = lam_knots_of(p.lam_schedule) if p.lam_schedule else p.lam
    # the sufficient condition that θ cannot fall from then on needs λ never lowered
    # from then on: past a lowering schedule's last knot
    lowered_until = p.lam_schedule[-1][0] if lowers_lam(p.lam_schedule) else -math.inf
    if p.method == "exact":
        dense = have_snapshots and m >= PROBE_SNAPSHOTS_M_MIN
        probe: Solver | None = ExactSolver(init, lam0) if m <= PROBE_EXACT_M_MAX and not dense else None
    else:
        probe = GDSolver(init, lam0, p.eta) if m <= PROBE_GD_M_MAX else None
    if probe is None:
        return empty
    mo = probe.moments()
    t, theta = [mo.t], [mo.theta]
    steps = np.arange(1, PROBE_PER_DECADE * PROBE_DECADES + 1) / PROBE_PER_DECADE
    for at in start * 10.0**steps:
        rises = mo.t >= lowered_until and theta_rise_condition(mo.norm1, mo.norm2_sq, mo.lam)
        if rises or mo.nonzero == 0 or probe.diverged:
            break
        probe.advance_to(float(at))
        mo = probe.moments()
        t.append(mo.t)
        theta.append(mo.theta)
    return np.array(t), np.array(theta)
