"""sparsity_gui.api against the CLI: save(dir) writes the files the command with the same
options writes, byte for byte (run.json and sweep.json apart from the wall-clock times),
with that command line recorded; the CLI runs for real (`main`, in process)."""

import json
from pathlib import Path

import interference_oracles as IO
import numpy as np
import pytest
from result_files import assert_same_files, same_dir_both_ways
from safetensors.numpy import save_file

from sparsity_gui import api
from sparsity_gui.__main__ import main


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    "save_options",
    [{}, {"format": "npz", "no_weights": False}, {"no_weights": True}],
    ids=["csv", "npz", "no-weights"],
)
def test_simulate_saves_the_files_of_run(tmp_path, capsys, save_options):
    run = api.simulate(m=2000, lam=2e-3, seed=3, samples=101)
    assert run.command_line("res").startswith("sparsity-gui run --m 2000 --lam 0.002 --seed 3 --samples 101")
    api_dir, cli_dir = same_dir_both_ways(tmp_path, capsys, lambda out: run.save(out, **save_options), "run")
    assert_same_files(api_dir, cli_dir, clock_fields=("solver_wall_seconds",))
    # the arrays are the files' numbers, exactly
    rows = np.loadtxt(api_dir / "timeseries.csv", delimiter=",", skiprows=1)
    assert np.array_equal(rows, run.timeseries)
    if save_options.get("format") == "npz":
        with np.load(api_dir / "weights.npz") as z:
            assert np.array_equal(z["w0"], run.w0) and np.array_equal(z["w_final"], run.w_final)
        with np.load(api_dir / "deaths.npz") as z:
            assert all(np.array_equal(z[k], run.deaths[k]) for k in ("k", "u", "t_death"))


def test_simulate_with_w0_file_and_gd(tmp_path, capsys):
    np.save(tmp_path / "w.npy", np.array([[0.1, -0.5, 0.3, 0.05], [0.2, 0.2, -0.7, 0.01]]))
    run = api.simulate(w0=str(tmp_path / "w.npy"), w0_row=1, method="gd", eta=0.0625, t_end=4.0)
    assert run.params.m == 4 and np.array_equal(run.w0, [0.2, 0.2, -0.7, 0.01])
    api_dir, cli_dir = same_dir_both_ways(tmp_path, capsys, run.save, "run")
    assert_same_files(api_dir, cli_dir, clock_fields=("solver_wall_seconds",))


def test_simulate_from_an_array_is_the_run_of_the_same_weights_in_a_file(tmp_path, capsys):
    """W(0) as a numpy array (a matrix's row): the same run, bit for bit, as `run --w0 FILE
    --w0-row R` of those weights; save() writes the same numbers and records the call, as no
    CLI option takes an array."""
    matrix = np.random.default_rng(5).standard_normal((3, 400)) * 0.9 / 20
    np.save(tmp_path / "w.npy", matrix)
    from_array = api.simulate(w0=matrix, w0_row=2, lam=4e-3, samples=51)
    from_file = api.simulate(w0=tmp_path / "w.npy", w0_row=2, lam=4e-3, samples=51)
    assert from_array.params.m == 400 and from_array.params.w0_path is None
    assert np.array_equal(from_array.w0, matrix[2])
    assert np.array_equal(from_array.timeseries, from_file.timeseries)
    assert np.array_equal(from_array.w_final, from_file.w_final)
    assert all(np.array_equal(from_array.deaths[k], from_file.deaths[k]) for k in ("k", "u", "t_death"))
    line = from_array.command_line("out")
    assert line == (
        "sparsity_gui.api.simulate(lam=0.004, w0=<float64 array 3 x 400: W(0) is the w0 of the "
        "weights file>, w0_row=2, samples=51).save('out')"
    )
    api_dir = from_array.save(tmp_path / "api")
    main(
        [
            "run",
            "--w0",
            str(tmp_path / "w.npy"),
            "--w0-row",
            "2",
            "--lam",
            "4e-3",
            "--samples",
            "51",
            "--out",
            str(tmp_path / "cli"),
        ]
    )
    capsys.readouterr()
    for name in ("timeseries.csv", "weights.csv", "deaths.csv"):
        assert (api_dir / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    meta = json.loads((api_dir / "run.json").read_text())
    assert meta["command_line"] == line.replace("'out'", repr(str(tmp_path / "api")))
    assert meta["parameters"]["w0_path"] is None and meta["parameters"]["m"] == 400


def test_train_saves_the_files_of_interference(tmp_path, capsys):
    result = api.train(n=12, m=24, steps=300, seed=2, optimizer="adam", l1=2e-3, lr=3e-3, samples=31)
    assert result.history.shape == (31, len(result.columns))
    api_dir, cli_dir = same_dir_both_ways(tmp_path, capsys, result.save, "interference")
    assert_same_files(api_dir, cli_dir, clock_fields=("wall_seconds",))
    assert np.array_equal(np.load(api_dir / "w_final.npy"), result.w_final)
    assert np.array_equal(np.load(api_dir / "w0.npy"), result.w0)


def test_train_from_a_w0_file_saves_the_files_of_interference_w0(tmp_path, capsys):
    """`interference --w0 FILE --w0-tensor NAME`: n and m from the matrix, W(0) the file's
    bit for bit, the training the plain-numpy reference's (tests/interference_oracles.py)."""
    matrix = (np.random.default_rng(8).standard_normal((5, 9)) / 2.5).astype(np.float32)
    save_file({"enc.weight": matrix, "enc.bias": np.zeros(5, np.float32)}, "ck.safetensors")
    result = api.train(
        w0=Path("ck.safetensors"),
        w0_tensor="enc.weight",
        optimizer="gd-zero",
        lr=0.1,
        l1=0.04,
        steps=40,
        samples=5,
    )
    assert (result.params.n, result.params.m) == (5, 9)
    assert result.command_line("res") == (
        "sparsity-gui interference --steps 40 --optimizer gd-zero --l1 0.04 --lr 0.1 --w0 ck.safetensors "
        "--w0-tensor enc.weight --samples 5 --out res"
    )
    np.testing.assert_array_equal(result.w0, matrix.astype(np.float64))
    W, done, unstable = IO.gd_zero_reference(matrix.astype(np.float64), 0.1, 0.04, 40)
    assert done == 40 and not unstable
    np.testing.assert_allclose(result.w_final, W, rtol=0, atol=1e-12)
    api_dir, cli_dir = same_dir_both_ways(tmp_path, capsys, result.save, "interference")
    assert_same_files(api_dir, cli_dir, clock_fields=("wall_seconds",))
    meta = json.loads((api_dir / "run.json").read_text())
    assert meta["w0"] == {"source": "file", "path": "ck.safetensors", "tensor": "enc.weight", "dtype": "F32"}


def test_train_from_an_array_records_the_call(tmp_path):
    """w0 as a numpy array: the same run as from a file holding it; save() writes the
    same files as `interference --w0 w0.npy` apart from where W(0) came from."""
    matrix = np.random.default_rng(3).standard_normal((4, 7)) / 2.0
    np.save("w.npy", matrix)
    kwargs = dict(optimizer="adam", lr=0.01, l1=0.02, steps=60, samples=4)
    from_array = api.train(w0=matrix, **kwargs)
    from_file = api.train(w0="w.npy", **kwargs)
    assert (from_array.params.n, from_array.params.m) == (4, 7)
    assert np.array_equal(from_array.w0, matrix) and from_array.w0 is not matrix
    assert np.array_equal(from_array.w_final, from_file.w_final)
    assert np.array_equal(from_array.history, from_file.history, equal_nan=True)  # t: NaN for Adam
    # Adam (weight decay 0) from torch's documented pseudo-code on the network's gradient
    W = IO.adam_reference(matrix, lambda W: IO.network_grad_backprop(W, 0.02), 60, 0.01)
    np.testing.assert_allclose(from_array.w_final, W, rtol=1e-9, atol=1e-12)
    call = (
        "sparsity_gui.api.train(steps=60, optimizer='adam', l1=0.02, lr=0.01, "
        "w0=<float64 array 4 x 7, saved as w0.npy>, samples=4).save('DIR')"
    )
    assert repr(from_array).endswith(f"; files as: {call}>")
    from_array.save("a")
    from_file.save("f")
    for name in ("history.csv", "w0.npy", "w_final.npy", "neuron_counts.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "f" / name).read_bytes(), name
    assert np.array_equal(np.load("a/w0.npy"), matrix)
    meta = json.loads((tmp_path / "a" / "run.json").read_text())
    assert meta["w0"] == {"source": "given"} and meta["command_line"] == call.replace("DIR", "a")


def test_sweep_saves_the_files_of_sweep_no_figure(tmp_path, capsys):
    result = api.sweep(n=8, m=[8, 16], seeds=2, steps=300, jobs=1)
    assert result.command_line("res") == (
        "sparsity-gui sweep --n 8 --m 8,16 --seeds 2 --steps 300 --jobs 1 --no-figure --out res"
    )
    api_dir, cli_dir = same_dir_both_ways(tmp_path, capsys, result.save, "sweep")
    assert_same_files(api_dir, cli_dir, clock_fields=("run_seconds",), csv_clock_column="seconds")
    assert list(result.rows["m"]) == [8, 8, 16, 16] and list(result.rows["seed"]) == [0, 1, 0, 1]
    assert result.m.dtype == np.int64 and list(result.m) == [8, 16]
    assert repr(result).startswith("<SweepResult n=8, 2 seed(s) per m, mean polysemantic per m {8: ")
    assert repr(result).endswith(
        "; files as: sparsity-gui sweep --n 8 --m 8,16 --seeds 2 --steps 300 --jobs 1 --no-figure --out DIR>"
    )
    # mean and sample std per m, from the rows, in plain numpy
    for i, m in enumerate(result.m):
        counts = result.rows["polysemantic"][result.rows["m"] == m].astype(float)
        assert result.mean[i] == pytest.approx(counts.mean(), abs=1e-12)
        assert result.std[i] == pytest.approx(counts.std(ddof=1), abs=1e-12)
        assert result.predicted[i] == 8 * 8 / (4 * m)


def test_save_refuses_a_used_folder_as_the_cli_does(tmp_path, capsys):
    run = api.simulate(m=50)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(SystemExit):
        main(["run", "--m", "50", "--out", str(tmp_path / "full")])
    cli_line = capsys.readouterr().err.strip()
    with pytest.raises(ValueError) as err:
        run.save(tmp_path / "full")
    assert cli_line == f"error: {err.value}"
    assert [p.name for p in tmp_path.iterdir()] == ["full"]  # no temporary folder left
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["keep.txt"]
    run.save(tmp_path / "full", force=True)
    assert sorted(p.name for p in (tmp_path / "full").iterdir()) == [
        "deaths.csv",
        "run.json",
        "timeseries.csv",
        "weights.csv",
    ]
