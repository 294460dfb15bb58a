"""theta_rises reports what the run did (issue 34): theta = lam/(1 - ||W||^2) measured here on
an independent solve of the flow (scipy's solve_ivp on the spec's two-variable reduction, or a
numpy gradient descent), on a grid far denser than the run's rows, against the run's
``regime``; ``theta_rise_condition`` against (1 - ||W(0)||^2)||W(0)||^2 >= lam ||W(0)||_1
computed here. The case of issue 34 (m = 10^5, lam = 1e-3, seed 0: theta falls first) and
runs where theta rises throughout."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from sparsity_gui.core.note.changes import LiveChange, RunScript
from sparsity_gui.core.note.files import run_metadata
from sparsity_gui.core.note.metrics import COL
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import replay_script, simulate_samples


def normal_w0(m: int, seed: int, sigma: float) -> np.ndarray:
    """The CLI's W(0) for --seed/--sigma (numpy's default_rng, as the spec draws it)."""
    return np.random.default_rng(seed).standard_normal(m) * (sigma / math.sqrt(m))


def flow(w0: np.ndarray, lam: float, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(||W||^2, ||W||_1, |W| sorted descending at each time) of the flow, by the spec's
    reduction a_k = e^S max(u_k - C, 0), dS/dt = 1 - ||W||^2, dC/dt = lam e^-S, integrated by
    scipy with sums taken by numpy at every evaluation."""
    u = np.sort(np.abs(w0))[::-1]

    def rhs(_t, y):
        a = math.exp(y[0]) * np.maximum(u - y[1], 0.0)
        return [1.0 - float(a @ a), lam * math.exp(-y[0])]

    sol = solve_ivp(rhs, (0.0, float(times[-1])), [0.0, 0.0], t_eval=times, rtol=1e-10, atol=1e-14)
    assert sol.success
    a = np.exp(sol.y[0])[:, None] * np.maximum(u[None, :] - sol.y[1][:, None], 0.0)
    return np.einsum("ij,ij->i", a, a), a.sum(axis=1), a


def falls(theta: np.ndarray) -> bool:
    """Whether theta ever goes down from one instant to the next, by more than the solve's
    error (1e-5 of theta: where the last weight sits at its fixed point, s = 1 - ||W||^2 is
    ~lam, and theta = lam/s magnifies solve_ivp's relative error ~1/s times)."""
    return bool(np.any(np.diff(theta) < -1e-5 * theta[:-1]))


def condition(w0: np.ndarray, lam: float) -> bool:
    n2 = float(w0 @ w0)
    return n2 < 1.0 and (1.0 - n2) * n2 >= lam * float(np.abs(w0).sum())


def test_issue_34_theta_falls_first_at_m_1e5_lam_1e3_seed_0():
    """lam ||W(0)||_1 = 0.227 <= 1/4 and ||W(0)||^2 = 0.81 < 1, yet lam ||W(0)||_1 exceeds
    (1 - ||W(0)||^2)||W(0)||^2 = 0.154: theta falls first, and weights below it regrow."""
    m, lam = 100_000, 1e-3
    w0 = normal_w0(m, 0, 0.9)
    assert float(w0 @ w0) < 1.0 and lam * np.abs(w0).sum() <= 0.25 and not condition(w0, lam)
    times = np.linspace(0.0, 3.08, 309)
    n2, _, a = flow(w0, lam, times)
    theta = lam / (1.0 - n2)
    assert falls(theta)
    low = int(np.argmin(theta))
    assert theta[0] == pytest.approx(0.005269, rel=1e-3) and theta[low] == pytest.approx(0.00406, rel=2e-3)
    # weights below theta at t = 0.26 that are larger at t = 3.08: the note's "keeps shrinking" fails
    i = int(np.searchsorted(times, 0.26))
    assert times[i] == pytest.approx(0.26)
    regrown = np.count_nonzero((a[i] > 0) & (a[i] < theta[i]) & (a[-1] > a[i]))
    assert regrown > 1000

    run = simulate_samples(SimParams(m=m, lam=lam, seed=0), None, 501)
    regime = json.loads(json.dumps(run_metadata(run, run.sim.params, "test")))["regime"]
    assert regime["balance_possible"] is True
    assert regime["theta_rise_condition"] is False
    assert regime["theta_rises"] is False
    fall = regime["theta_fall"]
    assert fall["t_from"] == 0.0 and fall["theta_from"] == pytest.approx(theta[0], rel=1e-9)
    assert fall["theta_to"] == pytest.approx(theta[low], rel=1e-4)
    assert fall["t_to"] == pytest.approx(times[low], abs=0.1)
    assert fall["fall"] == pytest.approx(1.0 - theta[low] / theta[0], rel=1e-3)
    # the run's own 501 rows step over the whole fall: theta is measured on its start too
    assert not falls(run.rows[:20, COL["theta"]])


@pytest.mark.parametrize(("m", "lam", "seed"), [(1000, 1e-3, 0), (300, 3e-3, 4)])
def test_theta_rises_throughout_when_the_condition_holds(m, lam, seed):
    """Inside the condition theta never falls on the flow, measured here to the end of the
    run, and the run says so."""
    w0 = normal_w0(m, seed, 0.9)
    assert condition(w0, lam)
    run = simulate_samples(SimParams(m=m, lam=lam, seed=seed), None, 501)
    times = np.concatenate([np.geomspace(1e-4, 5.0, 200), np.linspace(5.0, run.t_end, 2000)[1:]])
    n2, _, _ = flow(w0, lam, times)
    assert not falls(lam / (1.0 - n2))
    regime = run.regime
    assert regime["theta_rise_condition"] is True
    assert regime["theta_rises"] is True and regime["theta_fall"] is None


def test_norm_above_one_theta_starts_infinite_and_falls():
    """||W(0)||^2 > 1: s < 0, theta = +inf, finite once ||W||^2 drops below 1 (a fall from
    +inf, reported with theta_from null)."""
    m, lam, sigma = 2000, 1e-3, 1.2
    w0 = normal_w0(m, 3, sigma)
    assert float(w0 @ w0) > 1.0 and not condition(w0, lam)
    times = np.linspace(0.0, 5.0, 51)
    n2, _, _ = flow(w0, lam, times)
    assert n2[0] > 1.0 and n2[-1] < 1.0
    regime = simulate_samples(SimParams(m=m, lam=lam, sigma=sigma, seed=3), None, 501).regime
    assert regime["theta_rises"] is False and regime["theta_rise_condition"] is False
    fall = regime["theta_fall"]
    assert fall["theta_from"] is None and fall["fall"] == 1.0
    assert regime["norm2_w0"] == pytest.approx(float(w0 @ w0), rel=1e-12)


def test_gradient_descent_fall_measured_on_its_own_steps():
    """A gd run is measured on its own steps: theta of a numpy gradient descent with the zero
    rule, step by step, against the run's theta_fall."""
    m, lam, eta = 100_000, 1e-3, 0.05
    w0 = normal_w0(m, 0, 0.9)
    w = w0.copy()
    theta = [lam / (1.0 - float(w @ w))]
    for _ in range(80):  # t = 4
        step = w + eta * ((1.0 - float(w @ w)) * w - lam * np.sign(w))
        w = np.where(np.sign(step) == np.sign(w), step, 0.0)
        theta.append(lam / (1.0 - float(w @ w)))
    theta = np.array(theta)
    low = int(np.argmin(theta))
    assert 0 < low < 80
    run = simulate_samples(SimParams(m=m, lam=lam, seed=0, method="gd", eta=eta), None, 501)
    fall = run.regime["theta_fall"]
    assert run.regime["theta_rises"] is False
    assert fall["theta_from"] == pytest.approx(theta[0], rel=1e-12)
    assert fall["theta_to"] == pytest.approx(theta[low], rel=1e-3)
    assert fall["t_to"] == pytest.approx(eta * low, abs=0.25)


def test_a_live_raise_of_lam_past_the_condition_makes_theta_fall():
    """The condition holds at t = 0; raising lam at t = 0.05 to half the largest lam for which
    it still holds keeps theta rising; raising it past that makes ||W||^2, and theta, fall
    after the change (measured on the replayed rows, 0.005 apart)."""
    m, lam0, t1 = 2000, 1e-4, 0.05
    w0 = normal_w0(m, 5, 0.9)
    assert condition(w0, lam0)
    n2, n1, _ = flow(w0, lam0, np.array([0.0, t1]))
    limit = (1.0 - n2[-1]) * n2[-1] / n1[-1]  # lam above this: the condition fails after the raise
    assert limit > 10 * lam0 and 1.5 * limit * n1[-1] < 0.25
    for lam1, rises in ((0.5 * limit, True), (1.5 * limit, False)):
        times = np.concatenate([np.linspace(0.0, t1, 11), np.linspace(t1, 10.0, 2000)])
        oracle = np.empty(times.shape[0])
        oracle[:11] = lam0 / (1.0 - flow(w0, lam0, times[:11])[0])
        # after the change: the flow from the state at t1 (its |W| as a new W(0)), lam1
        a1 = flow(w0, lam0, np.array([0.0, t1]))[2][-1]
        oracle[11:] = lam1 / (1.0 - flow(a1, lam1, times[11:] - t1)[0])
        assert falls(oracle) is not rises
        script = RunScript(SimParams(m=m, lam=lam0), w0, (LiveChange(t1, "lam", lam1),), 10.0, 2001)
        regime = replay_script(script).regime
        (change,) = regime["at_changes"]
        assert change["lam_lowered"] is False
        assert change["theta_rise_condition"] is rises
        assert regime["theta_rise_condition"] is rises
        assert regime["theta_rises"] is rises
        if not rises:
            fall = regime["theta_fall"]
            low = int(np.argmin(oracle[11:])) + 11
            assert fall["theta_to"] == pytest.approx(oracle[low], rel=1e-4)
            assert t1 <= fall["t_from"] < fall["t_to"] == pytest.approx(times[low], abs=0.05)


def test_theta_at_a_live_lower_lam_falls():
    """Lowering lam lowers theta = lam/s at once: theta_rises is false, and the condition too."""
    m = 500
    w0 = normal_w0(m, 1, 0.9)
    run = replay_script(RunScript(SimParams(m=m, lam=4e-3), w0, (LiveChange(50.0, "lam", 1e-3),), 100.0))
    regime = run.regime
    assert regime["at_changes"][0]["lam_lowered"] is True
    assert regime["theta_rises"] is False and regime["theta_rise_condition"] is False
    assert regime["theta_fall"]["t_from"] <= 50.0 <= regime["theta_fall"]["t_to"]


@pytest.mark.parametrize(
    ("m", "lam", "seed", "t_end"), [(1000, 1e-2, 0, None), (1000, 1e-2, 3, None), (20_000, 1e-2, 1, 50.0)]
)
def test_a_fall_is_measured_whatever_the_rows(m, lam, seed, t_end):
    """A fall of theta at the start against the flow solved here, where the run's rows are
    far apart (m = 1000: 501 rows ~5 apart, the exact solve's snapshots ~0.25 apart) and
    with --t-end (rows 0.1 apart, a separate code path)."""
    w0 = normal_w0(m, seed, 0.9)
    assert not condition(w0, lam)
    times = np.linspace(0.0, 3.0, 601)
    n2, _, _ = flow(w0, lam, times)
    theta = lam / (1.0 - n2)
    low = int(np.argmin(theta))
    assert 0 < low < 600
    run = simulate_samples(SimParams(m=m, lam=lam, seed=seed, t_end=t_end), None, 501)
    regime = run.regime
    assert regime["theta_rises"] is False and regime["theta_rise_condition"] is False
    fall = regime["theta_fall"]
    assert fall["t_from"] == 0.0
    assert fall["theta_to"] == pytest.approx(theta[low], rel=1e-4)
    assert fall["t_to"] == pytest.approx(times[low], abs=0.1)
