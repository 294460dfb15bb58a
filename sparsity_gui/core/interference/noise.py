"""Noise in the hidden layer, the paper's second incidental cause of polysemanticity: at each
step one vector xi in R^m is added to the hidden layer of the whole batch, y = ReLU((x W + xi)
W^T), drawn as +-sigma with equal odds ("bernoulli") or from N(0, sigma^2) ("gaussian").

The stream is the run's own: a numpy Generator seeded with (seed, NOISE_STREAM), apart from
W(0)'s draw, read in order one step at a time (any chunking gives the same xi at each step:
Generator.random and standard_normal consume the bit stream value by value), so the same seed
gives the same run in a thread, a process or a Dask worker. It yields unit draws (+-1 or
N(0, 1)); sigma multiplies them at each step, so sigma can change during a run.
Formulas, and why the fourth moment of xi decides whether noise sparsifies: docs/theory.md §8.
"""

from __future__ import annotations

import numpy as np

NOISE_STREAM = 0x6E6F697365  # "noise": the noise's stream, apart from W(0)'s (seed alone)


class NoiseStream:
    """The unit draws of a run's noise, step after step."""

    def __init__(self, kind: str, seed: int):
        if kind not in ("bernoulli", "gaussian"):
            raise ValueError(f"no noise stream of kind {kind!r}")
        self.kind = kind
        self._rng = np.random.default_rng([int(seed), NOISE_STREAM])

    def draw(self, steps: int, m: int) -> np.ndarray:
        """The next ``steps`` vectors, a C-contiguous (steps, m) float64 array."""
        if self.kind == "bernoulli":
            return np.where(self._rng.random((steps, m)) < 0.5, -1.0, 1.0)
        return self._rng.standard_normal((steps, m))


def noise_moments(kind: str, sigma: float) -> tuple[float, float, float]:
    """(mean, variance, fourth moment) of one coordinate of xi."""
    fourth = sigma**4 * (1.0 if kind == "bernoulli" else 3.0)
    return 0.0, sigma**2, fourth


def noisy_gradient_numpy(W: np.ndarray, xi: np.ndarray, interference: bool) -> np.ndarray:
    """The gradient of sum_ij (ReLU(a_ij) - delta_ij)^2, a_ij = (W_i + xi) . W_j, by matrix
    products (BLAS: the large-n path): with R_ij = 2 (a_ij - delta_ij) 1[a_ij > 0],
    grad = (R + R^T) W + (column sums of R) xi^T (docs/theory.md §8)."""
    n = W.shape[0]
    A = W @ W.T + (W @ xi)[None, :]
    R = np.where(A > 0.0, 2.0 * (A - np.eye(n)), 0.0)
    if not interference:
        R = np.diag(np.diag(R))
    return (R + R.T) @ W + np.outer(R.sum(axis=0), xi)
