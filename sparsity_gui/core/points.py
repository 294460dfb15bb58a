"""A drawn series' points, shared by the live panels (plots/) and the figures (figures/):
only the finite rows (only y > 0 for a log axis), and a curve broken where its quantity
jumps. Numpy only: the script beside an exported figure carries these functions' source."""

from __future__ import annotations

import numpy as np


def finite_xy(x, y, positive=False):
    """Rows where x and y are finite (and y > 0 for a log axis), as contiguous arrays."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    if positive:
        keep &= y > 0
    return np.ascontiguousarray(x[keep]), np.ascontiguousarray(y[keep])


def broken_xy(x, y, steps, positive=False):
    """finite_xy's rows with a NaN put in where `steps` (λ) jumps, so a value that jumps
    there (θ = λ/(1-‖W‖²)) is not joined by a steep segment, which reads as a spike. A
    jump: λ changes between two rows of one instant (a change's instant is sampled twice),
    or between two stretches where it is constant. λ that changes on every row (a
    schedule's ramp) is continuous: not cut."""
    x, y, steps = (np.asarray(a, float) for a in (x, y, steps))
    keep = np.isfinite(x) & np.isfinite(y)
    if positive:
        keep &= y > 0
    x, y, steps = x[keep], y[keep], steps[keep]
    changed = steps[1:] != steps[:-1]  # between rows i and i + 1
    flat_before = np.concatenate([[True], ~changed[:-1]]) if changed.size else changed
    flat_after = np.concatenate([~changed[1:], [True]]) if changed.size else changed
    cuts = np.flatnonzero(changed & ((x[1:] == x[:-1]) | (flat_before & flat_after))) + 1
    return np.insert(x, cuts, np.nan), np.insert(y, cuts, np.nan)


def ramp_settled_t(t, strength, share=0.5) -> float:
    """Where a run's strength (the note's λ in force at each row) first reached ``share`` of
    its largest value: t[0] for a constant one. The balance ratio, which divides by λ‖W‖₁,
    is huge while a ramp from 0 is low (up to 200 under a warm-up): its axis range counts
    the rows from here on (and from t >= 1), the live panel's, each pinned run's and the
    exported figure's alike (self-contained: a figure's script carries it)."""
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(strength, dtype=np.float64)
    if not t.size:
        return 0.0
    top = np.nanmax(v) if np.isfinite(v).any() else 0.0
    if not top > 0.0:
        return float(t[0])
    return float(t[int(np.argmax(v >= share * top))])
