"""The scaling grid (core/note/scaling.py): each column of a row against independent
references (the full-vector flow of note_oracles at small m, a scalar root-finder, numpy
written here), the grid's checks, the thread pool (same rows with 1 or 2 workers, cancel
keeping the finished rows, skipping done rows) and the summary against numpy."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from note_oracles import reference_flow, relvar
from scipy.optimize import brentq

from sparsity_gui.core.checks import parse_m_values, parse_number_list
from sparsity_gui.core.errors import InputError, RunsCancelled
from sparsity_gui.core.note.params import M_MAX
from sparsity_gui.core.note.scaling import (
    ROW_COLUMNS,
    SAMPLES,
    ScalingGrid,
    rows_csv,
    scaling_row,
    summarize,
)

T_TRANSIENT = 10.0  # the documented start of "after the transient"


def drawn_w0(m: int, sigma: float, seed: int) -> np.ndarray:
    """The documented draw: W_k(0) ~ normal(0, sigma/sqrt(m)) from numpy's default_rng."""
    return np.random.default_rng(seed).standard_normal(m) * (sigma / math.sqrt(m))


@pytest.mark.parametrize("m,lam,seed", [(40, 1e-2, 0), (60, 3e-3, 5)])
def test_row_columns_against_the_full_vector_flow(m, lam, seed):
    """t_one, lam*T, fitted c, the relative variance over m' >= 2, the balance ratio and
    the last weight, each recomputed from a DOP853 solve of all m weights (rtol 1e-13, an
    event per death) sampled at the run command's times, with the definitions written here."""
    row = scaling_row(m, lam, seed, sigma=0.9)
    w0 = drawn_w0(m, 0.9, seed)
    first = reference_flow(w0, lam, [1e6 / lam], until_nonzero=1)
    deaths = np.sort(first.death_t[np.isfinite(first.death_t)])
    t_one = float(deaths[-1])
    assert row.t_one == pytest.approx(t_one, rel=1e-8)
    assert row.lam_t_one == pytest.approx(lam * t_one, rel=1e-8)
    assert row.t_end == pytest.approx(1.1 * t_one, rel=1e-8)

    times = np.linspace(0.0, row.t_end, SAMPLES)  # the run command's rows
    ref = reference_flow(w0, lam, times)
    a = ref.abs_w
    nz = np.count_nonzero(a, axis=1)
    l1 = a.sum(axis=1)
    y = (a * a).sum(axis=1)
    live = nz >= 2
    rv = np.array([relvar(v[v > 0]) for v in a[live]])
    assert row.rel_var_mean == pytest.approx(rv.mean(), rel=1e-7)
    assert row.rel_var_min == pytest.approx(rv.min(), rel=1e-6, abs=1e-12)
    assert row.rel_var_max == pytest.approx(rv.max(), rel=1e-7)
    late = live & (times >= T_TRANSIENT)
    ratio = (1 - y[late]) * y[late] / (lam * l1[late])
    assert row.balance_ratio == pytest.approx(ratio.mean(), rel=1e-8)
    # c: least squares of 1/||W||_1 - 1/||W(0)||_1 against lam t through the origin
    x = lam * times[live]
    c = float(np.dot(x, 1 / l1[live] - 1 / l1[0]) / np.dot(x, x))
    assert row.fitted_c == pytest.approx(c, rel=1e-7)
    # the last weight, at 1.1 t_one, has settled on the root of (1 - w^2) w = lam
    assert nz[-1] == 1
    assert row.w_last == pytest.approx(a[-1].max(), rel=1e-9)
    root = brentq(lambda w: (1 - w * w) * w - lam, 1 / math.sqrt(3), 1.0, xtol=1e-16, rtol=1e-15)
    assert row.w_last_root == pytest.approx(root, rel=1e-14)
    assert row.w_last == pytest.approx(root, rel=1e-8)
    assert row.lam_norm1_0 == pytest.approx(lam * np.abs(w0).sum(), rel=1e-13)


def test_row_fields_and_determinism():
    a = scaling_row(500, 1e-3, 3, sigma=0.7)
    b = scaling_row(500, 1e-3, 3, sigma=0.7)
    assert (a.m, a.lam, a.seed, a.sigma) == (500, 1e-3, 3, 0.7)
    for name in ROW_COLUMNS:
        if name != "seconds":
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    # theta rose throughout (the condition holds: ||W(0)||^2 ~ 0.49, lam ||W(0)||_1 ~ 0.016)
    assert (a.theta_rises, a.theta_rise_condition, a.theta_fall) == (True, True, 0.0)
    assert math.isnan(a.theta_fall_t)
    # the note's claims hold on one run: balance after the transient, RV of order one
    assert 1.0 < a.balance_ratio < 1.02
    assert 0.05 < a.rel_var_mean < 2 and a.rel_var_min <= a.rel_var_mean <= a.rel_var_max


def test_m_lists_take_the_sweep_forms_and_powers():
    assert parse_m_values("1e3,1e4,1e5,1e6", M_MAX) == (1000, 10_000, 100_000, 1_000_000)
    assert parse_m_values("10^3, 10**4,100", M_MAX) == (1000, 10_000, 100)
    assert parse_m_values("64,128,256", M_MAX) == (64, 128, 256)
    assert parse_m_values("256:1024:256", M_MAX) == (256, 512, 768, 1024)
    assert parse_m_values("1e3:3e3:1e3", M_MAX) == (1000, 2000, 3000)
    for bad in ("", " , ", "1e3,abc", "2.5", "1:10", "1:10:0", "10^", "1e3,inf", "10^99"):
        with pytest.raises(InputError) as info:
            parse_m_values(bad, M_MAX)
        assert info.value.field == "m"
    with pytest.raises(InputError, match="at most 1000"):
        parse_m_values("1:1e12:1", M_MAX)
    assert parse_number_list("lam", "1e-4, 1e-3,0.01") == (1e-4, 1e-3, 0.01)
    for bad in ("", "1e-3,x", "inf", "1e-3,nan"):
        with pytest.raises(InputError) as info:
            parse_number_list("lam", bad)
        assert info.value.field == "lam"


@pytest.mark.parametrize(
    "kw,field",
    [
        (dict(m_values=(), lam_values=(1e-3,)), "m"),
        (dict(m_values=(100,), lam_values=()), "lam"),
        (dict(m_values=(0, 100), lam_values=(1e-3,)), "m"),
        (dict(m_values=(-5,), lam_values=(1e-3,)), "m"),
        (dict(m_values=(10**8 + 1,), lam_values=(1e-3,)), "m"),
        (dict(m_values=(100,), lam_values=(0.0,)), "lam"),
        (dict(m_values=(100,), lam_values=(-1e-3,)), "lam"),
        (dict(m_values=(100,), lam_values=(math.inf,)), "lam"),
        (dict(m_values=(100,), lam_values=(math.nan,)), "lam"),
        (dict(m_values=(100,), lam_values=(2.0,)), "lam"),
        (dict(m_values=(100,), lam_values=(1e-3,), seeds=0), "seeds"),
        (dict(m_values=tuple(range(1, 101)), lam_values=(1e-3, 1e-2), seeds=51), "seeds"),
        (dict(m_values=(100,), lam_values=(1e-3,), sigma=0.0), "sigma"),
    ],
)
def test_bad_grids_are_refused(kw, field):
    with pytest.raises(InputError) as info:
        ScalingGrid(**kw)
    assert info.value.field == field


def test_grid_order_and_memory_check():
    g = ScalingGrid(m_values=(1000, 100, 1000), lam_values=(1e-2, 1e-3), seeds=2, seed=7)
    assert g.m_values == (100, 1000) and g.lam_values == (1e-3, 1e-2)
    assert g.runs()[:3] == [(100, 1e-3, 7), (100, 1e-3, 8), (100, 1e-2, 7)]
    assert len(g.runs()) == 8
    # 10^8 weights need about 16 GB each: 64 of them side by side fit in no machine here
    big = ScalingGrid(m_values=(10**8,), lam_values=(1e-3,), seeds=64)
    with pytest.raises(InputError) as info:
        big.check_memory(64)
    assert info.value.field in ("m", "jobs")


def _key(row):
    return tuple(getattr(row, f) for f in ROW_COLUMNS if f != "seconds")


def test_threads_give_the_rows_of_single_runs_in_grid_order():
    grid = ScalingGrid(m_values=(200, 2000), lam_values=(1e-3, 1e-2), seeds=2, seed=1)
    seen = []
    rows2 = grid.run(workers=2, on_progress=lambda p: seen.append(p))
    rows1 = grid.run(workers=1)
    assert [(r.m, r.lam, r.seed) for r in rows2] == grid.runs()
    assert [_key(r) for r in rows1] == [_key(r) for r in rows2]
    assert _key(rows1[5]) == _key(scaling_row(*grid.runs()[5], grid.sigma))
    finished = [p.row for p in seen if p.row is not None]
    assert sorted(_key(r) for r in finished) == sorted(_key(r) for r in rows2)
    assert seen[-1].done_runs == 8 and seen[-1].fraction == pytest.approx(1.0)
    # done rows are skipped: the runner is never called for them
    calls = []

    class Counting(ScalingGrid):
        def row(self, run, should_stop):
            calls.append(run)
            return super().row(run, should_stop)

    counting = Counting(m_values=grid.m_values, lam_values=grid.lam_values, seeds=2, seed=1)
    again = counting.run(done_rows=rows2[:6], workers=2)
    assert sorted(calls) == sorted(grid.runs()[6:])
    assert [_key(r) for r in again] == [_key(r) for r in rows2]


def test_cancel_keeps_the_finished_rows_and_stops_a_long_run_quickly():
    """Two small runs, then one of 10^7 weights (seconds): stop once the small ones are in."""
    grid = ScalingGrid(m_values=(100, 10**7), lam_values=(1e-3,), seeds=2)
    stop = threading.Event()
    started = {}

    def on_progress(p):
        if p.current is not None and p.current[0] == 10**7:
            started.setdefault("t", time.perf_counter())
            stop.set()

    with pytest.raises(RunsCancelled) as info:
        grid.run(on_progress=on_progress, should_stop=stop.is_set, workers=1)
    took = time.perf_counter() - started["t"]
    rows = info.value.rows
    assert [(r.m, r.seed) for r in rows] == [(100, 0), (100, 1)]
    print(f"cancel answered {took:.2f} s after the 10^7 run started (draw and sort included)")


def test_summary_and_csv_against_numpy():
    grid = ScalingGrid(m_values=(300, 3000), lam_values=(2e-3,), seeds=3)
    rows = grid.run(workers=2)
    cells = summarize(rows)
    assert [(c.m, c.lam, c.runs) for c in cells] == [(300, 2e-3, 3), (3000, 2e-3, 3)]
    for c in cells:
        vals = np.array([r.lam_t_one for r in rows if r.m == c.m])
        assert c.mean["lam_t_one"] == pytest.approx(np.mean(vals), rel=1e-15)
        assert c.std["lam_t_one"] == pytest.approx(np.std(vals, ddof=1), rel=1e-12)
    lines = rows_csv(rows).splitlines()
    assert lines[0].split(",") == list(ROW_COLUMNS)
    first = dict(zip(ROW_COLUMNS, lines[1].split(","), strict=True))
    assert first["m"] == "300" and first["seed"] == "0"
    assert float(first["t_one"]) == rows[0].t_one  # repr reads back bit for bit
    assert float(first["fitted_c"]) == rows[0].fitted_c


def test_a_failing_run_is_named_and_a_bug_is_not_disguised():
    class Refusing(ScalingGrid):
        def row(self, run, should_stop):
            if run[2] == 1:  # its seed
                raise InputError("w0", "cannot use it")
            return super().row(run, should_stop)

    with pytest.raises(InputError) as info:
        Refusing(m_values=(100,), lam_values=(1e-3,), seeds=2).run()
    assert str(info.value) == "w0: run m=100 lam=0.001 seed=1: cannot use it"

    class Buggy(ScalingGrid):
        def row(self, run, should_stop):
            raise ZeroDivisionError("a bug")

    with pytest.raises(ZeroDivisionError):
        Buggy(m_values=(100,), lam_values=(1e-3,), seeds=2).run(workers=2)
