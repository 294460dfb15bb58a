"""TopK's selection (mechanisms.topk_mask) against numpy: the k-th largest |h| of each row is
np.partition's, and the mask keeps the k largest with ties going to the lower index (a stable
sort of -|h|), whatever band around the last call's k-th value the search starts from: close
(the usual step), far (the wider bands, then the whole row), or none (the first call)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsity_gui.core.interference.mechanisms import topk_mask


def oracle(W: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(the k-th largest |W_ij| of each row, the mask of the k largest, ties by index)."""
    a = np.abs(W)
    m = W.shape[1]
    kth = np.partition(a, m - k, axis=1)[:, m - k]
    order = np.argsort(-a, axis=1, kind="stable")[:, :k]
    mask = np.zeros_like(W)
    np.put_along_axis(mask, order, 1.0, axis=1)
    return kth, mask


def check(W: np.ndarray, k: int, kth: np.ndarray, width: np.ndarray) -> None:
    mask = np.full_like(W, 7.0)
    kept = topk_mask(W, k, mask, kth, width)
    want_kth, want_mask = oracle(W, k)
    assert kept == W.shape[0] * k
    assert np.array_equal(kth, want_kth)
    assert np.array_equal(mask, want_mask)


def random_rows(rng, n: int, m: int) -> np.ndarray:
    return rng.standard_normal((n, m)) / math.sqrt(m)


def tied_rows(rng, n: int, m: int) -> np.ndarray:
    """Few distinct magnitudes, both signs, zeros among them: ties at every k-th value."""
    return rng.integers(-3, 4, size=(n, m)) / 4.0


@pytest.mark.parametrize("rows", [random_rows, tied_rows])
@pytest.mark.parametrize("m", [1, 2, 9, 64])
def test_every_k_from_a_first_call_and_from_the_last_calls_band(rows, m):
    rng = np.random.default_rng(m)
    W = rows(rng, 12, m)
    for k in sorted(k for k in {1, 2, m // 2, m - 1, m} if 1 <= k <= m):
        kth, width = np.full(12, math.nan), np.zeros(12)  # a first call: the whole row
        check(W, k, kth, width)
        check(W, k, kth, width)  # the same W: found in its own band (or a tie at it)
        assert np.all(np.isfinite(width))


@pytest.mark.parametrize("rows", [random_rows, tied_rows])
def test_a_moving_w_keeps_the_exact_kth_value_through_near_and_far_moves(rows):
    """Steps of every size after each other: small ones stay in the band, larger ones need
    the wider bands, jumps the whole row; the band's state carries over between calls."""
    rng = np.random.default_rng(5)
    n, m = 16, 200
    W = rows(rng, n, m)
    for k in (1, 7, 50, 199, 200):
        kth, width = np.full(n, math.nan), np.zeros(n)
        for move in (1e-4, 1e-4, 1e-3, 1e-2, 0.3, 1e-4, 3.0, 1e-5, 0.0):
            W = W + move * rng.standard_normal((n, m)) / math.sqrt(m)
            if rows is tied_rows:
                W = np.round(W * 4.0) / 4.0  # ties again
            check(W, k, kth, width)


def test_all_zero_rows_and_rows_of_one_value_keep_their_first_k():
    W = np.zeros((3, 10))
    W[1] = -0.5
    W[2, ::2] = 0.5
    W[2, 1::2] = -0.5
    for k in (1, 4, 10):
        kth, width = np.full(3, math.nan), np.zeros(3)
        check(W, k, kth, width)
        check(W, k, kth, width)
