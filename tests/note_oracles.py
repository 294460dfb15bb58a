"""Slow, independent references for the numerical core.

Nothing here imports sparsity_gui: every function is written from docs/theory.md alone, in plain
numpy/scipy, so that a test comparing the package against it compares two independent
computations. Each reference is slow on purpose (full vectors, tight tolerances).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq
from scipy.stats import halfnorm

REF_RTOL = 1e-13
REF_ATOL = 1e-16


@dataclass
class FlowReference:
    """The flow on |W| (input order), sampled at the requested times."""

    times: np.ndarray  # the requested times
    abs_w: np.ndarray  # abs_w[i] = |W(times[i])|, input order
    death_t: np.ndarray  # per weight (input order): time it reached 0, NaN if never
    death_order: list[int] = field(default_factory=list)  # input indices, in order of death
    # (t, |W| just after the death, input order) at each death event
    event_states: list[tuple[float, np.ndarray]] = field(default_factory=list)

    @property
    def norm1(self) -> np.ndarray:
        return self.abs_w.sum(axis=1)

    @property
    def norm2_sq(self) -> np.ndarray:
        return (self.abs_w**2).sum(axis=1)

    @property
    def nonzero(self) -> np.ndarray:
        return np.count_nonzero(self.abs_w, axis=1)


def reference_flow(
    w0,
    lam_schedule,
    times,
    rtol=REF_RTOL,
    atol=REF_ATOL,
    until_nonzero: int | None = None,
    linear: bool = False,
) -> FlowReference:
    """Integrate d|W_k|/dt = (1 - ||W||^2)|W_k| - lam(t) for the live weights with scipy's
    DOP853 at rtol 1e-13, one terminal event per death (the smallest live weight hitting
    0; exact ties stay bitwise equal and die together).

    lam_schedule: a float (constant lam) or a list of (t_start, lam), t_start ascending
    and the first one 0: lam is piecewise constant. With ``linear``, lam_schedule is a
    list of knots (t, lam) through which lam is piecewise linear (constant before the
    first and after the last), the schedule's definition in docs/theory.md §7. Integration
    restarts at every lam change or knot and at every requested time, so no value comes
    from dense-output interpolation.
    """
    a = np.abs(np.asarray(w0, dtype=np.float64)).copy()
    m = a.shape[0]
    if np.isscalar(lam_schedule):
        lam_schedule = [(0.0, float(lam_schedule))]
    changes = [(float(t), float(v)) for t, v in lam_schedule]
    assert changes[0][0] == 0.0 or linear
    times = np.asarray(times, dtype=np.float64)
    assert np.all(np.diff(times) >= 0) and times[0] >= 0.0
    flow = FlowReference(times=times, abs_w=np.full((times.shape[0], m), np.nan), death_t=np.full(m, np.nan))
    lam_at = _lam_function(changes, linear)
    scale = float(a.max()) if m else 1.0

    # every point where the integration must stop and restart
    stops = sorted(set([float(t) for t in times] + [t for t, _ in changes[0 if linear else 1 :] if t > 0]))
    t = 0.0
    sample_i = 0
    while sample_i < times.shape[0] and times[sample_i] <= 0.0:
        flow.abs_w[sample_i] = a
        sample_i += 1
    done = False
    for t_stop in stops:
        while t < t_stop and not done:
            t, died = _flow_piece(flow, a, t, t_stop, lam_at, linear, (rtol, atol, scale))
            done = died and until_nonzero is not None and np.count_nonzero(a) <= until_nonzero
        if done:
            break
        while sample_i < times.shape[0] and times[sample_i] <= t_stop:
            flow.abs_w[sample_i] = a
            sample_i += 1
    return flow


def _lam_function(changes: list[tuple[float, float]], linear: bool):
    """lam(t): piecewise constant from each (t_start, lam), or with ``linear`` piecewise
    linear through the knots (constant before the first and after the last)."""

    def lam_at(t: float) -> float:
        if linear:  # written from the definition, not from the package's code
            if t <= changes[0][0]:
                return changes[0][1]
            for (t0, v0), (t1, v1) in zip(changes, changes[1:], strict=False):
                if t0 <= t <= t1:
                    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
            return changes[-1][1]
        lam = changes[0][1]
        for t0, v in changes:
            if t >= t0:
                lam = v
        return lam

    return lam_at


def _flow_piece(flow: FlowReference, a: np.ndarray, t: float, t_stop: float, lam_at, linear: bool, tols):
    """The live weights of ``a`` (in place) from t to the next death or to t_stop: (the
    time reached, whether weights died there, recorded in ``flow``)."""
    rtol, atol, scale = tols
    idx = np.flatnonzero(a > 0.0)
    if idx.size == 0:
        return t_stop, False
    lam = lam_at(t)
    if linear:  # lam(t) linear on [t, t_stop]: the largest at one end
        lam = max(lam, lam_at(t_stop))

    def rhs(_t, y, lam=lam):
        s = 1.0 - float(np.dot(y, y))
        return s * y - (lam_at(_t) if linear else lam)

    def hits_zero(_t, y):
        return float(np.min(y))

    hits_zero.terminal = True
    hits_zero.direction = -1
    events = hits_zero if lam > 0.0 else None
    sol = solve_ivp(rhs, (t, t_stop), a[idx], method="DOP853", rtol=rtol, atol=atol, events=events)
    assert sol.success, sol.message
    if events is None or not sol.t_events[0].size:
        a[idx] = sol.y[:, -1]
        return t_stop, False
    t_e = float(sol.t_events[0][0])
    y_e = sol.y_events[0][0].copy()
    # the weight(s) at the bottom die now (ties are bitwise equal)
    dying = y_e <= max(float(np.min(y_e)), 0.0) + 1e-12 * scale
    y_e[dying] = 0.0
    a[idx] = y_e
    for k in idx[dying]:
        flow.death_t[k] = t_e
        flow.death_order.append(int(k))
    flow.event_states.append((t_e, a.copy()))
    return t_e, True


# ----------------------------------------------------------------------------------
# Closed forms and direct formulas of docs/theory.md (§2, §4)


def logistic_norm2(y0: float, t) -> np.ndarray:
    """||W(t)||^2 for lam = 0: dy/dt = 2(1 - y)y, so y = y0 e^{2t} / (1 - y0 + y0 e^{2t})."""
    t = np.asarray(t, dtype=np.float64)
    return y0 / (y0 + (1.0 - y0) * np.exp(-2.0 * t))  # the same, divided by e^{2t}


def last_survivor_limit(lam: float) -> float:
    """The stable root of (1 - w^2) w = lam (the larger one, in [1/sqrt(3), 1])."""
    return brentq(lambda w: (1.0 - w * w) * w - lam, 1.0 / math.sqrt(3.0), 1.0, xtol=1e-15, rtol=1e-15)


def equal_weights_limit(m: int, lam: float) -> float:
    """m equal weights a: da/dt = (1 - m a^2) a - lam; its stable root."""
    a_peak = 1.0 / math.sqrt(3.0 * m)
    return brentq(lambda a: (1.0 - m * a * a) * a - lam, a_peak, 1.0 / math.sqrt(m), xtol=1e-16, rtol=1e-15)


def relvar(x) -> float:
    """Var[X]/E[X]^2 of the entries of x (population variance), by the textbook formula."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean()
    if mean == 0.0:
        return 0.0
    return float(np.mean((x - mean) ** 2) / mean**2)


def relvar_bounds_direct(abs_w0, mp: int) -> tuple[float, float]:
    """lo(m'), hi(m') exactly as docs/theory.md §2 writes them: sort, shift, relvar."""
    u = np.sort(np.abs(np.asarray(abs_w0, dtype=np.float64)))[::-1]
    u_ext = np.append(u, 0.0)  # u_{m+1} = 0
    top = u[:mp]
    lo = relvar(top - u_ext[mp])  # shift by u_{m'+1}
    hi = relvar(top - u_ext[mp - 1])  # shift by u_{m'} (last entry 0)
    return lo, hi


def halfnormal_ideal(m: int) -> np.ndarray:
    """u*_k = the (1 - (k - 1/2)/m) quantile of |Z|, Z standard normal (half-normal)."""
    k = np.arange(1, m + 1, dtype=np.float64)
    return halfnorm.ppf(1.0 - (k - 0.5) / m)


def gd_reference(w0, eta: float, lam: float, n_steps: int):
    """Plain numpy GD on the signed vector in input order:
    W <- W + eta*[(1 - ||W||^2) W - lam*sign(W)], a weight whose step would cross zero
    (or land on it) set to zero. Returns (W after n_steps, death step per weight (0 = never))."""
    w = np.array(w0, dtype=np.float64)
    death = np.zeros(w.shape[0], dtype=np.int64)
    for n in range(1, n_steps + 1):
        s = 1.0 - float(np.sum(w * w))
        new = w + eta * (s * w - lam * np.sign(w))
        crossed = (w != 0.0) & (np.sign(new) != np.sign(w))
        new[crossed] = 0.0
        death[crossed] = n
        w = new
    return w, death


def affine_from_two(u_i: float, u_j: float, a_i: float, a_j: float) -> tuple[float, float]:
    """(B, C) of a_k = B*(u_k - C) through two survivors."""
    b = (a_i - a_j) / (u_i - u_j)
    return b, u_i - a_i / b


THETA_BAND = 1e-5  # how far from θ (relative) a weight must be to count as above or below it


def theta_falls(y, theta, tol=THETA_BAND) -> list[int]:
    """The rows where a tracked weight falls below θ, walked row by row: it was last clearly
    above θ (by more than tol·|θ|) and is now clearly below it, still alive (y > 0). Rows
    where y or θ is not finite are skipped."""
    out, state = [], None
    for i, (v, th) in enumerate(zip(y, theta, strict=True)):
        if not (math.isfinite(v) and math.isfinite(th)):
            continue
        if v > th + tol * abs(th):
            state = "above"
        elif v < th - tol * abs(th):
            if state == "above" and v > 0:
                out.append(i)
            state = "below"
    return out
