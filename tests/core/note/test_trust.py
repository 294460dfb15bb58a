"""Numbers a researcher can trust (issue 22): the regime, fitted_c_bulk and fit_max_rel_dev
against numpy computed here from W(0) and the time series (not from the code's own fit); no c
where there is nothing to fit, flags where a c is not the note's; the state written at the
exact instant of every death of a run equals the run's own (item 4); counts of weights."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers import normal_w0

from sparsity_gui.core.note import metrics as M
from sparsity_gui.core.note.changes import LiveChange, RunScript
from sparsity_gui.core.note.files import run_metadata
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.runner import Runner
from sparsity_gui.core.note.sampled import replay_script, simulate_samples
from sparsity_gui.core.note.simulation import Simulation


def oracle_regime(w0: np.ndarray, lam: float) -> dict:
    l1 = float(np.sum(np.abs(w0)))
    n2 = float(np.sum(w0 * w0))
    return {
        "lam_l1_w0": lam * l1,
        "balance_possible": lam * l1 <= 0.25,
        "norm2_w0": n2,
        # sufficient for theta never to fall, and (lam constant) necessary: theta = lam/(1-||W||^2)
        # falls while the feature push on ||W||^2 is below lam ||W||_1 (docs/theory.md §4)
        "theta_rises": n2 < 1 and (1 - n2) * n2 >= lam * l1,
    }


def oracle_fit(rows: np.ndarray, lam: float) -> tuple[float, float, float]:
    """(c over m' >= 2, c over m' >= 10, max relative deviation of the law with the first)
    by numpy's least squares on w = 1/||W||_1 against lam*t (constant lam)."""
    t = rows[:, M.COL["t"]]
    norm1 = rows[:, M.COL["norm1"]]
    nonzero = rows[:, M.COL["nonzero"]]
    w = 1.0 / norm1
    x = lam * t

    def lstsq(k: int) -> float:
        use = nonzero >= k
        return float(np.linalg.lstsq(x[use, None], w[use] - w[0], rcond=None)[0][0])

    c, c_bulk = lstsq(2), lstsq(10)
    use = nonzero >= 2
    dev = float(np.max(np.abs(1.0 / (w[0] + c * x[use]) - norm1[use]) / norm1[use]))
    return c, c_bulk, dev


# m, lam, sigma: inside the regime; outside (lam ||W(0)||_1 ~ 0.7); sigma = 1.2 (||W(0)||^2 > 1)
SETTINGS = {
    "inside": (2000, 1e-3, 0.9),
    "outside": (10_000, 1e-2, 0.9),
    "sigma 1.2": (2000, 1e-3, 1.2),
}


@pytest.mark.parametrize("case", sorted(SETTINGS))
def test_regime_and_fit_against_numpy(case):
    m, lam, sigma = SETTINGS[case]
    w0 = normal_w0(m, 3, sigma)
    run = simulate_samples(SimParams(m=m, lam=lam, sigma=sigma), w0, 501)
    want = oracle_regime(w0, lam)
    got = run.regime
    assert got["lam_l1_w0"] == pytest.approx(want["lam_l1_w0"], rel=1e-12)
    assert got["norm2_w0"] == pytest.approx(want["norm2_w0"], rel=1e-12)
    assert (got["balance_possible"], got["theta_rises"]) == (want["balance_possible"], want["theta_rises"])
    expected_flags = {
        "inside": (True, True),
        "outside": (False, False),
        "sigma 1.2": (True, False),
    }[case]
    assert (got["balance_possible"], got["theta_rises"]) == expected_flags
    assert got["theta_rise_condition"] == want["theta_rises"]
    if case == "outside":
        assert 0.6 < got["lam_l1_w0"] < 0.8

    c, c_bulk, dev = oracle_fit(run.rows, lam)
    assert run.fit.c == pytest.approx(c, rel=1e-9)
    assert run.fit.c_bulk == pytest.approx(c_bulk, rel=1e-9)
    assert run.fit.max_rel_dev == pytest.approx(dev, rel=1e-9)
    assert (M.OUT_OF_REGIME in run.fit.flags) == (case != "inside")

    meta = json.loads(json.dumps(run_metadata(run, run.sim.params, "test")))
    assert meta["fitted_c_bulk"] == pytest.approx(c_bulk, rel=1e-9)
    assert meta["fit_max_rel_dev"] == pytest.approx(dev, rel=1e-9)
    assert meta["regime"]["balance_possible"] == want["balance_possible"]
    assert meta["regime"]["theta_rises"] == want["theta_rises"]


def test_values_at_a_live_lower_lam_and_theta_no_longer_rises():
    """After a live decrease of lam the regime holds the state at that instant (computed
    here from the weights), and theta_rises is false."""
    m, lam = 500, 4e-3
    w0 = normal_w0(m, 1, 0.9)
    changes = (LiveChange(50.0, "lam", 1e-3), LiveChange(120.0, "lam", 3e-3))
    run = replay_script(RunScript(SimParams(m=m, lam=lam), w0, changes, 200.0))
    probe = Simulation(SimParams(m=m, lam=lam), w0)
    probe.advance(50.0)
    a50 = probe.solver.abs_sorted()
    probe.set_lam(1e-3)
    probe.advance(120.0)
    a120 = probe.solver.abs_sorted()
    regime = run.regime
    assert regime["theta_rises"] is False
    first, second = regime["at_changes"]
    assert (first["t"], first["lam"], first["lam_lowered"]) == (50.0, 1e-3, True)
    assert first["lam_l1"] == pytest.approx(1e-3 * a50.sum(), rel=1e-9)
    assert first["norm2"] == pytest.approx(float(np.dot(a50, a50)), rel=1e-9)
    assert (second["t"], second["lam"], second["lam_lowered"]) == (120.0, 3e-3, False)
    assert second["lam_l1"] == pytest.approx(3e-3 * a120.sum(), rel=1e-9)
    assert M.OUT_OF_REGIME in run.fit.flags


def test_no_c_for_zero_lam_or_diverged_gd_and_a_negative_c_is_flagged():
    w0 = normal_w0(300, 0, 0.9)
    flat = simulate_samples(SimParams(m=300, lam=0.0, t_end=50.0), w0, 101)
    assert math.isnan(flat.fit.c) and math.isnan(flat.fit.c_bulk) and math.isnan(flat.fit.max_rel_dev)
    assert flat.fit.flags == (M.NO_C_ZERO_LAM,)
    meta = run_metadata(flat, flat.sim.params, "test")
    assert (
        meta["fitted_c"] is None and meta["fitted_c_bulk"] is None and meta["fit_flags"] == [M.NO_C_ZERO_LAM]
    )

    big = normal_w0(300, 0, 1.6)  # ||W(0)||^2 ~ 2.6: 1 + eta (1 - ||W||^2) < 0 at eta = 1
    gd = replay_script(RunScript(SimParams(m=300, lam=1e-2, sigma=1.6, method="gd", eta=1.0), big, (), 20.0))
    assert "diverged" in gd.extra
    assert gd.fit.flags == (M.NO_C_DIVERGED,) and math.isnan(gd.fit.c)

    # the issue's W(0) = (0.6, 0.3): w = 1/||W||_1 falls while ||W|| grows, c < 0
    two = simulate_samples(SimParams(m=2, lam=1e-2), np.array([0.6, 0.3]), 501)
    c, _, _ = oracle_fit(two.rows, 1e-2)
    assert c < 0 and two.fit.c == pytest.approx(c, rel=1e-9)
    assert M.NEGATIVE_C in two.fit.flags


def test_fit_decay_resampled_bulk_uses_the_exact_time_m_prime_fell_below_ten():
    """A window's history resampled at the export's instants: an instant after the death that
    took m' below 10 is not in the bulk fit, even if the row before it had m' >= 10."""
    t = np.array([0.0, 10.0, 20.0, 30.0])
    rows = np.full((4, len(M.COLUMNS)), np.nan)
    rows[:, M.COL["t"]] = t
    rows[:, M.COL["lam"]] = 1.0
    rows[:, M.COL["lam_t"]] = t
    rows[:, M.COL["w"]] = 1.0 + 0.5 * t
    rows[:, M.COL["nonzero"]] = [20, 20, 5, 5]
    death_t = np.full(20, np.nan)
    death_t[9] = 15.0  # m' went from 10 to 9 at t = 15
    death_t[1] = 25.0  # and from 2 to 1 at t = 25
    fit = M.fit_decay(rows, samples=31, death_t=death_t)
    at = np.linspace(0.0, 30.0, 31)
    bulk = at < 15.0
    main = at < 25.0
    assert fit.c_bulk == pytest.approx(np.dot(at[bulk], 0.5 * at[bulk]) / np.dot(at[bulk], at[bulk]))
    assert fit.c == pytest.approx(0.5)
    assert main.sum() == 25 and fit.max_rel_dev == pytest.approx(0.0, abs=1e-15)


def _finished_live_run(params: SimParams, changes=()) -> Simulation:
    """A run driven as the window's worker drives it (chunks of work, rows on the grid),
    with live changes at their times, until one weight is left."""
    r = Runner(params, speed=0, warm_up=False, playing=True)
    r.step_once()
    for c in changes:
        while r.sim.t < c.t:
            r.sim.advance_recording(c.t, 1, 5_000)
        r.sim.apply_change(c)
    while r.state != "finished":
        r.step_once()
    return r.sim


@pytest.mark.parametrize(
    "seed, changes", [(0, ()), (1, ()), (2, (LiveChange(300.0, "lam", 3e-3), LiveChange(900.0, "lam", 1e-3)))]
)
def test_replay_at_the_exact_instant_of_every_death_writes_the_state_of_the_run(seed, changes):
    """Item 4: for each death time of a live run, the replay to that instant (what an export
    writes) has exactly the weights dead at or before it at 0, every other weight nonzero
    with the sign of W(0), and m' as the run had it."""
    # m = 60: deaths on either side of each live change (seed 2: 53, 5 and 1)
    sim = _finished_live_run(SimParams(m=60, lam=2e-3, seed=seed), changes)
    died = sim.solver.death_times()
    w0 = sim.init.w0
    checked = 0
    for t_k in np.unique(died[np.isfinite(died)]):
        script = sim.script(float(t_k))
        run = replay_script(script)
        w = run.sim.solver.weights()
        dead = died <= t_k
        assert np.all(w[dead] == 0.0), (t_k, w[dead][w[dead] != 0.0])
        assert np.all(np.signbit(w[dead]) == False)  # noqa: E712 (0, not -0)
        assert np.all(np.sign(w[~dead]) == np.sign(w0[~dead])), t_k
        assert run.nonzero_final == int(np.count_nonzero(~dead))
        checked += 1
    assert checked == 59  # every death but the survivor's


def test_the_issue_case_exports_one_survivor():
    """m = 1000, lam = 2e-3 run to one weight in the worker: run.json says one weight and the
    time it was left, the weights hold one nonzero entry."""
    sim = _finished_live_run(SimParams(m=1000, lam=2e-3))
    run = replay_script(sim.script())
    meta = run_metadata(run, run.sim.params, "test")
    assert meta["nonzero_final"] == 1
    assert meta["t_one_weight_left"] == sim.t
    assert np.count_nonzero(run.sim.solver.weights()) == 1


def test_weights_at_or_above_counts_weights_on_the_solver_state():
    for method in ("exact", "gd"):
        sim = Simulation(SimParams(m=5000, lam=2e-3, method=method, eta=0.05), normal_w0(5000, 2, 0.9))
        sim.advance(40.0)
        a = sim.solver.abs_sorted()
        for x in (sim.moments().theta, 1e-4, 0.05, float(a[0]), math.inf):
            assert sim.weights_at_or_above(x) == int(np.count_nonzero(a >= x)), (method, x)
        assert sim.weights_at_or_above(0.0) == int(np.count_nonzero(a))


def test_run_from_a_w0_file_records_its_source_not_a_draw(tmp_path, monkeypatch, capsys):
    """`run --w0 FILE --w0-row R` (in this process: the command's own process is tested in
    tests/cli): run.json names the file, the row and the weights' hash (computed here), and
    has no sigma or seed."""
    import hashlib

    from helpers import command_in_process

    matrix = np.stack([normal_w0(200, s, 0.9) for s in range(3)])
    path = tmp_path / "w.npy"
    np.save(path, matrix)
    out = tmp_path / "out"
    argv = ["run", "--w0", path, "--w0-row", "1", "--lam", "5e-3", "--out", out]
    status, stdout, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    meta = json.loads((out / "run.json").read_text())
    assert "sigma" not in meta["parameters"] and "seed" not in meta["parameters"]
    digest = hashlib.sha256(np.ascontiguousarray(matrix[1], dtype="<f8").tobytes()).hexdigest()
    assert meta["w0"] == {
        "source": "file",
        "path": str(path),
        "tensor": None,
        "row": 1,
        "m": 200,
        "sha256": digest,
    }
    assert "bulk c" in stdout
