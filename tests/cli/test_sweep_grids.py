"""`sparsity-gui sweep` over lists of any option (the optimizer lab's grids): every row is the
`interference` run of its options, sweep.json's groups are the rows' quantiles, the figures
draw the medians, --resume and a real Dask cluster give the same rows, and a bad list is
refused before any work, naming the bad value.

Oracles: each row against its own `interference` command (run.json); the quantiles by
Python's statistics module; the heatmap's cells by the test's own median of sweep.csv."""

from __future__ import annotations

import csv
import json
import math
import statistics

import numpy as np
import pytest
from cluster_cli import main_in_process, rows_without_seconds
from helpers import assert_refused_in_process, cli, command_in_process

# 2 l1 x 2 optimizers x 2 seeds, a few hundred steps each: seconds in all
GRID = [
    *("--n", "8", "--m", "16", "--lr", "5e-3", "--steps", "400", "--seeds", "2"),
    *("--l1", "0.05,0.4", "--optimizer", "adamw,gd-zero"),
]
# the schedules and the noise as axes: 2 noise kinds x 2 l1 schedules x 2 seeds, with the
# mean W(0) W(T)^T of each cell
SCHEDULED = [
    *("--n", "6", "--m", "12", "--lr", "1e-2", "--steps", "300", "--seeds", "2", "--optimizer", "gd"),
    "--overlap",
    *("--noise", "bernoulli,gaussian", "--noise-sigma", "0.1"),
    *("--l1-schedule", "0:0,100:0.1;0:0.05,200:0.2"),
]
COUNTS = ("polysemantic", "predicted", "active", "opposite_pairs", "same_pairs", "kept_share", "nonzero")


def csv_rows(folder):
    with open(folder / "sweep.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    d = tmp_path_factory.mktemp("grid")
    proc = cli(["sweep", *GRID, "--readout", "steps_to_sparse", "--out", "res"], d)
    assert proc.returncode == 0, proc.stderr
    return d / "res", proc


def interference_of(row: dict, base: list[str], folder, name: str, monkeypatch, capsys) -> dict:
    """run.json of `interference` with the row's options (its seed, and what it varies), in
    this process (the same code as the command's own process: seconds saved per run)."""
    args = [*base, "--seed", row["seed"], "--out", name]
    code, _, err = main_in_process("interference", args, folder, monkeypatch, capsys)
    assert code == 0, err
    return json.loads((folder / name / "run.json").read_text())


def assert_row_is_the_run(row: dict, meta: dict) -> None:
    """Every column of a sweep row but seconds (and settled, which only a sweep measures)
    against run.json of the same run."""
    final = meta["final"]
    for name in COUNTS:
        assert float(row[name]) == float(final[name]), name
    assert float(row["sum_w4"]) == final["sum_w4"]
    found = meta["readouts"]
    # never sparse: an empty cell, as run.json's null
    assert row["steps_to_sparse"] == (
        "" if found["steps_to_sparse"] is None else str(found["steps_to_sparse"])
    )
    assert float(row["rail_share"]) == found["rail_share"]
    ratio = found["shrinkage"]["ratio"]
    assert (math.isnan(float(row["shrinkage_ratio"])) and ratio is None) or float(
        row["shrinkage_ratio"]
    ) == ratio
    p = meta["parameters"]
    for name in ("n", "m", "seed", "optimizer", "dtype", "l1", "lr", "sigma", "weight_decay"):
        assert str(p[name]) == row[name] or float(p[name]) == float(row[name]), name
    assert int(row["steps"]) == meta["steps_done"]
    assert row["noise"] == p.get("noise", "none")
    assert float(row["noise_sigma"]) == p.get("noise_sigma", 0.0)


def test_every_row_of_a_two_option_grid_is_its_interference_run(grid, tmp_path, monkeypatch, capsys):
    res, _ = grid
    rows = csv_rows(res)
    assert sorted((float(r["l1"]), r["optimizer"], int(r["seed"])) for r in rows) == sorted(
        (l1, opt, s) for l1 in (0.05, 0.4) for opt in ("adamw", "gd-zero") for s in (0, 1)
    )
    base = ["--n", "8", "--m", "16", "--lr", "5e-3", "--steps", "400"]
    for i, row in enumerate(rows):
        meta = interference_of(
            row,
            [*base, "--l1", row["l1"], "--optimizer", row["optimizer"]],
            tmp_path,
            f"r{i}",
            monkeypatch,
            capsys,
        )
        assert_row_is_the_run(row, meta)


def test_schedules_and_noise_as_axes_are_their_runs(tmp_path, monkeypatch, capsys):
    """Every row is its run; overlap.npy holds per cell the mean over its two seeds of
    W(0) W(T)^T, computed here from the runs' own w0.npy and w_final.npy. (The sweep in
    this process: `grid` is the command's own process.)"""
    code, _out, err = command_in_process(
        ["sweep", *SCHEDULED, "--out", "sweep"], tmp_path, monkeypatch, capsys
    )
    assert code == 0, err
    scheduled = tmp_path / "sweep"
    rows = csv_rows(scheduled)
    products: dict[tuple, list] = {}
    assert sorted((r["noise"], r["l1_schedule"]) for r in rows) == sorted(
        (kind, knots)
        for kind in ("bernoulli", "gaussian")
        for knots in ("0.0:0.0,100.0:0.1", "0.0:0.05,200.0:0.2")
        for _seed in (0, 1)
    )
    base = ["--n", "6", "--m", "12", "--lr", "1e-2", "--steps", "300", "--optimizer", "gd"]
    for i, row in enumerate(rows):
        # each schedule sets its run's l1 to its last value
        assert float(row["l1"]) == float(row["l1_schedule"].split(":")[-1])
        options = ["--noise", row["noise"], "--noise-sigma", "0.1", "--l1-schedule", row["l1_schedule"]]
        meta = interference_of(row, [*base, *options], tmp_path, f"r{i}", monkeypatch, capsys)
        assert_row_is_the_run(row, meta)
        assert meta["parameters"]["l1_schedule"] == [
            [float(k), float(v)] for k, v in (pair.split(":") for pair in row["l1_schedule"].split(","))
        ]
        w0, w = np.load(tmp_path / f"r{i}" / "w0.npy"), np.load(tmp_path / f"r{i}" / "w_final.npy")
        products.setdefault((row["noise"], row["l1_schedule"]), []).append(w0 @ w.T)
    meta = json.loads((scheduled / "sweep.json").read_text())["overlap"]
    overlap = np.load(scheduled / "overlap.npy")
    assert overlap.shape == tuple(meta["shape"]) == (4, 6, 6) and meta["runs"] == [2, 2, 2, 2]
    for cell, mean in zip(meta["cells"], overlap, strict=True):
        expected = sum(products[(cell["noise"], cell["l1_schedule"])]) / 2
        np.testing.assert_allclose(mean, expected, rtol=0, atol=1e-12)
    figures = sorted(p.name for p in (scheduled / "figures").iterdir())
    assert [f for f in figures if f.startswith("overlap.")] == [
        f"overlap.{ext}" for ext in ("json", "pdf", "png", "py", "svg")
    ]


def test_sweep_json_groups_every_cell_by_the_varied_options(grid):
    res, proc = grid
    meta = json.loads((res / "sweep.json").read_text())
    assert meta["varied"] == ["l1", "optimizer"]
    assert meta["spec"]["axes"] == {"l1": [0.05, 0.4], "optimizer": ["adamw", "gd-zero"]}
    rows = csv_rows(res)
    groups = meta["groups"]
    assert len(groups) == 4
    for g in groups:
        members = [
            r
            for r in rows
            if float(r["l1"]) == g["params"]["l1"] and r["optimizer"] == g["params"]["optimizer"]
        ]
        assert g["runs"] == len(members) == 2
        for readout in ("polysemantic", "rail_share", "sum_w4", "steps_to_sparse"):
            values = [float(r[readout]) for r in members if r[readout] != ""]  # "": never sparse
            st = g[readout]
            assert st["runs_with_value"] == len(values)
            if not values:
                assert st["median"] is None
                continue
            assert st["median"] == pytest.approx(statistics.median(values), rel=1e-12)
            cuts = statistics.quantiles(values, n=10, method="inclusive") if len(values) > 1 else values * 9
            assert st["p10"] == pytest.approx(cuts[0], rel=1e-12)
            assert st["p90"] == pytest.approx(cuts[-1], rel=1e-12)
            assert st["mean"] == pytest.approx(statistics.fmean(values), rel=1e-12)
    # the summary table names every cell, with the readout asked for
    lines = proc.stdout.splitlines()
    assert "steps_to_sparse (median, 10-90 %)" in lines[1]
    assert sum(line.split()[:2] in (["0.05", "adamw"], ["0.4", "gd-zero"]) for line in lines[2:]) == 2


def test_the_figures_are_the_heatmap_and_the_curves_with_their_scripts(grid):
    res, _ = grid
    names = sorted(p.name for p in (res / "figures").iterdir())
    assert names == sorted(
        f"{f}.{ext}" for f in ("curves", "heatmap") for ext in ("png", "svg", "pdf", "json", "py")
    )
    assert "sweep.png" not in names  # the count against m pools the cells: not drawn


def test_the_heatmap_cells_are_the_medians_of_sweep_csv(grid):
    from matplotlib.figure import Figure

    from sparsity_gui.figures.interference.grid import heatmap
    from sparsity_gui.figures.save import arrays_of

    res, _ = grid
    data = arrays_of(json.loads((res / "figures" / "heatmap.json").read_text()))
    assert data["readout"] == "steps_to_sparse"
    assert list(data["x_labels"]) == ["0.05", "0.4"] and list(data["s_labels"]) == ["adamw", "gd-zero"]
    fig = Figure(figsize=(3.5, 2.6), layout="constrained")
    heatmap(fig, data)
    image = fig.axes[0].images[0].get_array()
    rows = csv_rows(res)
    for j, opt in enumerate(("adamw", "gd-zero")):
        for i, l1 in enumerate((0.05, 0.4)):
            values = [
                float(r["steps_to_sparse"])
                for r in rows
                if float(r["l1"]) == l1 and r["optimizer"] == opt and r["steps_to_sparse"] != ""
            ]
            cell = image[j, i]
            if values:
                assert cell == statistics.median(values)
            else:
                assert np.ma.is_masked(cell) or not np.isfinite(cell)


def test_resume_trains_only_the_missing_cells(grid, tmp_path, monkeypatch, capsys):
    res, _ = grid
    (tmp_path / "res").mkdir()
    lines = (res / "sweep.csv").read_text().splitlines(keepends=True)
    (tmp_path / "res" / "sweep.csv").write_text("".join(lines[:4]))  # the header and 3 runs
    (tmp_path / "res" / "sweep.json").write_text((res / "sweep.json").read_text())
    args = [*GRID, "--readout", "steps_to_sparse", "--resume", "--out", "res", "--force"]
    code, out, err = command_in_process(["sweep", *args], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert "trained again" not in out  # every row kept is one this grid wrote
    assert set(lines[:4]) <= set((tmp_path / "res" / "sweep.csv").read_text().splitlines(keepends=True))
    assert rows_without_seconds(tmp_path / "res" / "sweep.csv") == rows_without_seconds(res / "sweep.csv")


def test_a_grid_on_a_dask_cluster_equals_the_local_rows(grid, tmp_path, dask_cluster, monkeypatch, capsys):
    res, _ = grid
    args = [*GRID, "--scheduler", dask_cluster.address, "--no-figure", "--out", "res"]
    code, _out, err = command_in_process(["sweep", *args], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert rows_without_seconds(tmp_path / "res" / "sweep.csv") == rows_without_seconds(res / "sweep.csv")


def test_the_api_takes_the_same_lists(grid, tmp_path):
    from sparsity_gui import api

    res, _ = grid
    result = api.sweep(n=8, m=16, lr=5e-3, steps=400, seeds=2, l1=[0.4, 0.05], optimizer=["adamw", "gd-zero"])
    assert result.varied == ("l1", "optimizer")
    line = result.command_line("D")
    assert "--l1 0.05,0.4 " in line and "--optimizer adamw,gd-zero " in line
    result.save(tmp_path / "api")
    assert rows_without_seconds(tmp_path / "api" / "sweep.csv") == rows_without_seconds(res / "sweep.csv")
    never = [r["steps_to_sparse"] == "" for r in csv_rows(tmp_path / "api")]
    assert any(never) and list(np.isnan(result.rows["steps_to_sparse"])) == never  # NaN: no number
    assert result.to_pandas()["steps_to_sparse"].isna().tolist() == never
    fig = result.plot(readout="rail_share")  # the curves: the first figure such a sweep draws
    assert fig.axes[0].get_ylabel() == "rail share"
    with pytest.raises(ValueError, match="needs an option other than m varied|heatmap"):
        api.sweep(n=4, m="8,12", steps=20, seeds=1).plot("heatmap")


BAD = [
    (["--l1", "1e-3,abc"], "'abc' in the list '1e-3,abc' is not a finite number"),
    (["--l1", "1e-3,9"], "l1: must be from 0 to 4"),
    (["--optimizer", "adamw,rmsprop"], "'rmsprop'"),
    (["--steps", "100,2.5"], "'2.5' in the list '100,2.5' is not a whole number"),
    (["--lr", "1e-3,,1e-2"], "an empty value in the list"),
    (["--readout", "speed"], "readout: must be one of polysemantic"),
    (
        [
            "--l1",
            ",".join(f"{k / 1e4:g}" for k in range(1, 102)),
            "--lr",
            ",".join(f"{k / 1e4:g}" for k in range(1, 101)),
        ],
        "is 10100 runs, more than 10000 runs",
    ),
    # 8 runs of 10.7 GB side by side: more than this machine (or CI's) has
    (
        ["--n", "4096", "--m", "65536", "--l1", "1e-3,1e-2", "--jobs", "8"],
        "do not fit in the memory available",
    ),
    (["--l1", "0.1", "--l1-schedule", "0:0,10:0.1;0:0,10:0.2"], "leave --l1 out"),
    (["--noise", "none,bernoulli", "--noise-sigma", "0.05,0.1"], "make the same run"),
    (["--noise", "none,bernoulli"], "needs --noise-sigma"),
    (["--l1-schedule", "0:0,10:0.1;0:0,x:0.2"], "l1_schedule"),
    # 100 runs of n = 4096 would keep 12.5 GB of W(0) W(T)^T
    (["--n", "4096", "--m", "4096", "--seeds", "100", "--overlap"], "keeps an n x n matrix per run"),
]


@pytest.mark.parametrize("extra, words", BAD, ids=[str(i) for i in range(len(BAD))])
def test_a_bad_list_is_one_error_line_before_any_work(extra, words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["sweep", "--n", "4", "--m", "8", "--steps", "10", "--seeds", "1", *extra, "--out", "res"]
    assert_refused_in_process(argv, words, tmp_path, capsys)
