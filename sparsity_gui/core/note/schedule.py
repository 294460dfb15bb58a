"""λ(t) as a schedule: piecewise linear through knots ``t:value`` (constant before the first
knot and after the last), as `run --lam-schedule "0:0,200:1e-3,3000:5e-4"` and its
shorthand `--lam-warmup T` (λ from 0 up to --lam over [0, T]) give it. The exact flow and
gradient descent both follow it (core/note/kernels.py); Λ(t) = ∫₀ᵗ λ is what the decay law
w(t) = w(0) + c·Λ(t) is fitted on. Qt-free, numpy-free."""

from __future__ import annotations

import math
from typing import Any

from sparsity_gui.core.knots import MAX_KNOTS, Knots, knots_text
from sparsity_gui.core.knots import check_knots as _check_knots
from sparsity_gui.core.knots import parse_knots as _parse_knots

FIELD = "lam_schedule"

__all__ = ["MAX_KNOTS", "Knots", "check_knots", "knots_text", "parse_knots", "warmup_knots", "warmup_time"]


def check_knots(knots: Any, lam_max: float, field: str = FIELD) -> Knots:
    """``knots`` (pairs (t, λ), or their text) as Knots, or InputError: times finite, from
    0, strictly increasing; each λ from 0 to ``lam_max``."""
    return _check_knots(knots, lam_max, field, value_name="λ", time_name="t")


def parse_knots(text: str, field: str = FIELD) -> Knots:
    """'0:0,200:1e-3' as ((0, 0), (200, 1e-3)) (unchecked: see check_knots)."""
    return _parse_knots(text, field)


def warmup_knots(t_warmup: float, lam: float) -> Knots:
    """λ rising linearly from 0 at t = 0 to ``lam`` at ``t_warmup`` > 0, then constant.
    ``t_warmup`` is checked by its setting's row (core/note/settings.py: T >= 0, 0 for none),
    which every front end's warm-up goes through before it is made knots here."""
    return ((0.0, 0.0), (float(t_warmup), float(lam)))


def warmup_time(knots: Knots, lam: float) -> float | None:
    """T when ``knots`` are warmup_knots(T, lam), else None."""
    if len(knots) == 2 and knots[0] == (0.0, 0.0) and knots[1][0] > 0 and knots[1][1] == lam:
        return knots[1][0]
    return None


def lam_at(knots: Knots, t: float) -> float:
    """λ(t): the value after a knot's instant at the knot itself."""
    if t < knots[0][0]:
        return knots[0][1]
    for (t0, v0), (t1, v1) in zip(knots, knots[1:], strict=False):
        if t0 <= t < t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return knots[-1][1]


def lam_integral(knots: Knots, t_from: float, t_to: float) -> float:
    """∫ λ over [t_from, t_to] (t_from <= t_to), exactly for the pieces (trapezoids)."""
    if not t_to > t_from:
        return 0.0
    edges = [t_from, *(t for t, _ in knots if t_from < t < t_to), t_to]
    total = 0.0
    for a, b in zip(edges, edges[1:], strict=False):
        if math.isinf(b):
            return math.inf if lam_at(knots, a) > 0.0 else total
        total += (b - a) * 0.5 * (lam_at(knots, a) + _lam_before(knots, b))
    return total


def _lam_before(knots: Knots, t: float) -> float:
    """λ just before t (the left limit: a piece's end value)."""
    for (t0, v0), (t1, v1) in zip(knots, knots[1:], strict=False):
        if t0 < t <= t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return knots[0][1] if t <= knots[0][0] else knots[-1][1]


def lowers_lam(knots: Knots) -> bool:
    """Whether λ decreases anywhere on the schedule (then θ may fall: the note's premise
    that θ rises needs λ never lowered)."""
    return any(v1 < v0 for (_t0, v0), (_t1, v1) in zip(knots, knots[1:], strict=False))


def lam_varied(t, lam_t) -> bool:
    """Whether λ changed over the recorded times (a schedule or a live change): Λ(t) = ∫λ
    (``lam_t``) is then not λ·t, and the decay law is written with Λ(t). ``t`` and
    ``lam_t``: numpy arrays, compared element by element in one pass (a Python loop over the
    rows took 2 ms of every live frame at 400 rows)."""
    n = min(len(t), len(lam_t))
    if n < 2 or not t[n - 1] > 0:
        return False
    slope = lam_t[n - 1] / t[n - 1]
    off = abs(lam_t[:n] - slope * t[:n]) > 1e-9 * max(abs(lam_t[n - 1]), 1e-300)
    return bool(off.any())
