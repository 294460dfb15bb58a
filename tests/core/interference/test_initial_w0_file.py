"""The interference model's W(0) from a file (core/interference/initial.py): a whole n x m
matrix, exact, shape-checked before its data are read."""

import numpy as np
import pytest
from safetensors.numpy import save_file

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.initial import load_w0_matrix
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun

W = np.random.default_rng(3).standard_normal((4, 9)) / 3


def test_a_matrix_from_safetensors_npz_and_csv_is_exact(tmp_path):
    save_file({"W": W.astype(np.float32), "b": np.zeros(4)}, str(tmp_path / "m.safetensors"))
    np.savez(tmp_path / "m.npz", W=W)
    (tmp_path / "m.csv").write_text("\n".join(",".join(repr(float(x)) for x in row) for row in W))
    got, info = load_w0_matrix(tmp_path / "m.safetensors", "W", n=4, m=9)
    np.testing.assert_array_equal(got, W.astype(np.float32).astype(np.float64))
    assert (info.name, info.shape, info.dtype) == ("W", (4, 9), "F32")
    np.testing.assert_array_equal(load_w0_matrix(tmp_path / "m.npz")[0], W)
    np.testing.assert_array_equal(load_w0_matrix(tmp_path / "m.csv")[0], W)
    # the run starts from it as given
    run = InterferenceRun(InterferenceParams(n=4, m=9), got)
    np.testing.assert_array_equal(run.w0, got)
    assert run.w0_source == {"source": "given"}


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"tensor": "b"}, "W(0) is a matrix n x m (features x neurons), not 1-D, shape (4,)"),
        ({"tensor": "W", "n": 5}, "W(0) is 4 x 9, the run needs n x m = 5 x m"),
        ({"tensor": "W", "n": 9, "m": 4}, "the run needs n x m = 9 x 4 (its transpose would fit)"),
        ({"tensor": None}, "holds 2 tensors ('W', 'b'); name one"),
    ],
)
def test_shapes_are_checked_with_a_reason(tmp_path, kw, match):
    save_file({"W": W, "b": np.zeros(4)}, str(tmp_path / "m.safetensors"))
    tensor = kw.pop("tensor")
    with pytest.raises(InputError) as info:
        load_w0_matrix(tmp_path / "m.safetensors", tensor, **kw)
    assert info.value.field == "w0" and match in str(info.value) and str(tmp_path) in str(info.value)
