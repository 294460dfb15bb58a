"""The window's history is spread over simulated time, whatever the worker's chunks cover,
and the c fitted on screen is the c an export of the same instant writes.

The worker's chunks are made long by construction (a work budget no chunk exhausts), so
one chunk spans the whole run: its rows must still be at most one grid step apart in
log t. The c on screen is checked against the exported run's c (the run re-simulated at
evenly spaced instants) and, at a small m, against an independent integration of the flow
with scipy (tests/note_oracles.py) and a least-squares fit written here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from note_oracles import halfnormal_ideal, reference_flow, relvar_bounds_direct

from sparsity_gui.core.note.metrics import COL, DEFAULT_SAMPLES
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.runner import Runner
from sparsity_gui.core.note.sampled import replay_script
from sparsity_gui.core.note.simulation import ROWS_PER_DECADE, Simulation

# consecutive grid rows: a factor 10^(1/ROWS_PER_DECADE) apart in t (a ratio of 2.3 %)
GRID_STEP = math.log(10.0) / ROWS_PER_DECADE


def largest_log_gap(t: np.ndarray) -> float:
    positive = t[t > 0]
    return float(np.max(np.diff(np.log(positive))))


def oracle_c(times: np.ndarray, norm1: np.ndarray, nonzero: np.ndarray, lam: float) -> float:
    """c of ||W||_1 = 1/(w(0) + c lam t): least squares through the origin of w - w(0)
    against lam t over the instants with at least two weights left (written from
    docs/theory.md §4, not from the package)."""
    w = 1.0 / norm1
    x = lam * times
    use = nonzero >= 2
    return float(np.sum(x[use] * (w[use] - w[0])) / np.sum(x[use] ** 2))


def run_in_long_chunks(params: SimParams) -> Runner:
    """The real worker, flat out, each chunk's work budget too large to run out: a chunk
    ends only at one weight left or after a decade of grid rows."""
    runner = Runner(params, speed=0.0, warm_up=False, playing=True)
    runner.step_once()  # builds the run
    chunks = 0
    while runner.state == "running":
        runner._chunk_work = 2**62  # noqa: SLF001 (the adaptive budget, made long on purpose)
        runner.step_once()
        chunks += 1
        assert chunks < 10_000
    assert runner.state == "finished", runner.message
    return runner


def test_one_chunk_from_t_02_to_1050_leaves_rows_spread_over_it():
    """The issue's case: a single advance from t = 0.2 to t = 1050 (as one long chunk of the
    worker did at m = 10^7) keeps rows all the way, log-spaced, each the exact state of its
    instant (the same as a run stopped there on purpose)."""
    params = SimParams(m=20_000, lam=1e-3, seed=3)
    sim = Simulation(params)
    sim.advance_recording(0.2)
    rows_before = len(sim.history)
    sim.advance_recording(1050.0, max_rows=10**6)
    t = sim.history.array()[:, COL["t"]]
    assert t[-1] == pytest.approx(1050.0, rel=1e-12)
    assert np.all(np.diff(t) > 0)
    inside = t[(t >= 0.2) & (t <= 1050.0)]
    # every grid time between: 100 a decade over 3.7 decades
    assert inside.size >= 3.7 * ROWS_PER_DECADE
    assert len(sim.history) - rows_before >= 3.7 * ROWS_PER_DECADE
    assert largest_log_gap(t) <= GRID_STEP * (1 + 1e-9)
    # a row in the middle is the state at its own instant: a separate run stopped there
    rows = sim.history.array()
    i = int(np.argmin(np.abs(t - 30.0)))
    probe = Simulation(params)
    probe.advance(float(t[i]))
    mo = probe.moments()
    assert rows[i, COL["nonzero"]] == mo.nonzero
    assert rows[i, COL["norm1"]] == pytest.approx(mo.norm1, rel=1e-10)
    assert rows[i, COL["norm2_sq"]] == pytest.approx(mo.norm2_sq, rel=1e-10)


def test_screen_history_and_fitted_c_at_a_million_weights_in_long_chunks():
    """m = 10^6 through the real worker with chunks that never run out of work: the history
    reaches from the start to one weight left with no log-time hole wider than one grid
    step, the chunk's last instant is the history's last row, and the c on screen agrees
    with the exported run's (re-simulated at 501 evenly spaced instants) within 1 %, and
    with a least-squares fit to the exported rows written here."""
    params = SimParams(m=10**6, lam=1e-3, seed=1)
    runner = run_in_long_chunks(params)
    snap = runner.make_snapshot()
    t = snap.history[:, COL["t"]]
    assert t[0] == 0.0 and t[-1] == snap.t and np.all(np.diff(t) > 0)
    assert snap.nonzero == 1 and snap.t > 500
    assert largest_log_gap(t) <= GRID_STEP * (1 + 1e-9)
    # the linear-time panels: no straight stretch longer than 2.3 % of the run
    assert np.max(np.diff(t)) <= 0.024 * t[-1]
    exported = replay_script(snap.script(DEFAULT_SAMPLES))
    rows = exported.rows
    c_oracle = oracle_c(rows[:, COL["t"]], rows[:, COL["norm1"]], rows[:, COL["nonzero"]], params.lam)
    assert exported.fitted_c == pytest.approx(c_oracle, rel=1e-9)
    assert snap.fitted_c == pytest.approx(exported.fitted_c, rel=0.01)
    assert 0.1 < snap.fitted_c < 10  # Theta(1), as the note says


def test_screen_c_agrees_with_an_independent_integration_of_the_flow():
    """A small run through the worker in long chunks: the c on screen agrees within 1 %
    with c fitted here to scipy's integration of the flow (one restart per death) at the
    501 instants an export samples."""
    params = SimParams(m=120, lam=1e-2, seed=5)
    runner = run_in_long_chunks(params)
    snap = runner.make_snapshot()
    assert largest_log_gap(snap.history[:, COL["t"]]) <= GRID_STEP * (1 + 1e-9)
    times = np.linspace(0.0, snap.t, DEFAULT_SAMPLES)
    ref = reference_flow(runner.sim.init.w0, params.lam, times)
    c_ref = oracle_c(times, ref.norm1, ref.nonzero, params.lam)
    assert snap.fitted_c == pytest.approx(c_ref, rel=0.01)


def test_a_paced_run_keeps_grid_rows_and_one_row_of_now():
    """A paced run's short chunks: the rows kept are the grid's (plus t = 0), and the last
    row is always the instant reached, replaced chunk after chunk rather than piling up."""
    params = SimParams(m=500, lam=1e-2, seed=2)
    runner = Runner(params, speed=5.0, warm_up=False, playing=True)
    runner.step_once(now=0.0)
    sim = runner.sim
    appended = []
    for n in range(1, 400):
        runner.step_once(now=n * 0.01)  # 0.05 of simulated time a chunk
        appended.append(sim.history.appended)
    rows = sim.history.array()
    t = rows[:, COL["t"]]
    assert t[-1] == sim.t == pytest.approx(399 * 0.01 * 5.0, rel=1e-9)
    # every row but t = 0 and the last sits on the grid 10^(k/100)
    k = np.log10(t[1:-1]) * ROWS_PER_DECADE
    np.testing.assert_allclose(k, np.round(k), atol=1e-6)
    assert np.array_equal(np.diff(np.round(k)), np.ones(k.size - 1))  # none skipped
    # 399 chunks each appended a row of now; all but the last were replaced
    assert appended[-1] - appended[0] >= 398
    assert np.count_nonzero(np.abs(k - np.round(k)) > 1e-6) == 0 and len(rows) == k.size + 2
    assert largest_log_gap(t) <= GRID_STEP * (1 + 1e-9)


def _run_to_a_change(params: SimParams) -> tuple[Runner, float]:
    runner = Runner(params, speed=5.0, warm_up=False, playing=True)
    runner.step_once(now=0.0)
    for k in range(1, 50):
        runner.step_once(now=k * 0.0133)
    return runner, runner.sim.t


def _rows_at(rows: np.ndarray, t: float) -> np.ndarray:
    return rows[rows[:, COL["t"]] == t]


def test_a_live_change_keeps_a_row_of_its_instant_under_each_lam():
    """lam changed between two chunks: the history keeps the instant's row under the old lam
    (though it was the chunk's provisional row) and a row of the same state under the new
    one, so θ and λ‖W‖₁, which jump there, are broken at the change in every panel."""
    params = SimParams(m=500, lam=1e-2, seed=2)
    runner, t_change = _run_to_a_change(params)
    runner.set_params(params.with_changes(lam=2e-2))
    for k in range(50, 100):
        runner.step_once(now=k * 0.0133)
    rows = runner.sim.history.array()
    before, after = _rows_at(rows, t_change)  # exactly two
    assert before[COL["lam"]] == 1e-2 and after[COL["lam"]] == 2e-2
    for name in ("norm2_sq", "norm1", "nonzero"):  # one state, two λ
        assert before[COL[name]] == after[COL[name]]
    # θ = λ/(1-‖W‖²) and the push λ‖W‖₁ double with λ
    norm2_sq, norm1 = before[COL["norm2_sq"]], before[COL["norm1"]]
    assert after[COL["theta"]] == pytest.approx(2e-2 / (1 - norm2_sq), rel=1e-12)
    assert before[COL["theta"]] == pytest.approx(1e-2 / (1 - norm2_sq), rel=1e-12)
    assert after[COL["reg_push"]] == pytest.approx(2e-2 * norm1, rel=1e-12)
    assert rows[:, COL["t"]][-1] > t_change


def test_a_change_then_an_immediate_pause_shows_the_new_lam_at_once():
    """Paused in the same mail as the change, before any more simulating: the snapshot the
    window paints already ends in the new λ's row, so no panel shows the old θ beside the
    status bar's new one (what made the λ-change break depend on frame timing)."""
    params = SimParams(m=300, lam=1e-2, seed=4)
    runner, t_change = _run_to_a_change(params)
    runner.set_params(params.with_changes(lam=2e-2))
    runner.play(False)
    runner.step_once(now=50 * 0.0133)
    runner.step_once(now=51 * 0.0133)
    snap = runner.make_snapshot()
    h = snap.history
    assert snap.state == "paused" and snap.t == t_change
    assert h[-1, COL["t"]] == h[-2, COL["t"]] == t_change
    assert (h[-2, COL["lam"]], h[-1, COL["lam"]]) == (1e-2, 2e-2)
    assert h[-1, COL["theta"]] == pytest.approx(snap.theta, rel=1e-12)


def test_changes_at_one_instant_keep_two_rows_there_the_last_lam_wins():
    """A λ drag while paused sends many changes at one instant: the history keeps the old
    λ's row and one row of the last λ, not a row per change; a change back to the same λ
    adds nothing."""
    params = SimParams(m=300, lam=1e-2, seed=4)
    runner, t_change = _run_to_a_change(params)
    runner.play(False)
    runner.step_once(now=50 * 0.0133)
    n0 = len(runner.sim.history)
    for k, lam in enumerate((1.2e-2, 1.5e-2, 1.9e-2, 2.4e-2)):
        runner.set_params(params.with_changes(lam=lam))
        runner.step_once(now=(51 + k) * 0.0133)
    runner.set_params(params.with_changes(lam=2.4e-2))  # the same λ again
    runner.step_once(now=60 * 0.0133)
    rows = runner.sim.history.array()
    at = _rows_at(rows, t_change)
    assert [r[COL["lam"]] for r in at] == [1e-2, 2.4e-2]
    assert len(rows) <= n0 + 2
    runner.play(True)
    for k in range(61, 90):
        runner.step_once(now=k * 0.0133)
    rows = runner.sim.history.array()
    assert [r[COL["lam"]] for r in _rows_at(rows, t_change)] == [1e-2, 2.4e-2]
    later = rows[rows[:, COL["t"]] > t_change]
    assert later.shape[0] > 0 and (later[:, COL["lam"]] == 2.4e-2).all()


def test_a_shown_run_of_a_million_weights_fills_in_its_idealized_bounds_after_the_first_frame():
    """The worker leaves the idealized bounds (a million half-normal quantiles) out of the
    first snapshot, so that it comes sooner; once the window has taken it they are
    computed and filled into every row, equal to the bounds of docs/theory.md §2 computed
    here from scipy's half-normal quantiles."""
    params = SimParams(m=10**6, lam=1e-3, seed=2)
    runner = Runner(params, speed=0.0, warm_up=False, playing=True)
    runner.step_once()  # builds the run and offers its first snapshot
    first = runner.take_latest()
    assert first is not None and first.m == params.m and first.state == "running"
    assert np.isnan(first.history[:, COL["rel_var_ideal_lo"]]).all()
    for _ in range(5):
        runner.step_once()
    rows = runner.sim.history.array()
    assert not runner.sim.ideal_pending and rows.shape[0] > 3
    ideal = halfnormal_ideal(params.m)
    for row in (rows[0], rows[-1]):
        lo, hi = relvar_bounds_direct(ideal, int(row[COL["nonzero"]]))
        assert row[COL["rel_var_ideal_lo"]] == pytest.approx(lo, rel=1e-9, abs=1e-12)
        assert row[COL["rel_var_ideal_hi"]] == pytest.approx(hi, rel=1e-9, abs=1e-12)
