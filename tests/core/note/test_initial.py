"""Initial conditions: the normal draw (docs/theory.md §1) and W(0) loaded from files."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.initial import draw_normal, initial_weights, load_w0
from sparsity_gui.core.note.params import SimParams


@pytest.mark.parametrize("m,sigma,seed", [(1, 0.9, 0), (10, 0.9, 1), (1000, 1.0, 42), (12345, 0.3, 2**40)])
def test_draw_normal_is_the_documented_draw(m, sigma, seed):
    expect = np.random.default_rng(seed).standard_normal(m) * sigma / math.sqrt(m)
    got = draw_normal(m, sigma, seed)
    assert got.shape == (m,) and got.dtype == np.float64
    np.testing.assert_allclose(got, expect, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(initial_weights(SimParams(m=m, sigma=sigma, seed=seed)), got)


def test_draw_normal_statistics():
    w = draw_normal(200_000, 0.9, 7)
    # ||W(0)||^2 ~ sigma^2 with standard deviation sigma^2 sqrt(2/m)
    assert float(np.dot(w, w)) == pytest.approx(0.81, abs=5 * 0.81 * math.sqrt(2 / 200_000))
    # the mean of m draws of standard deviation sigma/sqrt(m) has standard deviation sigma/m
    assert abs(w.mean()) < 5 * 0.9 / 200_000


W = np.array([0.25, -1.5, 0.0, 3.0e-7, -2.0, 1.0 / 3.0])


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_load_npy_1d_row_and_column(tmp_path):
    np.save(tmp_path / "a.npy", W)
    np.testing.assert_array_equal(load_w0(tmp_path / "a.npy"), W)
    np.save(tmp_path / "row.npy", W[None, :])
    np.testing.assert_array_equal(load_w0(tmp_path / "row.npy"), W)
    np.save(tmp_path / "col.npy", W[:, None])
    np.testing.assert_array_equal(load_w0(tmp_path / "col.npy"), W)
    np.save(tmp_path / "f32.npy", W.astype(np.float32))
    np.testing.assert_array_equal(load_w0(tmp_path / "f32.npy"), W.astype(np.float32).astype(np.float64))
    np.save(tmp_path / "int.npy", np.array([1, -2, 3]))
    np.testing.assert_array_equal(load_w0(tmp_path / "int.npy"), [1.0, -2.0, 3.0])
    # a chosen row of a matrix (a trained model's encoder)
    mat = np.arange(12.0).reshape(3, 4)
    np.save(tmp_path / "mat.npy", mat)
    np.testing.assert_array_equal(load_w0(tmp_path / "mat.npy", row=1), mat[1])


def test_load_npz_first_array(tmp_path):
    np.savez(tmp_path / "a.npz", first=W, second=np.ones(3))
    np.testing.assert_array_equal(load_w0(tmp_path / "a.npz"), W)


def test_load_csv_with_header_and_comments(tmp_path):
    text = "# weights of one encoding\nw\n" + "\n".join(f"{float(x)!r}  # comment" for x in W) + "\n\n"
    np.testing.assert_array_equal(load_w0(write(tmp_path, "w.csv", text)), W)


def test_load_one_number_per_line(tmp_path):
    text = "\n".join(repr(float(x)) for x in W) + "\n"
    np.testing.assert_array_equal(load_w0(write(tmp_path, "w.txt", text)), W)
    # windows line ends and no final newline
    np.testing.assert_array_equal(
        load_w0(write(tmp_path, "crlf.txt", text.replace("\n", "\r\n").rstrip())), W
    )


def test_load_single_csv_row(tmp_path):
    np.testing.assert_array_equal(load_w0(write(tmp_path, "row.csv", ",".join(repr(float(x)) for x in W))), W)
    np.testing.assert_array_equal(load_w0(write(tmp_path, "row.txt", " ".join(repr(float(x)) for x in W))), W)


def test_load_roundtrips_exactly_from_text(tmp_path):
    w = np.random.default_rng(0).standard_normal(500) / 7
    np.testing.assert_array_equal(load_w0(write(tmp_path, "w.txt", "\n".join(repr(float(x)) for x in w))), w)


def expect_input_error(path, match=None, **kw):
    with pytest.raises(InputError) as info:
        load_w0(path, **kw)
    assert info.value.field == "w0"
    assert str(path) in str(info.value) or str(path.name) in str(info.value)
    if match:
        assert match in str(info.value)
    return info.value


def test_errors_empty(tmp_path):
    expect_input_error(write(tmp_path, "empty.csv", ""), "no weights")
    expect_input_error(write(tmp_path, "comments.csv", "# nothing\n\n   \n"), "no weights")
    expect_input_error(write(tmp_path, "header_only.csv", "w\n"), "no weights")
    np.save(tmp_path / "empty.npy", np.zeros(0))
    expect_input_error(tmp_path / "empty.npy", "no weights")
    np.savez(tmp_path / "empty.npz")
    expect_input_error(tmp_path / "empty.npz")


def test_errors_binary_garbage(tmp_path):
    garbage = bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8))
    for name in ["garbage.bin", "garbage.csv", "garbage.npy", "garbage.npz"]:
        p = tmp_path / name
        p.write_bytes(garbage)
        expect_input_error(p)


def test_errors_matrix_not_a_row_or_column(tmp_path):
    np.save(tmp_path / "mat.npy", np.ones((3, 4)))
    expect_input_error(tmp_path / "mat.npy", "3x4")
    expect_input_error(write(tmp_path, "mat.csv", "1,2,3\n4,5,6\n"), "2x3")
    expect_input_error(tmp_path / "mat.npy", "out of range", row=3)
    np.save(tmp_path / "cube.npy", np.ones((2, 2, 2)))
    expect_input_error(tmp_path / "cube.npy", "3 dimensions")


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_errors_non_finite(tmp_path, bad):
    err = expect_input_error(write(tmp_path, "w.csv", f"0.1\n{bad}\n0.3\n"), "weight 1")
    assert "finite" in str(err)
    np.save(tmp_path / "w.npy", np.array([0.1, 0.2, float(bad)]))
    expect_input_error(tmp_path / "w.npy", "weight 2")


def test_errors_text_problems(tmp_path):
    expect_input_error(write(tmp_path, "bad.csv", "w\n0.1\nabc\n"), "line 3")
    expect_input_error(write(tmp_path, "ragged.csv", "1,2\n3\n"), "columns")
    np.save(tmp_path / "str.npy", np.array(["a", "b"]))
    expect_input_error(tmp_path / "str.npy", "numbers")


def test_errors_missing_file_and_folder(tmp_path):
    expect_input_error(tmp_path / "nope.csv", "no such file")
    sub = tmp_path / "dir.csv"
    sub.mkdir()
    expect_input_error(sub, "folder")


def test_initial_weights_from_a_file(tmp_path):
    np.save(tmp_path / "a.npy", W)
    p = SimParams(m=len(W), w0_path=str(tmp_path / "a.npy"))
    np.testing.assert_array_equal(initial_weights(p), W)
