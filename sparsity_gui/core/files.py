"""Writing result files, for both models: atomic writes, CSV and JSON text that round-trip
every double, `ResultDir` (a whole output folder that appears at once, or not at all), and
the payloads a run's files are made of (text, bytes, text in pieces, a binary writer), which
every front end writes through `write_payload` or `ResultDir.write`."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from sparsity_gui.core.errors import InputError

try:
    import fcntl
except ImportError:  # not on Windows: a stale folder is then known by its dead PID alone
    fcntl = None  # type: ignore[assignment]

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


def _leftover_name(parent: Path, name: str) -> Path:
    """`.NAME.tmp-PID-RANDOM`: what this process writes `name` as before it is complete; the PID
    (and a flock while it is open) lets a later write recognise one a killed process left."""
    return parent / f".{name[:_NAME_KEEP]}.tmp-{os.getpid()}-{secrets.token_hex(6)}"


def _create_temp_file(path: Path) -> tuple[int, Path]:
    """A new, empty file beside `path`, opened for writing and locked while it is open:
    (descriptor, its path)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = _leftover_name(path.parent, path.name)
        try:
            fd = os.open(tmp, flags, _FILE_MODE)
        except FileExistsError:
            continue
        if fcntl is not None:
            with contextlib.suppress(OSError):  # no flock on this file system: the PID alone tells
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd, tmp
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


# What a write leaves beside its target while it works: an atomic write's file and a
# ResultDir's folder `.NAME.tmp-PID-RANDOM` (locked with flock while in use) and, during a
# --force commit, `.DIR.old-PID` (the earlier DIR). A process that is killed outright (SIGKILL,
# power loss) cannot remove them; the next write of the same NAME does, once their process is
# gone.
def _leftover_pattern(name: str) -> re.Pattern:
    return re.compile(rf"^\.{re.escape(name[:_NAME_KEEP])}\.(?:tmp-(\d+)-[0-9a-f]{{12}}|old-(\d+))$")


# Linux's highest process id (pid_max's limit); a name beyond it cannot be one of our writes
_PID_MAX = 1 << 22


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` may still be writing its entry. An id no process can have
    (0, or past pid_max: a name anyone who can write the folder could make) counts as alive,
    so the entry is left alone: os.kill would raise OverflowError on it."""
    if pid == os.getpid() or not 0 < pid <= _PID_MAX:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM): alive
        return True
    return True


def _lock_dir(path: Path, folder: bool = True) -> int | None:
    """An open descriptor of `path` (a folder, or a file) holding an exclusive flock on it, or
    None when it cannot be locked (taken by a live process, no flock here, or gone)."""
    if fcntl is None:
        return None
    kind = (
        getattr(os, "O_DIRECTORY", 0)
        if folder
        else getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    )
    try:
        fd = os.open(path, os.O_RDONLY | kind | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_leftovers(parent: Path, name: str) -> list[Path]:
    """Remove the temporary files and folders that an earlier write of `parent/name` left when
    its process died before cleaning up: its PID is gone and (where flock exists) nothing
    holds its lock. Those of live processes are left alone. Returns the paths removed."""
    pattern = _leftover_pattern(name)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        found = pattern.match(entry.name)
        if found is None or _process_alive(int(found.group(1) or found.group(2))):
            continue
        path = Path(entry.path)
        if entry.is_file(follow_symlinks=False) and found.group(1) and fcntl is not None:
            lock = _lock_dir(path, folder=False)
            if lock is None:
                continue  # locked: a live process (in another PID namespace, say) still writes it
            try:
                _unlink_quietly(path)
            finally:
                os.close(lock)
            removed.append(path)
            continue
        if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
            _unlink_quietly(path)
            removed.append(path)
            continue
        lock = _lock_dir(path) if found.group(1) and fcntl is not None else None
        if found.group(1) and fcntl is not None and lock is None:
            continue  # locked: a live process (in another PID namespace, say) still owns it
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            if lock is not None:
                os.close(lock)
        if not path.exists():
            removed.append(path)
    return removed


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


MAX_LINKS = 40  # symbolic links followed from DIR, as the kernel's own limit (ELOOP)


def follow_links(out: Path) -> Path:
    """`out` with its last part followed while it is a symbolic link (a dangling one too):
    the folder a symlinked DIR stands for. Its parents are left as given (the kernel follows
    links in them anyway)."""
    path = out
    for _ in range(MAX_LINKS):
        try:
            target = os.readlink(path)
        except OSError:  # not a link (or missing): this is the place
            return path
        path = path.parent / target
    raise InputError("out", f"{out}: too many levels of symbolic links")


def _naming(exc: OSError, path: Path, tmp: Path | None = None, always: bool = False) -> OSError:
    """`exc`, naming `path` (the file the user asked for) instead of the temporary name
    `tmp` or no name at all (a write() that fails on a full disk or a file size limit has
    none); with ``always``, whatever it named."""
    if not always and exc.filename is not None and exc.filename != str(tmp):
        return exc
    if exc.errno is None:
        exc.filename = str(path)
        return exc
    named = OSError(exc.errno, exc.strerror, str(path))  # the same subclass (FileNotFoundError...)
    named.__traceback__ = exc.__traceback__
    return named


def atomic_write_with(path: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """Let `write` fill a temporary file beside `path`, fsync, then rename it over `path`:
    readers see the old file or the new one, never half of one. On any error the
    temporary file is removed, `path` is untouched, and an OSError names `path`. The new
    file gets the mode a plain open() would give (0666 less the umask)."""
    path = Path(path)
    remove_leftovers(path.parent, path.name)
    try:
        fd, tmp = _create_temp_file(path)
    except OSError as exc:  # the folder: missing, not writable, read-only, ...
        raise _naming(exc, path, always=True) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _naming(exc, path, tmp) from None
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


CHUNK_ROWS = 1 << 16  # rows per piece of a streamed CSV (tests lower it to cross chunk edges)


def format_rows(columns: Sequence[np.ndarray], int_cols: Iterable[int] = ()) -> str:
    """Rows of CSV text from equally long columns, each float as Python's repr (the shortest
    text that reads back bit for bit; nan, inf, -inf as such) and each int column as an
    integer. One C-level %-format per piece instead of Python per float: about twice as
    fast as np.savetxt's '%.17g', and shorter."""
    int_cols = set(int_cols)
    n = int(columns[0].shape[0]) if columns else 0
    if n == 0:
        return ""
    ncol = len(columns)
    values: list[Any] = [None] * (n * ncol)
    for j, col in enumerate(columns):
        col = np.asarray(col)
        values[j::ncol] = (col.astype(np.int64) if j in int_cols else col.astype(np.float64)).tolist()
    row = ",".join("%d" if j in int_cols else "%r" for j in range(ncol)) + "\n"
    return (row * n) % tuple(values)


def iter_csv_columns(
    header: Iterable[str], columns: Sequence[np.ndarray], int_cols: Iterable[int] = ()
) -> Iterator[str]:
    """CSV text in pieces of CHUNK_ROWS rows from columns (never a whole table in memory),
    every float written to round-trip exactly."""
    int_cols = tuple(int_cols)
    yield ",".join(header) + "\n"
    n = int(columns[0].shape[0]) if columns else 0
    for start in range(0, n, CHUNK_ROWS):
        yield format_rows([c[start : start + CHUNK_ROWS] for c in columns], int_cols)


def iter_csv(header: Iterable[str], rows: np.ndarray, int_cols: Iterable[int] = ()) -> Iterator[str]:
    """CSV text in pieces, every float written to round-trip exactly."""
    rows = np.asarray(rows)
    return iter_csv_columns(header, [rows[:, j] for j in range(rows.shape[1])], int_cols)


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


def os_reason(exc: OSError) -> str:
    """The reason of an OSError in words ("No space left on device"), without the path."""
    return exc.strerror or str(exc)


def _not_a_folder(path: Path) -> Path | None:
    """The first part of `path` (itself or a parent) that exists and is not a folder."""
    for p in (path, *path.parents):
        try:
            if not stat.S_ISDIR(os.stat(p).st_mode):
                return p
        except OSError:
            continue
    return None


class ResultDir:
    """Write a set of result files into a temporary folder beside DIR, then move it into
    place: a crash or Ctrl+C never leaves half a result.

    DIR must be new or empty (or ``force``); its parent must exist (it is not created) and
    be writable. A DIR that is a symbolic link stands for the folder it points to (made if
    the link dangles): that folder is written and replaced, the link is kept. Temporary
    folders a killed process left for the same DIR are removed first. Every problem with
    the location is an InputError("out", ...) naming the path and the reason, raised before
    anything is computed; nothing is left behind. The folders and files get the modes a
    plain mkdir() and open() give (the umask applies)."""

    def __init__(self, out: str | Path, force: bool):
        self.given = Path(out)
        self.out = follow_links(self.given)
        self.force = force
        linked = "" if self.out == self.given else f" (the link {self.given} points there)"
        if self.out.name in ("", ".", ".."):
            # the rename at the end would replace the folder the path names from inside
            raise InputError(
                "out", f"{str(self.out)!r} is not a folder name{linked}: give a new folder, like results"
            )
        parent = self.out.parent
        self._lock: int | None = None
        try:
            self._check(parent, force)
            remove_leftovers(parent, self.out.name)
            self.tmp = self._make_locked_temp_dir(parent)
        except OSError as exc:
            raise InputError("out", f"cannot create {self.out}: {os_reason(exc)}") from None

    def _make_locked_temp_dir(self, parent: Path) -> Path:
        """`.DIR.tmp-PID-RANDOM`, locked for as long as this process lives (remove_leftovers)."""
        for _ in range(100):
            tmp = _leftover_name(parent, self.out.name)
            try:
                os.mkdir(tmp, _DIR_MODE)
            except FileExistsError:
                continue
            self._lock = _lock_dir(tmp)
            return tmp
        raise FileExistsError(errno.EEXIST, "no free temporary name", str(parent))

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _check(self, parent: Path, force: bool) -> None:
        if self.out.exists() and not self.out.is_dir():
            raise InputError("out", f"{self.out} exists and is not a folder")
        if self.out.is_dir() and any(self.out.iterdir()) and not force:
            raise InputError("out", f"{self.out} is not empty (use --force to replace it)")
        try:
            parent_is_dir = stat.S_ISDIR(os.stat(parent).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            parent_is_dir = False
        if not parent_is_dir:
            bad = _not_a_folder(parent)
            if bad is not None:
                raise InputError("out", f"{bad} is not a folder")
            raise InputError("out", f"{parent} does not exist (create it first: only DIR itself is made)")
        if not os.access(parent, os.W_OK):
            raise InputError("out", f"cannot write in {parent} (permission denied)")

    def path(self, name: str) -> Path:
        p = self.tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def write_bytes(self, name: str, data: bytes) -> None:
        path = self.path(name)
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise _naming(exc, path) from None

    def write_text(self, name: str, text: str) -> None:
        self.write_bytes(name, text.encode("utf-8"))

    def write_chunks(self, name: str, chunks: Iterable[str]) -> None:
        """Stream text produced piece by piece into the file (the folder as a whole is
        what appears atomically): a large CSV never sits in memory whole."""
        path = self.path(name)
        try:
            with open(path, "wb") as f:
                for chunk in chunks:
                    f.write(chunk.encode("utf-8"))
        except OSError as exc:
            raise _naming(exc, path) from None

    def write_with(self, name: str, write: Callable[[BinaryIO], None]) -> None:
        """Let `write` fill the file (a binary format streamed by its own writer)."""
        path = self.path(name)
        try:
            with open(path, "wb") as f:
                write(f)
        except OSError as exc:
            raise _naming(exc, path) from None

    def write(self, name: str, payload: Payload) -> None:
        """Any of a run's payloads (see `Payload`)."""
        if isinstance(payload, Streamed):
            self.write_chunks(name, payload.pieces())
        elif isinstance(payload, WrittenBy):
            self.write_with(name, payload.write)
        elif isinstance(payload, str):
            self.write_text(name, payload)
        else:
            self.write_bytes(name, payload)

    def shown(self, path: str | Path) -> str:
        """A path inside the temporary folder as where it was going to be (in DIR)."""
        try:
            return str(self.out / Path(path).relative_to(self.tmp))
        except ValueError:
            return str(path)

    def describe(self, exc: OSError) -> str:
        """An error while writing, for the user: the file it was going to be, the reason."""
        where = self.shown(exc.filename) if exc.filename is not None else str(self.out)
        return f"cannot write {where}: {os_reason(exc)}"

    def commit(self) -> None:
        """Move the temporary folder into place (replacing DIR, with ``force``). On an error
        DIR is as it was, the temporary folder is still there (abort() removes it), and the
        OSError names DIR. Without ``force`` only an empty DIR is replaced (rmdir refuses a
        folder that another program filled meanwhile, the rename a file made meanwhile)."""
        old = None
        emptied = False
        try:
            if self.force and self.out.exists():
                old = self.out.with_name(f".{self.out.name[:_NAME_KEEP]}.old-{os.getpid()}")
                os.replace(self.out, old)
            elif self.out.is_dir() and not self.out.is_symlink():
                os.rmdir(self.out)
                emptied = True
            try:
                os.replace(self.tmp, self.out)
            except OSError:
                if old is not None:
                    os.replace(old, self.out)  # put the earlier DIR back
                    old = None
                elif emptied:
                    os.mkdir(self.out, _DIR_MODE)
                raise
        except OSError as exc:
            raise _naming(exc, self.out, always=True) from None
        self._unlock()
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._unlock()


@dataclass(frozen=True)
class Streamed:
    """A file's text made in pieces as it is written: a CSV of 10^7 rows is never held whole."""

    pieces: Callable[[], Iterable[str]]


@dataclass(frozen=True)
class WrittenBy:
    """A binary file filled by a function of the open file (an .npz)."""

    write: Callable[[BinaryIO], None]


Payload = str | bytes | Streamed | WrittenBy  # what one of a run's files holds


def write_payload(path: str | Path, payload: Payload) -> None:
    """One of a run's files, atomically at ``path`` (a window's exports)."""
    if isinstance(payload, Streamed):
        atomic_write_chunks(path, payload.pieces())
    elif isinstance(payload, WrittenBy):
        atomic_write_with(path, payload.write)
    elif isinstance(payload, str):
        atomic_write_text(path, payload)
    else:
        atomic_write_bytes(path, payload)


def write_result_files(target: ResultDir | str | Path, files: dict[str, bytes]) -> list[Path]:
    """``files`` (name: bytes) into a ResultDir (its temporary folder: the caller commits)
    or a folder (created if need be; each file replaced atomically). Returns the paths
    written (for a ResultDir: where they will be after commit)."""
    written = []
    if isinstance(target, ResultDir):
        for name, data in files.items():
            target.write_bytes(name, data)
            written.append(target.out / name)
        return written
    folder = Path(target)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        atomic_write_bytes(folder / name, data)
        written.append(folder / name)
    return written
