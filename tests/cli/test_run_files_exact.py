"""The run's large files, streamed in pieces: every double in weights.csv and deaths.csv reads
back bit for bit as the solver's own arrays, across several pieces (CHUNK_ROWS lowered), and
--format npz holds exactly the same numbers as the CSVs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import sparsity_gui.core.files as core_files
from sparsity_gui.cli.note import run_command
from sparsity_gui.core.files import ResultDir, format_rows
from sparsity_gui.core.note.files import write_results
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import simulate_samples

M = 5000
CHUNK = 700  # 5000 rows: 8 pieces, the last one short


def _bits(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).view(np.uint64)


def _read(path):
    lines = path.read_text().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    return lines[0], rows


@pytest.fixture(scope="module")
def exact_run(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setattr(core_files, "CHUNK_ROWS", CHUNK)
    try:
        params = SimParams(m=M, lam=0.02, sigma=0.9, seed=3)
        run = simulate_samples(params, None, 51)
        out = tmp_path_factory.mktemp("exact") / "out"
        rd = ResultDir(out, force=False)
        write_results(rd, run, params, include_weights=True, command_line="test")
        rd.commit()
    finally:
        mp.undo()
    return run, out


def test_weights_csv_round_trips_bit_for_bit_across_pieces(exact_run):
    run, out = exact_run
    header, rows = _read(out / "weights.csv")
    assert header == "k,w0,w_final"
    assert len(rows) == M
    assert [int(r[0]) for r in rows] == list(range(M))  # no row lost or doubled at a piece's edge
    w0 = np.array([float(r[1]) for r in rows])
    wf = np.array([float(r[2]) for r in rows])
    assert np.array_equal(_bits(w0), _bits(run.sim.init.w0))
    assert np.array_equal(_bits(wf), _bits(run.sim.solver.weights()))
    assert 0 < np.count_nonzero(wf) < M  # both dead and live weights are in the file


def test_deaths_csv_round_trips_bit_for_bit_across_pieces(exact_run):
    run, out = exact_run
    header, rows = _read(out / "deaths.csv")
    assert header == "k,u,t_death"
    death_t = run.sim.solver.death_times()
    dead = np.flatnonzero(np.isfinite(death_t))
    assert len(rows) == dead.size > 2 * CHUNK
    k = np.array([int(r[0]) for r in rows])
    assert sorted(k.tolist()) == dead.tolist()
    u = np.array([float(r[1]) for r in rows])
    t = np.array([float(r[2]) for r in rows])
    assert np.array_equal(_bits(u), _bits(np.abs(run.sim.init.w0)[k]))
    assert np.array_equal(_bits(t), _bits(death_t[k]))
    assert np.all(np.diff(t) >= 0)  # in order of death


def test_npz_holds_exactly_the_numbers_of_the_csvs(tmp_path, monkeypatch):
    monkeypatch.setattr(core_files, "CHUNK_ROWS", CHUNK)
    args = ["--m", str(M), "--lam", "0.02", "--seed", "4", "--samples", "21"]
    assert run_command([*args, "--out", str(tmp_path / "csv")]) == 0
    assert run_command([*args, "--format", "npz", "--out", str(tmp_path / "npz")]) == 0
    csv_dir, npz_dir = tmp_path / "csv", tmp_path / "npz"
    assert sorted(p.name for p in npz_dir.iterdir()) == [
        "deaths.npz",
        "run.json",
        "timeseries.csv",
        "weights.npz",
    ]
    assert (csv_dir / "timeseries.csv").read_bytes() == (npz_dir / "timeseries.csv").read_bytes()
    for name, cols in (("weights", ("k", "w0", "w_final")), ("deaths", ("k", "u", "t_death"))):
        _, rows = _read(csv_dir / f"{name}.csv")
        with np.load(npz_dir / f"{name}.npz") as z:
            assert sorted(z.files) == sorted(cols)
            assert z["k"].dtype == np.int64
            assert z["k"].tolist() == [int(r[0]) for r in rows]
            for j, c in enumerate(cols[1:], start=1):
                assert z[c].dtype == np.float64
                assert np.array_equal(_bits(z[c]), _bits([float(r[j]) for r in rows])), c


def test_format_rows_round_trips_special_values():
    vals = np.array([0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3])
    text = format_rows([np.arange(vals.size), vals], int_cols=[0])
    rows = [line.split(",") for line in text.splitlines()]
    assert [int(r[0]) for r in rows] == list(range(vals.size))
    back = np.array([float(r[1]) for r in rows])
    assert np.array_equal(_bits(back), _bits(vals))  # nan is the default nan; -0.0 keeps its sign
    assert [r[1] for r in rows[:5]] == ["0.0", "-0.0", "nan", "inf", "-inf"]
    assert format_rows([np.array([])]) == ""


def test_death_columns_read_off_the_ranks_equal_a_sort_of_the_death_times():
    """The shortcut through the rank order (distinct weights die from the smallest up) and
    the sort it falls back on (tied weights die together) both give the columns of a stable
    sort of the death times by (t, k), computed here from the input-order death times."""
    from sparsity_gui.core.note.files import death_columns
    from sparsity_gui.core.note.simulation import Simulation

    distinct = np.array([0.5, -0.1, 0.3, 0.15, -0.9, 0.2, -0.05])
    tied = np.array([0.5, 0.1, -0.3, -0.1, 0.9, 0.2, 0.1])  # three weights of 0.1
    for w0 in (distinct, tied):
        sim = Simulation(SimParams(m=w0.size, lam=0.05, sigma=1.0, seed=0), w0)
        sim.advance(200.0)
        death_t = sim.solver.death_times()
        dead = np.flatnonzero(np.isfinite(death_t))
        assert dead.size >= 4  # several deaths, ties among them for `tied`
        expected_k = sorted(dead.tolist(), key=lambda k: (death_t[k], k))
        k, u, t = death_columns(sim)
        assert k.tolist() == expected_k
        assert np.array_equal(_bits(u), _bits(np.abs(w0)[expected_k]))
        assert np.array_equal(_bits(t), _bits(death_t[expected_k]))


def test_exact_weights_of_the_live_ranks_equal_the_general_ones(exact_run):
    from sparsity_gui.core.note.solvers import Solver

    run, _ = exact_run
    solver = run.sim.solver
    assert np.array_equal(_bits(solver.weights()), _bits(Solver.weights(solver)))


def test_the_default_format_is_csv_up_to_a_million_weights_and_npz_above(tmp_path, capsys):
    """`run` without --format: CSV up to m = 10^6 (docs/commands.md's rule), .npz above, said on
    stdout and in run.json; an explicit --format always wins."""
    from sparsity_gui.core.note.headless import resolved_format

    assert [resolved_format("auto", m) for m in (1, 10**6, 10**6 + 1, 10**7)] == ["csv", "csv", "npz", "npz"]
    assert resolved_format("csv", 10**7) == "csv" and resolved_format("npz", 5) == "npz"

    m, sigma, seed = 10**6 + 1, 0.9, 11
    out = tmp_path / "big"
    argv = ["--m", str(m), "--lam", "1e-4", "--sigma", str(sigma), "--seed", str(seed), "--samples", "3"]
    assert run_command([*argv, "--out", str(out)]) == 0
    assert "(m > 1,000,000: weights and deaths as .npz)" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == [
        "deaths.npz",
        "run.json",
        "timeseries.csv",
        "weights.npz",
    ]
    assert json.loads((out / "run.json").read_text())["format"] == "npz"
    # W(0) as docs/theory.md §1 draws it; the survivor is the largest |W_k(0)| (the note)
    w0 = np.random.default_rng(seed).standard_normal(m) * (sigma / math.sqrt(m))
    with np.load(out / "weights.npz") as z:
        assert np.array_equal(z["k"], np.arange(m))
        assert np.array_equal(_bits(z["w0"]), _bits(w0))
        assert np.flatnonzero(z["w_final"]).tolist() == [int(np.argmax(np.abs(w0)))]
    with np.load(out / "deaths.npz") as z:
        assert np.array_equal(z["k"], np.argsort(np.abs(w0), kind="stable")[:-1])  # smallest first
        assert np.array_equal(_bits(z["u"]), _bits(np.abs(w0)[z["k"]]))
        assert np.all(np.diff(z["t_death"]) > 0)
