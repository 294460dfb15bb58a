"""Gradient descent: the numba kernel against a plain numpy implementation of the update,
its affine structure, its first-order convergence to the exact flow, and instability."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from helpers import normal_w0
from note_oracles import affine_from_two, gd_reference, last_survivor_limit, reference_flow

from sparsity_gui.core.note import kernels as K
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import Simulation
from sparsity_gui.core.note.solvers import ExactSolver, GDSolver, InitialState


def signed_w0_with_zeros(m=40, seed=21):
    w = normal_w0(m, seed)
    w[[0, 3, 17, m - 1]] = 0.0  # zeros, first and last included: input order is unsorted
    return w


@pytest.mark.parametrize(
    "eta,lam,n_steps,sigma",
    [
        (0.05, 0.02, 3000, 0.9),
        (0.2, 0.01, 2000, 0.9),
        (0.01, 0.005, 5000, 1.7),  # starts with ||W||^2 > 1
        (0.5, 0.0, 500, 0.9),  # lam = 0: no zero rule needed, no deaths
    ],
)
def test_kernel_matches_numpy_update(eta, lam, n_steps, sigma):
    """Many steps, checked every chunk: same W (input order, signed) to 1e-12 of the
    largest weight, same deaths at the same step (death time = eta * step)."""
    w0 = signed_w0_with_zeros() * (sigma / 0.9)
    solver = GDSolver(InitialState.from_weights(w0), lam, eta)
    w_ref = w0.copy()
    death_ref = np.zeros(w0.shape[0], dtype=np.int64)
    done = 0
    for chunk in [1, 2, 7, 90, n_steps // 4, n_steps // 4]:
        solver.step(chunk)
        w_ref, d = gd_reference(w_ref, eta, lam, chunk)
        death_ref = np.where((d > 0) & (death_ref == 0), d + done, death_ref)
        done += chunk
        assert solver.steps == done
        assert solver.t == pytest.approx(eta * done, rel=1e-15)
        w = solver.weights()
        np.testing.assert_allclose(w, w_ref, rtol=1e-12, atol=1e-12 * np.max(np.abs(w0)))
        assert np.array_equal(w == 0.0, w_ref == 0.0)
        mo = solver.moments()
        assert mo.nonzero == np.count_nonzero(w_ref)
        assert mo.norm1 == pytest.approx(np.abs(w_ref).sum(), rel=1e-12)
        assert mo.norm2_sq == pytest.approx(np.dot(w_ref, w_ref), rel=1e-12)
    died = death_ref > 0
    if lam > 0:
        assert died.sum() >= 10
    else:
        assert not died.any()
    d_t = solver.death_times()
    assert np.all(np.isnan(d_t[~died]))
    np.testing.assert_allclose(d_t[died], eta * death_ref[died], rtol=1e-14)


def test_gd_update_is_one_affine_map():
    """a <- (1 + eta*s) a - eta*lam is affine and the same for every survivor, so after any
    number of steps a_k = B u_k - B C for one (B, C): found from two survivors, checked on
    all others to 1e-12 relative to B*u_k; the dead are exactly those with u_k <= C."""
    w0 = normal_w0(60, 4)
    init = InitialState.from_weights(w0)
    u = init.u
    solver = GDSolver(init, 0.01, 0.01)
    for t in [0.5, 3.0, 10.0, 30.0, 60.0]:
        solver.advance_to(t)
        a = solver.abs_sorted()
        mp = solver.moments().nonzero
        assert mp >= 3
        j = mp // 2
        b, c = affine_from_two(u[0], u[j], a[0], a[j])
        pred = b * u - b * c
        assert np.all(np.abs(a[:mp] - pred[:mp]) <= 1e-12 * b * u[:mp])
        assert np.all(u[mp:] <= c) and np.all(u[:mp] > c)
        assert np.all(a[mp:] == 0.0)


def test_gd_converges_to_the_flow_at_first_order():
    """Error at a fixed time T against the exact flow (itself checked against the
    reference in test_exact) for eta, eta/2, eta/4: halves each time. T = 8 lies after
    several deaths, so the O(eta) error of the discrete death times is included."""
    w0 = normal_w0(20, 7)
    lam, T = 0.02, 8.0
    init = InitialState.from_weights(w0)
    exact = ExactSolver(init, lam)
    exact.advance_to(T)
    a_exact = exact.abs_sorted()
    assert exact.moments().nonzero < 20  # deaths happened before T
    errors = []
    for eta in [0.02, 0.01, 0.005]:
        gd = GDSolver(init, lam, eta)
        gd.advance_to(T)
        assert gd.t == pytest.approx(T, rel=1e-14)
        assert gd.moments().nonzero == exact.moments().nonzero
        errors.append(float(np.max(np.abs(gd.abs_sorted() - a_exact))))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all((orders >= 0.8) & (orders <= 1.2)), (errors, orders)
    assert errors[-1] < 1e-3  # and the error is small in absolute terms


def test_gd_stable_below_eta_one_and_not_above():
    """docs/theory.md §6: near balance the explicit step is stable for eta < 1. With one survivor
    the fixed point w* of (1 - w^2) w = lam has multiplier 1 + eta(1 - 3w*^2), so it is
    stable iff eta < 2/(3w*^2 - 1) ~ 1 + 1.5 lam."""
    lam = 0.02
    w_star = last_survivor_limit(lam)
    eta_crit = 2.0 / (3.0 * w_star**2 - 1.0)
    assert 1.0 < eta_crit < 1.05
    w0 = np.array([0.7, 0.2, -0.1])
    stable = GDSolver(InitialState.from_weights(w0), lam, 0.95)
    stable.advance_to(400.0)
    assert stable.diverged is None
    assert abs(stable.weights()[0]) == pytest.approx(w_star, rel=1e-10)
    above = GDSolver(InitialState.from_weights(w0), lam, 1.1)
    above.advance_to(400.0)
    a1 = abs(above.weights()[0])
    above.step(1)
    a2 = abs(above.weights()[0])
    # a period-2 cycle around w*, not convergence
    assert abs(a1 - w_star) > 1e-3 and abs(a2 - w_star) > 1e-3 and (a1 - w_star) * (a2 - w_star) < 0


@pytest.mark.parametrize(
    "w0,eta,lam",
    [
        (normal_w0(20, 7), 1.9, 0.02),  # oscillation around balance grows until every sign flips
        (np.full(10, 0.6), 0.5, 0.01),  # ||W||^2 = 3.6: 1 + eta(1 - 3.6) < 0 on the first step
    ],
)
def test_unstable_gd_sets_diverged(w0, eta, lam):
    solver = GDSolver(InitialState.from_weights(w0), lam, eta)
    status = solver.advance_to(1000.0)
    assert status == K.REACHED_TARGET
    assert solver.diverged is not None and "unstable" in solver.diverged
    assert solver.t < 1000.0  # stopped where it happened
    assert solver.moments().nonzero == 0
    t_stop = solver.t
    d = solver.death_times()
    assert np.all(d <= t_stop) and np.sum(d == t_stop) >= 1  # the flipping step killed the rest
    solver.step(10)  # a diverged solver does not move any more
    assert solver.t == t_stop
    sim = Simulation(SimParams(m=w0.shape[0], lam=lam, method="gd", eta=eta), w0=w0)
    sim.advance(1000.0)
    assert sim.solver.diverged is not None
    assert sim.advance(2000.0) == K.REACHED_TARGET and sim.t == t_stop


@pytest.mark.parametrize(
    "eta,seed",
    [
        (1.9, 0),  # ||W||^2 = 1.51 after step 1, g = 0.027: step 2 kills every weight
        (1.9, 31),  # the overshoot leaves two tiny weights, which die on the next step
        (1.7, 3),  # a period-2 oscillation; one overshoot leaves a tiny winner, dead 2 steps later
        (1.7, 39),  # ... 4 steps later
    ],
)
def test_unstable_gd_that_kills_everything_is_flagged(eta, seed):
    """Here the flow keeps its winner (checked), so a GD run that ends with no weight at
    all has failed and must say so, however the last weights died: g = 1 + eta*s stayed
    > 0, so it is not the sign-flip case. Chunked and one-go runs agree."""
    w0 = np.random.default_rng(seed).standard_normal(20) * (0.9 / math.sqrt(20))
    exact = ExactSolver(InitialState.from_weights(w0), 0.02)
    exact.advance_to(200.0)
    assert exact.moments().nonzero == 1
    gd = GDSolver(InitialState.from_weights(w0), 0.02, eta)
    gd.advance_to(200.0)
    assert gd.moments().nonzero == 0
    assert gd.diverged is not None and "unstable" in gd.diverged and "smaller eta" in gd.diverged
    assert "flipped the sign" not in gd.diverged
    chunked = GDSolver(InitialState.from_weights(w0), 0.02, eta)
    while chunked.advance_to(200.0, max_work=200) == K.REACHED_MAX_STEPS:
        pass
    assert chunked.diverged == gd.diverged  # the message names the time of the last death
    np.testing.assert_array_equal(chunked.death_times(), gd.death_times())


@functools.cache
def _flow_to_50(lam: float, seed: int):
    """W(0) of the seed and the reference flow to t = 50, shared by both step sizes."""
    w0 = np.random.default_rng(seed).standard_normal(20) * (0.9 / math.sqrt(20))
    return w0, reference_flow(w0, lam, [50.0])


@pytest.mark.parametrize("lam", [0.4, 0.5, 1.0])
@pytest.mark.parametrize("eta", [0.01, 0.05])
def test_gd_that_kills_everything_like_the_flow_is_not_flagged(lam, eta):
    """lam > 2/(3 sqrt 3): the flow itself kills every weight, winner included, and with a
    small step GD does the same (sometimes taking the last two on one step). That is not
    instability: diverged stays None and the death times follow the flow's to O(eta)."""
    for seed in range(30):
        w0, ref = _flow_to_50(lam, seed)
        gd = GDSolver(InitialState.from_weights(w0), lam, eta)
        gd.advance_to(50.0)
        assert gd.diverged is None, (lam, eta, seed, gd.diverged)
        assert gd.moments().nonzero == 0
        assert ref.nonzero[-1] == 0
        assert np.max(np.abs(gd.death_times() - ref.death_t)) < 5 * eta


def test_time_grid_and_nearest_step():
    """t = eta * step; advance_to lands on the step time nearest the target; changing eta
    mid-run continues from the current time on the new grid."""
    w0 = normal_w0(30, 5)
    solver = GDSolver(InitialState.from_weights(w0), 0.01, 0.03)
    for target in [0.1, 0.7, 1.0, 2.345, 2.36]:
        solver.advance_to(target)
        n = round(target / 0.03)
        assert solver.steps == n
        assert solver.t == pytest.approx(0.03 * n, rel=1e-15)
        assert abs(solver.t - target) <= 0.015 + 1e-12
    t_switch = solver.t
    solver.set_eta(0.007)
    solver.advance_to(t_switch + 1.0)
    n_new = round(1.0 / 0.007)
    assert solver.t == pytest.approx(t_switch + 0.007 * n_new, rel=1e-14)
    # the whole path equals numpy doing the same steps
    w_ref, _ = gd_reference(w0, 0.03, 0.01, round(2.36 / 0.03))
    w_ref, _ = gd_reference(w_ref, 0.007, 0.01, n_new)
    np.testing.assert_allclose(solver.weights(), w_ref, rtol=1e-12, atol=1e-14)


def test_max_work_bounds_a_chunk_and_resumes():
    w0 = normal_w0(100, 6)
    a = GDSolver(InitialState.from_weights(w0), 0.01, 0.01)
    b = GDSolver(InitialState.from_weights(w0), 0.01, 0.01)
    statuses = []
    while True:
        steps_before, mp_before = a.steps, a.moments().nonzero
        st = a.advance_to(5.0, max_work=1000)
        assert a.steps - steps_before <= max(1, 1000 // mp_before)  # work per call is bounded
        statuses.append(st)
        if st != K.REACHED_MAX_STEPS:
            break
    assert statuses[-1] == K.REACHED_TARGET and len(statuses) >= 20
    b.advance_to(5.0)
    assert a.steps == b.steps == 500
    np.testing.assert_array_equal(a.weights(), b.weights())
    np.testing.assert_array_equal(a.death_times(), b.death_times())


def test_gd_stop_nonzero_and_last_survivor():
    w0 = normal_w0(25, 8)
    lam, eta = 0.03, 0.02
    gd = GDSolver(InitialState.from_weights(w0), lam, eta)
    assert gd.advance_to(math.inf, stop_nonzero=1) == K.REACHED_NONZERO
    assert gd.moments().nonzero == 1
    assert np.flatnonzero(gd.weights()).tolist() == [int(np.argmax(np.abs(w0)))]
    # the step that left one survivor is the last recorded death
    assert gd.t == np.nanmax(gd.death_times())
    # and it ends where the flow ends: the root of (1 - w^2) w = lam (a fixed point of GD too)
    gd.advance_to(gd.t + 60.0)
    assert np.abs(gd.weights()).max() == pytest.approx(last_survivor_limit(lam), rel=1e-10)
    # the deaths agree with the exact reference flow to O(eta)
    ref = reference_flow(w0, lam, [gd.t], until_nonzero=1)
    dead = np.isfinite(ref.death_t)
    assert np.array_equal(np.isfinite(gd.death_times()), dead)
    err = np.max(np.abs(gd.death_times()[dead] - ref.death_t[dead]))
    assert err < 20 * eta, err
