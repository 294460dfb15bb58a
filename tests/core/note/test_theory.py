"""The identities and facts of docs/theory.md (§2, §4), checked on runs of the package against direct
computations written here (relative variance of the materialised vector, the bounds as
docs/theory.md defines them, half-normal quantiles, finite differences, closed forms)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from helpers import normal_w0
from note_oracles import halfnormal_ideal, relvar, relvar_bounds_direct
from scipy.integrate import quad
from scipy.stats import norm

from sparsity_gui.core.note.metrics import COL, COLUMNS, fit_decay_constant
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import Simulation
from sparsity_gui.core.note.solvers import ExactSolver, InitialState, ideal_abs_weights


@functools.cache
def default_run(m=1000, lam=1e-3, seed=0, n_rows=1501, keep_vecs=True):
    """the default setting (sigma = 0.9), sampled evenly up to 1.2x the time of one
    survivor, with the materialised |W| kept at every row."""
    w0 = normal_w0(m, seed)
    sim = Simulation(SimParams(m=m, lam=lam, seed=seed), w0=w0)
    t_end = 1.2 * sim.time_to_nonzero(1)
    rows, vecs = [], []
    for t in np.linspace(0.0, t_end, n_rows):
        sim.advance(t)
        rows.append(sim.metrics_row()[: len(COLUMNS)])
        if keep_vecs:
            vecs.append(sim.solver.abs_sorted())
    return w0, np.array(rows), np.array(vecs)


# ----------------------------------------------------------------------------------
# Relative variance and its bounds


def test_bounds_match_direct_computation():
    """lo(m'), hi(m') for every m' of a W(0) with m = 2000 (both the direct-sum branch,
    m' <= 512, and the prefix-sum branch above it) against the definition (docs/theory.md §2)."""
    w0 = normal_w0(2000, 3)
    init = InitialState.from_weights(w0)
    mps = np.arange(1, 2001)
    lo, hi = init.rel_var_bounds(mps)
    for mp in list(range(1, 40)) + list(range(40, 2001, 7)) + [511, 512, 513, 1999, 2000]:
        lo_d, hi_d = relvar_bounds_direct(w0, mp)
        assert lo[mp - 1] == pytest.approx(lo_d, rel=1e-9, abs=1e-15), mp
        assert hi[mp - 1] == pytest.approx(hi_d, rel=1e-9, abs=1e-15), mp
    assert np.all(lo <= hi)
    assert lo[0] == hi[0] == 0.0  # m' = 1: no spread
    lo0, hi0 = init.rel_var_bounds([0])
    assert math.isnan(lo0[0]) and math.isnan(hi0[0])


def test_bounds_with_zeros_and_ties():
    w0 = np.array([0.0, 0.3, -0.3, 0.1, 0.0, 0.5, -0.2, 0.1])
    init = InitialState.from_weights(w0)
    mps = np.arange(1, 7)
    lo, hi = init.rel_var_bounds(mps)
    for mp in mps:
        lo_d, hi_d = relvar_bounds_direct(w0, int(mp))
        assert lo[mp - 1] == pytest.approx(lo_d, rel=1e-12, abs=1e-15)
        assert hi[mp - 1] == pytest.approx(hi_d, rel=1e-12, abs=1e-15)


def test_idealized_weights_are_half_normal_quantiles():
    for m in [1, 2, 10, 1000]:
        np.testing.assert_allclose(ideal_abs_weights(m), halfnormal_ideal(m), rtol=1e-13)
        # the same through norm.ppf: |Z| <= x with probability 2 Phi(x) - 1
        k = np.arange(1, m + 1)
        np.testing.assert_allclose(ideal_abs_weights(m), norm.ppf(1 - (k - 0.5) / (2 * m)), rtol=1e-13)
    init = InitialState.from_weights(normal_w0(300, 1))
    mps = np.array([1, 2, 5, 50, 299, 300])
    lo, hi = init.rel_var_ideal_bounds(mps)
    ideal = halfnormal_ideal(300)
    for i, mp in enumerate(mps):
        lo_d, hi_d = relvar_bounds_direct(ideal, int(mp))
        assert lo[i] == pytest.approx(lo_d, rel=1e-9, abs=1e-15)
        assert hi[i] == pytest.approx(hi_d, rel=1e-9, abs=1e-15)


def test_rel_var_within_bounds_on_every_row():
    """On every row: the solver's rel_var equals the relative variance of the materialised
    nonzero |W| (direct formula), and lies in [lo(m'), hi(m')] (1e-9 relative slack for
    rounding; the bounds (§2) are attained only at death instants)."""
    w0, rows, vecs = default_run()
    assert rows[-1, COL["nonzero"]] == 1
    for row, a in zip(rows, vecs, strict=True):
        nz = a[a > 0]
        assert row[COL["nonzero"]] == nz.size
        if nz.size == 0:
            continue
        assert row[COL["rel_var"]] == pytest.approx(relvar(nz), rel=1e-9, abs=1e-12)
        lo, hi = row[COL["rel_var_lo"]], row[COL["rel_var_hi"]]
        assert lo * (1 - 1e-9) - 1e-12 <= row[COL["rel_var"]] <= hi * (1 + 1e-9) + 1e-12
    # the bounds in the rows are the direct ones for the row's m'
    for row in rows[::50]:
        lo_d, hi_d = relvar_bounds_direct(w0, int(row[COL["nonzero"]]))
        assert row[COL["rel_var_lo"]] == pytest.approx(lo_d, rel=1e-9, abs=1e-15)
        assert row[COL["rel_var_hi"]] == pytest.approx(hi_d, rel=1e-9, abs=1e-15)


def test_bounds_are_attained_at_death_instants():
    """Right after weight m'+1 dies, C = u_{m'+1}: the relative variance is lo(m') exactly.
    Just before weight m' dies, C -> u_{m'}: it tends to hi(m')."""
    w0 = normal_w0(60, 9)
    init = InitialState.from_weights(w0)
    solver = ExactSolver(init, 0.01)
    for mp in range(59, 1, -1):
        solver.advance_to(math.inf, stop_nonzero=mp)
        mo = solver.moments()
        assert mo.nonzero == mp
        lo_d, hi_d = relvar_bounds_direct(w0, mp)
        assert mo.rel_var == pytest.approx(lo_d, rel=1e-10)
    # approaching a death from before: rel_var -> hi, the gap shrinking linearly in time
    probe = ExactSolver(init, 0.01)
    probe.advance_to(math.inf, stop_nonzero=10)
    t_death = probe.t  # weight of rank 10 (11 alive before) dies here
    lo_d, hi_d = relvar_bounds_direct(w0, 11)
    gaps = []
    for dt in [1e-2, 1e-3, 1e-4]:
        s = ExactSolver(init, 0.01)
        s.advance_to(t_death - dt)
        assert s.moments().nonzero == 11
        gaps.append(hi_d - s.moments().rel_var)
    assert all(g > 0 for g in gaps)
    assert gaps[1] / gaps[0] == pytest.approx(0.1, rel=0.05)
    assert gaps[2] / gaps[1] == pytest.approx(0.1, rel=0.05)


def test_rel_var_starts_near_half_normal_value():
    """RV(0) of a half-normal sample is pi/2 - 1 ~ 0.571 (+- ~ 2/sqrt(m))."""
    for seed in range(3):
        init = InitialState.from_weights(normal_w0(100_000, seed))
        sim_rv = ExactSolver(init, 1e-3).moments().rel_var
        assert sim_rv == pytest.approx(math.pi / 2 - 1, abs=0.01)
    assert relvar(halfnormal_ideal(100_000)) == pytest.approx(math.pi / 2 - 1, abs=1e-3)


# ----------------------------------------------------------------------------------
# The exact identities


def test_count_identity_holds_at_every_instant():
    """m' = (1 + RV) ||W||_1^2 / ||W||^2, with RV, the norms and m' all computed here from
    the materialised vector (plain algebra: it holds whatever the dynamics)."""
    w0, rows, vecs = default_run()
    for a in vecs:
        nz = a[a > 0]
        if nz.size == 0:
            continue
        l1, l2 = nz.sum(), np.dot(nz, nz)
        assert nz.size == pytest.approx((1 + relvar(nz)) * l1**2 / l2, rel=1e-12)
    # and with the solver's own columns
    alive = rows[:, COL["nonzero"]] > 0
    r = rows[alive]
    np.testing.assert_allclose(
        r[:, COL["nonzero"]],
        (1 + r[:, COL["rel_var"]]) * r[:, COL["norm1"]] ** 2 / r[:, COL["norm2_sq"]],
        rtol=1e-12,
    )


# The balance. d||W||^2/dt = 2(s ||W||^2 - lam ||W||_1), and ||W||^2 relaxes onto its
# balance value at rate ~2 (linearise 2(1 - y)y at y = 1). The run starts with
# ||W(0)||^2 ~ 0.81 and a ratio R = feature/reg push ~ 8, so after t = 10 the transient has
# decayed by e^{-20} ~ 2e-9: what is left is the quasi-static lag, because the balance
# point itself drifts as ||W||_1 falls. Writing dy/dt = 2 lam ||W||_1 (R - 1) and
# dy/dt ~ -ds/dt ~ lam^2 RV ||W||_1^2 / y^2 (from the balance and the law of w below) gives
#     R - 1 ~ s * RV / (2 y)   ( = lam ||W||_1 RV / (2 y^2) ),
# about 0.75% at the default m = 1000, lam = 1e-3 (s ~ 0.03 at the start): that is
# why 1% holds there. It is not a universal 1%: at m = 10^4 the same lag is ~2%.
T_BALANCED = 10.0


@pytest.mark.parametrize("m,seed", [(1000, 0), (1000, 1), (200, 2)])
def test_feature_and_regularization_pushes_balance_within_one_percent(m, seed):
    w0, rows, vecs = default_run(m=m, seed=seed, n_rows=1501 if m == 1000 else 601)
    ratio = rows[:, COL["feature_push"]] / rows[:, COL["reg_push"]]
    assert ratio[0] > 5  # starts far from balance
    late = rows[:, COL["t"]] >= T_BALANCED
    assert np.max(np.abs(ratio[late] - 1)) < 0.01
    # the columns are what docs/theory.md §1 defines, recomputed here from the vector
    for row, a in zip(rows[::100], vecs[::100], strict=True):
        y = np.dot(a, a)
        assert row[COL["feature_push"]] == pytest.approx((1 - y) * y, rel=1e-9)
        assert row[COL["reg_push"]] == pytest.approx(1e-3 * a.sum(), rel=1e-12)
    # theta ~ 1/||W||_1 at balance (the note's second prediction), to the same order
    theta_pred = 1 / rows[late, COL["norm1"]]
    assert np.max(np.abs(rows[late, COL["theta"]] / theta_pred - 1)) < 0.03


def test_balance_lag_follows_the_quasi_static_estimate():
    """R - 1 ~ s RV / (2y) (see above) wherever RV is not small, including m = 10^4 where
    it exceeds 1%: the 1% of the previous test is a property of the parameters, and this
    is its explanation."""
    for m, seed in [(1000, 0), (10_000, 0)]:
        w0, rows, _ = default_run(m=m, seed=seed, n_rows=601, keep_vecs=False)
        r = rows[(rows[:, COL["t"]] >= T_BALANCED) & (rows[:, COL["rel_var"]] > 0.2)]
        ratio = r[:, COL["feature_push"]] / r[:, COL["reg_push"]]
        lag = r[:, COL["s"]] * r[:, COL["rel_var"]] / (2 * r[:, COL["norm2_sq"]])
        assert np.all(ratio > 1)  # feature benefit always slightly ahead
        np.testing.assert_allclose(ratio - 1, lag, rtol=0.25)
        if m == 10_000:
            assert np.max(ratio - 1) > 0.015


def test_decay_law_identity_at_balance():
    """d(1/||W||_1)/dt = lam RV / ||W||^2 at balance. Exactly,
    d(1/||W||_1)/dt = (lam m' - s ||W||_1) / ||W||_1^2, which the central difference below
    (step 0.002, between deaths) matches to 1e-7; the balance version then differs from it
    by lam (1 - R)/y, i.e. a relative (R - 1)/RV ~ s/(2y) ~ 1.5% here: tolerance 3%."""
    w0 = normal_w0(1000, 0)
    lam = 1e-3
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    h = 0.002
    checked = 0
    for t in np.linspace(T_BALANCED, 1500.0, 40):
        solver.advance_to(t - h)
        m_before, inv_m = solver.moments().nonzero, 1 / solver.moments().norm1
        solver.advance_to(t)
        mo = solver.moments()
        solver.advance_to(t + h)
        m_after, inv_p = solver.moments().nonzero, 1 / solver.moments().norm1
        if not (m_before == mo.nonzero == m_after) or mo.nonzero < 2:
            continue  # a death inside the stencil makes d||W||_1/dt jump
        fd = (inv_p - inv_m) / (2 * h)
        exact = (lam * mo.nonzero - mo.s * mo.norm1) / mo.norm1**2
        assert fd == pytest.approx(exact, rel=1e-7)
        assert fd == pytest.approx(lam * mo.rel_var / mo.norm2_sq, rel=0.03)
        checked += 1
    assert checked >= 10


# ----------------------------------------------------------------------------------
# The last phase


def refined_last_phase(u1: float, u2: float, u3: float, lam: float) -> float:
    """Duration of the last phase with the top survivor a_1 NOT taken as 1.
    Exactly dC/dt = lam/B = lam (u_1 - C)/a_1, so with x = u_1 - C the phase lasts
    (1/lam) * integral_{u1-u2}^{u1-u3} a_1(x) dx/x. At balance ||W||^2 ~ 1 with
    a_2/a_1 = r = (u_2 - C)/(u_1 - C), so a_1 ~ 1/sqrt(1 + r^2) and the integral is
    (1/lam) int_0^{r0} dr / ((1 - r) sqrt(1 + r^2)), r0 = (u2 - u3)/(u1 - u3), which is
    (1/(sqrt2 lam)) ln[(1 + r0 + sqrt2 sqrt(1 + r0^2)) / ((1 - r0)(1 + sqrt2))]."""
    r0 = (u2 - u3) / (u1 - u3)
    s2 = math.sqrt(2.0)
    closed = math.log((1 + r0 + s2 * math.sqrt(1 + r0 * r0)) / ((1 - r0) * (1 + s2))) / (s2 * lam)
    numeric, _ = quad(
        lambda r: 1.0 / ((1.0 - r) * math.sqrt(1.0 + r * r)), 0.0, r0, epsabs=1e-14, epsrel=1e-12
    )
    assert closed == pytest.approx(numeric / lam, rel=1e-9)
    return closed


def last_phase(gap_fraction: float, m: int = 1000, lam: float = 1e-3):
    """A normal W(0) with the second weight moved to u_2 = u_1 - gap_fraction (u_1 - u_3)."""
    w0 = np.sort(np.abs(normal_w0(m, 3)))[::-1]
    w0[1] = w0[0] - gap_fraction * (w0[0] - w0[2])
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    solver.advance_to(math.inf, stop_nonzero=1)
    duration = solver.death_t[1] - solver.death_t[2]
    math_md = math.log((w0[0] - w0[2]) / (w0[0] - w0[1])) / lam
    return w0, duration, math_md


@pytest.mark.parametrize("gap_fraction", [0.9, 0.5, 0.1, 1e-2, 1e-3, 1e-5])
def test_last_phase_duration_refined_formula(gap_fraction):
    """The refined formula holds to 0.2% (corrections are O(lam ||W||_1)); docs/theory.md's
    (1/lam) ln((u1-u3)/(u1-u2)) is its a_1 = 1 upper bound, and the truth is at least
    1/sqrt(2) of it (a_1 >= ||W||/sqrt(2))."""
    lam = 1e-3
    w0, duration, math_md = last_phase(gap_fraction, lam=lam)
    assert duration == pytest.approx(refined_last_phase(w0[0], w0[1], w0[2], lam), rel=2e-3)
    assert (1 / math.sqrt(2)) * (1 - 0.01) * math_md < duration <= math_md


def test_last_phase_math_md_formula_holds_only_without_a_near_tie():
    """the simple last-phase formula (docs/theory.md §4) is accurate (1%) when the top two are well apart
    (ln ratio ~ 0.1) but overestimates by up to sqrt(2) when they are nearly tied (the case
    docs/theory.md §4 calls out as long): there a_1 ~ a_2 ~ 1/sqrt(2) for most of the phase, not 1."""
    _, duration, math_md = last_phase(0.9)
    assert duration == pytest.approx(math_md, rel=0.01)
    _, duration, math_md = last_phase(1e-3)
    assert duration / math_md < 0.8  # off by more than 20%: the claim does not hold here
    _, duration, math_md = last_phase(1e-5)
    assert duration / math_md == pytest.approx(1 / math.sqrt(2), abs=0.04)


# ----------------------------------------------------------------------------------
# The fitted decay constant


def _rows(t, w, nonzero, lam_t):
    rows = np.full((len(t), len(COLUMNS)), np.nan)
    rows[:, COL["t"]] = t
    rows[:, COL["w"]] = w
    rows[:, COL["nonzero"]] = nonzero
    rows[:, COL["lam_t"]] = lam_t
    return rows


def test_fit_decay_constant_recovers_a_known_c():
    lam, c, w0 = 2e-3, 0.73, 0.05
    t = np.linspace(0.0, 800.0, 201)
    nonzero = np.where(t < 700.0, 50, 1)  # rows with m' < 2 are excluded...
    w = w0 + c * lam * t
    w[t >= 700.0] = 5.0  # ...so this tail must not matter
    w[[7, 9]] = np.inf  # nor do non-finite w
    assert fit_decay_constant(_rows(t, w, nonzero, lam * t)) == pytest.approx(c, rel=1e-12)


def test_fit_decay_constant_is_least_squares_through_origin():
    rng = np.random.default_rng(0)
    lam, c, w0 = 1e-3, 0.6, 0.03
    t = np.linspace(0.0, 1000.0, 301)
    lam_t = lam * t
    w = w0 + c * lam_t + rng.normal(0.0, 0.02, t.size)
    w[0] = w0  # w(0) is the run's own
    got = fit_decay_constant(_rows(t, w, np.full(t.size, 10), lam_t))
    expect = np.linalg.lstsq(lam_t[:, None], w - w0, rcond=None)[0][0]
    assert got == pytest.approx(expect, rel=1e-12)
    assert got == pytest.approx(c, abs=0.01)


def test_fit_decay_constant_piecewise_lam_uses_the_integral():
    """With lam changed mid-run, w - w(0) = c * integral(lam dt): the fit uses lam_t."""
    c, w0 = 0.9, 0.1
    t = np.linspace(0.0, 100.0, 101)
    lam_t = np.where(t < 40.0, 1e-3 * t, 0.04 + 5e-3 * (t - 40.0))
    assert fit_decay_constant(_rows(t, w0 + c * lam_t, np.full(t.size, 5), lam_t)) == pytest.approx(
        c, rel=1e-12
    )


def test_fit_decay_constant_degenerate_inputs():
    assert math.isnan(fit_decay_constant(_rows([0.0], [0.1], [5], [0.0])))
    assert math.isnan(fit_decay_constant(_rows([0.0, 1.0], [0.1, 0.2], [1, 1], [0.0, 1.0])))
    assert math.isnan(fit_decay_constant(_rows([0.0, 1.0], [0.1, 0.1], [5, 5], [0.0, 0.0])))


def test_fitted_c_of_a_run_is_the_slope_of_its_own_rows():
    """On a real run, the fitted c equals the least squares computed here from the rows'
    1/||W||_1 and lam*t, and sits in the Theta(1) range docs/theory.md §4 predicts
    (RV/||W||^2 is ~0.57 early and approaches 1 late)."""
    w0, rows, vecs = default_run()
    sim_c = fit_decay_constant(rows)
    use = rows[:, COL["nonzero"]] >= 2
    x = 1e-3 * rows[use, COL["t"]]
    y = 1 / rows[use, COL["norm1"]] - 1 / rows[0, COL["norm1"]]
    assert sim_c == pytest.approx(float(np.dot(x, y) / np.dot(x, x)), rel=1e-10)
    assert 0.3 < sim_c < 1.5


def test_last_weight_fixed_point_is_the_stable_root_of_the_cubic():
    """The last weight settles where (1 - w^2) w = lam: the largest real root of
    w^3 - w + lam = 0, against numpy's companion-matrix roots (and scipy's brentq), from
    tiny lam to just below 2/(3 sqrt 3), where the two positive roots meet."""
    from scipy.optimize import brentq

    from sparsity_gui.core.note.metrics import last_weight_fixed_point

    top = 1 / math.sqrt(3)
    limit = (1 - top * top) * top
    for lam in [*np.geomspace(1e-12, 0.99 * limit, 200), 1e-3, 0.25]:
        roots = np.roots([1.0, 0.0, -1.0, lam])
        largest = max(r.real for r in roots if abs(r.imag) < 1e-9)
        bracketed = brentq(lambda w, lam=lam: (1 - w * w) * w - lam, top, 1.0, xtol=1e-16, rtol=1e-15)
        w = last_weight_fixed_point(lam)
        assert w == pytest.approx(bracketed, rel=4e-15)
        assert w == pytest.approx(largest, rel=1e-12)
        assert (1 - w * w) * w == pytest.approx(lam, rel=1e-12, abs=1e-15)
        assert 1 - 3 * w * w < 0, "the stable root: the force's slope there is negative"
    # at the double root the closed form still lands on it, to the precision it allows
    near = limit * (1 - 1e-10)
    assert last_weight_fixed_point(near) == pytest.approx(top, rel=1e-4)
    assert last_weight_fixed_point(0.0) == 1.0
    assert math.isnan(last_weight_fixed_point(limit)) and math.isnan(last_weight_fixed_point(0.5))
