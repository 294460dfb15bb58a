"""Initial conditions: the normal draw (docs/theory.md §1), or W(0) loaded from a file
(any format of core/weights_files.py: a vector, or one row of a matrix)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.params import SimParams, check_memory
from sparsity_gui.core.weights_files import ArrayInfo, check_row, finite_float64, list_arrays, read_array

MAX_FILE_WEIGHTS = 10**8


def draw_normal(m: int, sigma: float, seed: int) -> np.ndarray:
    """W_k(0) i.i.d. normal, mean 0, standard deviation sigma/sqrt(m)."""
    check_memory(m)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(m)
    w *= sigma / math.sqrt(m)  # in place: one array of m, not two
    return w


def _as_vector(arr: np.ndarray, source: str, row: int | None = None) -> np.ndarray:
    check_row(arr.shape, row, source)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim == 2:
        if row is not None:
            arr = arr[row]
        elif 1 in arr.shape:
            arr = arr.reshape(-1)
        else:
            raise InputError(
                "w0",
                f"{source}: a {arr.shape[0]}x{arr.shape[1]} matrix is not a "
                "single row or column (choose a row: --w0-row R, or the row dialog in the app)",
            )
    if arr.ndim != 1:
        raise InputError("w0", f"{source}: expected a 1-D array, got {arr.ndim} dimensions")
    if arr.size == 0:
        raise InputError("w0", f"{source}: holds no weights")
    if arr.size > MAX_FILE_WEIGHTS:
        raise InputError("w0", f"{source}: {arr.size} weights, at most {MAX_FILE_WEIGHTS} are supported")
    return finite_float64(arr, source)


def npz_array_names(path: str | Path) -> list[str]:
    """The arrays in a .npz file (empty for any other file)."""
    kind, infos = list_arrays(path)
    return [str(i.name) for i in infos] if kind == "npz" else []


def w0_arrays(path: str | Path) -> tuple[str, list[ArrayInfo]]:
    """(format, the arrays in the file) without reading them (bar text and PyTorch files):
    what the app offers to choose from."""
    return list_arrays(path)


def needs_row(info: ArrayInfo) -> bool:
    """A matrix that is not a single row or column: W(0) is one of its rows."""
    return len(info.shape) == 2 and 1 not in info.shape


def load_array(path: str | Path, array: str | None = None) -> np.ndarray:
    """The array in a .npy, .npz (the named array, default the first), .safetensors or
    PyTorch file (the named tensor; needed when there are several) or text/CSV file, as
    finite float64."""
    return read_array(path, array)[0]


def vector_from(arr: np.ndarray, where: str, row: int | None = None) -> np.ndarray:
    """W(0) from raw data: a 1-D array, a single row or column, or the chosen row."""
    if arr.ndim == 2 and arr.shape[1] == 1 and row is None:
        arr = arr[:, 0]
    return _as_vector(arr, where, row)


def load_w0(path: str | Path, row: int | None = None, array: str | None = None) -> np.ndarray:
    """W(0) from a file: a 1-D array, a single row/column, or the chosen row of a matrix
    (of the named array or tensor). A row is read without the rest of the matrix where the
    format allows (.npy, .safetensors)."""
    arr, info = read_array(path, array, row, max_values=MAX_FILE_WEIGHTS)
    where = str(path) + (f" [{info.name}]" if array is not None else "")
    return vector_from(arr, where)


def initial_weights(params: SimParams) -> np.ndarray:
    """The signed W(0) that params describe."""
    if params.w0_path is not None:
        return load_w0(params.w0_path)
    return draw_normal(params.m, params.sigma, params.seed)
