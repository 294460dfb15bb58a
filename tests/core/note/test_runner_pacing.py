"""The worker's loop naps between chunks of a paced run: until the next tick while the
run goes on (also right after a live change, when the run's clock starts again from
now), 50 ms only when there is nothing to do (paused, finished). Napping 50 ms after
each live change of λ froze the run for three frames each time (a λ drag lost 8 frames
a second, bench_gui.py's λ-drag case). The runner is stepped by hand, on a given clock."""

from __future__ import annotations

import pytest

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.runner import Runner

SPEED = 5.0  # simulated time per wall second


def _running(params: SimParams) -> Runner:
    runner = Runner(params, speed=SPEED, warm_up=False, playing=True)
    assert runner.step_once(now=0.0)
    for k in range(1, 20):
        assert runner.step_once(now=k * 0.01)
    return runner


def test_right_after_a_live_change_the_loop_has_more_to_do_and_the_run_goes_on():
    params = SimParams(m=500, lam=1e-2, seed=3)
    runner = _running(params)
    before = runner.sim.t
    runner.set_params(params.with_changes(lam=2e-2))
    now = 0.2
    # the change is applied and the run's clock starts again from now: nothing to
    # simulate yet, but the run goes on (a nap until the next tick, not an idle one)
    assert runner.step_once(now=now)
    assert runner.sim.lam == pytest.approx(2e-2) and runner.sim.t == pytest.approx(before)
    for k in range(1, 11):  # ten ticks of 10 ms later: the clock's simulated time, all of it
        assert runner.step_once(now=now + k * 0.01)
    assert runner.sim.t == pytest.approx(before + SPEED * 0.1, rel=1e-9)


def test_ahead_of_the_clock_the_loop_waits_for_the_next_tick_not_idle():
    runner = _running(SimParams(m=500, lam=1e-2, seed=3))
    t = runner.sim.t
    assert runner.step_once(now=0.19)  # the same instant again: nothing to simulate
    assert runner.sim.t == t


def test_paused_or_finished_there_is_nothing_to_do():
    runner = _running(SimParams(m=500, lam=1e-2, seed=3))
    runner.play(False)
    assert not runner.step_once(now=0.3)
    finished = Runner(SimParams(m=50, lam=5e-2, seed=1), speed=0.0, warm_up=False, playing=True)
    for _ in range(10_000):
        if not finished.step_once():
            break
    assert finished.state == "finished" and not finished.step_once()


def test_a_later_t_end_lets_a_finished_run_go_on_to_it():
    """A run finished at its t_end goes on when t_end is moved later (a live change: the
    same run, not a new one) and ends at the new t_end; an earlier t_end ends it there."""
    runner = Runner(SimParams(m=200, lam=1e-2, seed=1, t_end=20.0), speed=0.0, warm_up=False, playing=True)
    for _ in range(10_000):
        if not runner.step_once():
            break
    assert runner.state == "finished" and runner.sim.t == pytest.approx(20.0)
    sim = runner.sim
    runner.set_params(runner.params.with_changes(t_end=40.0))
    for _ in range(10_000):
        if not runner.step_once():
            break
    assert runner.sim is sim  # the same run, carried on
    assert runner.state == "finished" and runner.sim.t == pytest.approx(40.0)
