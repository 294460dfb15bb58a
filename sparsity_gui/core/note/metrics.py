"""What every solver reports about its current instant (`Moments`), the recorded columns
(`COLUMNS`), and the quantities derived from them: the sparsity force, the fitted decay
constant c and the last weight's fixed point (docs/theory.md §1, §4)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Columns of the time series, in the order of the `run` command's timeseries.csv.
# The first ten are fixed by the spec; the rest add what the panels need.
COLUMNS = (
    "t",
    "norm2_sq",
    "norm1",
    "nonzero",
    "theta",
    "feature_push",
    "reg_push",
    "rel_var",
    "rel_var_lo",
    "rel_var_hi",
    "rel_var_ideal_lo",
    "rel_var_ideal_hi",
    "lam",
    "s",
    "w",
    "lam_t",
)
COL = {name: i for i, name in enumerate(COLUMNS)}
# Rows of an exported time series, evenly spaced in t; the window fits c to its history
# at the same instants, so the c on screen is the c exported.
DEFAULT_SAMPLES = 501


@dataclass(frozen=True)
class Moments:
    """The three sums every metric is built from, at time t."""

    t: float
    lam: float
    nonzero: int
    norm1: float
    norm2_sq: float

    @property
    def s(self) -> float:
        """1 - ||W||^2: strength of the feature-benefit push."""
        return 1.0 - self.norm2_sq

    @property
    def theta(self) -> float:
        """lam / s, or +inf when feature benefit no longer pushes up."""
        s = self.s
        return self.lam / s if s > 0.0 else math.inf

    @property
    def rel_var(self) -> float:
        """Var[X]/E[X]^2 for X a uniformly drawn nonzero |W_k|."""
        if self.nonzero == 0:
            return math.nan
        if self.nonzero == 1 or self.norm1 <= 0.0:
            return 0.0
        return max(self.nonzero * (self.norm2_sq / self.norm1) / self.norm1 - 1.0, 0.0)


def sparsity_force(abs_w: np.ndarray, s: float, lam: float) -> np.ndarray:
    """d|W_k|/dt = s*|W_k| - lam = s*(|W_k| - theta) for nonzero weights, 0 for dead
    ones (eq. 1). Written without theta so that s <= 0 (theta = inf) needs no case."""
    abs_w = np.asarray(abs_w, dtype=np.float64)
    return np.where(abs_w > 0.0, s * abs_w - lam, 0.0)


def _tied_group_dies(k: int, a: float, lam: float) -> bool:
    """Whether k equal weights a, alone, reach 0: da/dt = f(a) = (1 - k a^2) a - lam, with
    f increasing below its peak at 1/sqrt(3k); they die iff f < 0 on all of (0, a]."""
    peak = 1.0 / math.sqrt(3.0 * k)
    f_peak = (1.0 - k * peak * peak) * peak - lam
    return f_peak < 0.0 or (a < peak and (1.0 - k * a * a) * a - lam < 0.0)


def fit_decay_constant(rows: np.ndarray, samples: int | None = None, one_left_at: float = math.inf) -> float:
    """c in ||W||_1 ~ 1/(w(0) + c*lam*t): least squares of w - w(0) against the
    integral of lam dt (lam*t for constant lam), over rows with m' >= 2, through the
    origin so that w(0) is the run's own.

    The fit weighs every row alike, so it depends on where the rows are: with
    ``samples``, it is taken at that many instants evenly spaced from the first row's t
    to the last's (w and lam t interpolated linearly between rows), the instants an
    exported time series of that many rows has; an instant has m' >= 2 when the row at or
    before it had and it is before ``one_left_at`` (when m' reached 1: exact, where the
    rows would place it anywhere in the gap around it). Exported rows, already there, are
    fitted as they are."""
    if rows.shape[0] < 2:
        return math.nan
    w = rows[:, COL["w"]]
    x = rows[:, COL["lam_t"]]
    nonzero = rows[:, COL["nonzero"]]
    if samples is not None:
        t = rows[:, COL["t"]]
        at = np.linspace(t[0], t[-1], int(samples))
        before = np.maximum(np.searchsorted(t, at, side="right") - 1, 0)
        nonzero = np.where(at < one_left_at, nonzero[before], 0)
        finite = np.isfinite(w)  # (w = inf once every weight is dead: m' = 0 there)
        w = np.interp(at, t[finite], w[finite]) if finite.any() else np.full(at.shape, math.nan)
        x = np.interp(at, t, x)
    use = (nonzero >= 2) & np.isfinite(w)
    if use.sum() < 2:
        return math.nan
    w0 = w[0]
    xx = x[use]
    den = float(np.dot(xx, xx))
    if den <= 0.0:
        return math.nan
    return float(np.dot(xx, w[use] - w0) / den)


def last_weight_fixed_point(lam: float) -> float:
    """The stable root of (1 - w^2) w = lam near 1 (nan when lam > 2/(3*sqrt 3))."""
    if lam <= 0:
        return 1.0
    top = 1 / math.sqrt(3)
    if lam >= (1 - top * top) * top:
        return math.nan
    from scipy.optimize import brentq  # here: scipy.optimize costs 0.4-0.7 s of every start

    return brentq(lambda w: (1 - w * w) * w - lam, top, 1.0, xtol=1e-15)
