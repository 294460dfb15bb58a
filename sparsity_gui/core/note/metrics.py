"""What every solver reports about its current instant, and the quantities derived from it."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Columns of the time series, in the order of the `run` command's timeseries.csv.
# The first ten are fixed by the spec; the rest add what the panels need.
COLUMNS = (
    "t", "norm2_sq", "norm1", "nonzero", "theta", "feature_push", "reg_push",
    "rel_var", "rel_var_lo", "rel_var_hi", "rel_var_ideal_lo", "rel_var_ideal_hi",
    "lam", "s", "w", "lam_t",
)
COL = {name: i for i, name in enumerate(COLUMNS)}


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
