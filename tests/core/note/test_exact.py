"""The exact solver against independent references: a full-vector DOP853 integration of
the flow at rtol 1e-13 (oracles.reference_flow), closed forms, and the facts of docs/theory.md.

Every number asserted here is computed by the test itself (reference, closed form or an
identity); nothing is compared against values the package printed once.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from helpers import normal_w0
from note_oracles import (
    affine_from_two,
    equal_weights_limit,
    last_survivor_limit,
    logistic_norm2,
    reference_flow,
)

from sparsity_gui.core.note import kernels as K
from sparsity_gui.core.note.metrics import COL, COLUMNS, Moments, sparsity_force
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import Simulation
from sparsity_gui.core.note.solvers import ExactSolver, InitialState

REL = 1e-8  # the bar for ||W||_1 and ||W||^2 against the reference


def time_to_one(w0, lam) -> float:
    """Time at which the reference flow reaches one survivor (the second-to-last death)."""
    ref = reference_flow(w0, lam, [1e4 / lam], until_nonzero=1)
    d = np.sort(ref.death_t[np.isfinite(ref.death_t)])
    assert d.size == np.count_nonzero(w0) - 1
    return float(d[-1])


# (m, lam, seed, sigma): small m, as the reference integrates the whole vector. The third
# starts with ||W(0)||^2 > 1 (sigma = 1.6), so s < 0 and every weight first shrinks.
CASES = [(12, 0.02, 1, 0.9), (30, 0.01, 2, 0.9), (20, 0.02, 3, 1.6)]


@functools.cache
def case_data(m, lam, seed, sigma):
    w0 = normal_w0(m, seed, sigma)
    t_one = time_to_one(w0, lam)
    times = np.linspace(0.0, 1.3 * t_one, 41)
    ref = reference_flow(w0, lam, times)
    return w0, t_one, times, ref


@pytest.mark.parametrize("m,lam,seed,sigma", CASES)
def test_norms_match_reference_at_requested_times(m, lam, seed, sigma):
    w0, t_one, times, ref = case_data(m, lam, seed, sigma)
    if sigma > 1.0:
        assert ref.norm2_sq[0] > 1.0  # the case really starts above the unit sphere
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    for i, t in enumerate(times):
        assert solver.advance_to(t) == K.REACHED_TARGET
        assert solver.t == t  # lands on the requested time
        mo = solver.moments()
        assert mo.nonzero == ref.nonzero[i]
        assert mo.norm1 == pytest.approx(ref.norm1[i], rel=REL)
        assert mo.norm2_sq == pytest.approx(ref.norm2_sq[i], rel=REL)
        # the materialised vector too, signed and in input order
        w = solver.weights()
        np.testing.assert_allclose(np.abs(w), ref.abs_w[i], rtol=0, atol=1e-9 * np.max(np.abs(w0)))
        assert np.all(np.sign(w)[w != 0] == np.sign(w0)[w != 0])  # signs never change
    assert ref.nonzero[-1] == 1  # the run went all the way to one survivor


@pytest.mark.parametrize("m,lam,seed,sigma", CASES)
def test_death_times_match_reference_events(m, lam, seed, sigma):
    w0, t_one, times, ref = case_data(m, lam, seed, sigma)
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    solver.advance_to(times[-1])
    d = solver.death_times()
    assert np.array_equal(np.isnan(d), np.isnan(ref.death_t))
    dead = np.isfinite(ref.death_t)
    assert dead.sum() == m - 1
    np.testing.assert_allclose(d[dead], ref.death_t[dead], rtol=REL)
    # deaths come in order of |W(0)|: the smallest first
    order = np.argsort(d[dead])
    assert np.all(np.diff(np.abs(w0[dead])[order]) > 0)
    assert list(np.flatnonzero(dead)[order]) == ref.death_order


def test_larger_m_prefix_sum_branch_matches_reference():
    """m = 1500 > SMALL_PREFIX: while more than 512 weights survive, the solver's sums come
    from prefix sums instead of direct loops; they must still meet the bar."""
    m, lam = 1500, 2e-3
    w0 = normal_w0(m, 11)
    times = np.linspace(0.0, 40.0, 9)
    ref = reference_flow(w0, lam, times)
    assert ref.nonzero[2] > K.SMALL_PREFIX > ref.nonzero[-1]
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    for i, t in enumerate(times):
        solver.advance_to(t)
        mo = solver.moments()
        assert mo.nonzero == ref.nonzero[i]
        assert mo.norm1 == pytest.approx(ref.norm1[i], rel=REL)
        assert mo.norm2_sq == pytest.approx(ref.norm2_sq[i], rel=REL)
    dead = np.isfinite(ref.death_t)
    np.testing.assert_allclose(solver.death_times()[dead], ref.death_t[dead], rtol=REL)
    assert np.array_equal(np.isfinite(solver.death_times()), dead)


SCHEDULE = [(0.0, 0.02), (13.7, 0.002), (40.0, 0.05), (61.3, 0.0), (70.0, 0.03)]


@pytest.mark.parametrize("via", ["solver", "simulation"])
def test_piecewise_constant_lam_matches_reference(via):
    """lam changed mid-run (including to 0 and back): the (S, C) reduction stays exact."""
    m = 15
    w0 = normal_w0(m, 5)
    times = np.linspace(0.0, 150.0, 61)
    ref = reference_flow(w0, SCHEDULE, times)
    if via == "solver":
        solver = ExactSolver(InitialState.from_weights(w0), SCHEDULE[0][1])
        set_lam, advance, get = solver.set_lam, solver.advance_to, lambda: solver
    else:
        sim = Simulation(SimParams(m=m, lam=SCHEDULE[0][1]), w0=w0)
        set_lam, advance, get = sim.set_lam, sim.advance, lambda: sim.solver
    rows = []
    for i, t in enumerate(times):
        for t_change, lam in SCHEDULE[1:]:
            if get().t < t_change <= t:
                advance(t_change)
                set_lam(lam)
        advance(t)
        mo = get().moments()
        assert mo.nonzero == ref.nonzero[i]
        assert mo.norm1 == pytest.approx(ref.norm1[i], rel=REL)
        assert mo.norm2_sq == pytest.approx(ref.norm2_sq[i], rel=REL)
        if via == "simulation":
            rows.append(sim.record())
    dead = np.isfinite(ref.death_t)
    assert dead.sum() == m - 1
    np.testing.assert_allclose(get().death_times()[dead], ref.death_t[dead], rtol=REL)
    if via == "simulation":
        rows = np.array(rows)
        # lam_t is the integral of the piecewise-constant lam, computed here by hand
        edges = [c[0] for c in SCHEDULE] + [math.inf]
        for row in rows:
            t = row[COL["t"]]
            expect = sum(
                lam * max(0.0, min(t, edges[j + 1]) - edges[j]) for j, (_, lam) in enumerate(SCHEDULE)
            )
            assert row[COL["lam_t"]] == pytest.approx(expect, rel=1e-12, abs=1e-12)
        assert [(c.t, c.lam) for c in sim.lam_changes] == SCHEDULE


# ----------------------------------------------------------------------------------
# The affine map and the deaths


@pytest.mark.parametrize("m,lam,seed,sigma", CASES)
def test_survivors_follow_one_affine_map(m, lam, seed, sigma):
    """a_k = B*u_k - B*C with the solver's own (log_b, offset_c), to 1e-12 relative to the
    terms B*u_k (that is the rounding of the subtraction); and (B, C) agree with the map
    through the reference's two largest survivors (independent of the solver)."""
    w0, t_one, times, ref = case_data(m, lam, seed, sigma)
    init = InitialState.from_weights(w0)
    u = np.sort(np.abs(w0))[::-1]
    solver = ExactSolver(init, lam)
    top = np.argsort(-np.abs(w0))
    checked = 0
    for i, t in enumerate(times[1:], start=1):
        solver.advance_to(t)
        b, c = math.exp(solver.log_b), solver.offset_c
        a = solver.abs_sorted()
        mp = solver.moments().nonzero
        pred = b * u - b * c
        assert np.all(np.abs(a[:mp] - pred[:mp]) <= 1e-12 * b * u[:mp])
        assert np.all(a[mp:] == 0.0) and np.all(u[mp:] <= c) and np.all(u[:mp] > c)
        if ref.nonzero[i] >= 2:
            j = top[ref.nonzero[i] - 1]  # the smallest survivor: the best-conditioned pair
            b_ref, c_ref = affine_from_two(abs(w0[top[0]]), abs(w0[j]), ref.abs_w[i, top[0]], ref.abs_w[i, j])
            assert b == pytest.approx(b_ref, rel=1e-8)
            assert c == pytest.approx(c_ref, rel=1e-8)
            checked += 1
    assert checked > 10


def test_log_b_and_offset_c_obey_their_odes():
    """dS/dt = 1 - ||W||^2 and dC/dt = lam*exp(-S) (docs/theory.md §3), by central differences of the
    solver's exposed S = log_b and C = offset_c. Step 1e-3: truncation ~1e-7, rounding ~1e-13."""
    w0 = normal_w0(30, 2)
    lam = 0.01
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    h = 1e-3
    for t in [0.3, 1.0, 4.0, 15.0, 40.0, 80.0]:
        solver.advance_to(t - h)
        s_m, c_m, mp_m = solver.log_b, solver.offset_c, solver.moments().nonzero
        solver.advance_to(t)
        mo, s0 = solver.moments(), solver.log_b
        solver.advance_to(t + h)
        s_p, c_p, mp_p = solver.log_b, solver.offset_c, solver.moments().nonzero
        assert mp_m == mp_p == mo.nonzero  # no death inside the stencil
        assert (s_p - s_m) / (2 * h) == pytest.approx(1.0 - mo.norm2_sq, abs=1e-6)
        assert (c_p - c_m) / (2 * h) == pytest.approx(lam * math.exp(-s0), rel=1e-6)


@pytest.mark.parametrize("m,lam,seed,sigma", CASES[:2])
def test_each_weight_dies_when_c_reaches_its_u(m, lam, seed, sigma):
    w0, t_one, times, ref = case_data(m, lam, seed, sigma)
    u = np.sort(np.abs(w0))[::-1]
    # the solver: stop right after each death; C is then u_k (to rounding) at the death time
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    for mp in range(m - 1, 0, -1):
        assert solver.advance_to(math.inf, stop_nonzero=mp) == K.REACHED_NONZERO
        assert solver.moments().nonzero == mp
        assert solver.offset_c == pytest.approx(u[mp], rel=4e-16, abs=4e-16 * u[0])
        assert solver.t == solver.death_t[mp]
    # the reference: at each of its event times, the C of the true flow (from its two
    # largest survivors) equals the |W(0)| of the weight that died
    top = np.argsort(-np.abs(w0))
    assert len(ref.event_states) == m - 1
    for (_t_e, a), k in zip(ref.event_states[:-1], ref.death_order[:-1], strict=True):
        assert a[k] == 0.0
        b, c = affine_from_two(u[0], u[1], a[top[0]], a[top[1]])
        assert c == pytest.approx(abs(w0[k]), rel=1e-9)


@pytest.mark.parametrize("m,lam,seed,sigma", CASES)
def test_survivors_are_the_largest_and_the_winner_settles(m, lam, seed, sigma):
    w0, t_one, times, ref = case_data(m, lam, seed, sigma)
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    order = np.argsort(-np.abs(w0))
    for t in np.linspace(0.0, 1.3 * t_one, 200):
        solver.advance_to(t)
        w = solver.weights()
        mp = solver.moments().nonzero
        assert set(np.flatnonzero(w)) == set(order[:mp])
    assert np.flatnonzero(solver.weights()).tolist() == [int(np.argmax(np.abs(w0)))]
    # one survivor relaxes at rate ~2 onto the stable root of (1 - w^2) w = lam
    solver.advance_to(solver.t + 30.0)
    winner = solver.weights()[np.argmax(np.abs(w0))]
    assert abs(winner) == pytest.approx(last_survivor_limit(lam), rel=1e-10)
    assert np.sign(winner) == np.sign(w0[np.argmax(np.abs(w0))])


def test_threshold_sign_and_sparsity_force():
    """d|W_k|/dt has the sign of |W_k| - theta for every live weight, and equals the
    sparsity force s*(|W_k| - theta) (central differences, step 1e-4: truncation below
    1e-7 even in the fast start with s ~ -1.3, rounding ~1e-12; no death inside the
    stencil). Covers s < 0 (theta = inf: everything shrinks) at the start of a run with
    ||W(0)||^2 > 1."""
    h = 1e-4
    checked_above = checked_below = 0
    for w0, lam, ts in [
        (normal_w0(40, 7), 0.01, [0.5, 2.0, 5.0, 20.0, 50.0, 90.0]),
        (normal_w0(25, 8, sigma=1.5), 0.01, [0.01, 0.05, 3.0, 30.0]),
    ]:
        solver = ExactSolver(InitialState.from_weights(w0), lam)
        for t in ts:
            solver.advance_to(t - h)
            am = solver.abs_sorted()
            solver.advance_to(t)
            a, mo = solver.abs_sorted(), solver.moments()
            solver.advance_to(t + h)
            ap = solver.abs_sorted()
            live = (am > 0) & (ap > 0)
            fd = (ap - am) / (2 * h)
            force = sparsity_force(a, mo.s, lam)
            np.testing.assert_allclose(fd[live], force[live], rtol=0, atol=1e-7)
            if mo.s <= 0:
                assert mo.theta == math.inf
                assert np.all(fd[live] < 0)
                continue
            margin = np.abs(force) > 1e-6  # ten times the FD error bound above
            sel = live & margin
            assert np.array_equal(np.sign(fd[sel]), np.sign(a[sel] - mo.theta))
            checked_above += int(np.sum(sel & (a > mo.theta)))
            checked_below += int(np.sum(sel & (a < mo.theta)))
    assert checked_above >= 10 and checked_below >= 10


def test_time_to_nonzero_matches_reference():
    w0, t_one, times, ref = case_data(*CASES[0])
    sim = Simulation(SimParams(m=CASES[0][0], lam=CASES[0][1]), w0=w0)
    assert sim.time_to_nonzero(1) == pytest.approx(t_one, rel=REL)
    assert sim.t == 0.0  # the probe is a separate run
    sim.set_lam(0.0)
    assert sim.time_to_nonzero(1) == math.inf
    assert Simulation(SimParams(m=1, lam=0.1), w0=np.array([0.3])).time_to_nonzero(1) == 0.0


# time_to_nonzero used to loop for ever when the top weights were tied and settled (they
# move as one, so m' never reaches 1): the `run` command hung on such a --w0. The thread
# timeout turns a regression into a failure instead of a hung suite (numba code cannot be
# interrupted by a signal).
@pytest.mark.timeout(60, method="thread")
@pytest.mark.parametrize(
    "w0,lam",
    [
        ([0.6, -0.6, 0.1], 0.01),  # a tied pair on top that settles: m' stays 2
        ([0.6] * 10, 0.01),  # all equal, settling: m' stays 10
        ([0.3, 0.3, 0.1], 0.3),  # tied pair that cannot settle (lam > 2/(3 sqrt 6)): dies whole
        ([0.05, -0.05], 0.1),  # tied pair below the unstable root: dies whole
        ([0.5, 0.5, 0.5, 0.2, 0.1], 0.02),  # three tied, asked for 2 or fewer
    ],
)
def test_time_to_nonzero_with_tied_top_weights(w0, lam):
    w0 = np.array(w0)
    sim = Simulation(SimParams(m=w0.size, lam=lam), w0=w0)
    got = sim.time_to_nonzero(1)
    ref = reference_flow(w0, lam, [2000.0])
    if ref.nonzero[-1] >= 2:
        assert got == math.inf
        # the survivors are the tied top group, settled at (1 - k a^2) a = lam
        k = ref.nonzero[-1]
        assert np.all(
            np.sort(ref.abs_w[-1])[::-1][:k] == pytest.approx(equal_weights_limit(k, lam), rel=1e-9)
        )
    else:
        assert got == pytest.approx(np.nanmax(ref.death_t), rel=REL)


# ----------------------------------------------------------------------------------
# Edge cases


@pytest.mark.parametrize("sigma", [0.3, 0.9, 1.0, 2.5])
def test_lam_zero_follows_the_logistic_closed_form(sigma):
    """lam = 0: no deaths, d||W||^2/dt = 2(1 - ||W||^2)||W||^2 (logistic), and every weight
    scales by the same B = sqrt(y/y0), so ||W||_1 = sqrt(y/y0) ||W(0)||_1."""
    w0 = normal_w0(50, 4, sigma)
    y0 = float(np.dot(w0, w0))
    solver = ExactSolver(InitialState.from_weights(w0), 0.0)
    for t in [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 300.0]:
        solver.advance_to(t)
        mo = solver.moments()
        y = float(logistic_norm2(y0, t))
        assert mo.norm2_sq == pytest.approx(y, rel=1e-10)
        assert mo.norm1 == pytest.approx(math.sqrt(y / y0) * np.abs(w0).sum(), rel=1e-10)
        assert mo.nonzero == 50
        np.testing.assert_allclose(solver.weights(), math.sqrt(y / y0) * w0, rtol=1e-10)
    assert np.all(np.isnan(solver.death_times()))


def test_ties_die_together():
    w0 = np.array([0.5, -0.3, 0.1, -0.1, 0.1, 0.05, 0.0, 0.2])
    times = np.linspace(0.0, 60.0, 31)
    for lam in [0.05, 0.2]:
        ref = reference_flow(w0, lam, times)
        solver = ExactSolver(InitialState.from_weights(w0), lam)
        for i, t in enumerate(times):
            solver.advance_to(t)
            mo = solver.moments()
            assert mo.nonzero == ref.nonzero[i]
            assert mo.norm1 == pytest.approx(ref.norm1[i], rel=REL, abs=1e-300)
            assert mo.norm2_sq == pytest.approx(ref.norm2_sq[i], rel=REL, abs=1e-300)
        d = solver.death_times()
        assert d[2] == d[3] == d[4]  # the three 0.1's: one instant, bit for bit
        assert np.isnan(d[6])  # a zero weight never "dies"
        dead = np.isfinite(ref.death_t)
        assert np.array_equal(np.isfinite(d), dead)
        np.testing.assert_allclose(d[dead], ref.death_t[dead], rtol=REL)


def test_all_equal_weights():
    w0 = np.array([0.1, -0.1, 0.1, 0.1])
    # small lam: nobody dies, all four settle together on the root of (1 - 4a^2) a = lam
    solver = ExactSolver(InitialState.from_weights(w0), 0.01)
    solver.advance_to(100.0)
    np.testing.assert_allclose(np.abs(solver.weights()), equal_weights_limit(4, 0.01), rtol=1e-10)
    assert np.all(np.isnan(solver.death_times()))
    # large lam: all four die at the same instant, the reference's event time
    ref = reference_flow(w0, 0.5, [5.0])
    solver = ExactSolver(InitialState.from_weights(w0), 0.5)
    solver.advance_to(5.0)
    d = solver.death_times()
    assert np.all(d == d[0])
    assert d[0] == pytest.approx(ref.death_t[0], rel=REL)
    assert solver.moments().nonzero == 0


@pytest.mark.parametrize("w", [0.01, -0.3, 2.0])
@pytest.mark.parametrize("lam", [0.0, 0.1, 0.3, 0.5])
def test_single_weight(w, lam):
    """m = 1 against the reference; when it survives it settles at the stable root of
    (1 - w^2) w = lam (which exists for lam < 2/(3 sqrt 3))."""
    solver = ExactSolver(InitialState.from_weights(np.array([w])), lam)
    solver.advance_to(200.0)
    ref = reference_flow([w], lam, [200.0])
    a = abs(solver.weights()[0])
    assert a == pytest.approx(ref.abs_w[-1, 0], rel=1e-10, abs=1e-300)
    if np.isfinite(ref.death_t[0]):
        assert solver.death_t[0] == pytest.approx(ref.death_t[0], rel=REL)
        assert a == 0.0
    else:
        assert np.isnan(solver.death_t[0])
        target = 1.0 if lam == 0 else last_survivor_limit(lam)
        assert a == pytest.approx(target, rel=1e-10)


def test_zeros_in_w0_are_inert():
    """Zero weights stay zero, never count as deaths, and do not change anything else."""
    w_nz = normal_w0(12, 9)
    w0 = np.insert(w_nz, [0, 5, 5, 12], 0.0)
    times = np.linspace(0.0, 120.0, 13)
    with_zeros = ExactSolver(InitialState.from_weights(w0), 0.02)
    without = ExactSolver(InitialState.from_weights(w_nz), 0.02)
    ref = reference_flow(w0, 0.02, times)
    zero = w0 == 0
    for i, t in enumerate(times):
        with_zeros.advance_to(t)
        without.advance_to(t)
        a, b = with_zeros.moments(), without.moments()
        assert a.nonzero == b.nonzero == ref.nonzero[i]
        assert a.norm1 == pytest.approx(ref.norm1[i], rel=REL)
        assert a.norm1 == pytest.approx(b.norm1, rel=1e-14)
        assert np.all(with_zeros.weights()[zero] == 0.0)
    assert np.all(np.isnan(with_zeros.death_times()[zero]))
    np.testing.assert_array_equal(with_zeros.death_times()[~zero], without.death_times())


def test_all_zero_w0():
    solver = ExactSolver(InitialState.from_weights(np.zeros(5)), 0.1)
    assert solver.advance_to(10.0) == K.REACHED_TARGET
    mo = solver.moments()
    assert (mo.nonzero, mo.norm1, mo.norm2_sq, solver.t) == (0, 0.0, 0.0, 10.0)
    assert math.isnan(mo.rel_var)


@pytest.mark.timeout(60, method="thread")  # a broken rebase loops for ever in numba code
def test_long_run_past_b_overflow():
    """With one survivor, u_1 - C decays like exp(-lam t / w*) and B grows without bound
    (past 1e308 by t ~ 700/lam); the solver must stay finite and on the fixed point."""
    w0 = np.array([0.5, 0.3, -0.2])
    lam = 0.3
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    solver.advance_to(4000.0)
    assert solver.log_b > 1000.0  # exp(log_b) would overflow: the rebase happened
    assert math.isfinite(solver.offset_c) and solver.offset_c == pytest.approx(0.5, rel=1e-15)
    mo = solver.moments()
    assert mo.nonzero == 1
    assert mo.norm1 == pytest.approx(last_survivor_limit(lam), rel=1e-10)
    assert np.all(np.isfinite(solver.weights()))
    assert abs(solver.weights()[0]) == pytest.approx(last_survivor_limit(lam), rel=1e-10)


def test_no_nan_for_valid_input():
    """A sweep of valid (m, lam, sigma) from extreme to ordinary: every recorded column is
    finite except theta (inf when s <= 0) and, once nothing is left, the relative variance
    and its bounds (NaN) and w = 1/||W||_1 (inf)."""
    rng = np.random.default_rng(123)
    nan_ok_when_empty = [
        COL[c] for c in ("rel_var", "rel_var_lo", "rel_var_hi", "rel_var_ideal_lo", "rel_var_ideal_hi", "w")
    ]
    for _ in range(25):
        m = int(rng.choice([1, 2, 3, 17, 100, 3000]))
        lam = float(rng.choice([0.0, 1e-4, 0.01, 0.3, 0.39, 1.0]))
        sigma = float(rng.choice([1e-6, 0.5, 0.9, 1.5, 1e3, 1e6]))
        sim = Simulation(SimParams(m=m, lam=lam, sigma=sigma, seed=int(rng.integers(1000))))
        t_one = sim.time_to_nonzero(1)
        t_end = 1.0 if not math.isfinite(t_one) or t_one < 1.0 else 2.0 * t_one
        if t_end > 5e4:
            continue  # lam tiny and a near tie at the top: too slow for this sweep
        for t in np.concatenate([np.linspace(0.0, t_end, 20), [3 * t_end]]):
            sim.advance(t)
            row = sim.record()[: len(COLUMNS)]
            mo = sim.moments()
            allowed = ~np.isfinite(row)
            allowed[COL["theta"]] = False
            if mo.nonzero == 0:
                allowed[nan_ok_when_empty] = False
            assert not allowed.any(), (m, lam, sigma, t, [COLUMNS[i] for i in np.flatnonzero(allowed)])
            assert not math.isnan(row[COL["theta"]])
            assert row[COL["theta"]] > 0 or lam == 0.0


def test_theta_is_inf_when_feature_benefit_stops():
    assert Moments(0.0, 0.1, 3, 1.5, 1.0).theta == math.inf
    assert Moments(0.0, 0.1, 3, 1.5, 1.7).theta == math.inf
    assert Moments(0.0, 0.1, 3, 1.5, 0.75).theta == pytest.approx(0.1 / 0.25)
    assert Moments(0.0, 0.0, 3, 1.5, 0.75).theta == 0.0
    sim = Simulation(SimParams(m=20, lam=0.01, sigma=2.0, seed=1))
    row = sim.metrics_row()
    assert row[COL["norm2_sq"]] > 1 and row[COL["theta"]] == math.inf
    np.testing.assert_array_equal(sparsity_force([0.5, 0.0], -0.3, 0.01), [-0.3 * 0.5 - 0.01, 0.0])


def test_rel_var_zero_with_one_weight_and_nan_with_none():
    w0 = np.array([0.6, -0.3, 0.1])
    sim = Simulation(SimParams(m=3, lam=0.05), w0=w0)
    sim.advance(math.inf, stop_nonzero=1)
    row = sim.metrics_row()
    assert row[COL["nonzero"]] == 1 and row[COL["rel_var"]] == 0.0
    assert row[COL["rel_var_lo"]] == 0.0 and row[COL["rel_var_hi"]] == 0.0
    sim.set_lam(0.5)  # above 2/(3 sqrt 3): the last one dies too
    sim.advance(sim.t + 50.0)
    row = sim.metrics_row()
    assert row[COL["nonzero"]] == 0
    for c in ("rel_var", "rel_var_lo", "rel_var_hi", "rel_var_ideal_lo", "rel_var_ideal_hi"):
        assert math.isnan(row[COL[c]]), c
    assert row[COL["norm1"]] == 0.0 and row[COL["norm2_sq"]] == 0.0
    assert np.all(np.isfinite(sim.solver.death_times()))


def test_tracked_columns_are_the_weights_at_tracked_ranks():
    w0, t_one, times, ref = case_data(*CASES[1])
    sim = Simulation(SimParams(m=CASES[1][0], lam=CASES[1][1]), w0=w0)
    order = np.argsort(-np.abs(w0))
    assert sim.tracked[0] == 0 and sim.tracked[-1] == CASES[1][0] - 1
    for i, t in enumerate(times[::8]):
        sim.advance(t)
        row = sim.metrics_row()
        got = row[len(COLUMNS) : len(COLUMNS) + sim.tracked.size]
        np.testing.assert_allclose(got, ref.abs_w[8 * i, order[sim.tracked]], rtol=0, atol=1e-10)


def test_switching_method_continues_from_the_current_state():
    """exact -> gd -> exact mid-run: each leg continues from W at the switch (checked
    against a reference started there), and earlier death times are kept."""
    from note_oracles import gd_reference

    w0 = normal_w0(20, 12)
    lam, eta = 0.02, 0.01
    sim = Simulation(SimParams(m=20, lam=lam, eta=eta), w0=w0)
    sim.advance(10.0)
    w_a = sim.solver.weights()
    deaths_a = sim.solver.death_times().copy()
    sim.set_method("gd")
    assert sim.method == "gd" and sim.t == 10.0
    sim.advance(15.0)
    w_b_ref, _ = gd_reference(w_a, eta, lam, 500)
    np.testing.assert_allclose(sim.solver.weights(), w_b_ref, rtol=1e-12, atol=1e-14)
    w_b = sim.solver.weights()
    sim.set_method("exact")
    sim.advance(40.0)
    ref = reference_flow(w_b, lam, [25.0])
    np.testing.assert_allclose(np.abs(sim.solver.weights()), ref.abs_w[0], rtol=0, atol=1e-9)
    d = sim.solver.death_times()
    early = np.isfinite(deaths_a)
    assert early.any()
    np.testing.assert_array_equal(d[early], deaths_a[early])
    later = np.isfinite(ref.death_t)
    np.testing.assert_allclose(d[later], 15.0 + ref.death_t[later], rtol=REL)
