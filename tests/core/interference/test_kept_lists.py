"""The loops path's lists (kept_selection.kept_lists, by_unit) against numpy, and its
gradient against PyTorch's autograd at the edges: TopK with ties at the k-th value, K near
and at m, JumpReLU keeping no unit and every unit. The lists: TopK keeps the k largest |h|
of each input with ties going to the lower index (a stable sort of -|h|); JumpReLU keeps
|h_q| > theta_q and lists beside them every place in its kernel's band."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsity_gui.core.interference.kept_selection import by_unit, kept_lists
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun

torch = pytest.importorskip("torch")

from test_mechanisms import torch_loss, torch_params  # noqa: E402


def topk_oracle(H: np.ndarray, k: int) -> np.ndarray:
    """The mask of the k largest |H_iq| of each row, ties to the lower index."""
    order = np.argsort(-np.abs(H), axis=1, kind="stable")[:, :k]
    mask = np.zeros(H.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=1)
    return mask


def lists(H: np.ndarray, jump: bool, k: int = 0, theta=None, eps: float = 0.1):
    """kept_lists' and by_unit's arrays, trimmed: (by input: needed units, kept units, H
    there; by unit: inputs, H there, kept flags; the kept count)."""
    n, m = H.shape
    theta = np.zeros(m) if theta is None else theta
    rptr, kptr = np.empty(n + 1, dtype=np.int64), np.empty(n + 1, dtype=np.int64)
    rcol, kcol = np.full(n * m, -7, dtype=np.int32), np.full(n * m, -7, dtype=np.int32)
    kval, count = np.full(n * m, np.nan), np.full(m, 99, dtype=np.int64)
    kth, width = np.full(n, math.nan), np.zeros(n)
    if not jump:
        kptr, kcol = rptr, rcol
    kept = kept_lists(H, jump, k, theta, eps, kth, width, rptr, rcol, kptr, kcol, kval, count, np.empty(m))
    by_input = [
        (
            rcol[rptr[i] : rptr[i + 1]].tolist(),
            kcol[kptr[i] : kptr[i + 1]].tolist(),
            kval[kptr[i] : kptr[i + 1]],
        )
        for i in range(n)
    ]
    assert np.array_equal(count, [sum(q in row[0] for row in by_input) for q in range(m)])
    cptr = np.empty(m + 1, dtype=np.int64)
    crow = np.empty(n * m, dtype=np.int32)
    cw, ckept = np.empty(n * m), np.empty(n * m, dtype=np.int8)
    by_unit(H, jump, theta, rptr, rcol, count, cptr, crow, cw, ckept)
    units = [
        (crow[cptr[q] : cptr[q + 1]].tolist(), cw[cptr[q] : cptr[q + 1]], ckept[cptr[q] : cptr[q + 1]])
        for q in range(m)
    ]
    return by_input, units, kept, kth


def check_by_unit(H: np.ndarray, by_input, units, kept_mask: np.ndarray) -> None:
    """The lists by unit are those by input turned over: each unit's inputs in increasing
    order, with H and the kept flag beside."""
    for q, (inputs, values, flags) in enumerate(units):
        want = [i for i, row in enumerate(by_input) if q in row[0]]
        assert inputs == want
        assert np.array_equal(values, H[want, q])
        assert np.array_equal(flags, kept_mask[want, q].astype(np.int8))


def tied(rng, n: int, m: int) -> np.ndarray:
    """Few distinct magnitudes (multiples of 1/8: sums of their products are exact), both
    signs and zeros: ties at every k-th value."""
    return rng.integers(-3, 4, size=(n, m)) / 8.0


@pytest.mark.parametrize("rows", ["random", "tied"])
@pytest.mark.parametrize("m", [1, 5, 16])
def test_topk_lists_keep_the_k_largest_with_ties_to_the_lower_index(rows, m):
    rng = np.random.default_rng(m)
    n = 9
    H = rng.standard_normal((n, m)) / math.sqrt(m) if rows == "random" else tied(rng, n, m)
    for k in sorted({1, 2, m // 2, m - 1, m} & set(range(1, m + 1))):
        by_input, units, kept, kth = lists(H, jump=False, k=k)
        mask = topk_oracle(H, k)
        assert kept == n * k
        for i, (needed, kept_units, values) in enumerate(by_input):
            assert needed == kept_units == np.flatnonzero(mask[i]).tolist()
            assert np.array_equal(values, H[i, mask[i]])
        assert np.array_equal(kth, np.sort(np.abs(H), axis=1)[:, m - k])
        check_by_unit(H, by_input, units, mask)


@pytest.mark.parametrize("case", ["some", "none", "all"])
def test_jumprelu_lists_keep_above_theta_and_list_the_kernels_band(case):
    rng = np.random.default_rng(3)
    n, m, eps = 8, 14, 0.1
    H = rng.standard_normal((n, m)) * 0.3
    theta = {"some": rng.uniform(0.05, 0.5, m), "none": np.full(m, 10.0), "all": np.full(m, 1e-9)}[case]
    H[0, :3] = theta[:3] + np.array([-0.5, -0.49, -0.2]) * eps  # the band's edge, inside it
    if case == "some":
        H[1, :2] = theta[:2] + np.array([0.49, 0.5]) * eps  # kept, in the band and at its edge
    by_input, units, kept, _ = lists(H, jump=True, theta=theta, eps=eps)
    mask = np.abs(H) > theta
    d = np.abs(H) - theta
    band = np.abs(d / eps) < 0.5
    assert kept == int(mask.sum()) and (kept == 0) == (case == "none") and (kept == n * m) == (case == "all")
    for i, (needed, kept_units, values) in enumerate(by_input):
        assert kept_units == np.flatnonzero(mask[i]).tolist()
        assert np.array_equal(values, H[i, mask[i]])
        # every kept and every in-band place listed; nothing else but places at the band's edge
        assert set(np.flatnonzero(mask[i] | band[i])) <= set(needed)
        assert all(mask[i, q] or abs(d[i, q]) <= (0.5 + 1e-6) * eps for q in needed)
        assert needed == sorted(needed)
    check_by_unit(H, by_input, units, mask)


N, M = 7, 12
EDGE_W0 = np.random.default_rng(17).standard_normal((N, M)) * (0.9 / math.sqrt(M))
EDGES = {
    "topk-ties": (dict(sparsity="topk", k=5), "tied"),
    "topk-k-m-1": (dict(sparsity="topk", k=M - 1), "random"),
    "topk-k-m": (dict(sparsity="topk", k=M), "random"),
    # theta just above the largest |h|: nothing kept, the largest in the kernel's band
    "jumprelu-none-kept": (dict(threshold_init=float(np.abs(EDGE_W0).max()) + 0.03), "random"),
    "jumprelu-all-kept": (dict(threshold_init=1e-6), "random"),
}


def edge_case(case: str, interference: bool) -> tuple[InterferenceParams, np.ndarray]:
    """The parameters and W(0) of one of EDGES."""
    kw, rows = EDGES[case]
    if "threshold_init" in kw:
        kw = dict(sparsity="jumprelu", l0=0.02, bandwidth=0.1, **kw)
    p = InterferenceParams(
        n=N, m=M, steps=10, optimizer="gd", lr=0.01, l1=0.0, interference=interference, **kw
    )
    return p, (tied(np.random.default_rng(17), N, M) if rows == "tied" else EDGE_W0)


@pytest.mark.parametrize("interference", [True, False])
@pytest.mark.parametrize("case", sorted(EDGES))
def test_the_loops_gradient_is_autograds_at_the_edges(case, interference):
    p, w0 = edge_case(case, interference)
    W, phi = torch_params(p, w0)
    torch_loss(W, phi, p, 0.0).backward()
    for below in (2.0, 0.0):  # the loops over the kept units, then the BLAS products
        run = InterferenceRun(p, w0=w0)
        run.mechanism.sparse_below = below
        push = np.empty_like(run.W)
        run.mechanism.gradient(run.W, push, p.l0)
        assert run.mechanism.sparse_steps == (1 if below else 0)
        np.testing.assert_allclose(4.0 * push, W.grad.numpy(), rtol=1e-12, atol=1e-12)
        if p.sparsity == "jumprelu":
            np.testing.assert_allclose(run.mechanism.dtheta, phi.grad.numpy(), rtol=1e-12, atol=1e-12)
            run.mechanism.update_mask(run.W)
            assert run.mechanism.kept == {"jumprelu-none-kept": 0, "jumprelu-all-kept": N * M}[case]
    if case == "topk-ties":  # ties at the k-th value that the index rule splits
        a = np.abs(w0)
        kth = np.sort(a, axis=1)[:, M - p.k][:, None]
        assert np.any(np.sum(a == kth, axis=1) > p.k - np.sum(a > kth, axis=1))
    if case == "jumprelu-none-kept":  # no reconstruction: the L0 penalty's pull on the band alone
        assert np.all(W.grad.numpy() == 0.0) and np.count_nonzero(phi.grad.numpy()) >= 1
    else:
        assert np.abs(W.grad.numpy()).max() > 1e-3  # a gradient to compare
