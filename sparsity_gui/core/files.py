"""Writing result files, for both models: atomic writes, CSV and JSON text that round-trip
every double, and `ResultDir` (a whole output folder that appears at once, or not at all)."""

from __future__ import annotations

import errno
import io
import json
import math
import os
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from sparsity_gui.core.errors import InputError

# Temporary files and folders are made with os.open(..., 0o666) and os.mkdir(..., 0o777), as
# a plain open() or mkdir() would: the kernel applies the umask (or a default ACL), so every
# result gets the user's usual mode. tempfile.mkstemp/mkdtemp would give 0600/0700. The
# umask is never read: os.umask can only be read by setting it, process-wide, which races
# with any other thread creating a file at that moment.
_FILE_MODE = 0o666
_DIR_MODE = 0o777
_NAME_KEEP = 200  # characters of the target's name kept in a temporary name (limit 255)


def _temp_name(parent: Path, name: str, suffix: str) -> Path:
    return parent / f".{name[:_NAME_KEEP]}.{secrets.token_hex(6)}{suffix}"


def _create_temp_file(path: Path) -> tuple[int, Path]:
    """A new, empty file beside `path`, opened for writing: (descriptor, its path)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = _temp_name(path.parent, path.name, ".tmp")
        try:
            return os.open(tmp, flags, _FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


def make_temp_dir(parent: Path, name: str) -> Path:
    """A new, empty folder `.<name>.<random>` in `parent`, with the mode mkdir gives."""
    for _ in range(100):
        tmp = _temp_name(parent, name, "")
        try:
            os.mkdir(tmp, _DIR_MODE)
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(parent))


def atomic_write_with(path: str | Path, write: Callable[[BinaryIO], None]) -> None:
    """Let `write` fill a temporary file beside `path`, fsync, then rename it over `path`:
    readers see the old file or the new one, never half of one. On any error the
    temporary file is removed and `path` is untouched. The new file gets the mode a plain
    open() would give (0666 less the umask)."""
    path = Path(path)
    fd, tmp = _create_temp_file(path)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    atomic_write_with(path, lambda f: f.write(data))


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_chunks(path: str | Path, chunks: Iterable[str]) -> None:
    """Atomically write text produced piece by piece (large CSVs never sit in memory whole)."""

    def write(f: BinaryIO) -> None:
        for chunk in chunks:
            f.write(chunk.encode("utf-8"))

    atomic_write_with(path, write)


def _fmt(x: float) -> str:
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))  # shortest repr that round-trips exactly


CHUNK_ROWS = 1 << 18  # rows per piece of a streamed CSV


def iter_csv(header: Iterable[str], rows: np.ndarray, int_cols: Iterable[int] = ()) -> Iterator[str]:
    """CSV text in pieces, every float written to round-trip exactly."""
    int_cols = set(int_cols)
    yield ",".join(header) + "\n"
    for start in range(0, rows.shape[0], CHUNK_ROWS):
        out = io.StringIO()
        for row in rows[start : start + CHUNK_ROWS]:
            out.write(",".join(str(int(v)) if j in int_cols else _fmt(v) for j, v in enumerate(row)))
            out.write("\n")
        yield out.getvalue()


def csv_text(header: Iterable[str], rows: np.ndarray, int_cols: Iterable[int] = ()) -> str:
    """CSV with every float written to round-trip exactly."""
    return "".join(iter_csv(header, rows, int_cols))


def json_text(obj: Any) -> str:
    def default(o: Any) -> Any:
        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.floating):
            return float(o)
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, Path):
            return str(o)
        raise TypeError(f"not JSON serialisable: {type(o).__name__}")

    return json.dumps(_finite_json(obj), indent=2, default=default, allow_nan=False) + "\n"


def _finite_json(obj: Any) -> Any:
    """JSON has no NaN or inf: write them as null / strings."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: _finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite_json(v) for v in obj]
    return obj


class ResultDir:
    """Write a set of result files into a temporary folder beside DIR, then move it into
    place: a crash or Ctrl+C never leaves half a result. The folders and files get the
    modes a plain mkdir() and open() give (the umask applies)."""

    def __init__(self, out: str | Path, force: bool):
        self.out = Path(out)
        if self.out.exists() and not self.out.is_dir():
            raise InputError("out", f"{self.out} exists and is not a folder")
        if self.out.is_dir() and any(self.out.iterdir()) and not force:
            raise InputError("out", f"{self.out} is not empty (use --force to replace it)")
        parent = self.out.resolve().parent
        if not parent.is_dir():
            raise InputError("out", f"{parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise InputError("out", f"cannot write in {parent} (permission denied)")
        self.tmp = make_temp_dir(parent, self.out.name)

    def path(self, name: str) -> Path:
        p = self.tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def write_text(self, name: str, text: str) -> None:
        self.path(name).write_text(text, encoding="utf-8")

    def commit(self) -> None:
        old = None
        if self.out.exists():
            old = self.out.with_name(f".{self.out.name[:_NAME_KEEP]}.old-{os.getpid()}")
            os.replace(self.out, old)
        os.replace(self.tmp, self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
