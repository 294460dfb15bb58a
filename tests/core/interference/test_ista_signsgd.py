"""The optimizers `ista` (proximal gradient) and `signsgd` against torch on the network's own
loss, written here: ISTA is torch's SGD step on the smooth loss followed by soft-thresholding
by lr·l1; signSGD moves every weight by lr against the sign of the full loss's gradient
(torch's |w| has gradient sign(w), 0 at 0). And where ISTA and gd-zero part: a weight whose
smooth step crosses zero."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun

torch = pytest.importorskip("torch")


def smooth_loss(W, interference=True):
    X = torch.eye(W.shape[0], dtype=W.dtype)
    err = (torch.relu(X @ W @ W.T) - X) ** 2
    return (err if interference else torch.diagonal(err)).sum()


def torch_ista(w0, lr, l1, steps, interference):
    W = torch.tensor(w0, requires_grad=True)
    opt = torch.optim.SGD([W], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        smooth_loss(W, interference).backward()
        opt.step()
        with torch.no_grad():
            W.copy_(torch.sign(W) * torch.clamp(W.abs() - lr * l1, min=0.0))
    return W.detach().numpy()


def torch_signsgd(w0, lr, l1, steps, interference):
    W = torch.tensor(w0, requires_grad=True)
    for _ in range(steps):
        W.grad = None
        (smooth_loss(W, interference) + l1 * W.abs().sum()).backward()
        with torch.no_grad():
            W -= lr * torch.sign(W.grad)
    return W.detach().numpy()


@pytest.mark.parametrize("interference", [True, False])
@pytest.mark.parametrize("optimizer", ["ista", "signsgd"])
def test_the_steps_are_torchs(optimizer, interference):
    n, m, steps = 7, 12, 80
    lr, l1 = (0.03, 0.3) if optimizer == "ista" else (1e-3, 0.05)
    w0 = np.random.default_rng(4).standard_normal((n, m)) / math.sqrt(m)
    p = InterferenceParams(
        n=n, m=m, optimizer=optimizer, l1=l1, lr=lr, steps=steps, interference=interference
    )
    run = InterferenceRun(p, w0=w0)
    run.advance(30)
    run.advance(50)
    oracle = torch_ista if optimizer == "ista" else torch_signsgd
    np.testing.assert_allclose(run.W, oracle(w0, lr, l1, steps, interference), rtol=0, atol=1e-12)
    if optimizer == "ista":
        assert np.count_nonzero(run.W == 0.0) > 0  # soft-thresholding made exact zeros
        assert run.record().t == pytest.approx(4 * lr * steps, rel=1e-13)  # the note's time
    else:
        assert math.isnan(run.record().t)  # signSGD's steps have no note time


def test_ista_lets_a_weight_cross_zero_where_gd_zero_stops_it():
    """Feature 1's small weight on neuron 0 is pushed across zero by feature 0, which overlaps
    it: the smooth step v = w g - eta p is negative. gd-zero's rule stops it at 0; ISTA's
    soft-threshold puts it at sign(v)(|v| - lr l1), on the other side."""
    w0 = np.array([[1.0, 0.5], [0.05, 0.9]])  # overlap 0.5: feature 1 is pushed along W_0
    lr, l1 = 0.05, 0.04
    eta, h = 4 * lr, lr * l1
    g = 1 + eta * (1 - np.sum(w0[1] ** 2))
    v = w0[1, 0] * g - eta * 0.5 * w0[0, 0]  # feature 1, neuron 0: push = ReLU(0.5) W_0
    assert v < 0
    runs = {}
    for name in ("ista", "gd-zero"):
        runs[name] = InterferenceRun(
            InterferenceParams(n=2, m=2, optimizer=name, l1=l1, lr=lr, steps=1), w0=w0
        )
        runs[name].advance(1)
    assert runs["ista"].W[1, 0] == pytest.approx(v + h, rel=1e-14)  # |v| - h, negative
    assert runs["gd-zero"].W[1, 0] == 0.0
    # elsewhere the two agree: no other weight's smooth step crosses zero
    np.testing.assert_allclose(runs["ista"].W[0], runs["gd-zero"].W[0], rtol=0, atol=1e-15)
