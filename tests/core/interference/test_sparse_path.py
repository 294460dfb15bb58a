"""gd-zero on its nonzeros (sparse_kernels.gd_zero_sparse_steps, InterferenceRun's sparse path)
against the dense path and the numpy zero-rule reference.

The sparse path must be the same arithmetic as the dense one up to the order of summation in
the two products, so W agrees to 1e-12 (and the zero patterns exactly) at every step: through
the switch from dense to sparse and back, while the interference push revives weights from
zero, and over chunks of many steps inside one kernel call. The thresholds of the switch are
moved per run (``sparse_below``, ``dense_above``) to force either path.
"""

from __future__ import annotations

import itertools
import math

import interference_oracles as IO
import numpy as np
import pytest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun

RTOL, ATOL = 1e-12, 1e-14


def normal_w(shape, seed: int, sigma: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape) * (sigma / math.sqrt(shape[-1]))


def dense_run(p, w0) -> InterferenceRun:
    run = InterferenceRun(p, w0=w0)
    run.sparse_below = 0.0  # never follows the nonzeros
    return run


def sparse_run(p, w0) -> InterferenceRun:
    run = InterferenceRun(p, w0=w0)
    run.sparse_below = 2.0  # follows the nonzeros from the first step on ...
    run.dense_above = 2.0  # ... and never goes back
    return run


def assert_same_state(a: InterferenceRun, b: InterferenceRun) -> None:
    assert a.step == b.step and a.failure == b.failure
    np.testing.assert_allclose(a.W, b.W, rtol=RTOL, atol=ATOL)
    assert np.array_equal(a.W == 0.0, b.W == 0.0)
    np.testing.assert_allclose(a.norm2, b.norm2, rtol=RTOL, atol=ATOL)


def assert_same_measurement(a: InterferenceRun, b: InterferenceRun) -> None:
    """The counts exactly, |W|_1 and the loss to 1e-12 (sums in another order)."""
    ma, mb = a.measure(), b.measure()
    for name in ("polysemantic", "active", "opposite_pairs", "same_pairs", "kept_share", "nonzero"):
        assert getattr(ma, name) == getattr(mb, name), name
    assert ma.norm1 == pytest.approx(mb.norm1, rel=1e-12)
    assert ma.loss == pytest.approx(mb.loss, rel=1e-12)
    np.testing.assert_array_equal(a.counts, b.counts)


def revival_case():
    """n = 12, m = 16, lam = 0.05, eta = 0.08 from a random W(0): most weights die within
    a few dozen steps, and the interference push revives dozens of zeros on the way
    (counted by the numpy reference in the test)."""
    p = InterferenceParams(n=12, m=16, optimizer="gd-zero", lr=0.02, l1=0.2, steps=10**6)
    return p, normal_w((12, 16), 4)


def test_sparse_path_equals_dense_and_the_reference_step_by_step_with_revivals():
    """Always sparse against always dense against the numpy zero-rule reference (with the
    brute-force interference term), one step at a time for 300 steps: the same W to 1e-12
    and the same zeros at every step, and weights revived from zero by the push while the
    run follows the nonzeros."""
    p, w0 = revival_case()
    sp, de = sparse_run(p, w0), dense_run(p, w0)
    W = w0.copy()
    revived_on_sparse = deaths = 0
    for _ in range(300):
        was_sparse = sp.sparse
        before = sp.W.copy()
        sp.advance(1)
        de.advance(1)
        W, _, unstable = IO.gd_zero_reference(W, p.lr, p.l1, 1)
        assert not unstable
        assert_same_state(sp, de)
        np.testing.assert_allclose(sp.W, W, rtol=1e-10, atol=1e-13)
        assert np.array_equal(sp.W == 0.0, W == 0.0)
        if was_sparse:
            revived_on_sparse += int(np.sum((before == 0.0) & (sp.W != 0.0)))
        deaths += int(np.sum((before != 0.0) & (sp.W == 0.0)))
    assert sp.sparse and sp.sparse_steps == 300 and de.sparse_steps == 0
    assert revived_on_sparse >= 5 and deaths >= 100
    assert np.count_nonzero(sp.W) < sp.W.size // 4


def test_switch_over_both_ways_equals_dense():
    """Thresholds set inside the run's own swings of the nonzero count: the run goes
    sparse, a revival pushes it back over the threshold to the dense products, and decay
    brings it back again, more than once each way. W equals the dense run's to 1e-12 at
    every step, including the steps that switch."""
    p, w0 = revival_case()
    probe = dense_run(p, w0)
    nnz = [int(np.count_nonzero(w0))]
    for _ in range(400):
        probe.advance(1)
        nnz.append(int(np.count_nonzero(probe.W)))
    rises = [s for s in range(len(nnz) - 1) if nnz[s + 1] > nnz[s]]
    assert rises, "the case must revive weights"
    level = nnz[rises[0]]  # the count from which the first revival rises
    de, sw = dense_run(p, w0), InterferenceRun(p, w0=w0)
    sw.sparse_below = sw.dense_above = (level + 0.5) / w0.size
    on_sparse = []  # per step: taken on the sparse path?
    for _ in range(400):
        before = sw.sparse_steps
        sw.advance(1)
        de.advance(1)
        assert_same_state(sw, de)
        on_sparse.append(sw.sparse_steps > before)
    to_sparse = sum(not a and b for a, b in itertools.pairwise(on_sparse))
    to_dense = sum(a and not b for a, b in itertools.pairwise(on_sparse))
    assert to_dense >= 1 and to_sparse >= 2, (to_sparse, to_dense, level)


@pytest.mark.parametrize("chunks", [[400], [1, 2, 3, 50, 344], [7] * 57 + [1]])
def test_many_steps_per_kernel_call_equal_dense(chunks):
    """The sparse kernel runs whole chunks in one call, switching back to the dense path
    inside one when the nonzeros grow (thresholds low enough that a revival crosses
    them), and growing its arrays when a step's pushes do not fit (they are sized from the
    thresholds): the same W as the dense run after every chunk."""
    p, w0 = revival_case()
    de, sw = dense_run(p, w0), InterferenceRun(p, w0=w0)
    sw.sparse_below, sw.dense_above = 0.3, 0.32
    for chunk in chunks:
        assert sw.advance(chunk) == de.advance(chunk) == chunk
        assert_same_state(sw, de)
    assert 0 < sw.sparse_steps < 400
    assert sw.pattern_grown >= 1


def test_default_switch_at_a_preset_size_equals_dense():
    """n = 48, m = 128, the preset "note's flow with interference" (lam = 0.05, eta = 0.2),
    with the default thresholds: the run is on the sparse path for nearly all of its 2000
    steps and ends where the dense run ends, counts and loss included."""
    p = InterferenceParams(n=48, m=128, optimizer="gd-zero", l1=0.2, lr=0.05, steps=2000)
    run, de = InterferenceRun(p), dense_run(p, None)
    for chunk in (10, 90, 900, 1000):
        run.advance(chunk)
        de.advance(chunk)
        assert_same_state(run, de)
    assert run.sparse and run.sparse_steps >= 1900
    assert_same_measurement(run, de)


def test_counts_and_loss_on_the_sparse_path_against_the_oracles():
    """Counts and loss measured from the nonzeros, on a hand-built sparse W with collisions
    of both signs and a dead feature, against the oracles' counts by enumeration and the
    network's loss as a forward pass."""
    W = np.zeros((6, 6))  # feature 5 is dead (all zero)
    W[0, 0], W[1, 0], W[2, 0] = 1.0, -0.9, 1.1  # neuron 0: three active, 2 opposite pairs, 1 equal
    W[0, 3] = 0.3  # alive, not active
    W[3, 2], W[4, 2] = 0.85, -1.15  # neuron 2: one opposite pair
    W[3, 5] = 0.5
    W[1, 4] = -1.3  # too large to be active
    p = InterferenceParams(n=6, m=6, optimizer="gd-zero", l1=0.04, lr=0.01, steps=10)
    sp = sparse_run(p, W)
    sp.advance(1)  # one small step on the sparse path: the same collisions, slightly moved
    assert sp.sparse
    W = sp.W.copy()
    meas = sp.measure()
    counts = IO.active_counts(W)
    np.testing.assert_array_equal(sp.counts, counts)
    assert meas.polysemantic == int(np.sum(counts > 1)) == 2
    assert meas.active == int(counts.sum())
    assert (meas.opposite_pairs, meas.same_pairs) == IO.colliding_pairs(W)
    assert meas.nonzero == np.count_nonzero(W)
    assert meas.norm1 == pytest.approx(np.abs(W).sum(), rel=1e-15)
    assert meas.loss == pytest.approx(IO.network_loss(W, p.l1), rel=1e-12)


@pytest.mark.parametrize("path", ["sparse", "dense"])
def test_instability_and_overshoot_stop_the_sparse_path_as_the_dense_one(path):
    """gd-zero past its stability limit (eta = 1.9) stops before the step that would flip a
    row, and an overshooting push that wipes whole rows stops after it: the same step, the
    same message and the same W on either path."""
    n, m = 3, 20
    w0 = normal_w((n, m), 7, sigma=0.9)
    p = InterferenceParams(n=n, m=m, optimizer="gd-zero", lr=0.475, l1=0.08, steps=10000)
    make = sparse_run if path == "sparse" else dense_run
    run, ref = make(p, w0), dense_run(p, w0)
    for _ in range(20):
        run.advance(50)
        ref.advance(50)
    assert run.failure is not None and "unstable" in run.failure
    assert_same_state(run, ref)
    rng = np.random.default_rng(5)
    w0 = 0.9 / np.sqrt(8) * np.ones((20, 8)) + 1e-3 * rng.standard_normal((20, 8))
    w0[:, 7] = 0.0  # some zeros, so the sparse path has a pattern to follow from the start
    p = InterferenceParams(n=20, m=8, optimizer="gd-zero", lr=0.1, l1=0.004, steps=100)
    run, ref = make(p, w0), dense_run(p, w0)
    run.advance(100)
    ref.advance(100)
    assert run.step == 1 and "overshoots" in run.failure
    assert_same_state(run, ref)
    assert np.all(run.W == 0.0)


def test_interference_switched_off_and_on_live_leaves_the_sparse_path_consistent():
    """A live change of the interference switch moves W with the dense kernel; back on, the
    sparse path must start from W as it is (not from a stale pattern): equal to a dense run
    given the same changes."""
    p, w0 = revival_case()
    sw, de = sparse_run(p, w0), dense_run(p, w0)
    for interference, steps in ((True, 40), (False, 25), (True, 60), (False, 5), (True, 30)):
        for run in (sw, de):
            run.params = run.params.with_changes(interference=interference)
            run.advance(steps)
        assert_same_state(sw, de)
        assert_same_measurement(sw, de)
    assert sw.sparse_steps >= 100
