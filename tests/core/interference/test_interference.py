"""The n-encoding model with interference (core/interference/) against independent
references: the single-row core (n = 1 and interference off), a brute-force interference
term, the network's loss as a forward pass with finite-difference and backprop gradients,
a DOP853 integration of the n x m flow, numpy Adam/AdamW written from torch's pseudo-code,
the paper's counts done by hand, and the paper's claim that colliding features have
opposite signs.

Every expected number is computed here or in interference_oracles (which does not import
sparsity_gui); nothing is copied from the package's output.
"""

from __future__ import annotations

import itertools
import math

import interference_oracles as IO
import numpy as np
import pytest
from note_oracles import gd_reference

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.kernels import interference_push, measure
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS, InterferenceRun
from sparsity_gui.core.note.solvers import ExactSolver, GDSolver, InitialState


def normal_w(shape, seed: int, sigma: float = 0.9) -> np.ndarray:
    m = shape[-1]
    return np.random.default_rng(seed).standard_normal(shape) * (sigma / math.sqrt(m))


def away_from_zero(n: int, m: int, seed: int, lo: float = 0.25, hi: float = 0.6) -> np.ndarray:
    """Random signs, magnitudes in [lo, hi]: no weight near zero, so L1 is smooth."""
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, (n, m)) * rng.choice([-1.0, 1.0], (n, m))


# Adam against the numpy reference: rtol 1e-10, plus an absolute 1e-11 on O(1) weights for
# the weights L1 keeps chattering around zero (|w| ~ 1e-5 .. 1e-3), whose few-ulp rounding
# differences in the update lr m/(sqrt(v)+eps) are large relative to the weight itself.
ADAM_ATOL = 1e-11


def gd_params(n, m, lam, eta, optimizer="gd-zero", steps=10**6, **kw) -> InterferenceParams:
    """The network's units for the note's lam and eta: l1 = 4 lam, lr = eta / 4."""
    return InterferenceParams(n=n, m=m, l1=4.0 * lam, lr=eta / 4.0, optimizer=optimizer, steps=steps, **kw)


# ------------------------------------------------------------------------------------------
# 1. n = 1 is the single-row core


@pytest.mark.parametrize("eta,lam", [(0.05, 0.02), (0.2, 0.01), (0.01, 0.005)])
def test_one_row_sorted_matches_core_step_by_step(eta, lam):
    """n = 1, gd-zero, positive descending W(0): the same row as the core GDSolver at
    every step (to a few ulps: the core's kernel is compiled with fastmath 'contract', so
    a*g - h is one fused multiply-add there and two roundings here), the same weights dead
    at the same steps; and bitwise equal to a scalar Python oracle doing the note's step
    with one rounding per operation."""
    m = 40
    w0 = np.sort(np.abs(normal_w((m,), 3)))[::-1].copy()
    p = gd_params(1, m, lam, eta)
    assert p.lam == lam and p.eta == eta
    run = InterferenceRun(p, w0=w0[None, :])
    core = GDSolver(InitialState.from_weights(w0), lam, eta)
    done = 0
    for chunk in [1] * 60 + [2, 7, 90, 400, 1200]:
        run.advance(chunk)
        core.step(chunk)
        done += chunk
        assert run.step == core.steps == done
        w, c = run.W[0], core.weights()
        # ulps grow over 1800 steps; near a death |w| g - h cancels, hence the atol
        np.testing.assert_allclose(w, c, rtol=1e-12, atol=1e-13 * w0.max())
        assert np.array_equal(w == 0.0, c == 0.0)  # the same deaths, at the same step
    assert 1 <= np.count_nonzero(run.W) <= m - 10  # deaths happened
    assert run.failure is None
    # the same number of steps in one go and in Python scalars: bit for bit
    one_go = InterferenceRun(p, w0=w0[None, :])
    one_go.advance(done)
    assert np.array_equal(one_go.W, run.W)
    assert np.array_equal(run.W[0], IO.gd_zero_row_sequential(w0, p.lr, p.l1, done))


@pytest.mark.parametrize("seed", [21, 22])
def test_one_row_signed_with_zeros_matches_core(seed):
    """n = 1, gd-zero, W(0) of both signs in input order with exact zeros (first and last
    included): equals the core GDSolver and oracles.gd_reference to rtol 1e-12, with the
    same zero pattern, over several chunk sizes and many deaths."""
    m = 40
    w0 = normal_w((m,), seed)
    w0[[0, 3, 17, m - 1]] = 0.0
    lam, eta = 0.02, 0.05
    p = gd_params(1, m, lam, eta)
    run = InterferenceRun(p, w0=w0[None, :])
    core = GDSolver(InitialState.from_weights(w0), lam, eta)
    w_ref = w0.copy()
    for chunk in [1, 2, 7, 90, 300, 1000]:
        run.advance(chunk)
        core.step(chunk)
        w_ref, _ = gd_reference(w_ref, eta, lam, chunk)
        w = run.W[0]
        for other in (core.weights(), w_ref):
            np.testing.assert_allclose(w, other, rtol=1e-12, atol=1e-14 * np.abs(w0).max())
            assert np.array_equal(w == 0.0, other == 0.0)
        assert np.all(np.sign(w)[w != 0] == np.sign(w0)[w != 0])  # the zero rule: no flips
    assert np.count_nonzero(run.W) <= 3  # most weights died on the way


def test_one_row_converges_to_the_exact_flow_at_first_order():
    """n = 1 gd-zero at lr, lr/2, lr/4 against the core's exact flow at lam = l1/4 and
    t = 4 lr steps: the error at a fixed time after several deaths halves with lr."""
    m, lam, T = 20, 0.02, 8.0
    w0 = normal_w((m,), 7)
    exact = ExactSolver(InitialState.from_weights(w0), lam)
    exact.advance_to(T)
    w_exact = exact.weights()
    assert exact.moments().nonzero < m  # deaths happened before T
    errors = []
    for lr in [0.005, 0.0025, 0.00125]:
        p = InterferenceParams(n=1, m=m, optimizer="gd-zero", l1=4 * lam, lr=lr, steps=10**6)
        steps = round(T / p.eta)
        assert p.time_of(steps) == pytest.approx(T, rel=1e-14)
        run = InterferenceRun(p, w0=w0[None, :])
        assert run.advance(steps) == steps
        assert np.array_equal(run.W[0] == 0.0, w_exact == 0.0)
        errors.append(float(np.max(np.abs(run.W[0] - w_exact))))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all((orders >= 0.8) & (orders <= 1.2)), (errors, orders)
    assert errors[-1] < 1e-3


# ------------------------------------------------------------------------------------------
# 2. Interference off: n independent rows


def test_no_interference_gd_zero_is_n_core_rows():
    """interference=False, gd-zero, n = 5 overlapping rows (their dot products are far from
    zero, so interference would matter): each row equals the core GDSolver run on that row
    alone and oracles.gd_reference (rtol 1e-12, same zeros); with interference on, they
    do not."""
    n, m, lam, eta = 5, 30, 0.02, 0.05
    W0 = normal_w((n, m), 11)
    W0[:, :3] = 0.4  # shared positive weights: W_i . W_j > 0 for every pair
    W0[2, 5] = 0.0
    p = gd_params(n, m, lam, eta, interference=False)
    run = InterferenceRun(p, w0=W0)
    cores = [GDSolver(InitialState.from_weights(W0[i]), lam, eta) for i in range(n)]
    refs = [W0[i].copy() for i in range(n)]
    for chunk in [1, 5, 50, 400, 1000]:
        run.advance(chunk)
        for i in range(n):
            cores[i].step(chunk)
            refs[i], _ = gd_reference(refs[i], eta, lam, chunk)
            for other in (cores[i].weights(), refs[i]):
                np.testing.assert_allclose(run.W[i], other, rtol=1e-12, atol=1e-14)
                assert np.array_equal(run.W[i] == 0.0, other == 0.0)
    on = InterferenceRun(p.with_changes(interference=True), w0=W0)
    on.advance(run.step)
    assert np.max(np.abs(on.W - run.W)) > 1e-2


@pytest.mark.parametrize("optimizer,wd", [("adam", None), ("adam", 0.05), ("adamw", None), ("adamw", 0.2)])
def test_no_interference_adam_is_n_single_rows(optimizer, wd):
    """interference=False with Adam/AdamW: each row is bitwise an n = 1 run of that row,
    and matches the numpy Adam reference on the one-row network loss to rtol 1e-10."""
    n, m, steps = 4, 12, 300
    W0 = normal_w((n, m), 5)
    W0[:, :2] = 0.5
    p = InterferenceParams(
        n=n, m=m, optimizer=optimizer, l1=0.01, lr=0.01, steps=steps, interference=False, weight_decay=wd
    )
    run = InterferenceRun(p, w0=W0)
    run.advance(120)
    run.advance(steps)  # clamped at p.steps
    assert run.step == steps and run.failure is None
    wd_eff = (0.01 if optimizer == "adamw" else 0.0) if wd is None else wd
    for i in range(n):
        single = InterferenceRun(p.with_changes(n=1), w0=W0[i : i + 1])
        single.advance(steps)
        assert np.array_equal(single.W[0], run.W[i])
        ref = IO.adam_reference(
            W0[i : i + 1],
            lambda W: IO.network_grad_backprop(W, p.l1),
            steps,
            p.lr,
            weight_decay=wd_eff,
            decoupled=optimizer == "adamw",
        )
        np.testing.assert_allclose(run.W[i], ref[0], rtol=1e-10, atol=ADAM_ATOL)
    assert not np.allclose(run.W, W0, atol=0.05)  # the run went somewhere


# ------------------------------------------------------------------------------------------
# 3. The interference term


def test_interference_push_matches_double_loop_random():
    """Random W of both signs (several shapes): interference_push equals the brute-force
    double loop with explicit dot products."""
    for seed, (n, m) in enumerate([(2, 3), (3, 2), (7, 5), (20, 33), (40, 8)]):
        W = np.random.default_rng(seed).standard_normal((n, m))
        out = np.full((n, m), np.nan)
        interference_push(W, out)
        ref = IO.interference_push_loops(W)
        G = W @ W.T
        off = ~np.eye(n, dtype=bool)
        if n > 3:
            assert (G[off] > 0).any() and (G[off] < 0).any()  # both cases are exercised
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.abs(W).max() ** 3 * m * n)


def test_interference_push_hand_built():
    """W with dot products exactly 0 (orthogonal rows), negative (opposite signs on a shared
    neuron) and positive: only positive overlaps push; the values are worked by hand."""
    W = np.array(
        [
            [1.0, 0.0, 0.0, 0.5],  # row 0
            [0.0, 2.0, 0.0, 0.0],  # row 1: orthogonal to 0 and 2
            [-1.0, 0.0, 0.0, 0.5],  # row 2: W0.W2 = -1 + 0.25 < 0
            [0.5, 0.0, 3.0, 0.0],  # row 3: W0.W3 = 0.5 > 0, W2.W3 = -0.5 < 0
            [0.0, 0.0, 0.0, 0.0],  # row 4: all zero
        ]
    )
    out = np.zeros_like(W)
    interference_push(W, out)
    expected = np.zeros_like(W)
    expected[0] = 0.5 * W[3]
    expected[3] = 0.5 * W[0]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(IO.interference_push_loops(W), expected)


# ------------------------------------------------------------------------------------------
# 4. The mapping to the network: loss, gradient, plain GD


def test_backprop_oracle_matches_finite_differences():
    """The oracle's two gradients of the forward-pass loss agree (so either can drive the
    optimizer references): backprop vs central differences, to 1e-7 relative."""
    for seed in range(3):
        W = away_from_zero(3, 5, seed)
        fd = IO.network_grad_fd(W, 0.03)
        bp = IO.network_grad_backprop(W, 0.03)
        np.testing.assert_allclose(bp, fd, rtol=1e-7, atol=1e-7 * np.abs(fd).max())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gd_is_gradient_descent_on_the_network_loss(seed):
    """n = 3, m = 5: plain GD W <- W - lr grad, grad by central finite differences of the
    forward-pass loss sum_x |ReLU(W W^T x) - x|^2 + l1 |W|_1. 'gd' and, as no weight
    crosses zero, 'gd-zero' match it at every checkpoint to 1e-6 relative; run.loss() is
    the forward-pass loss."""
    n, m, lr, l1, steps = 3, 5, 0.005, 0.02, 40
    W0 = away_from_zero(n, m, seed)
    G0 = W0 @ W0.T
    off = ~np.eye(n, dtype=bool)
    assert (G0[off] > 0.05).any()  # interference acts
    path = IO.gd_on_network(W0, lr, steps, lambda W: IO.network_grad_fd(W, l1))
    assert all(np.array_equal(np.sign(P), np.sign(W0)) for P in path)  # no crossing
    assert np.abs(path[-1] - W0).max() > 0.05  # and a visible move
    for opt in ("gd", "gd-zero"):
        p = InterferenceParams(n=n, m=m, lr=lr, l1=l1, optimizer=opt, steps=steps)
        run = InterferenceRun(p, w0=W0)
        assert run.loss() == pytest.approx(IO.network_loss(W0, l1), rel=1e-13)
        for chunk in [1, 4, 15, 20]:
            run.advance(chunk)
            np.testing.assert_allclose(run.W, path[run.step], rtol=1e-6, atol=1e-9)
            assert run.loss() == pytest.approx(IO.network_loss(run.W, l1), rel=1e-12)
            assert run.measure().loss == pytest.approx(IO.network_loss(run.W, l1), rel=1e-12)
        assert run.step == steps and run.finished


def test_plain_gd_through_zero_crossings_is_gd_on_the_network_loss():
    """'gd' has no zero rule: with l1 large enough that weights cross zero and chatter, and
    some weights exactly 0 at the start, it is still W <- W - lr grad with torch's
    |.|'(0) = 0 (the backprop oracle), to 1e-9;
    gd-zero from the same W(0) differs (it kills the crossing weights)."""
    n, m, lr, l1, steps = 4, 6, 0.01, 0.2, 300
    W0 = normal_w((n, m), 12, sigma=1.0)
    W0[0, :2] = W0[3, 5] = 0.0  # exact zeros start with sign 0: only the push moves them
    path = IO.gd_on_network(W0, lr, steps, lambda W: IO.network_grad_backprop(W, l1))
    flips = sum(int(np.sum(np.sign(a) * np.sign(b) < 0)) for a, b in itertools.pairwise(path))
    assert flips >= 10  # weights really cross zero
    run = InterferenceRun(InterferenceParams(n=n, m=m, lr=lr, l1=l1, optimizer="gd", steps=steps), w0=W0)
    for chunk in [1, 9, 90, 200]:
        run.advance(chunk)
        np.testing.assert_allclose(run.W, path[run.step], rtol=1e-9, atol=1e-12)
    zero = InterferenceRun(
        InterferenceParams(n=n, m=m, lr=lr, l1=l1, optimizer="gd-zero", steps=steps), w0=W0
    )
    zero.advance(steps)
    assert np.count_nonzero(zero.W) < np.count_nonzero(run.W)


def test_loss_on_hand_built_weights():
    """run.loss() and Measurement.loss against the forward pass, on W with a negative and a
    zero overlap and a zero row (l1 = 0 and l1 > 0)."""
    W = np.array([[1.0, 0.5, 0.0], [-0.5, 0.0, 0.8], [0.0, 0.0, 0.0], [0.3, 0.2, -0.1]])
    for l1 in (0.0, 0.4):
        run = InterferenceRun(InterferenceParams(n=4, m=3, l1=l1, optimizer="gd"), w0=W)
        assert run.loss() == pytest.approx(IO.network_loss(W, l1), rel=1e-14)
        assert run.history_array()[0, HISTORY_COLUMNS.index("loss")] == pytest.approx(
            IO.network_loss(W, l1), rel=1e-14
        )


# ------------------------------------------------------------------------------------------
# 5. The flow with interference


def test_gd_zero_converges_to_the_interference_flow_at_first_order():
    """n = 4, m = 6, W(0) away from zero, T = 0.5 (no weight crosses zero): gd-zero at
    lr, lr/2, lr/4 (t = 4 lr steps) against scipy DOP853 at rtol 1e-12 on the full n x m
    flow. The error halves with lr and is O(lr)."""
    n, m, lam, T = 4, 6, 0.01, 0.5
    W0 = away_from_zero(n, m, 3, lo=0.2, hi=0.55)
    G0 = W0 @ W0.T
    assert (G0[~np.eye(n, dtype=bool)] > 0.05).any()
    W_T = IO.interference_flow(W0, lam, T)
    assert np.abs(W_T - W0).max() > 0.05
    errors = []
    for k in range(3):
        lr = 0.0025 / 2**k
        steps = 50 * 2**k
        p = InterferenceParams(n=n, m=m, l1=4 * lam, lr=lr, optimizer="gd-zero", steps=steps)
        assert p.time_of(steps) == pytest.approx(T, rel=1e-14)
        run = InterferenceRun(p, w0=W0)
        run.advance(steps)
        errors.append(float(np.max(np.abs(run.W - W_T))))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all((orders >= 0.85) & (orders <= 1.15)), (errors, orders)
    assert errors[-1] < 2e-3
    assert errors[0] / (0.0025 * 4) < 1.0  # the constant of the O(eta) error is modest


def _compare_with_zero_rule_reference(p, W0, steps, chunks):
    """Run p from W0 in chunks and the numpy zero-rule reference one step at a time;
    compare at every chunk end. Returns (revivals, deaths) seen by the reference."""
    run = InterferenceRun(p, w0=W0)
    W = np.array(W0, dtype=np.float64)
    revivals = deaths = done = 0
    for chunk in chunks:
        run.advance(chunk)
        for _ in range(chunk):
            new, _, unstable = IO.gd_zero_reference(W, p.lr, p.l1, 1)
            assert not unstable
            revivals += int(np.sum((W == 0.0) & (new != 0.0)))
            deaths += int(np.sum((W != 0.0) & (new == 0.0)))
            W = new
        done += chunk
        assert run.step == done and run.failure is None
        np.testing.assert_allclose(run.W, W, rtol=1e-10, atol=1e-13)
        assert np.array_equal(run.W == 0.0, W == 0.0)
    return revivals, deaths


def test_gd_zero_weight_at_zero_leaves_it_when_the_push_beats_lam():
    """The zero rule with interference, hand-built: rows 0 and 1 overlap (W_0 . W_1 = 0.49
    > 0), so row 1's zero weight on neuron 1 feels a push 0.49 * 0.5 > lam and leaves zero
    with the sign opposite to row 0's, while other weights die. Against the numpy
    reference of the rule (every step, 400 steps)."""
    W0 = np.array([[0.7, 0.5, 0.0, 0.1], [0.7, 0.0, 0.3, -0.2], [0.0, 0.0, 0.0, 0.9]])
    p = InterferenceParams(n=3, m=4, optimizer="gd-zero", lr=0.02, l1=0.04, steps=10**6)
    revivals, deaths = _compare_with_zero_rule_reference(p, W0, 400, [1, 1, 1, 7, 40, 350])
    assert revivals >= 1 and deaths >= 1
    run = InterferenceRun(p, w0=W0)
    run.advance(1)
    assert run.W[1, 1] < 0.0  # left zero on the first step, away from row 0's +0.5


@pytest.mark.parametrize("seed", [0, 2])
def test_gd_zero_with_interference_matches_numpy_reference(seed):
    """n = 6, m = 10, lam = 0.05 through sparsification (dozens of deaths, some weights
    leaving zero again): equal to the numpy zero-rule reference with the brute-force
    interference term, same zero pattern at every checkpoint."""
    W0 = normal_w((6, 10), seed, sigma=1.0)
    p = InterferenceParams(n=6, m=10, optimizer="gd-zero", lr=0.02, l1=0.2, steps=10**6)
    revivals, deaths = _compare_with_zero_rule_reference(p, W0, 600, [1, 3, 16, 80, 200, 300])
    assert deaths >= 40 and revivals >= 1


# ------------------------------------------------------------------------------------------
# 6. Adam and AdamW


ADAM_CASES = [
    # (optimizer, weight_decay, beta1, beta2, eps)
    ("adam", None, 0.9, 0.999, 1e-8),
    ("adam", 0.05, 0.9, 0.999, 1e-8),
    ("adamw", None, 0.9, 0.999, 1e-8),  # torch's default decoupled weight decay 0.01
    ("adamw", 0.3, 0.9, 0.999, 1e-8),
    ("adamw", 0.1, 0.8, 0.99, 1e-6),
]


@pytest.mark.parametrize("optimizer,wd,beta1,beta2,eps", ADAM_CASES)
def test_adam_matches_numpy_torch_reference(optimizer, wd, beta1, beta2, eps):
    """n = 4, m = 6 with interference, 400 steps in uneven chunks (the bias corrections
    need the global step): equal to the numpy implementation of torch's Adam/AdamW
    pseudo-code, driven by the backprop gradient of the forward-pass loss, to rtol 1e-10."""
    n, m, lr, l1, steps = 4, 6, 0.01, 0.02, 400
    W0 = normal_w((n, m), 9, sigma=1.0)
    p = InterferenceParams(
        n=n,
        m=m,
        optimizer=optimizer,
        lr=lr,
        l1=l1,
        steps=steps,
        weight_decay=wd,
        beta1=beta1,
        beta2=beta2,
        eps=eps,
    )
    wd_eff = (0.01 if optimizer == "adamw" else 0.0) if wd is None else wd
    assert p.effective_weight_decay == wd_eff
    run = InterferenceRun(p, w0=W0)
    for chunk in [1, 2, 37, 160, 200]:
        run.advance(chunk)
    assert run.step == steps and run.failure is None
    ref = IO.adam_reference(
        W0,
        lambda W: IO.network_grad_backprop(W, l1),
        steps,
        lr,
        beta1,
        beta2,
        eps,
        weight_decay=wd_eff,
        decoupled=optimizer == "adamw",
    )
    np.testing.assert_allclose(run.W, ref, rtol=1e-10, atol=ADAM_ATOL)
    assert np.abs(ref - W0).max() > 0.3  # it trained
    assert run.loss() < IO.network_loss(W0, l1)


def test_adam_and_adamw_are_different_with_weight_decay():
    """The same weight decay is L2 in Adam and decoupled in AdamW: different runs (each
    checked against the reference above), and with weight decay 0 the two are identical."""
    W0 = normal_w((3, 5), 2, sigma=1.0)
    runs = {}
    for opt in ("adam", "adamw"):
        for wd in (0.0, 0.2):
            r = InterferenceRun(
                InterferenceParams(n=3, m=5, optimizer=opt, lr=0.01, l1=0.01, steps=200, weight_decay=wd),
                w0=W0,
            )
            r.advance(200)
            runs[opt, wd] = r.W
    assert np.array_equal(runs["adam", 0.0], runs["adamw", 0.0])
    assert np.abs(runs["adam", 0.2] - runs["adamw", 0.2]).max() > 1e-4


# ------------------------------------------------------------------------------------------
# 7. Active weights, polysemantic neurons, colliding pairs, kept share


def hand_built_W() -> np.ndarray:
    """6 features x 5 neurons, worked by hand:
    neuron 0: +1, +0.9, -1.1 active (2 opposite pairs, 1 same pair)
    neuron 1: 0.8 and -1.2 exactly (active, boundaries inclusive): 1 opposite pair
    neuron 2: 0.79999, 1.20001, -0.5, 1.0: only 1.0 active -> not polysemantic
    neuron 3: -0.8, -1.0, -1.2: 3 same pairs
    neuron 4: nothing active"""
    W = np.zeros((6, 5))
    W[0, 0], W[1, 0], W[2, 0] = 1.0, 0.9, -1.1
    W[3, 1], W[4, 1] = 0.8, -1.2
    W[0, 2], W[1, 2], W[2, 2], W[5, 2] = 0.79999, 1.20001, -0.5, 1.0
    W[3, 3], W[4, 3], W[5, 3] = -0.8, -1.0, -1.2
    W[0, 4], W[5, 4] = 0.3, -1.3
    return W


def test_measure_on_hand_built_weights():
    """The measure kernel on hand_built_W against counts worked by hand (docstring above)
    and against the oracle's counts: the paper's ((|W| >= 0.8) & (|W| <= 1.2)).sum(axis=0)
    and a pair-by-pair enumeration of colliding pairs."""
    W = hand_built_W()
    counts = np.full(5, -7, dtype=np.int64)
    first = np.array([0, 0, 0, 1, 1, 3], dtype=np.int64)  # W(0)'s largest neuron per feature
    poly, active, opp, same, kept, nonzero, norm1 = measure(W, first, counts)
    np.testing.assert_array_equal(counts, [3, 2, 1, 3, 0])
    assert (poly, active, opp, same) == (3, 9, 3, 4)
    # largest |w| per feature: 0 -> neuron 0 (1.0 vs 0.79999), 1 -> neuron 2 (1.20001),
    # 2 -> 0 (1.1), 3 -> 1 (0.8 ties with -0.8 on neuron 3: the first wins, as np.argmax),
    # 4 -> 1 (1.2), 5 -> 4 (1.3): against first = [0, 0, 0, 1, 1, 3], features 0, 2, 3, 4 kept
    assert np.argmax(np.abs(W), axis=1).tolist() == [0, 2, 0, 1, 1, 4]
    assert kept == 4
    first[3] = 3  # the tie broken the other way: not kept
    assert measure(W, first, counts)[4] == 3
    assert nonzero == np.count_nonzero(W)
    assert norm1 == pytest.approx(np.abs(W).sum(), rel=1e-15)
    # the independent counts agree
    np.testing.assert_array_equal(counts, IO.active_counts(W))
    assert IO.colliding_pairs(W) == (3, 4)
    assert poly == int((((np.abs(W) >= 0.8) & (np.abs(W) <= 1.2)).sum(axis=0) > 1).sum())


def test_measurement_of_a_run_on_hand_built_weights():
    """Through InterferenceRun: the measurement at step 0 (kept share 1 by definition) and
    the counts array; after some training the kept share is the share of features whose
    argmax |w| neuron is still the one of W(0), counted here with numpy."""
    W = hand_built_W()
    run = InterferenceRun(InterferenceParams(n=6, m=5, optimizer="gd", lr=0.01, l1=0.01, steps=1000), w0=W)
    meas = run.measure()
    np.testing.assert_array_equal(run.counts, IO.active_counts(W))
    light = run.measure(with_loss=False)  # the cheap measurement: the same counts, no loss
    assert math.isnan(light.loss)
    assert (light.polysemantic, light.active, light.kept_share) == (meas.polysemantic, meas.active, 1.0)
    assert (meas.polysemantic, meas.active, meas.opposite_pairs, meas.same_pairs) == (3, 9, 3, 4)
    assert meas.kept_share == 1.0 and meas.step == 0 and meas.t == 0.0
    assert meas.nonzero == np.count_nonzero(W)
    assert meas.mean_norm2 == pytest.approx(np.mean(np.sum(W * W, axis=1)), rel=1e-14)
    assert meas.predicted == pytest.approx(6 * 6 / (4 * 5))
    # a random run: the paper-style counts on whatever W it reached
    W0 = normal_w((12, 10), 4, sigma=1.0)
    run = InterferenceRun(
        InterferenceParams(n=12, m=10, optimizer="adamw", lr=0.01, l1=0.01, steps=500), w0=W0
    )
    run.advance(500)
    meas = run.record()
    Wt = run.W
    paper_poly = int((((np.abs(Wt) >= 0.8) & (np.abs(Wt) <= 1.2)).sum(axis=0) > 1).sum())
    assert meas.polysemantic == paper_poly
    assert meas.active == int(IO.active_counts(Wt).sum())
    assert (meas.opposite_pairs, meas.same_pairs) == IO.colliding_pairs(Wt)
    kept = np.mean(np.argmax(np.abs(Wt), axis=1) == np.argmax(np.abs(W0), axis=1))
    assert meas.kept_share == kept
    assert meas.step == 500 and math.isnan(meas.t)  # Adam's steps have no note time
    assert meas.active > 0  # the counts are exercised on a trained W


# ------------------------------------------------------------------------------------------
# 8. The paper's claim: collisions are of opposite sign


def test_converged_collisions_are_of_opposite_sign():
    """gd-zero with interference, n = 48 features on m = 128 neurons, lam = 0.05, trained
    to a fixed point (a further 500 steps change nothing): every feature keeps exactly one
    weight, at the no-interference fixed point (1 - w^2) w = lam (so |W_i|^2 is w*^2, near
    1); two features of equal sign on a neuron would push each other apart, so every
    colliding pair is of opposite sign; some seeds do collide."""
    n, m, lam = 48, 128, 0.05
    w_star = IO.fixed_point_single_weight(lam)
    collisions = 0
    for seed in range(4):
        p = InterferenceParams(n=n, m=m, optimizer="gd-zero", l1=4 * lam, lr=0.05, steps=20000, seed=seed)
        run = InterferenceRun(p)
        run.advance(5000)
        before = run.W.copy()
        run.advance(500)
        assert run.failure is None
        W = run.W
        assert np.max(np.abs(W - before)) < 1e-12  # converged
        assert np.all(np.count_nonzero(W, axis=1) == 1)
        np.testing.assert_allclose(np.abs(W).max(axis=1), w_star, rtol=1e-9)
        np.testing.assert_allclose(np.sum(W * W, axis=1), w_star**2, rtol=1e-9)
        assert np.all(np.abs(np.sum(W * W, axis=1) - 1.0) < 0.06)
        opp, same = IO.colliding_pairs(W)
        meas = run.measure()
        assert same == 0 and meas.same_pairs == 0
        assert meas.opposite_pairs == opp
        assert meas.polysemantic == int((IO.active_counts(W) > 1).sum())
        # no positive overlap is left: the interference push is zero
        G = W @ W.T
        assert np.all(G[~np.eye(n, dtype=bool)] <= 0.0)
        collisions += opp
    assert collisions >= 1


# ------------------------------------------------------------------------------------------
# 9. Validation


GOOD = {"n": 3, "m": 4, "l1": 0.01, "lr": 0.01, "optimizer": "gd", "steps": 10}


@pytest.mark.parametrize(
    "changes,field",
    [
        ({"n": 0}, "n"),
        ({"n": -2}, "n"),
        ({"n": 2.0}, "n"),
        ({"n": True}, "n"),
        ({"m": 65537}, "m"),
        ({"n": 4097}, "n"),
        ({"m": 0}, "m"),
        ({"lr": 0.0}, "lr"),
        ({"lr": -0.1}, "lr"),
        ({"lr": 1.5}, "lr"),
        ({"lr": float("nan")}, "lr"),
        ({"l1": -1e-9}, "l1"),
        ({"l1": float("nan")}, "l1"),
        ({"l1": float("inf")}, "l1"),
        ({"l1": 5.0}, "l1"),
        ({"optimizer": "sgd"}, "optimizer"),
        ({"steps": 0}, "steps"),
        ({"steps": 1.5}, "steps"),
        ({"seed": -1}, "seed"),
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": float("nan")}, "sigma"),
        ({"beta1": 1.0}, "beta1"),
        ({"beta1": -0.1}, "beta1"),
        ({"beta2": 1.0}, "beta2"),
        ({"beta2": float("nan")}, "beta2"),
        ({"eps": 0.0}, "eps"),
        ({"eps": -1e-8}, "eps"),
        ({"weight_decay": -0.1}, "weight_decay"),
        ({"weight_decay": float("inf")}, "weight_decay"),
        ({"weight_decay": 100.0, "lr": 0.01}, "weight_decay"),  # wd * lr = 1
        ({"interference": "yes"}, "interference"),
    ],
)
def test_bad_params_raise_input_error(changes, field):
    """Each bad value alone raises InputError naming the field (and the message names it)."""
    with pytest.raises(InputError) as e:
        InterferenceParams(**{**GOOD, **changes})
    assert e.value.field == field
    assert field in str(e.value)


@pytest.mark.parametrize(
    "w0,field",
    [
        (np.zeros((4, 3)), "w0"),  # transposed
        (np.zeros((3, 5)), "w0"),
        (np.zeros(12), "w0"),
        (np.array([[0.1, np.nan, 0.0, 0.0]] * 3), "w0"),
        (np.array([[0.1, 0.2, np.inf, 0.0]] * 3), "w0"),
    ],
)
def test_bad_w0_raises_input_error(w0, field):
    """A W(0) of the wrong shape or with a non-finite value is refused, field 'w0'."""
    with pytest.raises(InputError) as e:
        InterferenceRun(InterferenceParams(**GOOD), w0=w0)
    assert e.value.field == field


def test_good_params_and_units():
    """Valid edge values are accepted; lam = l1/4, eta = 4 lr, t = 4 lr steps; the run
    copies w0 (the caller's array is not written)."""
    p = InterferenceParams(n=1, m=1, l1=0.0, lr=1.0, optimizer="adamw", steps=1, beta1=0.0, beta2=0.0)
    assert p.lam == 0.0 and p.eta == 4.0
    p = InterferenceParams(**{**GOOD, "l1": 0.2, "lr": 0.03})
    assert p.lam == pytest.approx(0.05) and p.eta == pytest.approx(0.12)
    assert p.time_of(10) == pytest.approx(1.2)
    assert p.effective_weight_decay == 0.0
    assert p.with_changes(optimizer="adamw").effective_weight_decay == 0.01
    w0 = away_from_zero(3, 4, 0)
    keep = w0.copy()
    run = InterferenceRun(p, w0=w0)
    run.advance(10)
    assert np.array_equal(w0, keep) and not np.array_equal(run.W, keep)


# ------------------------------------------------------------------------------------------
# 10. Divergence


def test_plain_gd_with_huge_lr_diverges_and_stops():
    """'gd' at lr = 1 (eta = 4) from rows of norm about 2: 1 + eta (1 - |W|^2) is about -11,
    so |W| grows without bound until it overflows. The run stops, says so, and moves no
    further."""
    W0 = np.full((3, 4), 1.0)
    W0[1] *= -1.0
    p = InterferenceParams(n=3, m=4, optimizer="gd", lr=1.0, l1=0.01, steps=10000)
    run = InterferenceRun(p, w0=W0)
    taken = run.advance(10000)
    assert run.failure is not None and "diverged" in run.failure and "lr" in run.failure
    assert 0 < taken < 100 and run.step == taken and run.finished
    assert not np.all(np.isfinite(run.norm2))
    assert run.advance(100) == 0 and run.step == taken


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_adam_never_reports_gd_instability(optimizer):
    """The row-flip check is a GD matter: Adam from the same large W(0) at lr = 1 takes
    bounded steps (at most lr per weight per step), so it runs to the end."""
    W0 = np.full((3, 4), 1.0)
    run = InterferenceRun(
        InterferenceParams(n=3, m=4, optimizer=optimizer, lr=1.0, l1=0.01, steps=200), w0=W0
    )
    assert run.advance(200) == 200 and run.failure is None
    assert np.all(np.isfinite(run.W))


def test_gd_zero_unstable_at_first_step_keeps_w0():
    """gd-zero at eta = 1 from a row with |W|^2 = 2.5: 1 + eta (1 - |W|^2) = -0.5 <= 0
    would flip the whole row, so no step is taken: W is still W(0), the failure names
    step 1, and further advances do nothing."""
    W0 = away_from_zero(3, 5, 1, lo=0.1, hi=0.3)
    W0[1] = W0[1] / np.linalg.norm(W0[1]) * math.sqrt(2.5)
    p = InterferenceParams(n=3, m=5, optimizer="gd-zero", lr=0.25, l1=0.01, steps=100)
    run = InterferenceRun(p, w0=W0)
    assert run.advance(50) == 0
    assert run.failure is not None and "unstable at step 1" in run.failure
    assert run.step == 0 and run.finished
    assert np.array_equal(run.W, W0)
    assert run.advance(5) == 0
    _, done, unstable = IO.gd_zero_reference(W0, p.lr, p.l1, 50)
    assert unstable and done == 0


def test_gd_zero_unstable_mid_run_keeps_last_good_state():
    """gd-zero at eta = 1.9 (past the stability limit ~1): the oscillation of |W_i|^2 around
    balance grows until a row would flip. The run stops before that step: W equals a fresh
    run advanced by exactly run.step steps (bitwise), every row of it passes the check
    1 + eta (1 - |W_i|^2) > 0 except at least one, and the numpy zero-rule reference hits
    the same step."""
    n, m = 3, 20
    W0 = normal_w((n, m), 7)
    p = InterferenceParams(n=n, m=m, optimizer="gd-zero", lr=0.475, l1=0.08, steps=10000)
    run = InterferenceRun(p, w0=W0)
    for _ in range(20):
        run.advance(50)
    assert run.failure is not None and "unstable" in run.failure
    k = run.step
    assert 0 < k < 1000
    assert f"step {k + 1}" in run.failure
    fresh = InterferenceRun(p, w0=W0)
    fresh.advance(k)
    assert fresh.failure is None
    assert np.array_equal(fresh.W, run.W)
    assert np.all(np.isfinite(run.W))
    g = 1.0 + p.eta * (1.0 - np.sum(run.W * run.W, axis=1))
    assert np.any(g <= 0.0)
    ref, done, unstable = IO.gd_zero_reference(W0, p.lr, p.l1, 1000)
    assert unstable and done == k
    np.testing.assert_allclose(run.W, ref, rtol=1e-9, atol=1e-12)


def test_gd_zero_flags_a_step_that_wipes_a_whole_row():
    """An overshoot of the interference push: 20 nearly identical rows at lr = 0.1 (so
    eta * push is about 6 W) all cross zero in one step, and the zero rule would set every
    weight to zero, leaving a silent fixed point W = 0. The run must stop with a message
    naming the overshoot instead; plain gd at the same settings is not held at zero."""
    rng = np.random.default_rng(5)
    w0 = 0.9 / np.sqrt(8) * np.ones((20, 8)) + 1e-3 * rng.standard_normal((20, 8))
    p = InterferenceParams(n=20, m=8, optimizer="gd-zero", lr=0.1, l1=0.004, steps=100)
    run = InterferenceRun(p, w0=w0)
    run.advance(100)
    assert run.step == 1
    assert run.failure is not None and "overshoots" in run.failure and "feature 0" in run.failure
    assert np.all(run.W == 0.0)  # the step that did it is shown, not hidden
    # a single row dying by L1 (its last weight) is the note's death, not a failure
    lone = InterferenceRun(
        InterferenceParams(n=1, m=3, optimizer="gd-zero", lr=0.05, l1=2.0, steps=2000),
        w0=np.array([[0.5, 0.0, 0.0]]),
    )
    lone.advance(2000)
    assert lone.failure is None and np.all(lone.W == 0.0)


def test_numpy_integers_are_accepted_as_whole_numbers():
    p = InterferenceParams(n=np.int64(4), m=np.int32(8), steps=np.int64(10), seed=np.uint8(3))
    assert (p.n, p.m, p.steps, p.seed) == (4, 8, 10, 3)
    assert all(type(v) is int for v in (p.n, p.m, p.steps, p.seed))


def test_whole_rows_dying_by_l1_are_the_notes_deaths_not_a_failure():
    """lam above the last weight's fixed point (2/(3 sqrt 3) ~ 0.385): L1 alone kills every
    row, tied weights in the same step. That is the core's dynamics: n = 1 equals GDSolver
    through the deaths, and a sweep-sized run without interference finishes without a
    failure (the overshoot stop is for the interference push only)."""
    w0 = np.full(8, 0.3)
    w0[:4] = -0.3  # tied magnitudes: the whole row dies in one step
    run = InterferenceRun(gd_params(1, 8, 0.5, 0.04), w0=w0[None, :])
    core = GDSolver(InitialState.from_weights(w0), 0.5, 0.04)
    run.advance(200)
    core.step(200)
    assert run.failure is None and run.step == 200
    assert np.array_equal(run.W[0], core.weights()) and not run.W.any()
    W0 = normal_w((16, 32), 8, sigma=1.0)
    many = InterferenceRun(
        InterferenceParams(n=16, m=32, optimizer="gd-zero", lr=0.01, l1=1.6, steps=400, interference=False),
        w0=W0,
    )
    many.advance(400)
    assert many.failure is None and not many.W.any()


def test_a_dead_feature_is_not_kept_on_its_initial_neuron():
    """kept_share counts features whose largest |w| sits on their initial largest neuron;
    an all-zero row has no largest weight (argmax would say neuron 0)."""
    W0 = np.array([[0.9, 0.1, 0.0], [0.8, 0.0, 0.3], [0.1, 0.7, 0.0]])
    run = InterferenceRun(InterferenceParams(n=3, m=3, optimizer="gd-zero", steps=10), w0=W0)
    run.W[:] = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.9, 0.0]]  # two dead rows, one kept
    assert run.measure().kept_share == pytest.approx(1 / 3)


def test_time_follows_a_live_change_of_the_learning_rate():
    """t is the note's time, sum of eta = 4 lr over the steps taken: 500 steps at lr 0.05
    then 500 at lr 0.005 give t = 100 + 10, not 4 * lr_now * steps."""
    p = InterferenceParams(n=4, m=8, optimizer="gd-zero", lr=0.05, l1=0.01, steps=1000)
    run = InterferenceRun(p)
    run.advance(500)
    run.params = p.with_changes(lr=0.005)
    run.advance(500)
    assert run.record().t == pytest.approx(4 * 0.05 * 500 + 4 * 0.005 * 500, rel=1e-12)
    t_col = run.history_array()[:, HISTORY_COLUMNS.index("t")]
    assert t_col[-1] == pytest.approx(110.0, rel=1e-12) and np.all(np.diff(t_col) >= 0)


def test_the_presets_show_what_their_descriptions_say():
    """The window's GD presets, trained to the end: with interference, one weight per
    feature, every weight of size near the fixed point and every collision of opposite
    sign; the control without interference keeps every feature on its initial largest
    neuron (the note's rich-get-richer), and its collisions have both signs."""
    from sparsity_gui.core.interference.params import PRESETS

    by_name = {name: p for name, _tip, p in PRESETS}
    assert by_name["The paper's setting"] == InterferenceParams()  # n=256, m=1024, AdamW
    assert len(by_name) == len(PRESETS) >= 4
    flow = InterferenceRun(by_name["The note's flow, with interference"])
    flow.advance(flow.params.steps)
    meas = flow.measure()
    assert flow.failure is None
    assert meas.nonzero == meas.active == flow.params.n  # one active weight per feature
    assert meas.polysemantic >= 1 and meas.same_pairs == 0
    control = InterferenceRun(by_name["Control: no interference"])
    control.advance(control.params.steps)
    cm = control.measure()
    assert cm.kept_share == 1.0 and cm.nonzero == control.params.n
    assert cm.same_pairs > 0 and cm.opposite_pairs > 0
