"""A row of a training run against the note's flow: the exact solution from the first
snapshot, at the snapshots' times. For plain SGD on the paper's loss (one feature alone)
the flow is the continuum limit of the steps, with lam = l1/4 and t = 4 lr (step - step0),
so the flow's error is O(lr)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import Simulation


def flow_at(w0: np.ndarray, lam: float, times: np.ndarray) -> Iterator[np.ndarray]:
    """The signed weights of the note's exact flow from ``w0`` at each of ``times``
    (increasing, from 0), one vector at a time."""
    w0 = np.asarray(w0, dtype=np.float64)
    sim = Simulation(SimParams(m=int(w0.size), lam=float(lam), method="exact"), w0=w0, record=False)
    for t in times:
        sim.advance(float(t))
        yield sim.solver.weights()


# the fitted time scale: the flow's |W|_1 sampled at FIT_PER_DECADE times a decade from
# FIT_T_FIRST on, until it settles (no weight or one left, |W|_1 still to FIT_SETTLED over
# a decade) or FIT_T_LAST; the scale searched on that grid, then refined between its
# neighbours by golden section (on the curve interpolated linearly in t)
FIT_PER_DECADE = 200
FIT_T_FIRST = 1e-6
FIT_T_LAST = 1e7
FIT_SETTLED = 1e-10


def flow_norm1_curve(w0: np.ndarray, lam: float, should_stop=None) -> tuple[np.ndarray, np.ndarray]:
    """(t, |W|_1) of the note's exact flow from ``w0``: t = 0, then FIT_PER_DECADE times a
    decade from FIT_T_FIRST until the flow settles (or FIT_T_LAST)."""
    w0 = np.asarray(w0, dtype=np.float64)
    sim = Simulation(SimParams(m=int(w0.size), lam=float(lam), method="exact"), w0=w0, record=False)
    times = [0.0]
    norms = [float(np.abs(w0).sum())]
    ratio = 10.0 ** (1.0 / FIT_PER_DECADE)
    t = FIT_T_FIRST
    while t <= FIT_T_LAST * (1 + 1e-12):
        if should_stop is not None and should_stop():
            raise KeyboardInterrupt
        sim.advance(t)
        w = sim.solver.weights()
        times.append(t)
        norms.append(float(np.abs(w).sum()))
        alive = int(np.count_nonzero(w))
        if alive == 0:
            break
        if alive == 1 and len(norms) > FIT_PER_DECADE:
            before = norms[-1 - FIT_PER_DECADE]
            if abs(norms[-1] - before) <= FIT_SETTLED * abs(norms[-1]):
                break
        t *= ratio
    return np.array(times), np.array(norms)


def _misfit(curve_t, curve_n1, scale: float, offsets: np.ndarray, norm1: np.ndarray) -> float:
    """Sum of squared relative differences of |W|_1: the flow at t = scale * offset
    (settled past the curve's end) against the snapshots'."""
    pred = np.interp(scale * offsets, curve_t, curve_n1)
    return float(np.sum(((pred - norm1) / norm1) ** 2))


def fit_time_per_step(
    w0: np.ndarray, lam: float, offsets: np.ndarray, norm1: np.ndarray, should_stop=None
) -> float:
    """The time per step tau for which the note's flow from ``w0`` at t = tau * offset best
    fits the snapshots' |W|_1 (``norm1`` at ``offsets``, steps after the first snapshot):
    least squares of the relative differences. FITTED, not predicted: under Adam no time
    maps steps to the flow. Raises InputError when nothing inside the times searched fits
    better than its edges (the snapshots do not move as the flow does)."""
    from sparsity_gui.core.errors import InputError

    offsets = np.asarray(offsets, dtype=np.float64)
    norm1 = np.asarray(norm1, dtype=np.float64)
    keep = (offsets > 0) & np.isfinite(norm1) & (norm1 > 0)
    if not keep.any():
        raise InputError("fit-time-scale", "no snapshot after the first with |W|_1 > 0: nothing to fit")
    offsets, norm1 = offsets[keep], norm1[keep]
    curve_t, curve_n1 = flow_norm1_curve(w0, lam, should_stop)
    t_end = curve_t[-1]
    settled = t_end < FIT_T_LAST
    # the scales that put the last snapshot inside the curve, up to: every snapshot past a
    # settled flow's end (its value from there on), or the last at an unsettled curve's end
    lo = FIT_T_FIRST / offsets.max()
    hi = 10.0 * t_end / offsets.min() if settled else t_end / offsets.max()
    scales = np.geomspace(lo, hi, max(int(np.log10(hi / lo) * FIT_PER_DECADE), 3))
    errors = np.array([_misfit(curve_t, curve_n1, s, offsets, norm1) for s in scales])
    best = int(np.argmin(errors))
    if best in (0, len(scales) - 1) or not np.isfinite(errors[best]):
        raise InputError(
            "fit-time-scale",
            f"no time scale fits the snapshots' |W|_1: the best of t per step from {lo:.3g} to "
            f"{hi:.3g} is at an edge (do the snapshots move as the note's flow does?)",
        )
    # golden section between the neighbours, in log scale
    a, b = np.log(scales[best - 1]), np.log(scales[best + 1])
    g = (np.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc = _misfit(curve_t, curve_n1, np.exp(c), offsets, norm1)
    fd = _misfit(curve_t, curve_n1, np.exp(d), offsets, norm1)
    for _ in range(60):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = _misfit(curve_t, curve_n1, np.exp(c), offsets, norm1)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = _misfit(curve_t, curve_n1, np.exp(d), offsets, norm1)
        if b - a < 1e-12:
            break
    return float(np.exp((a + b) / 2.0))
