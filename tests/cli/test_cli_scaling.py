"""`python -m sparsity_gui scaling`: its files, a row against the `run` command of the same
settings (digit for digit), the summary against numpy, and every kind of bad grid (one
`error:` line, exit status 2, nothing written). The grid and the memory refusals run as real
subprocesses; the other commands through __main__.main in this process (the same code)."""

from __future__ import annotations

import csv
import io
import json
import resource

import numpy as np
import pytest
from helpers import cli, command_in_process

REQUIRED = [
    "m",
    "lam",
    "seed",
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
]
FIGURES = [
    f"{name}.{fmt}"
    for name in ("fitted_c", "lam_t_one", "rel_var")
    for fmt in ("json", "pdf", "png", "py", "svg")
]


def read_rows(path):
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))
    return reader.fieldnames, list(reader)


@pytest.fixture(scope="module")
def grid_out(tmp_path_factory):
    """One small grid for the tests below: m = 100 and 2000 (as '1e2,2e3'), two lam, two
    seeds from 3, sigma 0.7."""
    tmp = tmp_path_factory.mktemp("scaling")
    args = ["scaling", "--m", "1e2,2e3", "--lam", "1e-2,2e-3", "--seeds", "2", "--seed", "3"]
    args += ["--sigma", "0.7", "--out", str(tmp / "out")]
    proc = cli(args, tmp)
    assert proc.returncode == 0, proc.stderr
    return tmp / "out", proc, args


def test_files_rows_and_summary(grid_out):
    out, proc, args = grid_out
    assert sorted(p.name for p in out.iterdir()) == ["figures", "scaling.csv", "scaling.json"]
    assert sorted(p.name for p in (out / "figures").iterdir()) == sorted(FIGURES)
    header, rows = read_rows(out / "scaling.csv")
    assert header[: len(REQUIRED)] == REQUIRED
    # a row per (m, lam, seed), by m, then lam, then seed
    keys = [(int(r["m"]), float(r["lam"]), int(r["seed"])) for r in rows]
    assert keys == [(m, lam, s) for m in (100, 2000) for lam in (2e-3, 1e-2) for s in (3, 4)]
    for r in rows:
        assert float(r["lam_t_one"]) == pytest.approx(float(r["lam"]) * float(r["t_one"]), rel=1e-15)
        assert float(r["sigma"]) == 0.7
    meta = json.loads((out / "scaling.json").read_text(encoding="utf-8"))
    assert meta["complete"] is True and meta["runs_done"] == 8
    assert meta["command_line"] == "sparsity-gui " + " ".join(args)
    assert meta["settings"]["m_values"] == [100, 2000] and meta["settings"]["lam_values"] == [2e-3, 1e-2]
    assert meta["settings"]["seeds"] == 2 and meta["settings"]["sigma"] == 0.7
    for cell in meta["summary"]:
        mine = [r for r in rows if int(r["m"]) == cell["m"] and float(r["lam"]) == cell["lam"]]
        assert cell["runs"] == len(mine) == 2
        for col in ("lam_t_one", "fitted_c", "fitted_c_bulk", "rel_var_mean", "balance_ratio", "w_last"):
            vals = np.array([float(r[col]) for r in mine])
            assert cell["mean"][col] == pytest.approx(vals.mean(), rel=1e-14)
            assert cell["std"][col] == pytest.approx(vals.std(ddof=1), rel=1e-10, abs=1e-300)
    # the printed table: a line per (m, lam)
    assert "wrote" in proc.stdout and len(proc.stdout.strip().splitlines()) == 2 + 4
    for name in FIGURES:
        data = (out / "figures" / name).read_bytes()
        if name.endswith(".png"):
            assert data.startswith(b"\x89PNG")
        elif name.endswith(".svg"):
            assert b"<svg" in data[:400]
        elif name.endswith(".pdf"):
            assert data.startswith(b"%PDF")


@pytest.mark.parametrize("index", [1, 6])
def test_a_row_equals_the_run_command_digit_for_digit(grid_out, tmp_path, monkeypatch, capsys, index):
    out, _proc, _args = grid_out
    _header, rows = read_rows(out / "scaling.csv")
    r = rows[index]
    run_args = ["run", "--m", r["m"], "--lam", r["lam"], "--seed", r["seed"], "--sigma", "0.7"]
    status, _out, err = command_in_process(
        [*run_args, "--no-weights", "--out", "run"], tmp_path, monkeypatch, capsys
    )
    assert status == 0, err
    text = (tmp_path / "run" / "run.json").read_text(encoding="utf-8")
    meta = json.loads(text)
    # the same digits: the CSV's repr and the JSON's (also repr) text
    assert r["t_one"] == repr(meta["t_one_weight_left"])
    assert r["fitted_c"] == repr(meta["fitted_c"])
    assert f'"t_one_weight_left": {r["t_one"]},' in text
    assert float(r["t_end"]) == meta["t_end"]


def test_no_figure_writes_the_numbers_only(tmp_path, monkeypatch, capsys):
    argv = ["scaling", "--m", "50", "--lam", "1e-2", "--seeds", "1", "--no-figure", "--out", "o"]
    status, _out, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["scaling.csv", "scaling.json"]


BAD = {
    "empty m": (["--m", "", "--lam", "1e-3"], "m: no values of m"),
    "empty lam": (["--m", "100", "--lam", ""], "lam: no values of lam"),
    "only commas": (["--m", ",,", "--lam", "1e-3"], "m: no values of m"),
    "m zero": (["--m", "0,100", "--lam", "1e-3"], "m: every m must be from 1 to 1e8, got 0"),
    "m negative": (["--m=-5", "--lam", "1e-3"], "m: every m must be from 1 to 1e8, got -5"),
    "m not whole": (["--m", "2.5", "--lam", "1e-3"], "m: expected a list"),
    "m too large": (["--m", "1e9", "--lam", "1e-3"], "m: every m must be from 1 to 1e8, got 1000000000"),
    "lam zero": (["--m", "100", "--lam", "0"], "lam: every lam must be > 0"),
    "lam negative": (["--m", "100", "--lam=-1e-3"], "lam: every lam must be > 0"),
    "lam inf": (["--m", "100", "--lam", "1e-3,inf"], "lam: every value must be finite"),
    "lam nan": (["--m", "100", "--lam", "nan"], "lam: every value must be finite"),
    "lam above 1": (["--m", "100", "--lam", "2"], "lam: every lam must be > 0 and at most 1"),
    "lam text": (["--m", "100", "--lam", "1e-3,abc"], "lam: expected numbers separated by commas"),
    "seeds zero": (["--m", "100", "--lam", "1e-3", "--seeds", "0"], "seeds: must be a whole number"),
    "too many runs": (["--m", "1:1000:1", "--lam", "1e-3,1e-2", "--seeds", "6"], "more than 10000 runs"),
    "jobs zero": (["--m", "100", "--lam", "1e-3", "--jobs", "0"], "jobs: must be from 1 to 64"),
    "sigma zero": (["--m", "100", "--lam", "1e-3", "--sigma", "0"], "sigma: must be > 0"),
    "no lam": (["--m", "100"], "the following arguments are required: --lam"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_grids_give_one_error_line_and_status_2(tmp_path, monkeypatch, capsys, name):
    """In this process (the real process's refusal: the memory test below)."""
    args, expected = BAD[name]
    status, out, err = command_in_process(["scaling", *args, "--out", "out"], tmp_path, monkeypatch, capsys)
    assert status == 2, (out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert expected in lines[0], lines[0]
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_a_grid_larger_than_memory_is_refused_before_allocating(tmp_path):
    """Under a 3 GiB address-space limit one run of 10^8 weights (about 16 GB) is refused,
    and so are two runs of 1.5e7 side by side that fit one at a time (2.4 GB each)."""
    limit = 3 * 2**30

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = cli(["scaling", "--m", "1e3,1e8", "--lam", "1e-3", "--out", "o"], tmp_path, preexec_fn=cap)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: m: m = 100000000 needs about") and "GiB" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and list(tmp_path.iterdir()) == []
    args = ["scaling", "--m", "1.5e7", "--lam", "1e-3,1e-2", "--jobs", "2", "--out", "o"]
    proc = cli(args, tmp_path, preexec_fn=cap)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: jobs: 2 runs of m = 15000000 side by side need about")
    assert len(proc.stderr.splitlines()) == 1 and list(tmp_path.iterdir()) == []
