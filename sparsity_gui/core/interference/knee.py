"""Where a coefficient stops mattering: the knee of a readout against it (issue 51).

Under Adam a JumpReLU threshold moves about lr per step whatever its gradient's size, so
past some L0 coefficient C a larger C no longer changes what a run ends at. The knee makes
"no longer changes" a number: the smallest C of the grid from which on every step to the
next C changes the readout (the median over seeds of the final L0 per input) by less than
KNEE_TOLERANCE of its value per decade of C. A grid whose last step still changes it more
has no knee (None): C still mattered at its largest value. Qt-free, matplotlib-free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

KNEE_TOLERANCE = 0.1  # a relative change per decade of C below which C has stopped mattering
KNEE_DEFINITION = (
    "the knee: the smallest C from which on each step to the next C of the grid changes the "
    f"median final L0 per input by less than {KNEE_TOLERANCE:.0%} of its value per decade of C "
    "(|ΔL0| / L0 / Δlog10 C); none when the grid's last step still changes it more"
)


def change_per_decade(c: Sequence[float], values: Sequence[float]) -> np.ndarray:
    """Between each C and the next (``c`` increasing, > 0), the relative change of the
    readout per decade of C: |v[j+1] - v[j]| / |v[j]| / log10(c[j+1] / c[j]); 0 from 0 to
    0, inf from 0 to anything else; NaN where either value is missing."""
    x, v = np.asarray(c, float), np.asarray(values, float)
    if x.ndim != 1 or x.shape != v.shape:
        raise ValueError(f"c and values must be 1-d and of one length, got {x.shape} and {v.shape}")
    if x.size and (not np.all(x > 0) or not np.all(np.diff(x) > 0)):
        raise ValueError("c must be > 0 and increasing")
    out = np.full(max(x.size - 1, 0), np.nan)
    for j in range(x.size - 1):
        a, b = float(v[j]), float(v[j + 1])
        if not (math.isfinite(a) and math.isfinite(b)):
            continue
        step = abs(b - a)
        if a == 0.0:
            out[j] = 0.0 if step == 0.0 else math.inf
        else:
            out[j] = step / abs(a) / math.log10(x[j + 1] / x[j])
    return out


def knee(c: Sequence[float], values: Sequence[float], tolerance: float = KNEE_TOLERANCE) -> float | None:
    """KNEE_DEFINITION's C for the readout ``values`` at the coefficients ``c``
    (increasing): the smallest c[j] (not the last) such that every change per decade from
    c[j] on is below ``tolerance``; None when there is none (a missing value after it
    counts as a change)."""
    rates = change_per_decade(c, values)
    found = None
    for j in range(rates.size - 1, -1, -1):
        if not rates[j] < tolerance:  # NaN too
            break
        found = float(np.asarray(c, float)[j])
    return found
