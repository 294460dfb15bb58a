"""The optimizer lab's readouts: when a run became sparse, the rail share (Adam moving its
shrinking weights at the learning rate), the shrinkage against the exact fixed point, and the
line that says l1 saturated; each against the definitions written out here, the rail share of
an AdamW step against torch's own AdamW, and none depending on how the run is chunked."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.readouts import (
    check_period,
    fixed_point_norm2,
    is_sparse,
    saturation_line,
    shrinkage,
)
from sparsity_gui.core.interference.run import InterferenceRun
from sparsity_gui.core.interference.sweep import train_run

torch = pytest.importorskip("torch")


def sparse_by_hand(W):
    """Every feature's second-largest |w| below a tenth of its largest (or a dead row)."""
    for row in np.abs(W):
        top = sorted(row)[::-1]
        if top[0] > 0 and not top[1] < 0.1 * top[0]:
            return False
    return True


def test_is_sparse_is_the_definition():
    assert is_sparse(np.array([[1.0, 0.05, 0.0], [0.0, 0.0, 0.0]]))
    assert not is_sparse(np.array([[1.0, 0.1, 0.0]]))  # exactly a tenth: not below
    rng = np.random.default_rng(0)
    for _ in range(200):
        W = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < 0.3)
        assert is_sparse(W) == sparse_by_hand(W)


def test_steps_to_sparse_is_the_first_check_step_where_the_definition_holds_however_chunked():
    p = InterferenceParams(n=8, m=16, optimizer="adamw", l1=0.05, lr=1e-3, steps=8000, seed=2)
    K = check_period(p.steps)
    walk = InterferenceRun(p)
    first = None
    while walk.step < p.steps:
        walk.advance(K)
        if first is None and sparse_by_hand(walk.W):
            first = walk.step
    assert first is not None and walk.steps_to_sparse == first
    rng = np.random.default_rng(1)
    other = InterferenceRun(p)
    while other.step < p.steps:
        other.advance(int(rng.integers(1, 700)))
    assert other.steps_to_sparse == first and other.rail_share_mean == walk.rail_share_mean
    row = train_run(p)  # a sweep's run: its own chunks
    assert row.steps_to_sparse == first and row.rail_share == walk.rail_share_mean


def test_the_mean_rail_share_counts_every_check_up_to_and_including_the_sparse_one():
    """run.json's rail_share as the docs define it: the mean over the check steps up to and
    including steps_to_sparse of each check step's share, written out here step by step."""
    p = InterferenceParams(n=8, m=16, optimizer="adamw", l1=0.05, lr=1e-3, steps=8000, seed=2)
    K = check_period(p.steps)
    run = InterferenceRun(p)
    shares = []
    while run.steps_to_sparse is None:
        run.advance(K - 1)
        before = run.W.copy()
        run.advance(1)
        shrank = (np.abs(run.W) < np.abs(before)) & (np.abs(before) > 2 * p.lr)
        if shrank.any():
            shares.append(np.mean(np.abs(run.W - before)[shrank] >= p.lr / 2))
        if sparse_by_hand(run.W):
            break
    assert run.steps_to_sparse == run.step and len(shares) > 10
    assert run.rail_share_mean == pytest.approx(np.mean(shares), rel=1e-14)
    assert np.mean(shares) != pytest.approx(np.mean(shares[:-1]), rel=1e-6)  # the last one counts


def test_the_rail_share_of_an_adamw_step_is_torchs():
    """At a check step: among the weights that shrank and were more than 2 lr from zero, the
    share that moved at least lr/2; W before and after the step from torch's AdamW."""
    n, m, lr, l1 = 6, 10, 1e-3, 0.2
    w0 = np.random.default_rng(5).standard_normal((n, m)) / math.sqrt(m)
    p = InterferenceParams(n=n, m=m, optimizer="adamw", l1=l1, lr=lr, steps=3000)
    K = check_period(p.steps)
    run = InterferenceRun(p, w0=w0)
    run.advance(5 * K)
    W = torch.tensor(w0, requires_grad=True)
    opt = torch.optim.AdamW([W], lr=lr, weight_decay=0.01, eps=1e-8)
    X = torch.eye(n, dtype=torch.float64)
    before = None
    for _ in range(5 * K):
        before = W.detach().numpy().copy()
        opt.zero_grad()
        (((torch.relu(X @ W @ W.T) - X) ** 2).sum() + l1 * W.abs().sum()).backward()
        opt.step()
    after = W.detach().numpy()
    np.testing.assert_allclose(run.W, after, rtol=0, atol=1e-12)
    shrank = (np.abs(after) < np.abs(before)) & (np.abs(before) > 2 * lr)
    want = np.mean(np.abs(after - before)[shrank] >= lr / 2)
    assert shrank.sum() > 10 and run.rail_now == pytest.approx(want, abs=1e-15)


def test_adam_saturates_at_a_large_l1_and_gradient_descent_does_not():
    adam = InterferenceRun(
        InterferenceParams(n=8, m=16, optimizer="adamw", l1=0.5, lr=1e-3, steps=6000, seed=1)
    )
    adam.advance(6000)
    assert adam.rail_share_mean > 0.5
    assert saturation_line(adam.rail_share_mean).startswith(f"l1 saturated: {adam.rail_share_mean:.0%}")
    gd = InterferenceRun(
        InterferenceParams(n=8, m=16, optimizer="gd-zero", l1=0.2, lr=0.05, steps=2000, seed=1)
    )
    gd.advance(2000)
    assert gd.rail_share_mean < 0.1 and saturation_line(gd.rail_share_mean) is None


def test_shrinkage_against_the_fixed_point():
    for l1 in (1e-3, 0.04, 0.2, 1.0):
        w2 = fixed_point_norm2(l1)
        w = math.sqrt(w2)
        assert (1 - w2) * w == pytest.approx(l1 / 4, rel=1e-12) and w2 > 1 / 3
    assert math.isnan(fixed_point_norm2(4.0))  # l1/4 = 1 > 2/(3 sqrt 3): no balance
    # features alone under gd-zero settle at the fixed point: ratio 1
    p = InterferenceParams(n=4, m=8, optimizer="gd-zero", l1=0.2, lr=0.05, steps=4000, interference=False)
    run = InterferenceRun(p)
    run.advance(p.steps)
    mean, star, ratio = shrinkage(run.W, p.l1)
    assert ratio == pytest.approx(1.0, abs=1e-9) and star == fixed_point_norm2(0.2)
