"""`python -m sparsity_gui run` (a real process for the entry point and the signal, the rest
through __main__.main in-process): the files it writes (checked against the
reference flow and a numpy GD computed here) and its error behaviour (one `error:` line,
exit status 2, no traceback, DIR not created or left as it was)."""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from helpers import cli, command_result, normal_w0, read_csv
from note_oracles import gd_reference, reference_flow, relvar_bounds_direct

import sparsity_gui

HEADER10 = "t,norm2_sq,norm1,nonzero,theta,feature_push,reg_push,rel_var,rel_var_lo,rel_var_hi"
REL = 1e-8


def listing(folder: Path) -> dict[str, bytes]:
    """Every file under folder (hidden ones too) with its content."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(folder.rglob("*"))
    }


W0_EXACT = normal_w0(10, 0)
LAM_EXACT = 0.02
GD = dict(m=40, seed=3, lam=0.01, eta=0.05, t_end=30.02, samples=7)


def _setup_error_case(name: str, folder: Path) -> list[str]:
    """Create what an error case needs in its folder; return its arguments."""
    out = ["--out", "res"]
    if name == "nonempty":
        (folder / "res").mkdir()
        (folder / "res" / "keep.txt").write_text("precious\n")
        return ["--m", "20", *out]
    if name == "out_is_file":
        (folder / "res").write_text("a file\n")
        return ["--m", "20", *out]
    if name == "parent_missing":
        return ["--m", "20", "--out", "no/such/parent/res"]
    if name == "w0_garbage":
        (folder / "g.bin").write_bytes(bytes(range(256)) * 8)
        return ["--w0", "g.bin", *out]
    if name == "w0_garbage_npy":
        (folder / "g.npy").write_bytes(b"\x93NUMPY garbage" + bytes(range(200)))
        return ["--w0", "g.npy", *out]
    if name == "w0_matrix":
        np.save(folder / "mat.npy", np.ones((3, 4)))
        return ["--w0", "mat.npy", *out]
    if name == "w0_nan":
        (folder / "w.csv").write_text("w\n0.1\nnan\n")
        return ["--w0", "w.csv", *out]
    if name == "w0_empty":
        (folder / "w.csv").write_text("")
        return ["--w0", "w.csv", *out]
    if name == "w0_missing":
        return ["--w0", "missing.csv", *out]
    if name == "gd_diverges":
        # ||W(0)||^2 = 3.6: with eta = 0.5 the first step has 1 + eta(1 - ||W||^2) < 0
        (folder / "big.csv").write_text("\n".join(["0.6"] * 10) + "\n")
        return ["--w0", "big.csv", "--method", "gd", "--eta", "0.5", "--lam", "0.01", "--t-end", "5", *out]
    if name == "no_out":
        return ["--m", "20"]
    return {
        "lam_text": ["--lam", "abc"],
        "lam_big": ["--lam", "2"],
        "lam_nan": ["--lam", "nan"],
        "lam_zero_no_t_end": ["--lam", "0", "--m", "20"],
        "m_zero": ["--m", "0"],
        "m_fraction": ["--m", "1.5"],
        "m_text": ["--m", "ten"],
        "eta_zero": ["--eta", "0"],
        "eta_big": ["--eta", "5"],
        "sigma_negative": ["--sigma", "-1"],
        "samples_one": ["--samples", "1"],
        "t_end_negative": ["--t-end", "-3"],
        "method_unknown": ["--method", "rk4"],
        "unknown_option": ["--bogus"],
    }[name] + out


# Each subprocess pays ~1.3 s of CPU in start-up (the run command imports numba and scipy
# before it parses anything), so one refusal of each way out goes through the real entry
# point (DIR in the way before any work, a run that fails once under way), and the whole
# matrix runs in-process below (same code path, __main__.main, with SystemExit and the
# captured stderr checked the same way).
ERROR_CASES = [
    "nonempty",
    "gd_diverges",
]
# what each error message must mention
EXPECT_IN_MESSAGE = {
    "nonempty": "--force",
    "out_is_file": "not a folder",
    "parent_missing": "does not exist",
    "w0_garbage": "g.bin",
    "w0_garbage_npy": "g.npy",
    "w0_matrix": "3x4",
    "w0_nan": "finite",
    "w0_empty": "no weights",
    "w0_missing": "missing.csv",
    "lam_text": "'abc'",
    "lam_big": "lam",
    "lam_nan": "lam",
    "lam_zero_no_t_end": "t-end",
    "m_zero": "m",
    "m_fraction": "1.5",
    "m_text": "ten",
    "eta_zero": "eta",
    "eta_big": "eta",
    "sigma_negative": "sigma",
    "samples_one": "samples",
    "t_end_negative": "t_end",
    "method_unknown": "rk4",
    "unknown_option": "--bogus",
    "gd_diverges": "unstable",
    "no_out": "--out",
}
ALL_ERROR_CASES = list(EXPECT_IN_MESSAGE)


def _job(name: str, d: Path) -> list[str]:
    """The arguments of `run` for the case ``name``, with what it needs created in ``d``."""
    if name == "exact":  # W(0) from a CSV with a header and comments; --m is overridden by --w0
        (d / "w.csv").write_text("# one encoding\nw\n" + "\n".join(repr(float(x)) for x in W0_EXACT) + "\n")
        return ["--w0", "w.csv", "--m", "5", "--lam", str(LAM_EXACT), "--samples", "21", "--out", "res"]
    if name == "gd":
        return [
            *("--method", "gd", "--eta", str(GD["eta"]), "--m", str(GD["m"]), "--seed", str(GD["seed"])),
            *("--lam", str(GD["lam"]), "--t-end", str(GD["t_end"]), "--samples", str(GD["samples"])),
            *("--out", "res"),
        ]
    if name == "force":
        (d / "res").mkdir()
        (d / "res" / "old.txt").write_text("old\n")
        return ["--m", "30", "--lam", "0.01", "--samples", "5", "--no-weights", "--force", "--out", "res"]
    return _setup_error_case(name, d)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The real processes of this module (the exact run and ERROR_CASES), two at a time
    (a 2-core machine)."""
    jobs = {}
    for name in ("exact", *ERROR_CASES):
        d = tmp_path_factory.mktemp(name)
        jobs[name] = (d, _job(name, d))
    before = {name: listing(d) for name, (d, _) in jobs.items()}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(cli, ["run", *args], d, timeout=120) for name, (d, args) in jobs.items()}
        results = {name: f.result() for name, f in futures.items()}
    return {name: (results[name], jobs[name][0], jobs[name][1], before[name]) for name in jobs}


def in_process(name: str, d: Path, monkeypatch, capsys):
    """(finished process, folder, arguments) of the case ``name`` run through __main__.main."""
    args = _job(name, d)
    return command_result(["run", *args], d, monkeypatch, capsys), d, args


# ----------------------------------------------------------------------------------
# Successful runs


def test_exact_run_files_and_headers(runs):
    proc, d, args, _ = runs["exact"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.startswith("wrote res")
    res = d / "res"
    assert sorted(p.name for p in res.iterdir()) == [
        "deaths.csv",
        "run.json",
        "timeseries.csv",
        "weights.csv",
    ]
    header, _ = read_csv(res / "timeseries.csv")
    assert header[:10] == HEADER10.split(",")
    assert read_csv(res / "weights.csv")[0] == ["k", "w0", "w_final"]
    assert read_csv(res / "deaths.csv")[0] == ["k", "u", "t_death"]
    assert not any(p.name.startswith(".") for p in d.iterdir())  # no temporary folder left


def test_exact_run_matches_reference(runs):
    proc, d, args, _ = runs["exact"]
    assert proc.returncode == 0, proc.stderr
    res = d / "res"
    meta = json.loads((res / "run.json").read_text())
    cols, rows = read_csv(res / "timeseries.csv")
    ts = np.array([[float(x) for x in r] for r in rows])
    col = {c: ts[:, i] for i, c in enumerate(cols)}
    assert ts.shape[0] == 21
    # the default end: one survivor (from the reference), plus 10%
    ref_one = reference_flow(W0_EXACT, LAM_EXACT, [1e4], until_nonzero=1)
    t_one = float(np.nanmax(ref_one.death_t))
    t_end = meta["t_end"]
    assert t_end == pytest.approx(1.1 * t_one, rel=REL)
    # K rows at t = i T / (K - 1)
    np.testing.assert_allclose(col["t"], np.arange(21) * t_end / 20, rtol=1e-14, atol=0)
    ref = reference_flow(W0_EXACT, LAM_EXACT, col["t"])
    np.testing.assert_array_equal(col["nonzero"], ref.nonzero)
    assert all(r[cols.index("nonzero")].isdigit() for r in rows)  # written as whole numbers
    np.testing.assert_allclose(col["norm1"], ref.norm1, rtol=REL)
    np.testing.assert_allclose(col["norm2_sq"], ref.norm2_sq, rtol=REL)
    s = 1 - col["norm2_sq"]
    np.testing.assert_allclose(col["theta"], np.where(s > 0, LAM_EXACT / s, np.inf), rtol=1e-9)
    np.testing.assert_allclose(col["feature_push"], s * col["norm2_sq"], rtol=1e-12)
    np.testing.assert_allclose(col["reg_push"], LAM_EXACT * col["norm1"], rtol=1e-12)
    for i in range(21):
        a = ref.abs_w[i][ref.abs_w[i] > 0]
        rv = np.var(a) / np.mean(a) ** 2
        assert col["rel_var"][i] == pytest.approx(rv, rel=1e-7, abs=1e-12)
        lo, hi = relvar_bounds_direct(W0_EXACT, int(col["nonzero"][i]))
        assert col["rel_var_lo"][i] == pytest.approx(lo, rel=1e-9, abs=1e-15)
        assert col["rel_var_hi"][i] == pytest.approx(hi, rel=1e-9, abs=1e-15)
    # deaths.csv: every death (all but the winner), in order of death, times of the reference
    _, drows = read_csv(res / "deaths.csv")
    k = [int(r[0]) for r in drows]
    assert k == ref.death_order
    np.testing.assert_array_equal([float(r[1]) for r in drows], np.abs(W0_EXACT[k]))
    np.testing.assert_allclose([float(r[2]) for r in drows], ref.death_t[k], rtol=REL)
    # weights.csv: W(0) exactly as given, W(T) signed as the reference
    _, wrows = read_csv(res / "weights.csv")
    assert [int(r[0]) for r in wrows] == list(range(10))
    np.testing.assert_array_equal([float(r[1]) for r in wrows], W0_EXACT)
    np.testing.assert_allclose(
        [float(r[2]) for r in wrows], np.sign(W0_EXACT) * ref.abs_w[-1], rtol=0, atol=1e-9
    )
    # run.json
    assert meta["parameters"]["m"] == 10  # --w0 set m (--m 5 was given)
    assert meta["parameters"]["lam"] == LAM_EXACT and meta["parameters"]["method"] == "exact"
    assert meta["parameters"]["w0_path"] == "w.csv"
    assert meta["version"] == sparsity_gui.__version__
    assert meta["samples"] == 21
    assert math.isfinite(meta["solver_wall_seconds"]) and meta["solver_wall_seconds"] >= 0
    assert meta["command_line"] == shlex.join(["sparsity-gui", "run", *args])
    # fitted c: least squares through the origin of 1/||W||_1 - w(0) against lam t, m' >= 2
    use = col["nonzero"] >= 2
    x = LAM_EXACT * col["t"][use]
    y = 1 / col["norm1"][use] - 1 / col["norm1"][0]
    assert meta["fitted_c"] == pytest.approx(float(np.dot(x, y) / np.dot(x, x)), rel=1e-9)
    assert meta["nonzero_final"] == 1


def test_gd_run_rows_at_nearest_step_times(tmp_path, monkeypatch, capsys):
    proc, d, args = in_process("gd", tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    res = d / "res"
    cols, rows = read_csv(res / "timeseries.csv")
    ts = np.array([[float(x) for x in r] for r in rows])
    col = {c: ts[:, i] for i, c in enumerate(cols)}
    eta, lam, K = GD["eta"], GD["lam"], GD["samples"]
    requested = np.arange(K) * GD["t_end"] / (K - 1)
    steps = np.round(requested / eta).astype(int)
    assert not np.allclose(requested, eta * steps)  # the requested times are off the grid
    np.testing.assert_allclose(col["t"], eta * steps, rtol=1e-13, atol=1e-15)
    # the rows are plain numpy GD from the documented normal draw
    w = normal_w0(GD["m"], GD["seed"])
    done = 0
    for i, n in enumerate(steps):
        w, _ = gd_reference(w, eta, lam, n - done)
        done = n
        assert col["nonzero"][i] == np.count_nonzero(w)
        assert col["norm1"][i] == pytest.approx(np.abs(w).sum(), rel=1e-12)
        assert col["norm2_sq"][i] == pytest.approx(np.dot(w, w), rel=1e-12)
    _, wrows = read_csv(res / "weights.csv")
    np.testing.assert_allclose([float(r[2]) for r in wrows], w, rtol=1e-12, atol=1e-15)
    # deaths on the step grid, in order, matching numpy's steps
    _, death_steps = gd_reference(normal_w0(GD["m"], GD["seed"]), eta, lam, done)
    _, drows = read_csv(res / "deaths.csv")
    k = np.array([int(r[0]) for r in drows])
    t_death = np.array([float(r[2]) for r in drows])
    assert np.all(np.diff(t_death) >= 0)
    assert set(k) == set(np.flatnonzero(death_steps))
    np.testing.assert_allclose(t_death, eta * death_steps[k], rtol=1e-13)
    meta = json.loads((res / "run.json").read_text())
    assert meta["parameters"]["method"] == "gd" and meta["parameters"]["eta"] == eta
    assert meta["parameters"]["t_end"] == GD["t_end"] and meta["t_end"] == GD["t_end"]


def test_force_replaces_a_non_empty_dir(tmp_path, monkeypatch, capsys):
    proc, d, args = in_process("force", tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (d / "res").iterdir())
    assert names == ["deaths.csv", "run.json", "timeseries.csv"]  # old.txt gone, --no-weights
    assert [p.name for p in d.iterdir()] == ["res"]  # no temporary or backup folder left
    _, rows = read_csv(d / "res" / "timeseries.csv")
    assert len(rows) == 5


# ----------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("name", ERROR_CASES)
def test_error_is_one_line_status_2_and_nothing_written(runs, name):
    proc, d, args, before = runs[name]
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert EXPECT_IN_MESSAGE[name] in lines[0]
    assert listing(d) == before  # DIR not created, or left exactly as it was; no temp folder


@pytest.mark.parametrize("name", ALL_ERROR_CASES)
def test_error_matrix_in_process(name, tmp_path, monkeypatch, capsys):
    from sparsity_gui.__main__ import main

    args = _setup_error_case(name, tmp_path)
    before = listing(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["run", *args])
    assert info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert captured.out == ""
    assert EXPECT_IN_MESSAGE[name] in lines[0]
    assert listing(tmp_path) == before


def test_sigterm_mid_run_leaves_nothing(tmp_path):
    """A long run killed with SIGTERM cleans up like Ctrl+C: exit 143, no DIR, no temp folder."""
    import signal
    import time

    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sparsity_gui",
            "run",
            "--m",
            "200000",
            "--method",
            "gd",
            "--eta",
            "0.001",
            "--t-end",
            "1e5",  # 10^8 steps: hours, within the limit of bounded work (10^9)
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the signal goes once the run has visibly started (its temporary folder is there), not
    # after a fixed sleep: on a loaded machine the interpreter may still be importing then
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".out.") for p in tmp_path.iterdir()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the temporary folder never appeared"
        time.sleep(0.05)
    assert proc.poll() is None, "the run should still be going"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM
    assert "interrupted" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_w0_row_of_a_matrix_and_no_negative_zero(tmp_path, monkeypatch, capsys):
    """--w0-row picks one row of a weight matrix; dead weights are written as 0, not -0."""
    matrix = np.array([[0.5, -0.1, 0.2], [0.05, -0.4, -0.3]])
    np.save(tmp_path / "W.npy", matrix)
    out = tmp_path / "out"
    argv = ["run", "--w0", tmp_path / "W.npy", "--w0-row", "1", "--lam", "0.05", "--out", out]
    proc = command_result(argv, tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    lines = (out / "weights.csv").read_text().splitlines()
    assert lines[0] == "k,w0,w_final"
    rows = [line.split(",") for line in lines[1:]]
    assert [float(r[1]) for r in rows] == matrix[1].tolist()
    finals = [r[2] for r in rows]
    assert finals[0] == "0.0" and finals[2] == "0.0", finals  # dead: 0 even where W(0) < 0, never -0.0
    assert float(finals[1]) < 0  # the survivor keeps its sign
