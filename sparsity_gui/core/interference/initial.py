"""W(0) of the interference model from a file: a whole n x m matrix (features by neurons),
for instance a layer's weights from a checkpoint (core/weights_files.py reads the formats)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import M_MAX, N_MAX, check_memory
from sparsity_gui.core.weights_files import ArrayInfo, finite_float64, read_array


class W0File(NamedTuple):
    """W(0) from a file as a window keeps it: the matrix, how the window names it, and
    where it came from as run.json says (`file_source`)."""

    matrix: np.ndarray
    label: str
    source: dict


def file_source(path: str | Path, info: ArrayInfo) -> dict:
    """run.json's "w0" for a W(0) read from a file (every front end writes this one)."""
    return {"source": "file", "path": str(path), "tensor": info.name, "dtype": info.dtype}


def load_w0_matrix(
    path: str | Path, tensor: str | None = None, n: int | None = None, m: int | None = None
) -> tuple[np.ndarray, ArrayInfo]:
    """W(0) (finite float64, n x m) and the array it came from. ``n`` and ``m``, when given,
    must be its shape; either way it must fit the model's limits and the memory. The shape
    is checked before the data are read."""
    return read_array(path, tensor, check=lambda info, where: check_matrix_shape(info.shape, where, n, m))


def w0_matrix_of_array(array: np.ndarray, n: int | None = None, m: int | None = None) -> np.ndarray:
    """A caller's array (the Python API's ``w0=``) as W(0), with load_w0_matrix's checks:
    finite float64, n x m, within the limits and the memory."""
    where = "the array"
    check_matrix_shape(np.shape(array), where, n, m)
    return finite_float64(np.asarray(array), where)


def check_matrix_shape(shape: tuple[int, ...], where: str, n: int | None, m: int | None) -> None:
    """Refuse (InputError naming w0) a W(0) that is not a matrix n x m within the model's
    limits and the memory; ``where`` names it in the message (a file and its tensor)."""
    if len(shape) != 2:
        dims = f"{len(shape)}-D, shape {shape}" if shape else "a single number"
        raise InputError("w0", f"{where}: W(0) is a matrix n x m (features x neurons), not {dims}")
    rows, cols = shape
    if (n is not None and rows != n) or (m is not None and cols != m):
        want = f"{n if n is not None else 'n'} x {m if m is not None else 'm'}"
        hint = " (its transpose would fit)" if (cols, rows) == (n, m) else ""
        raise InputError("w0", f"{where}: W(0) is {rows} x {cols}, the run needs n x m = {want}{hint}")
    if not (1 <= rows <= N_MAX and 1 <= cols <= M_MAX):
        raise InputError("w0", f"{where}: W(0) is {rows} x {cols}; n must be 1 to {N_MAX} and m 1 to {M_MAX}")
    try:
        check_memory(rows, cols)
    except InputError as exc:
        raise InputError("w0", f"{where}: {exc.message}") from None


def w0_label(path: str | Path, tensor: str | None) -> str:
    """How a window names a file's W(0): the file's name and its tensor or array."""
    return Path(path).name + (f" [{tensor}]" if tensor is not None else "")
