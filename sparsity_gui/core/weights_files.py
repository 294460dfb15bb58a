"""Weights from files, for both models: the format told by the content (the extension only
names what was expected), the arrays a file holds, and one of them (or one row of it) read
as finite float64.

Formats: .npy, .npz, .safetensors (read with the safetensors package's numpy API; bf16 is
widened here, numpy has no such type), PyTorch checkpoints (core/torch_files.py: torch.load with
weights_only=True, only when torch is installed: it is not a dependency) and text/CSV.
Anything else, and damaged files, raise InputError with the file and the reason. Qt-free.
"""

from __future__ import annotations

import math
import os
import stat
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sparsity_gui.core.checks import check_fits, parse_json_text, regular_file
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.torch_files import torch_read, torch_tensors

FORMAT_NAMES = {
    "npy": ".npy",
    "npz": ".npz",
    "safetensors": ".safetensors",
    "torch": "PyTorch checkpoint",
    "text": "text/CSV",
}
EXTENSIONS = {
    ".npy": "npy",
    ".npz": "npz",
    ".safetensors": "safetensors",
    ".pt": "torch",
    ".pth": "torch",
    ".ckpt": "torch",
    ".csv": "text",
    ".txt": "text",
    ".tsv": "text",
}
FILE_FILTER = (
    "Weights (*.npy *.npz *.safetensors *.pt *.pth *.ckpt *.csv *.txt);;"
    "NumPy (*.npy *.npz);;safetensors (*.safetensors);;PyTorch (*.pt *.pth *.ckpt);;"
    "Text (*.csv *.txt);;All files (*)"
)
SAFETENSORS_HEADER_MAX = 100_000_000  # the safetensors package refuses larger headers too
# safetensors dtypes: bytes per value, and how numpy reads them (None: widened by hand)
SAFETENSORS_DTYPES: dict[str, tuple[int, str | None]] = {
    "F64": (8, "<f8"),
    "F32": (4, "<f4"),
    "F16": (2, "<f2"),
    "BF16": (2, None),
    "I64": (8, "<i8"),
    "I32": (4, "<i4"),
    "I16": (2, "<i2"),
    "I8": (1, "i1"),
    "U64": (8, "<u8"),
    "U32": (4, "<u4"),
    "U16": (2, "<u2"),
    "U8": (1, "u1"),
    "BOOL": (1, "?"),
}
_TORCH_LEGACY_MAGIC = b"\x80\x02\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little")
# first bytes of files people might pick by mistake, and what they are
_FOREIGN = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file (e.g. Keras .h5), which is not supported"),
    (b"GGUF", "a GGUF model (llama.cpp), which is not supported"),
    (b"\x1f\x8b", "gzip-compressed (unpack it first)"),
    (b"BZh", "bzip2-compressed (unpack it first)"),
    (b"\xfd7zXZ\x00", "xz-compressed (unpack it first)"),
    (b"\x7fELF", "a program, not data"),
)
SUPPORTED = "a .npy, .npz, .safetensors, PyTorch or text/CSV file"
# 10^8 weights (the most either model takes) of 40 characters each; .npy holds more
MAX_TEXT_BYTES = 4 * 10**9


@dataclass(frozen=True)
class ArrayInfo:
    """One array in a file: its name (None for a file's only, unnamed array), shape and
    dtype as the file names it."""

    name: str | None
    shape: tuple[int, ...]
    dtype: str

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def describe(self) -> str:
        shape = "×".join(str(s) for s in self.shape) if self.shape else "scalar"
        return f"{self.name if self.name is not None else '(the array)'}: {shape} {self.dtype}"


# --- which format ---------------------------------------------------------------------------
def _open_checked(path: Path, field: str) -> bytes:
    """The first 64 KiB of the file; a missing file, a folder, a FIFO, a socket or a device
    (checks.regular_file: opening those would block) or no permission named."""
    regular_file(path, field)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped since the check
                raise InputError(field, f"{path}: is not a regular file")
            return f.read(65536)
    except PermissionError:
        raise InputError(field, f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(field, f"{path}: cannot read ({exc.strerror or exc})") from None


def _zip_kind(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        return None
    if any(n.endswith("/data.pkl") or n == "data.pkl" for n in names):
        return "torch"
    if not names or all(n.endswith(".npy") for n in names):
        return "npz"
    return "zip"


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a character cut at the end of the sample is fine
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def _content_kind(path: Path, head: bytes) -> str:
    """'npy', 'npz', 'safetensors', 'torch', 'text', 'pickle', 'zip', a description of a
    foreign file ("foreign:..."), or 'unknown'."""
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return _zip_kind(path) or "badzip"
    if head.startswith(_TORCH_LEGACY_MAGIC):
        return "torch"
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return "pickle"
    if len(head) >= 9 and head[8:9] == b"{":
        return "safetensors"
    for magic, what in _FOREIGN:
        if head.startswith(magic):
            return "foreign:" + what
    if _looks_like_text(head):
        return "text"
    return "unknown"


def detect_format(path: str | Path, field: str = "w0") -> str:
    """The file's format by its content: 'npy', 'npz', 'safetensors', 'torch' or 'text'.
    Anything else raises InputError saying what the file is, or why it cannot be read."""
    path = Path(path)
    head = _open_checked(path, field)
    if not head:
        raise InputError(field, f"{path}: the file is empty (no weights in the file)")
    kind = _content_kind(path, head)
    expected = EXTENSIONS.get(path.suffix.lower())
    if kind in FORMAT_NAMES:
        return kind
    what = kind.partition(":")[2] if kind.startswith("foreign:") else ""
    if what and expected is not None and expected != "text":
        raise InputError(field, f"{path}: not a valid {FORMAT_NAMES[expected]} file (it is {what})")
    if what:
        raise InputError(field, f"{path}: {what}, not weights; expected {SUPPORTED}")
    if kind == "pickle":
        raise InputError(
            field,
            f"{path}: a Python pickle that is not a PyTorch checkpoint; pickles are not "
            f"read (loading one can run any code). Save the weights as .safetensors or .npy",
        )
    if kind == "zip":
        raise InputError(field, f"{path}: a zip archive that is neither a .npz nor a PyTorch checkpoint")
    if kind == "badzip":  # .npz and PyTorch files are zip archives
        raise InputError(
            field,
            f"{path}: not a valid {FORMAT_NAMES.get(expected, '.npz') if expected else '.npz'} file "
            "(a damaged or truncated zip archive)",
        )
    if expected == "safetensors":
        _safetensors_header(path, field)  # raises naming what is wrong with the header
    if expected is not None and expected != "text":
        raise InputError(
            field, f"{path}: not a valid {FORMAT_NAMES[expected]} file (its content is not in that format)"
        )
    raise InputError(field, f"{path}: not a text file and not a .npy/.npz/.safetensors/PyTorch file")


# --- .npy and .npz ----------------------------------------------------------------------------
_NUMPY_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile, struct.error)


def _npy_info(f, name: str | None) -> ArrayInfo:
    fmt = np.lib.format
    version = fmt.read_magic(f)
    if version == (1, 0):
        shape, _fortran, dtype = fmt.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, _fortran, dtype = fmt.read_array_header_2_0(f)
    else:  # 3.0 differs from 2.0 only in allowing UTF-8 field names
        raise ValueError(f".npy format version {version[0]}.{version[1]} is not read")
    return ArrayInfo(name, tuple(int(s) for s in shape), str(dtype))


def _npy_arrays(path: Path, field: str) -> list[ArrayInfo]:
    try:
        with open(path, "rb") as f:
            return [_npy_info(f, None)]
    except _NUMPY_ERRORS as exc:
        raise InputError(field, f"{path}: not a valid .npy file ({exc})") from None


def _npz_arrays(path: Path, field: str) -> list[ArrayInfo]:
    try:
        with zipfile.ZipFile(path) as z:
            out = []
            for member in z.namelist():
                with z.open(member) as f:
                    out.append(_npy_info(f, member.removesuffix(".npy")))
            return out
    except _NUMPY_ERRORS as exc:
        raise InputError(field, f"{path}: not a valid .npz file ({exc})") from None


def _npy_read(path: Path, row: int | None, field: str) -> np.ndarray:
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
        return np.array(arr if row is None else arr[row])
    except _NUMPY_ERRORS as exc:
        raise InputError(field, f"{path}: not a valid .npy file ({exc})") from None


def _npz_read(path: Path, name: str, field: str) -> np.ndarray:
    try:
        with np.load(path, allow_pickle=False) as data:
            return np.asarray(data[name])
    except _NUMPY_ERRORS as exc:
        raise InputError(field, f"{path}: cannot read array {name!r} ({exc})") from None


# --- text ------------------------------------------------------------------------------------
def read_text(path: Path, field: str = "w0") -> np.ndarray:
    """Numbers in text: one per line, or rows separated by commas, semicolons, tabs or
    spaces; '#' starts a comment; one header line is allowed."""
    size = regular_file(path, field).st_size
    if size > MAX_TEXT_BYTES:
        raise InputError(field, f"{path}: {size} bytes is too large for weights as text (at most 4e9)")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is not a header
    except UnicodeDecodeError:
        raise InputError(field, f"{path}: not a text file and not a .npy/.npz array") from None
    except OSError as exc:
        raise InputError(field, f"{path}: cannot read ({exc.strerror or exc})") from None
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
            raise InputError(field, f"{path}: line {lineno} is not a number: {raw.strip()[:40]!r}") from None
        rows.append(row)
    if not rows:
        raise InputError(field, f"{path}: no weights in the file")
    if len({len(r) for r in rows}) != 1:
        raise InputError(field, f"{path}: rows have different numbers of columns")
    return np.array(rows, dtype=np.float64)


# --- .safetensors ----------------------------------------------------------------------------
def _safetensors_header(path: Path, field: str) -> tuple[list[ArrayInfo], dict[str, tuple[int, int]], int]:
    """The tensors a .safetensors header lists, their byte ranges and where the data starts,
    after checking the header against the format and the file's size (the package's own
    messages say little: "invalid header length")."""

    def bad(reason: str) -> InputError:
        return InputError(field, f"{path}: not a valid .safetensors file ({reason})")

    raw, size = _safetensors_header_bytes(path, field, bad)
    header = _safetensors_header_json(raw, field, bad)
    data_size = size - 8 - len(raw)
    infos: list[ArrayInfo] = []
    ranges: dict[str, tuple[int, int]] = {}
    for name, entry in header.items():
        if name != "__metadata__":
            info = _safetensors_entry(name, entry, data_size, bad)
            infos.append(info)
            ranges[name] = (entry["data_offsets"][0], entry["data_offsets"][1])
    return infos, ranges, 8 + len(raw)


def _safetensors_header_bytes(path: Path, field: str, bad: Callable[[str], InputError]) -> tuple[bytes, int]:
    """(the header's bytes, the file's size), its length checked against the file's."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            first = f.read(8)
            if len(first) < 8:
                raise bad(f"{size} bytes, too short for the 8-byte header length: truncated?")
            (n,) = struct.unpack("<Q", first)
            if n > SAFETENSORS_HEADER_MAX:
                raise bad(f"the header length {n} is not plausible: not a safetensors file, or damaged")
            if 8 + n > size:
                raise bad(f"the header needs {n} bytes, the file holds only {size - 8} more: truncated")
            return f.read(n), size
    except OSError as exc:
        raise InputError(field, f"{path}: cannot read ({exc.strerror or exc})") from None


def _safetensors_header_json(raw: bytes, field: str, bad: Callable[[str], InputError]) -> dict:
    """The header's JSON object, bounded in depth."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("the header is not JSON text: damaged") from None
    try:
        # a tensor entry nests 3 deep (metadata 2): deeper is a crafted header
        header = parse_json_text(text, "", field, "", max_depth=8)
    except InputError as exc:
        if "nested" in exc.message:
            raise bad("its header nests lists or objects more than 8 deep: crafted or damaged") from None
        raise bad("the header is not JSON text: damaged") from None
    if not isinstance(header, dict):
        raise bad("the header is not a JSON object")
    return header


def _safetensors_entry(name: str, entry: Any, data_size: int, bad: Callable[[str], InputError]) -> ArrayInfo:
    """One tensor's entry checked: its shape, its byte range against its dtype and the data
    (a dtype this reader does not know is listed, and refused when read)."""
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= entry.keys():
        raise bad(f"tensor {name!r}: its entry needs dtype, shape and data_offsets")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
        raise bad(f"tensor {name!r}: shape {shape!r} is not a list of sizes")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(type(o) is int and o >= 0 for o in offsets)
        or offsets[0] > offsets[1]
    ):
        raise bad(f"tensor {name!r}: data_offsets {offsets!r} are not [begin, end]")
    if dtype not in SAFETENSORS_DTYPES:
        if isinstance(dtype, str):
            return ArrayInfo(name, tuple(shape), dtype)
        raise bad(f"tensor {name!r}: dtype {dtype!r} is not a type name")
    width = SAFETENSORS_DTYPES[dtype][0]
    if offsets[1] - offsets[0] != math.prod(shape) * width:
        raise bad(
            f"tensor {name!r}: {offsets[1] - offsets[0]} bytes for a {dtype} tensor of "
            f"shape {tuple(shape)} (needs {math.prod(shape) * width})"
        )
    if offsets[1] > data_size:
        raise bad(
            f"tensor {name!r} ends at byte {offsets[1]} of the data, the file holds {data_size}: truncated"
        )
    return ArrayInfo(name, tuple(shape), dtype)


def _widen_bf16(raw: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16) as float32: bf16 is the top half of a float32."""
    return (raw.astype("<u4") << 16).view("<f4")


def _safetensors_read(path: Path, info: ArrayInfo, row: int | None, field: str) -> np.ndarray:
    from safetensors import SafetensorError, safe_open

    if info.dtype not in SAFETENSORS_DTYPES:
        raise InputError(
            field,
            f"{path}: tensor {info.name!r} has dtype {info.dtype}, which is not read (use F32, F16 or BF16)",
        )
    try:
        with safe_open(str(path), framework="np") as f:
            if info.dtype == "BF16":  # numpy has no bfloat16: read the bits, widen them here
                _, ranges, start = _safetensors_header(path, field)
                assert info.name is not None  # a safetensors tensor always has its name
                begin, _end = ranges[info.name]
                count = info.size
                if row is not None:
                    count = math.prod(info.shape[1:])
                    begin += row * count * 2
                raw = np.fromfile(path, dtype="<u2", count=count, offset=start + begin)
                shape = info.shape if row is None else info.shape[1:]
                return _widen_bf16(raw).reshape(shape)
            if row is None:
                return np.asarray(f.get_tensor(info.name))
            return np.asarray(f.get_slice(info.name)[row])
    except SafetensorError as exc:
        raise InputError(field, f"{path}: not a valid .safetensors file ({exc})") from None
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(field, f"{path}: cannot read tensor {info.name!r} ({exc})") from None


def _torch_arrays(path: Path, field: str) -> list[ArrayInfo]:
    return [ArrayInfo(*listed) for listed in torch_tensors(path, field)]


# --- the public interface ----------------------------------------------------------------------
def list_arrays(path: str | Path, field: str = "w0") -> tuple[str, list[ArrayInfo]]:
    """(format, the arrays the file holds). Reads only headers, except for text and
    PyTorch files (loaded whole)."""
    path = Path(path)
    kind = detect_format(path, field)
    readers: dict[str, Callable[[Path, str], list[ArrayInfo]]] = {
        "npy": _npy_arrays,
        "npz": _npz_arrays,
        # by name: the header's order is the layout's (by alignment), not the model's
        "safetensors": lambda p, f: sorted(_safetensors_header(p, f)[0], key=lambda i: str(i.name)),
        "torch": _torch_arrays,
    }
    if kind == "text":
        return kind, [ArrayInfo(None, read_text(path, field).shape, "text")]
    return kind, readers[kind](path, field)


def _pick(path: Path, kind: str, infos: list[ArrayInfo], name: str | None, field: str) -> ArrayInfo:
    noun = "array" if kind == "npz" else "tensor"
    if not infos:
        raise InputError(field, f"{path}: the file holds no {noun}s (no weights in the file)")
    if name is None:
        if len(infos) == 1 or kind == "npz":  # a .npz: its first array, as np.load lists them
            return infos[0]
        listed = ", ".join(repr(i.name) for i in infos[:8]) + (", ..." if len(infos) > 8 else "")
        raise InputError(
            field,
            f"{path}: holds {len(infos)} tensors ({listed}); name one "
            "(--w0-tensor NAME, or the dialog in the app)",
        )
    for info in infos:
        if info.name == name:
            return info
    if kind in ("npy", "text"):
        raise InputError(field, f"{path}: a {FORMAT_NAMES[kind]} file holds one unnamed array, not {name!r}")
    listed = ", ".join(str(i.name) for i in infos[:8]) + (", ..." if len(infos) > 8 else "")
    raise InputError(field, f"{path}: no {noun} named {name!r} (it holds {listed})")


def finite_float64(arr: np.ndarray, where: str, field: str = "w0") -> np.ndarray:
    """``arr`` as C-contiguous float64; data that are not numbers, NaN and inf refused."""
    if arr.dtype.kind not in "fiub":
        raise InputError(field, f"{where}: expected numbers, found data of type {arr.dtype}")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(out)
    if bad.any():
        first = np.unravel_index(int(np.flatnonzero(bad)[0]), out.shape)
        if out.size == max(out.shape, default=1):  # a vector, a single row or column
            at = f"weight {int(np.flatnonzero(bad)[0])}"
        else:
            at = f"the weight at {tuple(int(i) for i in first)}"
        raise InputError(field, f"{where}: {at} is {out[first]} (all weights must be finite)")
    return out


def check_row(shape: tuple[int, ...], row: int | None, where: str, field: str = "w0") -> None:
    """Refuse a ``row`` (None: no row asked) of anything but a 2-D array, or out of its
    range: the one rule for a file's array (--w0-row) and the Python API's (w0_row)."""
    if row is None:
        return
    if len(shape) != 2:
        raise InputError(field, f"{where}: a row is chosen only in a 2-D array, not shape {tuple(shape)}")
    if not 0 <= row < shape[0]:
        raise InputError(field, f"{where}: row {row} is out of range (0 to {shape[0] - 1})")


def read_array(
    path: str | Path,
    name: str | None = None,
    row: int | None = None,
    *,
    field: str = "w0",
    max_values: int | None = None,
    check: Callable[[ArrayInfo, str], None] | None = None,
) -> tuple[np.ndarray, ArrayInfo]:
    """One array of the file (``name``; None for a file's only array, or a .npz's first),
    or only its row ``row`` (of a 2-D array; read without reading the rest where the
    format allows), as finite float64, with what it was. At most ``max_values`` values;
    ``check(info, where)`` may refuse the array (raising InputError) before it is read."""
    path = Path(path)
    text = None
    if detect_format(path, field) == "text":  # parsed once, not once to list and once to read
        text = read_text(path, field)
        kind, infos = "text", [ArrayInfo(None, text.shape, "text")]
    else:
        kind, infos = list_arrays(path, field)
    info = _pick(path, kind, infos, name, field)
    where = str(path) + (f" [{info.name}]" if info.name is not None and kind != "npy" else "")
    check_row(info.shape, row, where, field)
    count = info.size if row is None else math.prod(info.shape[1:])
    if count == 0:
        raise InputError(field, f"{where}: no weights in the file")
    if max_values is not None and count > max_values:
        raise InputError(field, f"{where}: {count} weights, at most {max_values} are supported")
    if check is not None:
        check(info, where)
    # as float64, before anything is allocated: a 400-byte .npz can claim 149 GiB in its header
    check_fits(field, 8 * count, where)
    if kind == "npy":
        arr = _npy_read(path, row, field)
    elif kind == "npz":
        assert info.name is not None  # .npz and PyTorch arrays are named (ArrayInfo.name)
        arr = _npz_read(path, info.name, field)
        arr = arr if row is None else arr[row]
    elif kind == "safetensors":
        arr = _safetensors_read(path, info, row, field)
    elif kind == "torch":
        assert info.name is not None
        arr = torch_read(path, info.name, row, field)
    else:
        assert text is not None  # the text format, parsed above
        arr = text if row is None else text[row]
    return finite_float64(arr, where + (f" row {row}" if row is not None else ""), field), info
