"""api.scaling against `sparsity-gui scaling --no-figure` (run for real, in process) and
against independent references: save(dir) writes the CLI's files byte for byte apart from
the wall-clock fields, a bad grid raises ValueError with the CLI's `error:` message, and
the rows agree with the flow integrated by scipy (tests/note_oracles.py)."""

import json
import os

import numpy as np
import pytest
from note_oracles import last_survivor_limit, reference_flow

from sparsity_gui import api
from sparsity_gui.__main__ import main

COLUMNS = (  # noqa: SIM905 (the file's header, as it is written)
    "m,lam,seed,t_one,lam_t_one,fitted_c,fitted_c_bulk,fit_max_rel_dev,rel_var_mean,rel_var_min,"
    "rel_var_max,balance_ratio,w_last,w_last_root,lam_norm1_0,norm2_w0,balance_possible,theta_rises,"
    "theta_rise_condition,theta_fall,theta_fall_t,"
    "sigma,t_end,seconds"
).split(",")
SUMMARY = [
    "t_one",
    "lam_t_one",
    "fitted_c",
    "fitted_c_bulk",
    "fit_max_rel_dev",
    "rel_var_mean",
    "rel_var_min",
    "rel_var_max",
    "balance_ratio",
    "w_last",
    "w_last_root",
    "lam_norm1_0",
    "norm2_w0",
]


@pytest.fixture(scope="module")
def grid():
    # m as the CLI's text, lam as a list (numpy floats too), jobs given: all recorded
    return api.scaling(m="1e3,3e3", lam=[np.float64(4e-3), 1e-2], seeds=2, seed=5, sigma=0.8, jobs=2)


def test_save_writes_the_files_of_the_cli(grid, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    line = (
        "sparsity-gui scaling --m 1e3,3e3 --lam 0.004,0.01 --seeds 2 --seed 5 --sigma 0.8 --jobs 2 "
        "--no-figure"
    )
    assert grid.command_line("res") == line + " --out res"
    assert grid.save("res").resolve() == (tmp_path / "res").resolve()
    os.rename("res", "api")  # the CLI writes to the same path, so the command lines can be equal
    assert main(line.split()[1:] + ["--out", "res"]) == 0
    capsys.readouterr()
    api_dir, cli_dir = tmp_path / "api", tmp_path / "res"
    assert sorted(p.name for p in api_dir.iterdir()) == ["scaling.csv", "scaling.json"]
    assert sorted(p.name for p in cli_dir.iterdir()) == ["scaling.csv", "scaling.json"]

    # scaling.csv: every field the same text, apart from each run's wall time
    a = (api_dir / "scaling.csv").read_text().splitlines()
    c = (cli_dir / "scaling.csv").read_text().splitlines()
    assert a[0] == c[0] == ",".join(COLUMNS) and len(a) == len(c) == 1 + 2 * 2 * 2
    clock = COLUMNS.index("seconds")
    for ra, rc in zip(a[1:], c[1:], strict=True):
        fa, fc = ra.split(","), rc.split(",")
        assert float(fa.pop(clock)) > 0 and float(fc.pop(clock)) > 0
        assert fa == fc

    # scaling.json: the same, apart from the sum of the wall times (same text line by line)
    ja_text, jc_text = (api_dir / "scaling.json").read_text(), (cli_dir / "scaling.json").read_text()
    ja, jc = json.loads(ja_text), json.loads(jc_text)
    assert isinstance(ja.pop("run_seconds"), float) and isinstance(jc.pop("run_seconds"), float)
    assert ja == jc and ja["command_line"] == line + " --out res" and ja["complete"] is True
    assert [x for x in ja_text.splitlines() if "run_seconds" not in x] == [
        x for x in jc_text.splitlines() if "run_seconds" not in x
    ]

    # the arrays are the file's numbers, exactly
    table = np.loadtxt(api_dir / "scaling.csv", delimiter=",", skiprows=1)
    for i, name in enumerate(COLUMNS):
        assert np.array_equal(table[:, i], grid.rows[name], equal_nan=True), name
    assert grid.rows["m"].dtype.kind == "i" and grid.rows["seed"].dtype.kind == "i"
    # and the summary arrays are scaling.json's summary
    for i, cell in enumerate(ja["summary"]):
        assert (cell["m"], cell["lam"], cell["runs"]) == (grid.m[i], grid.lam[i], grid.runs[i])
        for name in SUMMARY:
            assert cell["mean"][name] == grid.mean[name][i] and cell["std"][name] == grid.std[name][i]


def test_save_is_atomic_and_refuses_a_folder_in_use(grid, tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine")
    with pytest.raises(ValueError):
        grid.save(tmp_path / "busy")
    assert [p.name for p in (tmp_path / "busy").iterdir()] == ["keep.txt"]
    grid.save(tmp_path / "busy", force=True)
    assert sorted(p.name for p in (tmp_path / "busy").iterdir()) == ["scaling.csv", "scaling.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy"]  # no temporary folder left


def test_rows_summary_and_fixed_point_against_numpy_and_scipy(grid):
    rows = grid.rows
    # the grid's order: m, then lam, then seed
    expected = [(m, lam, s) for m in (1000, 3000) for lam in (4e-3, 1e-2) for s in (5, 6)]
    assert list(zip(rows["m"].tolist(), rows["lam"].tolist(), rows["seed"].tolist(), strict=True)) == expected
    assert np.all(rows["sigma"] == 0.8)
    assert np.array_equal(rows["lam_t_one"], rows["lam"] * rows["t_one"])
    assert np.array_equal(rows["t_end"], 1.1 * rows["t_one"])
    # the last weight's fixed point: the stable root of (1 - w^2) w = lam, by brentq
    for lam, root, w_last in zip(rows["lam"], rows["w_last_root"], rows["w_last"], strict=True):
        assert root == pytest.approx(last_survivor_limit(lam), rel=1e-12)
        assert abs(w_last - root) < 0.05  # the lone survivor relaxes onto it
    # per (m, lam): mean and sample standard deviation over the seeds, plain numpy
    assert list(zip(grid.m.tolist(), grid.lam.tolist(), strict=True)) == [
        (1000, 4e-3),
        (1000, 1e-2),
        (3000, 4e-3),
        (3000, 1e-2),
    ]
    assert grid.runs.tolist() == [2, 2, 2, 2]
    for i, (m, lam) in enumerate(zip(grid.m, grid.lam, strict=True)):
        mine = (rows["m"] == m) & (rows["lam"] == lam)
        for name in SUMMARY:
            values = rows[name][mine]
            assert grid.mean[name][i] == pytest.approx(np.mean(values), rel=1e-14, abs=1e-300)
            assert grid.std[name][i] == pytest.approx(np.std(values, ddof=1), rel=1e-12, abs=1e-15)


def test_t_one_against_the_flow_integrated_by_scipy():
    """A small grid: each run's t_one is when the reference flow (DOP853 at rtol 1e-13, one
    event per death) is down to one weight, from the same W(0) (the `run` command's draw)."""
    small = api.scaling(m=[12, 20], lam="2e-2", seeds=2, seed=1, jobs=1)
    assert small.jobs == 1 and small.command_line("o").endswith("--jobs 1 --no-figure --out o")
    for m, lam, seed, t_one in zip(*(small.rows[k] for k in ("m", "lam", "seed", "t_one")), strict=True):
        w0 = api.simulate(m=int(m), lam=float(lam), seed=int(seed), samples=2).w0
        ref = reference_flow(w0, float(lam), [1e9], until_nonzero=1)
        assert int(np.isfinite(ref.death_t).sum()) == m - 1
        assert t_one == pytest.approx(np.nanmax(ref.death_t), rel=1e-9)


def test_to_pandas_is_the_rows_table(grid):
    pandas = pytest.importorskip("pandas")
    frame = grid.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == COLUMNS and len(frame) == 8
    assert np.array_equal(frame["fitted_c"].to_numpy(), grid.rows["fitted_c"])
    assert frame["m"].dtype.kind == "i"
    assert repr(grid).startswith("<ScalingResult 2 value(s) of m x 2 of lam x 2 seed(s), lam*t_one from ")


# (API keyword arguments, the CLI's arguments after `scaling`)
BAD = [
    (dict(m="", lam="1e-3"), ["--m", "", "--lam", "1e-3"]),
    (dict(m=[0, 100], lam=[1e-3]), ["--m", "0,100", "--lam", "1e-3"]),
    (dict(m="2.5", lam=1e-3), ["--m", "2.5", "--lam", "1e-3"]),
    (dict(m=[10**9], lam=[1e-3]), ["--m", "1e9", "--lam", "1e-3"]),
    (dict(m=100, lam=[0.0]), ["--m", "100", "--lam", "0"]),
    (dict(m=100, lam=[-1e-3]), ["--m", "100", "--lam=-1e-3"]),
    (dict(m=100, lam="1e-3,inf"), ["--m", "100", "--lam", "1e-3,inf"]),
    (dict(m=100, lam=[2.0]), ["--m", "100", "--lam", "2"]),
    (dict(m=100, lam="1e-3,abc"), ["--m", "100", "--lam", "1e-3,abc"]),
    (dict(m=100, lam=1e-3, seeds=0), ["--m", "100", "--lam", "1e-3", "--seeds", "0"]),
    (
        dict(m="1:1000:1", lam=[1e-3, 1e-2], seeds=6),
        ["--m", "1:1000:1", "--lam", "1e-3,1e-2", "--seeds", "6"],
    ),
    (dict(m=100, lam=1e-3, jobs=0), ["--m", "100", "--lam", "1e-3", "--jobs", "0"]),
    (dict(m=100, lam=1e-3, jobs=65), ["--m", "100", "--lam", "1e-3", "--jobs", "65"]),
    (dict(m=100, lam=1e-3, sigma=0.0), ["--m", "100", "--lam", "1e-3", "--sigma", "0"]),
]


@pytest.mark.parametrize("kwargs, cli_args", BAD, ids=[" ".join(cli) for _k, cli in BAD])
def test_a_bad_grid_raises_the_clis_message(tmp_path, capsys, kwargs, cli_args):
    with pytest.raises(SystemExit) as stop:
        main(["scaling", *cli_args, "--out", str(tmp_path / "res")])
    assert stop.value.code == 2
    cli_lines = capsys.readouterr().err.splitlines()
    assert len(cli_lines) == 1 and cli_lines[0].startswith("error: ")
    with pytest.raises(ValueError) as err:
        api.scaling(**kwargs)
    assert f"error: {err.value}" == cli_lines[0]
    assert list(tmp_path.iterdir()) == []


def test_python_only_mistakes_name_the_field():
    with pytest.raises(ValueError) as err:
        api.scaling(m=100, lam=1e-3, seeds=2.5)
    assert str(err.value) == "seeds: must be a whole number of at least 1, got 2.5"
    with pytest.raises(ValueError) as err:
        api.scaling(m=100, lam=1e-3, jobs=1.5)
    assert str(err.value) == "jobs: must be from 1 to 64, got 1.5"
    with pytest.raises(TypeError):
        api.scaling(lam=1e-3)  # type: ignore[call-arg]  # m has no default, as --m is required


def test_ctrl_c_stops_every_run_and_raises():
    """KeyboardInterrupt in the calling thread (as Ctrl+C in a notebook) while two runs
    are in progress: it stops them and comes back, no thread left running."""
    import _thread
    import threading
    import time

    timer = threading.Timer(1.0, _thread.interrupt_main)
    started = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            api.scaling(m="2e5", lam="1e-4,2e-4", seeds=200, jobs=2)  # about a minute of work
    finally:
        timer.cancel()
    print(f"interrupted after {time.perf_counter() - started:.2f} s")
    assert not [t for t in threading.enumerate() if t.name.startswith("scaling-")]
