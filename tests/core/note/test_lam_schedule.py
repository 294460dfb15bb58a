"""λ(t) schedules in the note's model (piecewise linear through knots, docs/theory.md §7),
against independent references written in the tests: scipy's DOP853 on the full vector
with an event at each death (rtol 1e-13, note_oracles.reference_flow with ``linear``), a
hand-written gradient-descent loop that takes λ at each step's time, and Λ(t) = ∫λ by
quadrature. A live change of λ ends the schedule; a schedule of one knot gives the digits
of a constant λ."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import normal_w0
from note_oracles import reference_flow
from scipy.integrate import quad

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.metrics import COL
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.schedule import check_knots, lam_at, lam_integral, parse_knots
from sparsity_gui.core.note.simulation import Simulation

# a warm-up (λ from 0) and a schedule that rises, then falls, then stays
SCHEDULES = {
    "warm-up": ((0.0, 0.0), (30.0, 2e-2)),
    "three knots": ((0.0, 5e-3), (20.0, 3e-2), (60.0, 1e-2)),
}
T_END = 90.0  # past the last knot, most weights dead, more than one left
REL = 1e-9


def lam_by_hand(knots, t: float) -> float:
    """λ(t) from the definition: linear between knots, constant outside them."""
    if t <= knots[0][0]:
        return knots[0][1]
    for (t0, v0), (t1, v1) in zip(knots, knots[1:], strict=False):
        if t <= t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return knots[-1][1]


def scheduled(knots, m: int, seed: int, method: str = "exact", eta: float = 0.05) -> Simulation:
    params = SimParams(m=m, lam=knots[-1][1], lam_schedule=knots, method=method, eta=eta, seed=seed)
    return Simulation(params, normal_w0(m, seed), record=False)


@pytest.mark.parametrize("m, seed", [(200, 1), (600, 2)])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_the_exact_flow_follows_the_schedule(name, m, seed):
    knots = SCHEDULES[name]
    times = np.linspace(0.0, T_END, 20)
    ref = reference_flow(normal_w0(m, seed), knots, times, linear=True)
    sim = scheduled(knots, m, seed)
    rows = sim.replay((), times)
    np.testing.assert_allclose(rows[:, COL["norm1"]], ref.norm1, rtol=REL)
    np.testing.assert_allclose(rows[:, COL["norm2_sq"]], ref.norm2_sq, rtol=REL)
    np.testing.assert_array_equal(rows[:, COL["nonzero"]], ref.nonzero)
    dead = np.isfinite(ref.death_t)
    assert 0.5 * m < dead.sum() < m  # most died, on every piece of the schedule
    np.testing.assert_array_equal(np.isfinite(sim.solver.death_times()), dead)
    np.testing.assert_allclose(sim.solver.death_times()[dead], ref.death_t[dead], rtol=REL)
    # λ in force and Λ(t) = ∫₀ᵗ λ on every row
    lam_rows = [lam_by_hand(knots, t) for t in times]
    np.testing.assert_allclose(rows[:, COL["lam"]], lam_rows, rtol=1e-12, atol=1e-18)
    big_lam = [
        quad(lambda s: lam_by_hand(knots, s), 0.0, t, points=[k for k, _ in knots], epsabs=0)[0]
        for t in times
    ]
    np.testing.assert_allclose(rows[:, COL["lam_t"]], big_lam, rtol=1e-12, atol=1e-15)
    # θ uses the λ in force
    np.testing.assert_allclose(rows[:, COL["theta"]], np.array(lam_rows) / (1.0 - ref.norm2_sq), rtol=1e-8)


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_gradient_descent_takes_lambda_at_each_steps_time(name):
    knots, m, eta, steps = SCHEDULES[name], 300, 0.05, 1500
    w = normal_w0(m, 3)
    death = np.zeros(m, dtype=np.int64)
    for n in range(steps):  # the loop written here: λ at the step's own time t = n η
        s = 1.0 - float(np.sum(w * w))
        new = w + eta * (s * w - lam_by_hand(knots, n * eta) * np.sign(w))
        crossed = (w != 0.0) & (np.sign(new) != np.sign(w))
        new[crossed] = 0.0
        death[crossed] = n + 1
        w = new
    sim = scheduled(knots, m, 3, method="gd", eta=eta)
    sim.advance(steps * eta)
    assert sim.solver.steps == steps
    np.testing.assert_allclose(np.abs(sim.solver.weights()), np.abs(w), rtol=1e-12, atol=1e-15)
    assert 0 < np.count_nonzero(w) < m
    got = sim.solver.death_times()
    np.testing.assert_allclose(got[death > 0], death[death > 0] * eta, rtol=1e-12)


def test_a_one_knot_schedule_gives_the_digits_of_a_constant_lambda():
    for method in ("exact", "gd"):
        plain = Simulation(SimParams(m=500, lam=2e-2, method=method), normal_w0(500, 4), record=False)
        one = Simulation(
            SimParams(m=500, lam=2e-2, lam_schedule=((0.0, 2e-2),), method=method),
            normal_w0(500, 4),
            record=False,
        )
        times = np.linspace(0.0, 60.0, 31)
        a, b = plain.replay((), times), one.replay((), times)
        np.testing.assert_array_equal(a[:, COL["norm1"]], b[:, COL["norm1"]])
        np.testing.assert_array_equal(a[:, COL["norm2_sq"]], b[:, COL["norm2_sq"]])
        np.testing.assert_array_equal(a[:, COL["theta"]], b[:, COL["theta"]])
        np.testing.assert_allclose(a[:, COL["lam_t"]], b[:, COL["lam_t"]], rtol=1e-14)


def test_a_live_change_of_lambda_ends_the_schedule():
    """After the change λ stays at its value: the flow from then on is the constant-λ flow
    from the state reached (the reference restarted from it)."""
    knots = SCHEDULES["three knots"]
    sim = scheduled(knots, 300, 5)
    sim.advance(25.0)
    before = np.abs(sim.solver.weights())
    sim.set_lam(4e-3)
    assert sim.params.lam_schedule == () and sim.params.lam == 4e-3
    sim.advance(70.0)
    ref = reference_flow(before, 4e-3, [45.0])
    np.testing.assert_allclose(np.abs(sim.solver.weights()), ref.abs_w[-1], rtol=1e-8, atol=1e-13)
    assert sim.lam == 4e-3
    # the markers: λ(0), the knots before the change, the change
    assert [(c.t, c.lam) for c in sim.lam_changes] == [(0.0, 5e-3), (20.0, 3e-2), (25.0, 4e-3)]


def test_the_integral_and_the_values_of_a_schedule():
    knots = ((10.0, 1e-3), (20.0, 3e-3), (40.0, 0.0))
    for t in (0.0, 5.0, 10.0, 15.0, 20.0, 33.3, 40.0, 100.0):
        assert lam_at(knots, t) == pytest.approx(lam_by_hand(knots, t), rel=1e-15, abs=1e-18)
        want = quad(lambda s: lam_by_hand(knots, s), 0.0, t, points=[10.0, 20.0, 40.0], epsabs=0)[0]
        assert lam_integral(knots, 0.0, t) == pytest.approx(want, rel=1e-13, abs=1e-18)
    assert lam_integral(knots, 12.0, 30.0) == pytest.approx(
        lam_integral(knots, 0.0, 30.0) - lam_integral(knots, 0.0, 12.0), rel=1e-13
    )
    assert parse_knots("0:0, 200:1e-3,3000:5e-4") == ((0.0, 0.0), (200.0, 1e-3), (3000.0, 5e-4))


@pytest.mark.parametrize(
    "knots, words",
    [
        ("0:0,200:1e-3,100:2e-3", "is out of order"),
        ("0:0,200:1e-3,200:2e-3", "is repeated"),
        ("0:-1e-3", "every λ must be from 0 to 1"),
        ("0:0,10:2", "every λ must be from 0 to 1, got 2"),
        ("0:0,ten:1e-3", "expected knots t:value"),
        ("0:0,10:nan", "must be a finite number"),
        ("-5:1e-3", "must be >= 0"),
        ("", "at least one knot"),
    ],
)
def test_bad_schedules_name_what_is_wrong(knots, words):
    with pytest.raises(InputError, match=words) as info:
        check_knots(knots, 1.0)
    assert info.value.field == "lam_schedule"


def test_theta_may_fall_where_the_schedule_lowers_lambda():
    """Lowering λ lowers θ = λ/(1-‖W‖²) at once: the regime says the sufficient condition
    fails and measures the fall."""
    sim = Simulation(
        SimParams(m=400, lam=2e-3, lam_schedule=((0.0, 2e-2), (30.0, 2e-2), (31.0, 2e-3))),
        normal_w0(400, 6),
    )
    sim.replay((), np.linspace(0.0, 60.0, 121), record=True)
    regime = sim.regime()
    assert regime["lam_schedule"] == {"lam_max": 2e-2, "lam_lowered": True}
    assert regime["theta_rise_condition"] is False
    assert regime["theta_rises"] is False and 30.0 <= regime["theta_fall"]["t_to"] <= 32.0
    assert math.isfinite(regime["theta_fall"]["fall"])


def test_a_session_keeps_the_schedule_and_a_live_change_after_it(tmp_path):
    from sparsity_gui.core.note.changes import LiveChange, RunScript
    from sparsity_gui.core.note.session import W0Source, parse_session, session_text

    knots = SCHEDULES["three knots"]
    params = SimParams(m=300, lam=knots[-1][1], lam_schedule=knots, t_end=80.0)
    from sparsity_gui.core.note.initial import initial_weights

    script = RunScript(params, initial_weights(params), (LiveChange(70.0, "lam", 2e-3),), 80.0, 41)
    back = parse_session(session_text(script, W0Source("normal")))
    assert back.script.params == params and back.script.params.lam_schedule == knots
    assert back.params.lam == 2e-3 and back.params.lam_schedule == ()  # after the change
    a = Simulation.from_script(script).history.array()
    b = Simulation.from_script(back.script).history.array()
    np.testing.assert_array_equal(a, b)
    assert a[-1, COL["lam"]] == 2e-3 and a[0, COL["lam"]] == 5e-3


def test_the_decay_law_is_named_with_capital_lambda_when_lam_changed():
    """Λ(t) = ∫λ is λ·t only for a constant λ: the law's name says Λ(t) otherwise (the live
    panel's legend and the exported figure's), and λt for a constant λ (today's text)."""
    from sparsity_gui.core.note.schedule import lam_varied
    from sparsity_gui.plots.note.norms import law_text

    t = np.linspace(0.0, 100.0, 201)
    assert not lam_varied(t, 2e-3 * t)
    ramp = np.where(t < 50, 1e-2 * t**2 / 100, 1e-2 * (t - 25))  # a warm-up to 1e-2 over [0, 50]
    assert lam_varied(t, ramp)
    assert not lam_varied(t[:1], ramp[:1])
    assert law_text(False) == "1/(w(0) + c·λt)" and law_text(True, varied=True) == "w(0) + c·Λ(t)"


@pytest.mark.parametrize("t_knot", [5e-324, 1e-320, 1e-310])
def test_a_knot_at_a_subnormal_time_is_a_step_of_lambda_and_the_flow_goes_on(t_knot):
    """λ from 0 to 2e-2 over [0, 5e-324]: the slope is past the float range (the solver
    once stood still at t = 0 forever). The flow is the constant-λ flow to within
    ∫λ < 1e-308, against the reference; the solver gets there in a bounded number of steps."""
    from sparsity_gui.core.note import kernels as K
    from sparsity_gui.core.note.solvers import ExactSolver, InitialState, lam_knots_of

    m, t_end = 300, 60.0
    w0 = normal_w0(m, 7)
    knots = ((0.0, 0.0), (t_knot, 2e-2))
    solver = ExactSolver(InitialState.from_weights(w0), lam_knots_of(knots))
    assert solver.advance_to(t_end, -1, 100_000) == K.REACHED_TARGET
    assert solver.t == t_end and solver.diverged is None
    ref = reference_flow(w0, 2e-2, [t_end])
    np.testing.assert_allclose(solver.abs_sorted(), np.sort(ref.abs_w[-1])[::-1], rtol=1e-8, atol=1e-13)
    assert solver.lam == 2e-2


def test_gradient_descent_through_a_subnormal_knot_takes_lambda_at_each_steps_time():
    knots, m, eta, steps = ((0.0, 0.0), (5e-324, 2e-2)), 300, 0.05, 400
    w = np.abs(normal_w0(m, 3))
    for n in range(steps):  # λ(0) = 0 at the first step, 2e-2 from the second on
        lam = lam_by_hand(knots, n * eta)
        w = np.maximum(w + eta * ((1.0 - w @ w) * w - lam), 0.0)
    sim = scheduled(knots, m, 3, method="gd", eta=eta)
    sim.advance(steps * eta)
    assert sim.solver.steps == steps and sim.solver.diverged is None
    np.testing.assert_allclose(np.abs(sim.solver.weights()), w, rtol=1e-9, atol=1e-15)


def test_every_knot_costs_the_exact_solver_a_bounded_number_of_steps():
    """The schedule's bounded work: 1000 knots (the most allowed) of λ alternating between 0
    and 1e-3, subnormally close or spread out, add at most EXACT_STEPS_PER_KNOT steps each
    to the longer of the two constant-λ runs."""
    from sparsity_gui.core.knots import MAX_KNOTS
    from sparsity_gui.core.note.params import EXACT_STEPS_PER_KNOT
    from sparsity_gui.core.note.solvers import ExactSolver, InitialState, lam_knots_of

    init = InitialState.from_weights(normal_w0(1000, 2))
    for spacing in (5e-324, 1e-300, 1e-9, 0.01, 0.1):
        t_end = max(1.2 * MAX_KNOTS * spacing, 1.0)
        plain = []
        for lam in (0.0, 1e-3):
            solver = ExactSolver(init, lam)
            solver.advance_to(t_end, -1, 10**7)
            plain.append(solver.steps)
        knots = tuple((i * spacing, 1e-3 * (i % 2)) for i in range(MAX_KNOTS))
        solver = ExactSolver(init, lam_knots_of(knots))
        solver.advance_to(t_end, -1, 10**7)
        assert solver.t == t_end and solver.diverged is None
        assert solver.steps <= max(plain) + EXACT_STEPS_PER_KNOT * MAX_KNOTS, spacing


def test_a_solver_that_cannot_step_says_so_instead_of_trying_forever():
    """The net under every schedule: a step size of 0 (here a state forced to NaN) ends the
    run as diverged, at once, with where it stood."""
    from sparsity_gui.core.note import kernels as K
    from sparsity_gui.core.note.solvers import ExactSolver, InitialState

    solver = ExactSolver(InitialState.from_weights(normal_w0(50, 1)), 1e-2)
    solver.fs[K.F_H] = math.nan
    assert solver.advance_to(10.0, -1, 10**6) == K.REACHED_TARGET
    assert solver.steps == 0 and "cannot advance at t = 0" in solver.diverged
    sim = Simulation(SimParams(m=50, lam=1e-2, t_end=10.0), normal_w0(50, 1), record=False)
    sim.solver.fs[K.F_H] = 0.0
    sim.advance(10.0, -1, 10**6)
    assert sim.t == 0.0 and sim.solver.diverged
