"""W as the weights panels show it, Qt-free (the live panel and the exported figure share
it): columns grouped by feature, and pooled to the pixels by each block's largest |w|."""

from __future__ import annotations

import numpy as np


def neuron_order(W: np.ndarray) -> np.ndarray:
    """Columns grouped by feature: feature i's largest-|w| neuron comes at position i
    (features in index order; a neuron shared by several features comes once, at its
    first feature), then every neuron no feature has as its largest, in index order.
    Once training has settled this turns W into a (block) diagonal."""
    n, m = W.shape
    if n == 0 or m == 0:
        return np.arange(m)
    best = np.argmax(np.abs(W), axis=1)
    key = np.full(m, n, dtype=np.int64) + np.arange(m)  # unowned neurons after all features
    # the smallest feature index per neuron: assign in reverse so the first one wins
    key[best[::-1]] = np.arange(n)[::-1]
    return np.argsort(key, kind="stable")


def _pool_columns(A: np.ndarray, f: int) -> np.ndarray:
    n, m = A.shape
    nx = -(-m // f)
    if nx * f != m:
        B = np.zeros((n, nx * f))
        B[:, :m] = A
        A = B
    hi = A[:, 0::f].copy()
    lo = hi.copy()
    for k in range(1, f):  # f strided passes: numpy reduces a short last axis slowly
        col = A[:, k::f]
        np.maximum(hi, col, out=hi)
        np.minimum(lo, col, out=lo)
    return np.where(hi >= -lo, hi, lo)


def max_abs_pool(A: np.ndarray, fy: int, fx: int) -> np.ndarray:
    """Each block of fy x fx entries replaced by its entry of largest |value| (sign kept;
    the last blocks are padded with zeros). With more columns than the screen has pixels,
    scaling would drop most single weights near ±1; pooled, every one of them shows."""
    if fx > 1:
        A = _pool_columns(A, fx)
    if fy > 1:
        A = _pool_columns(A.T, fy).T
    return np.ascontiguousarray(A)
