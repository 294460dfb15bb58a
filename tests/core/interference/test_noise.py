"""Noise in the hidden layer (y = ReLU((x W + xi) W^T)): the stream's moments, the same
stream wherever a run trains (a thread, a process, a Dask worker), one step against torch's
autograd on the loss with xi held fixed, the expected gradient of docs/theory.md §8 against
the average over many draws, and Gaussian noise's rotation invariance (the measure sum_k
W_ik^4 about 3/(m+2) |W_i|^4)."""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import threading

import numpy as np
import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference import run as run_module
from sparsity_gui.core.interference.noise import NoiseStream, noisy_gradient_numpy
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun
from sparsity_gui.core.interference.sweep import sweep_task

SIGMA = 0.1


def _torch():
    # imported by the tests that use it, not by the module: the spawned process of the
    # same-seed test imports this module, and torch would be most of its start-up
    return pytest.importorskip("torch")


@pytest.mark.parametrize("kind, fourth", [("bernoulli", 1.0), ("gaussian", 3.0)])
def test_the_stream_has_the_distributions_moments(kind, fourth):
    """Mean 0, variance sigma^2 and fourth moment sigma^4 (Bernoulli) or 3 sigma^4 (Gaussian),
    within four standard errors of 400,000 draws; drawn in chunks of any size, the same."""
    draws = NoiseStream(kind, seed=11).draw(100_000, 4).ravel() * SIGMA
    n = draws.size
    for power, want in ((1, 0.0), (2, SIGMA**2), (4, fourth * SIGMA**4)):
        values = draws**power
        se = values.std() / math.sqrt(n)
        assert abs(values.mean() - want) <= 4 * se + 1e-15, (power, values.mean(), want)
    if kind == "bernoulli":
        assert set(np.unique(np.abs(draws))) == {SIGMA}
    whole = NoiseStream(kind, seed=5).draw(37, 6)
    pieces = NoiseStream(kind, seed=5)
    np.testing.assert_array_equal(np.vstack([pieces.draw(k, 6) for k in (1, 10, 26)]), whole)


def _final_w(kind: str) -> np.ndarray:
    p = InterferenceParams(
        n=5, m=9, optimizer="gd", l1=0.0, lr=0.02, steps=3000, noise=kind, noise_sigma=0.1, seed=3
    )
    run = InterferenceRun(p)
    for chunk in (1, 999, 2000):
        run.advance(chunk)
    return run.W


def _in_process(kind, queue):
    queue.put(_final_w(kind))


def test_the_same_seed_gives_the_same_run_in_a_thread_a_process_and_a_dask_worker(dask_cluster):
    from distributed import Client

    here = _final_w("bernoulli")
    box = []
    thread = threading.Thread(target=lambda: box.append(_final_w("bernoulli")))
    thread.start()
    thread.join()
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_in_process, args=("bernoulli", queue))
    proc.start()
    there = queue.get(timeout=120)
    proc.join(timeout=60)
    for other in (box[0], there):
        np.testing.assert_array_equal(other, here)
    # on a Dask worker, a sweep's task (the package's own function: a worker cannot import
    # this test module): the same final counts and sum_k W_ik^4, digit for digit
    p = InterferenceParams(
        n=5, m=9, optimizer="gd", l1=0.0, lr=0.02, steps=3000, noise="bernoulli", noise_sigma=0.1, seed=3
    )
    with Client(dask_cluster.address, timeout=60) as client:
        remote = client.submit(sweep_task, (p, True), pure=False).result(timeout=120)
    local = sweep_task((p, True))
    np.testing.assert_array_equal(remote.overlap, local.overlap)  # W(0) W(T)^T, every digit
    same = {k: v for k, v in dataclasses.asdict(remote).items() if k not in ("seconds", "overlap")}
    assert same.keys() == {k for k in dataclasses.asdict(local) if k not in ("seconds", "overlap")}
    for key, value in same.items():  # NaN (no feature with one active weight) equals NaN
        assert value == getattr(local, key) or (
            value != value and getattr(local, key) != getattr(local, key)
        ), key
    assert remote.sum_w4 == pytest.approx(float(np.mean(np.sum(here**4, axis=1))), rel=1e-14)
    assert not np.array_equal(_final_w("gaussian"), here)


def torch_noisy_loss(W, xi, l1, interference=True):
    torch = _torch()
    X = torch.eye(W.shape[0], dtype=W.dtype)
    Y = torch.relu((X @ W + xi) @ W.T)
    err = (Y - X) ** 2
    if not interference:
        err = torch.diagonal(err)
    return err.sum() + l1 * W.abs().sum()


CASES = [
    ("gd", True, 2**20),
    ("gd", True, 0),  # the BLAS path
    ("gd-zero", True, 2**20),
    ("adamw", True, 2**20),
    ("adamw", True, 0),
    ("adam", False, 2**20),
]


@pytest.mark.parametrize("kind", ["bernoulli", "gaussian"])
@pytest.mark.parametrize("optimizer, interference, loops", CASES)
def test_one_step_is_torchs_on_the_loss_with_xi_held(monkeypatch, kind, optimizer, interference, loops):
    torch = _torch()
    monkeypatch.setattr(run_module, "NOISY_LOOPS_UP_TO", loops)
    n, m, lr, l1, sigma = 6, 10, 0.05, 0.03, 0.3
    w0 = np.random.default_rng(8).standard_normal((n, m)) / math.sqrt(m)
    p = InterferenceParams(
        n=n, m=m, optimizer=optimizer, l1=l1, lr=lr, steps=10, noise=kind, noise_sigma=sigma,
        interference=interference, seed=4,
    )  # fmt: skip
    xi = sigma * NoiseStream(kind, seed=4).draw(2, m)
    run = InterferenceRun(p, w0=w0)
    W = torch.tensor(w0, requires_grad=True)
    if optimizer in ("adam", "adamw"):
        cls = torch.optim.AdamW if optimizer == "adamw" else torch.optim.Adam
        opt = cls([W], lr=lr, weight_decay=p.effective_weight_decay, eps=1e-8)
    else:
        opt = torch.optim.SGD([W], lr=lr)
    for s in range(2):
        run.advance(1)
        opt.zero_grad()
        torch_noisy_loss(W, torch.tensor(xi[s]), l1, interference).backward()
        opt.step()
        if optimizer == "gd-zero":  # the zero rule: a weight whose step crossed zero is zero
            break
        np.testing.assert_allclose(run.W, W.detach().numpy(), rtol=0, atol=1e-12, err_msg=f"step {s + 1}")
    if optimizer == "gd-zero":
        w_t = W.detach().numpy()
        crossed = np.sign(w_t) != np.sign(w0)
        np.testing.assert_allclose(run.W[~crossed], w_t[~crossed], rtol=0, atol=1e-12)
        assert np.all(run.W[crossed] == 0.0)


def expected_gradient(W, sigma, active):
    """docs/theory.md §8: with each ReLU's side the same for every draw (``active``: the
    pairs (i, j) with a_ij > 0), E[grad] = (Rbar + Rbar^T) W + 2 sigma^2 (column counts of
    active) W, Rbar_ij = 2 (G_ij - delta_ij) on the active pairs."""
    n = W.shape[0]
    G = W @ W.T
    Rbar = np.where(active, 2.0 * (G - np.eye(n)), 0.0)
    return (Rbar + Rbar.T) @ W + 2.0 * sigma**2 * active.sum(axis=0)[:, None] * W


def torch_gradients(W, xis):
    """Autograd's gradient of the loss with each draw of xi held, one per draw: the draws'
    copies of W in one batch, whose summed loss has each copy's own gradient."""
    torch = _torch()
    Ws = torch.tensor(W).expand(len(xis), *W.shape).clone().requires_grad_(True)
    X = torch.eye(W.shape[0], dtype=Ws.dtype)
    Y = torch.relu((X @ Ws + torch.tensor(xis)[:, None, :]) @ Ws.transpose(1, 2))
    ((Y - X) ** 2).sum().backward()
    return Ws.grad.numpy()


@pytest.mark.parametrize("kind", ["bernoulli", "gaussian"])
def test_the_average_gradient_is_the_expected_gradient_of_the_theory(kind):
    """W chosen so that every a_ij = G_ij + xi.W_j keeps its sign for the draws: its positive
    overlaps exceed sigma |W_j|_1 (Bernoulli's bound) by far and the others are far below."""
    m, sigma, draws = 6, 0.1, 100_000
    W = np.array(
        [
            [0.9, 0.3, 0.1, 0.0, 0.0, 0.05],
            [0.6, 0.7, 0.0, 0.1, 0.0, 0.0],  # overlaps row 0 positively
            [-0.6, -0.4, 0.5, 0.0, 0.3, 0.0],  # overlaps both negatively
        ]
    )
    G = W @ W.T
    margin = sigma * np.abs(W).sum(axis=1)  # |xi . W_j| <= sigma |W_j|_1 for Bernoulli
    A0 = G
    assert np.all(np.abs(A0) > 3 * margin[None, :])
    active = A0 > 0
    xis = sigma * NoiseStream(kind, seed=2).draw(draws, m)
    grads = torch_gradients(W, xis)
    for k in range(0, draws, draws // 50):  # the run's gradient is autograd's, draw by draw
        np.testing.assert_allclose(noisy_gradient_numpy(W, xis[k], True), grads[k], rtol=0, atol=1e-14)
    if kind == "gaussian":  # no bound: check no draw crossed a ReLU's kink
        assert np.all(((xis @ W.T)[:, None, :] + A0[None] > 0) == active[None])
    mean, se = grads.mean(axis=0), grads.std(axis=0) / math.sqrt(draws)
    want = expected_gradient(W, sigma, active)
    assert np.all(np.abs(mean - want) <= 4 * se + 1e-12), np.max(np.abs(mean - want) / (se + 1e-30))
    # and it differs from the noise-free gradient by the 2 sigma^2 term, many errors away
    free = noisy_gradient_numpy(W, np.zeros(m), True)
    assert np.max(np.abs(want - free) / (se + 1e-30)) > 10


def test_gaussian_noise_leaves_no_preferred_axis():
    """l1 = 0, Gaussian noise, W(0) normal: the law of W is invariant under W -> W Q for every
    rotation Q (docs/theory.md §8), so each row's direction is uniform on the sphere and
    sum_k W_ik^4 = 3/(m+2) |W_i|^4 in expectation; Bernoulli noise breaks the symmetry."""
    n, m, rows = 8, 16, []
    for seed in range(6):
        p = InterferenceParams(n=n, m=m, optimizer="gd", l1=0.0, lr=0.02, steps=20_000, noise="gaussian",
                               noise_sigma=0.1, seed=seed)  # fmt: skip
        run = InterferenceRun(p)
        run.advance(p.steps)
        norms = np.sum(run.W**2, axis=1)
        rows += list(np.sum(run.W**4, axis=1) / norms**2)
    shape = np.array(rows)
    se = shape.std() / math.sqrt(shape.size)
    assert abs(shape.mean() - 3 / (m + 2)) <= 4 * se, (shape.mean(), 3 / (m + 2), se)
    p = InterferenceParams(
        n=n, m=m, optimizer="gd", l1=0.0, lr=0.02, steps=20_000, noise="bernoulli", noise_sigma=0.1
    )
    run = InterferenceRun(p)
    run.advance(p.steps)
    assert run.measure().sum_w4 > 3 / (m + 2) + 10 * se


def test_no_noise_is_the_run_without_the_fields():
    a = InterferenceParams(n=6, m=12, optimizer="adamw", steps=300)
    b = a.with_changes(noise="none", noise_sigma=0.0)
    ra, rb = InterferenceRun(a), InterferenceRun(b)
    ra.advance(300)
    rb.advance(300)
    np.testing.assert_array_equal(ra.W, rb.W)
    assert "noise" not in b.as_dict()


@pytest.mark.parametrize(
    "fields, words",
    [
        (dict(noise="pink", noise_sigma=0.1), "must be one of none, bernoulli, gaussian"),
        (dict(noise="gaussian", noise_sigma=-0.1), "must be from 0 to 10"),
        (dict(noise="gaussian", noise_sigma=math.inf), "must be finite"),
        (dict(noise_sigma=0.1), "needs a noise kind"),
    ],
)
def test_bad_noise_names_its_field(fields, words):
    with pytest.raises(InputError, match=words):
        InterferenceParams(n=2, m=3, **fields)
