"""A stacked series (one .npz holding a [T, n, m] or [T, m] tensor and its steps) is read a
snapshot at a time when np.savez stored it uncompressed: each snapshot, row or latent is the
array the test wrote, the memory a read takes is about one snapshot's however long the
series, a NaN is named with its snapshot when that snapshot is read, and a compressed file
(read whole, once) gives the same arrays."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.series import open_series

T, N, M = 64, 32, 256
STEPS = np.arange(T) * 100 + 7


def stacked(tmp_path, W, name="series.npz", compressed=False, **extra):
    path = tmp_path / name
    (np.savez_compressed if compressed else np.savez)(path, W=W, steps=STEPS[: W.shape[0]], **extra)
    return path


@pytest.fixture(scope="module")
def weights():
    return np.random.default_rng(3).normal(0.0, 0.5, (T, N, M)).astype(np.float32)


@pytest.mark.parametrize("compressed", [False, True], ids=["savez", "savez_compressed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_each_snapshot_row_and_latent_is_the_array_written(tmp_path, weights, compressed, dtype):
    W = (weights * 100).astype(dtype) if dtype is np.int16 else weights.astype(dtype)
    path = stacked(tmp_path, W, compressed=compressed)
    matrix = open_series(path, all_rows=True)
    row = open_series(path, row=5)
    latent = open_series(path, latent=17)
    assert matrix.layout == "stacked" and matrix.shape == (N, M)
    np.testing.assert_array_equal(matrix.steps, STEPS)
    for i in (0, 1, 40, T - 1):
        got = matrix.read(i)
        # float32 read in place stays float32 (the comparison sums it in float64); a
        # compressed file is read whole, as float64
        kept = np.float32 if dtype is np.float32 and not compressed else np.float64
        assert got.dtype == kept and got.flags.c_contiguous
        np.testing.assert_array_equal(got, W[i].astype(np.float64))
        np.testing.assert_array_equal(row.read(i), W[i, 5].astype(np.float64))
        np.testing.assert_array_equal(latent.read(i), W[i, :, 17].astype(np.float64))
        assert row.read(i).flags.c_contiguous and latent.read(i).flags.c_contiguous


def test_a_stacked_vector_series_gives_each_vector(tmp_path, weights):
    W = weights[:, 0, :]  # [T, m]
    series = open_series(stacked(tmp_path, W))
    assert series.pick == "row" and series.shape == (M,)
    for i in range(T):
        np.testing.assert_array_equal(series.read(i), W[i].astype(np.float64))


def traced(read) -> tuple[int, int]:
    """(the most memory numpy and Python held at once while ``read()`` ran, what they still
    held after it), above what they held before; what ``read`` returns is let go."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        read()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before, after - before


def test_a_read_takes_about_one_snapshot_of_memory_not_the_file(tmp_path, weights):
    path = stacked(tmp_path, weights)
    size = path.stat().st_size
    snapshot = N * M * 8  # one snapshot as float64: 64 KiB of a 2 MiB file
    assert size > 30 * snapshot / 2
    # the first read of each (opened, nothing read before), and what the series keeps after
    matrix, row = open_series(path, all_rows=True), open_series(path, row=3)
    peak, kept = traced(lambda: matrix.read(40))
    assert peak < 2 * snapshot < size / 8 and kept < snapshot / 8
    peak, kept = traced(lambda: row.read(40))
    assert peak < snapshot / 4 and kept < snapshot / 8  # the row alone: 2 KiB of numbers
    peak, kept = traced(lambda: [float(matrix.read(i).sum()) for i in range(T)])  # each let go
    assert peak < 2 * snapshot and kept < snapshot / 8
    # the measure sees a whole read: a compressed file is read whole, widened, and kept
    packed = open_series(stacked(tmp_path, weights, "packed.npz", compressed=True), all_rows=True)
    peak, kept = traced(lambda: packed.read(40))
    assert peak > weights.size * 8 and kept > weights.size * 8


def test_a_nan_is_named_by_its_snapshot_when_that_snapshot_is_read(tmp_path, weights):
    W = weights.copy()
    W[9, 2, 30] = np.nan
    series = open_series(stacked(tmp_path, W), all_rows=True)
    np.testing.assert_array_equal(series.read(8), W[8].astype(np.float64))
    with pytest.raises(InputError) as err:
        series.read(9)
    message = err.value.message
    assert "series.npz [W] snapshot 9 (step 907)" in message and "(2, 30) is nan" in message, message
    row = open_series(stacked(tmp_path, W), row=2)
    with pytest.raises(InputError, match=r"snapshot 9 \(step 907\) row 2: weight 30 is nan"):
        row.read(9)
    np.testing.assert_array_equal(open_series(stacked(tmp_path, W), row=1).read(9), W[9, 1])


def test_a_file_cut_short_after_it_was_opened_is_named(tmp_path, weights):
    path = stacked(tmp_path, weights)
    series = open_series(path, all_rows=True)
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)
    np.testing.assert_array_equal(series.read(0), weights[0].astype(np.float64))
    with pytest.raises(InputError, match="the file ends before it"):
        series.read(T - 1)


def test_big_endian_and_fortran_order_are_read_whole_the_same(tmp_path, weights):
    for W in (weights.astype(">f4"), np.asfortranarray(weights)):
        series = open_series(stacked(tmp_path, W), row=4)
        for i in (0, T - 1):
            np.testing.assert_array_equal(series.read(i), W[i, 4].astype(np.float64))


@pytest.mark.parametrize("pick", ["all_rows", "row"])
def test_a_float32_folder_is_handed_on_as_stored_and_compared_as_its_float64_copy(tmp_path, weights, pick):
    """A folder of float32 .npy snapshots is read as float32, the numbers written (no
    widening pass over 4 GB); the comparison sums them in float64, so compare.csv's table
    is the one of the same snapshots saved as float64, to 1e-12."""
    from sparsity_gui.core.checkpoints.compare import compare

    for kind, dtype in (("f32", np.float32), ("f64", np.float64)):
        (tmp_path / kind).mkdir()
        for i in range(6):
            np.save(tmp_path / kind / f"step_{STEPS[i]:06d}.npy", weights[i].astype(dtype))
    how = {"all_rows": True} if pick == "all_rows" else {"row": 3}
    f32, f64 = open_series(tmp_path / "f32", **how), open_series(tmp_path / "f64", **how)
    for i in range(6):
        got = f32.read(i)
        # the matrix read in place keeps float32; a row is read alone by the weights reader
        assert got.dtype == (np.float32 if pick == "all_rows" else np.float64)
        np.testing.assert_array_equal(got, f64.read(i))
    settings = dict(l1=1e-3, lr=1e-3, optimizer="sgd")
    a, b = compare(f32, **settings), compare(f64, **settings)
    np.testing.assert_allclose(a.rows, b.rows, rtol=1e-12, atol=1e-15, equal_nan=True)
