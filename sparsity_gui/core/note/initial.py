"""Initial conditions: the normal draw (docs/theory.md §1), or W(0) loaded from a file."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.params import SimParams, check_memory

MAX_FILE_WEIGHTS = 10**8


def draw_normal(m: int, sigma: float, seed: int) -> np.ndarray:
    """W_k(0) i.i.d. normal, mean 0, standard deviation sigma/sqrt(m)."""
    check_memory(m)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(m)
    w *= sigma / math.sqrt(m)  # in place: one array of m, not two
    return w


def _as_vector(arr: np.ndarray, source: str, row: int | None = None) -> np.ndarray:
    if arr.dtype.kind not in "fiub":
        raise InputError("w0", f"{source}: expected numbers, found data of type {arr.dtype}")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim == 2:
        if row is not None:
            if not 0 <= row < arr.shape[0]:
                raise InputError("w0", f"{source}: row {row} is out of range (0 to {arr.shape[0] - 1})")
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
        raise InputError("w0", f"{source}: no weights in the file")
    if arr.size > MAX_FILE_WEIGHTS:
        raise InputError("w0", f"{source}: {arr.size} weights, at most {MAX_FILE_WEIGHTS} are supported")
    vec = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(vec)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError("w0", f"{source}: weight {k} is {vec[k]} (all weights must be finite)")
    return vec


def _read_text(path: Path) -> np.ndarray:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("w0", f"{path}: not a text file and not a .npy/.npz array") from None
    rows: list[list[float]] = []
    header_seen = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        cells = [c.strip() for c in line.replace(";", ",").replace("\t", ",").split(",")]
        if len(cells) == 1 and " " in cells[0]:
            cells = cells[0].split()
        try:
            row = [float(c) for c in cells]
        except ValueError:
            if not rows and not header_seen:
                header_seen = True  # one header line is allowed
                continue
            raise InputError("w0", f"{path}: line {lineno} is not a number: {raw.strip()[:40]!r}") from None
        rows.append(row)
    if not rows:
        raise InputError("w0", f"{path}: no weights in the file")
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise InputError("w0", f"{path}: rows have different numbers of columns")
    values = np.array(rows, dtype=np.float64)
    return values


def npz_array_names(path: str | Path) -> list[str]:
    """The arrays in a .npz file (empty for any other file)."""
    path = Path(path)
    if path.suffix.lower() != ".npz":
        return []
    try:
        with np.load(path, allow_pickle=False) as data:
            return list(data.files)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError("w0", f"{path}: not a valid .npz file ({exc})") from None


def load_array(path: str | Path, array: str | None = None) -> np.ndarray:
    """The raw array in a .npy, .npz (the named array, default the first) or text/CSV
    file, 1-D or 2-D."""
    path = Path(path)
    if not path.exists():
        raise InputError("w0", f"{path}: no such file")
    if path.is_dir():
        raise InputError("w0", f"{path}: is a folder, not a file")
    suffix = path.suffix.lower()
    try:
        if suffix in (".npy", ".npz"):
            try:
                data = np.load(path, allow_pickle=False)
            except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
                raise InputError("w0", f"{path}: not a valid {suffix} file ({exc})") from None
            if isinstance(data, np.lib.npyio.NpzFile):
                with data:
                    if not data.files:
                        raise InputError("w0", f"{path}: the .npz file holds no arrays")
                    name = data.files[0] if array is None else array
                    if name not in data.files:
                        raise InputError(
                            "w0", f"{path}: no array named {name!r} (it holds {', '.join(data.files)})"
                        )
                    try:
                        data = data[name]
                    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
                        raise InputError("w0", f"{path}: cannot read array {name!r} ({exc})") from None
            return np.asarray(data)
        return _read_text(path)
    except PermissionError:
        raise InputError("w0", f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError("w0", f"{path}: cannot read ({exc.strerror or exc})") from None


def vector_from(arr: np.ndarray, where: str, row: int | None = None) -> np.ndarray:
    """W(0) from raw data: a 1-D array, a single row or column, or the chosen row."""
    if arr.ndim == 2 and arr.shape[1] == 1 and row is None:
        arr = arr[:, 0]
    return _as_vector(arr, where, row)


def load_w0(path: str | Path, row: int | None = None, array: str | None = None) -> np.ndarray:
    """W(0) from a file: a 1-D array, a single row/column, or the chosen row of a matrix
    (of the named array of a .npz)."""
    where = str(path) + (f" [{array}]" if array else "")
    return vector_from(load_array(path, array), where, row)


def initial_weights(params: SimParams) -> np.ndarray:
    """The signed W(0) that params describe."""
    if params.w0_path is not None:
        return load_w0(params.w0_path)
    return draw_normal(params.m, params.sigma, params.seed)
