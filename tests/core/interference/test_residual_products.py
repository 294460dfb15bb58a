"""The loops path's products over R's nonzeros (core/interference/residual_products.py, the
path mechanisms.py takes while the residuals are mostly zero): R's lists by row and column
against numpy; the gradient against PyTorch's autograd (and the products over the kept units)
at the edges, with noise, and on a trained state whose R is mostly zero, where the run picks
this path by itself; 1,000 steps of gd and AdamW against torch's optimizers to 1e-10."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.residual_products import residual_lists
from sparsity_gui.core.interference.run import InterferenceRun

torch = pytest.importorskip("torch")

from test_kept_lists import EDGES, edge_case  # noqa: E402
from test_mechanisms import CASES, NOISY, noise_draws, start, torch_loss, torch_params, torch_run  # noqa: E402

RESIDUALS, UNITS = math.inf, 0.0  # MechanismState.residuals_below: each product path forced


def test_residual_lists_are_r_by_row_and_by_column():
    rng = np.random.default_rng(5)
    n = 9
    R = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.3)
    R[4] = 0.0  # an empty row
    R[:, 6] = 0.0  # an empty column
    lists = [np.full(n + 1, -7), np.full(n * n, -7, np.int32), np.full(n * n, np.nan)]
    lists += [np.full(n + 1, -7), np.full(n * n, -7, np.int32), np.full(n * n, np.nan)]
    count = np.full(n, 99, dtype=np.int64)
    nonzero = residual_lists(R, *lists, count)
    rowptr, rowcol, rowval, colptr, colrow, colval = lists
    assert nonzero == np.count_nonzero(R) == rowptr[n] == colptr[n]
    for i in range(n):
        want = np.flatnonzero(R[i])
        assert rowcol[rowptr[i] : rowptr[i + 1]].tolist() == want.tolist()
        assert np.array_equal(rowval[rowptr[i] : rowptr[i + 1]], R[i, want])
        want = np.flatnonzero(R[:, i])
        assert colrow[colptr[i] : colptr[i + 1]].tolist() == want.tolist()
        assert np.array_equal(colval[colptr[i] : colptr[i + 1]], R[want, i])


def loops_gradient(p: InterferenceParams, w0: np.ndarray, residuals_below: float, xi=None, phi=None):
    """(push, dtheta) of one loops-path gradient at w0 (and JumpReLU's phi, if given) with
    the product path forced."""
    run = InterferenceRun(p, w0=w0)
    if phi is not None:
        run.mechanism.phi[:] = phi
    run.mechanism.sparse_below = 2.0
    run.mechanism.residuals_below = residuals_below
    push = np.empty_like(run.W)
    run.mechanism.gradient(run.W, push, p.l0, xi)
    assert run.mechanism.sparse_steps == 1
    assert run.mechanism.residual_steps == (1 if residuals_below == RESIDUALS else 0)
    return push, run.mechanism.dtheta.copy()


def check_against_autograd(p: InterferenceParams, w0: np.ndarray, xi=None, phi0=None) -> None:
    W, phi = torch_params(p, w0)
    if phi0 is not None:
        phi = torch.tensor(phi0, requires_grad=True)
    torch_loss(W, phi, p, p.l1, xi=xi).backward()
    push, dtheta = loops_gradient(p, w0, RESIDUALS, xi, phi0)
    units_push, units_dtheta = loops_gradient(p, w0, UNITS, xi, phi0)
    np.testing.assert_allclose(4.0 * push, W.grad.numpy() - p.l1 * np.sign(w0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(push, units_push, rtol=1e-13, atol=1e-15)
    if p.sparsity == "jumprelu":
        np.testing.assert_allclose(dtheta, phi.grad.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dtheta, units_dtheta, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("interference", [True, False])
@pytest.mark.parametrize("case", sorted(EDGES))
def test_the_residual_products_are_autograds_at_the_edges(case, interference):
    check_against_autograd(*edge_case(case, interference))


@pytest.mark.parametrize("case", sorted(NOISY))
def test_a_noisy_residual_step_is_autograds(case):
    p = InterferenceParams(n=7, m=12, steps=10, optimizer="gd", lr=0.01, **NOISY[case])
    xi = p.noise_sigma * noise_draws(p.noise, p.seed, 1, p.m)[0]
    check_against_autograd(p, start(p), xi)


@pytest.mark.parametrize("case", ["topk", "jumprelu"])
def test_a_trained_state_with_r_mostly_zero_takes_this_path_and_is_autograds(case):
    kw = {"topk": dict(sparsity="topk", k=8, l1=0.0), "jumprelu": dict(sparsity="jumprelu", l0=1e-2)}[case]
    p = InterferenceParams(n=32, m=64, steps=10**4, optimizer="adamw", lr=3e-3, **kw)
    run = InterferenceRun(p, w0=start(p))
    run.advance(400)
    w, phi = run.W.copy(), run.mechanism.phi.copy()
    before = run.mechanism.residual_steps
    run.advance(1)
    assert run.mechanism.residual_steps == before + 1  # chosen by the run itself
    run.mechanism.update_mask(w)
    Z = (w * run.mechanism.mask) @ w.T
    assert np.count_nonzero(Z > 0) < 0.25 * Z.size  # R (nonzero where Z > 0) mostly zero
    if case == "jumprelu":
        assert np.ptp(phi) > 0.0  # the thresholds trained apart: the state is not the start's
    check_against_autograd(p, w, phi0=phi if case == "jumprelu" else None)


@pytest.mark.parametrize("optimizer", ["gd", "adamw"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_thousand_residual_steps_are_torchs(case, optimizer):
    lr = 0.02 if optimizer == "gd" else 3e-3
    p = InterferenceParams(n=6, m=10, steps=1000, optimizer=optimizer, lr=lr, **CASES[case])
    w0 = start(p)
    W_torch, phi_torch = torch_run(p, w0, p.steps)
    run = InterferenceRun(p, w0=w0)
    run.mechanism.sparse_below = 2.0
    run.mechanism.residuals_below = RESIDUALS
    for chunk in (1, 499, 500):
        run.advance(chunk)
    assert run.step == 1000 and run.failure is None
    assert run.mechanism.residual_steps == 1000
    assert not np.allclose(run.W, w0, atol=1e-3)  # it trained
    np.testing.assert_allclose(run.W, W_torch, rtol=1e-10, atol=1e-10)
    if p.sparsity == "jumprelu":
        np.testing.assert_allclose(run.mechanism.phi, phi_torch, rtol=1e-10, atol=1e-10)
