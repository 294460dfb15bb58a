"""l1 and lr schedules in the interference model, against torch: the network y = ReLU(x W Wᵀ)
on the basis vectors with the paper's loss, trained by torch's own optimizers with its
LambdaLR (and LinearLR) schedulers and the l1 coefficient warmed up as SAELens does, all
written here; float64, so the kernels must agree to rounding (1e-10)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams, needs_restart
from sparsity_gui.core.interference.run import HISTORY_COLUMNS, InterferenceRun
from sparsity_gui.core.interference.schedules import lr_values

torch = pytest.importorskip("torch")


def torch_loss(W, l1: float):
    """The paper's loss, through the network: the batch is the n basis vectors."""
    X = torch.eye(W.shape[0], dtype=W.dtype)
    Y = torch.relu(X @ W @ W.T)
    return ((Y - X) ** 2).sum() + l1 * W.abs().sum()


def torch_training(w0, optimizer: str, steps: int, lr: float, l1_of_step, lr_factor, wd: float = 0.0):
    """``steps`` of torch's optimizer; step k (1-based) uses l1_of_step(k) and lr * lr_factor(k)
    through LambdaLR (whose epoch counter is k - 1 when step k runs). Returns W after each step."""
    W = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    if optimizer == "adamw":
        opt = torch.optim.AdamW([W], lr=lr, weight_decay=wd, eps=1e-8)
    elif optimizer == "adam":
        opt = torch.optim.Adam([W], lr=lr, weight_decay=wd, eps=1e-8)
    else:
        opt = torch.optim.SGD([W], lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: lr_factor(epoch + 1))
    out = []
    for k in range(1, steps + 1):
        opt.zero_grad()
        torch_loss(W, l1_of_step(k)).backward()
        opt.step()
        sched.step()
        out.append(W.detach().numpy().copy())
    return out


def warm(T):
    return lambda k: min(1.0, k / T)  # step k = 1, 2, ... (SAELens 6.54 uses (k - 1) / T)


def cosine_tail(steps, D):
    def factor(k):
        start = steps - D
        return 1.0 if k <= start else 0.5 * (1.0 + math.cos(math.pi * (k - start) / D))

    return factor


def linear_tail(steps, D):
    return lambda k: 1.0 if k <= steps - D else (steps - k) / D


def w0_of(n, m, seed=3):
    return np.random.default_rng(seed).standard_normal((n, m)) / math.sqrt(m)


def trained(params, w0, chunks):
    """Our run, advanced in the given chunk sizes (a schedule must not depend on them);
    W after each chunk."""
    run = InterferenceRun(params, w0=w0)
    out = []
    for c in chunks:
        run.advance(c)
        out.append(run.W.copy())
    return run, out


CASES = {
    "adamw, l1 and lr warm-up, cosine decay": dict(
        opt="adamw",
        params=dict(l1_warmup=40, lr_warmup=25, lr_decay="cosine", lr_decay_steps=50),
        l1=lambda k: 0.05 * warm(40)(k),
        lr=lambda k: warm(25)(k) * cosine_tail(150, 50)(k),
    ),
    "adam, lr knots and linear l1 knots": dict(
        opt="adam",
        params=dict(l1_schedule="0:0,60:0.02,100:0.05", lr_schedule="0:0.02,90:0.004,150:0.01"),
        l1=lambda k: float(np.interp(k, [0, 60, 100], [0, 0.02, 0.05])),
        lr=lambda k: float(np.interp(k, [0, 90, 150], [0.02, 0.004, 0.01])) / 0.01,
    ),
    "gd, l1 warm-up and linear decay": dict(
        opt="gd",
        params=dict(l1_warmup=30, lr_decay="linear", lr_decay_steps=70),
        l1=lambda k: 0.05 * warm(30)(k),
        lr=linear_tail(150, 70),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_schedules_train_as_torch_with_lambdalr(name):
    case = CASES[name]
    n, m, steps = 6, 10, 150
    base_lr = 0.01
    params = InterferenceParams(
        n=n,
        m=m,
        steps=steps,
        optimizer=case["opt"],
        l1=0.05,
        lr=base_lr,
        weight_decay=0.01 if case["opt"] == "adamw" else 0.0,
        **case["params"],
    )
    w0 = w0_of(n, m)
    expect = torch_training(
        w0, case["opt"], steps, base_lr, case["l1"], case["lr"], wd=params.effective_weight_decay
    )
    run, got = trained(params, w0, [1, 36, 63, 50])
    for k, W in zip([1, 37, 100, 150], got, strict=True):
        np.testing.assert_allclose(W, expect[k - 1], rtol=0, atol=1e-10, err_msg=f"{name}, step {k}")
    # the history's l1 and lr: those of the step that brought the run there
    h = run.history_array()
    col = {c: h[:, i] for i, c in enumerate(HISTORY_COLUMNS)}
    for step, l1, lr in zip(col["step"], col["l1"], col["lr"], strict=True):
        k = max(int(step), 1)
        assert l1 == pytest.approx(case["l1"](k), rel=1e-13, abs=1e-18)
        assert lr == pytest.approx(base_lr * case["lr"](k), rel=1e-13, abs=1e-18)


def test_gd_time_sums_the_lr_in_force():
    """t = 4 Σ lr_k under an lr schedule (the note's time of gradient descent)."""
    p = InterferenceParams(n=3, m=5, steps=120, optimizer="gd", l1=0.01, lr=0.02, lr_warmup=50)
    run = InterferenceRun(p, w0=w0_of(3, 5))
    run.advance(77)
    rec = run.record()
    assert rec.t == pytest.approx(4 * sum(0.02 * min(1.0, k / 50) for k in range(1, 78)), rel=1e-13)


def test_lr_warm_up_is_torchs_linear_lr():
    """--lr-warmup T is torch's LinearLR(start_factor=1/T, total_iters=T-1), SAELens' warm-up."""
    T, steps = 17, 40
    W = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([W], lr=0.3)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0 / T, end_factor=1.0, total_iters=T - 1)
    expect = []
    for _ in range(steps):
        expect.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    p = InterferenceParams(n=1, m=1, steps=steps, lr=0.3, lr_warmup=T)
    np.testing.assert_allclose(lr_values(p, 0, steps), expect, rtol=1e-14)


def test_gd_zero_sparse_path_follows_the_schedule_as_the_dense_one():
    """gd-zero on its nonzeros with a warm-up and a decay equals the dense products."""
    p = InterferenceParams(
        n=24, m=64, steps=600, optimizer="gd-zero", l1=0.2, lr=0.05, l1_warmup=200, lr_decay="cosine",
        lr_decay_steps=150,
    )  # fmt: skip
    w0 = w0_of(24, 64, seed=5)
    dense = InterferenceRun(p, w0=w0)
    dense.sparse_below = -1.0  # never
    sparse = InterferenceRun(p, w0=w0)
    sparse.sparse_below = 2.0  # always
    for chunk in (150, 150, 300):
        dense.advance(chunk)
        sparse.advance(chunk)
        np.testing.assert_allclose(sparse.W, dense.W, rtol=0, atol=1e-12)
    assert sparse.sparse_steps > 0 and dense.sparse_steps == 0


def test_without_a_schedule_the_run_is_the_constant_ones_bit_for_bit():
    """Schedule fields at their defaults: the same W and history as before schedules (the
    constant lr goes through the kernel as the same product)."""
    a = InterferenceParams(n=8, m=16, steps=200, optimizer="gd-zero", l1=0.1, lr=0.05)
    b = a.with_changes(l1_schedule=((0.0, 0.1),), lr_schedule=((0.0, 0.05),))  # constant knots
    ra, rb = InterferenceRun(a), InterferenceRun(b)
    ra.advance(200)
    rb.advance(200)
    np.testing.assert_array_equal(ra.W, rb.W)
    assert "l1_schedule" not in a.as_dict() and b.as_dict()["l1_schedule"] == [[0.0, 0.1]]


def test_a_live_change_ends_the_schedule_of_what_it_changes():
    p = InterferenceParams(
        n=4, m=8, steps=300, l1_warmup=100, lr_warmup=50, lr_decay="linear", lr_decay_steps=10
    )
    q = p.with_live_change(l1=2e-3)
    assert (q.l1, q.l1_warmup, q.lr_warmup, q.lr_decay) == (2e-3, 0, 50, "linear")
    assert not needs_restart(p, q)
    r = p.with_live_change(lr=5e-4)
    assert (r.lr, r.lr_warmup, r.lr_decay, r.lr_decay_steps, r.l1_warmup) == (5e-4, 0, "none", 0, 100)
    assert not needs_restart(p, r)
    assert needs_restart(p, p.with_changes(l1_warmup=20))  # a new schedule: a new run
    run = InterferenceRun(p)
    run.advance(30)
    run.params = q
    run.advance(1)
    assert run.record().l1 == 2e-3


BAD = {
    "warm-up and knots of l1": (dict(l1_warmup=10, l1_schedule="0:0,10:1e-3"), "do not go together"),
    "knots that end elsewhere": (dict(l1=1e-3, l1_schedule="0:0,10:2e-3"), "must be the same"),
    "decay without its length": (dict(lr_decay="linear"), "goes with --lr-decay"),
    "a length without a decay": (dict(lr_decay_steps=10), "goes with --lr-decay"),
    "an unknown decay": (dict(lr_decay="step", lr_decay_steps=3), "must be one of none, linear, cosine"),
    "a negative warm-up": (dict(lr_warmup=-1), "from 0 to"),
    "a fractional warm-up": (dict(l1_warmup=2.5), "whole number"),
    "steps out of order": (dict(lr=1e-3, lr_schedule="5:1e-3,2:1e-3"), "knot steps must increase"),
    "an lr above 1": (dict(lr=1e-3, lr_schedule="0:2,9:1e-3"), "every lr must be from 0 to 1"),
    "lr knots with a decay": (
        dict(lr=1e-3, lr_schedule="0:0,9:1e-3", lr_decay="cosine", lr_decay_steps=3),
        "do not go together",
    ),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_schedules_name_their_field(name):
    fields, words = BAD[name]
    with pytest.raises(InputError, match=words):
        InterferenceParams(n=2, m=3, steps=20, **fields)
