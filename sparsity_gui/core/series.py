"""A series of weight snapshots from a training run (checkpoints), for both models: found in
a folder of files whose names carry the step (``step_000100.safetensors``, ``ckpt-100.pt``,
``100.npy``; or a scalar ``step`` stored in the file), in one file holding a stacked tensor
``[T, n, m]`` or ``[T, m]`` beside a vector of steps, or in SAELens' layout (``cfg.json``
beside ``sae_weights.safetensors``, ``W_enc`` of shape ``[d_in, d_sae]``: a latent is a
column), one folder per snapshot. A plain folder's steps and tensors: core/series_folder.py.

Every snapshot's shape and step are checked before any is read whole (headers only, where
the format has them); the snapshots are then read one at a time (``Series.read``), so a
long series never sits in memory at once. A stacked ``.npz`` stored uncompressed (``np.savez``)
is read a snapshot at a time too, from where its numbers lie in the file; a stacked file
stored otherwise (``np.savez_compressed``, ``.safetensors``, ``.pt``) is read whole, once.
Problems raise InputError naming the file. Qt-free."""

from __future__ import annotations

import math
import os
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sparsity_gui.core.checks import check_fits
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.sae_series import (
    SAE_CONFIG,
    SAE_TENSOR,
    SAE_WEIGHTS,
    checked_step,
    dictlearn_run,
    is_saelens_folder,
    read_config,
    saelens_model,
    saelens_run,
)
from sparsity_gui.core.series_folder import FIELD, STEP_NAMES, Entry, folder_entries
from sparsity_gui.core.weights_files import EXTENSIONS, finite_float64, list_arrays, read_array

# a whole .npy snapshot (or a stacked .npz's) is read in pieces of this many bytes, each
# widened to float64 while it is in the cache (benchmarks/bench_series.py: a third less
# time than numpy's memory map copied and then widened, and no mapped pages counted in the
# process's memory)
NPY_PIECE_BYTES = 1 << 18


@dataclass(frozen=True)
class Snapshot:
    """Where one snapshot lives: a file and its tensor (None: the file's only array), and
    in a stacked file the index along its first axis."""

    step: int
    path: Path
    tensor: str | None
    index: int | None = None


@dataclass(frozen=True)
class StoredTensor:
    """Where a stacked tensor's numbers lie in its file as they are stored (C order, native
    numbers, uncompressed): a snapshot, or a row of one, is read without the rest."""

    path: Path
    offset: int  # the first number's byte in the file
    shape: tuple[int, ...]  # [T, n, m] or [T, m]
    dtype: np.dtype

    def read(self, k: int, row: int | None, where: str) -> np.ndarray:
        """Snapshot ``k`` (or its row ``row``, of a [T, n, m] tensor), finite, in kept_dtype."""
        shape = self.shape[1:]
        first = k * math.prod(shape)
        if row is not None:
            first += row * shape[-1]
            shape = shape[-1:]
        out = np.empty(shape, dtype=kept_dtype(self.dtype))
        piece = np.empty(min(max(NPY_PIECE_BYTES // self.dtype.itemsize, 1), out.size), dtype=self.dtype)
        try:
            with open(self.path, "rb", buffering=0) as f:
                f.seek(self.offset + first * self.dtype.itemsize)
                with np.errstate(over="ignore", invalid="ignore"):  # a sum past float64's range: below
                    total = _read_pieces(f, out.reshape(-1), piece)
        except OSError as exc:
            raise InputError(FIELD, f"{self.path}: cannot read ({exc.strerror or exc})") from None
        if total is None:
            raise InputError(FIELD, f"{where}: the file ends before it (changed since it was opened?)")
        if not math.isfinite(total):  # a NaN or an inf somewhere (or a sum past float64's range)
            finite_float64(out, where, FIELD)
        return out


@dataclass
class Series:
    """The snapshots in order of step, what is taken of each (``pick``: "row" R, "column"
    K (a SAELens latent), or "matrix") and the shape of what ``read`` gives."""

    snapshots: tuple[Snapshot, ...]
    pick: str
    index: int | None
    shape: tuple[int, ...]
    layout: str  # "files", "stacked", "saelens" or "dictionary_learning"
    label: str  # the series' name: its folder's or file's
    file_ndim: int  # dimensions of a snapshot as its file holds it
    # a stacked file's tensor: where it lies (read a snapshot at a time), or read whole once
    # when first asked (a format whose numbers cannot be read in place)
    _stacked: StoredTensor | np.ndarray | None = None
    step_note: str = ""  # how the steps were found, when it is worth saying
    # the model the files describe: library, architecture, l1_coefficient (core/sae_series.py);
    # {} for weights alone (what trained them is unknown)
    model: dict = field(default_factory=dict)

    @property
    def steps(self) -> np.ndarray:
        return np.array([s.step for s in self.snapshots], dtype=np.int64)

    def read(self, i: int) -> np.ndarray:
        """Snapshot ``i``, finite (float32 as stored, else float64: kept_dtype): a vector (a
        row or a latent) or a matrix. A
        file's row is read alone where the format allows; a stacked file's snapshot (its
        row) alone where it is stored uncompressed, else the stacked file once, whole."""
        snap = self.snapshots[i]
        if snap.index is not None:
            if isinstance(self._stacked, StoredTensor):
                row = self.index if self.pick == "row" and self.file_ndim == 2 else None
                where = f"{snap.path} [{snap.tensor}] snapshot {snap.index} (step {snap.step:,})"
                arr = self._stacked.read(snap.index, row, where + (f" row {row}" if row is not None else ""))
                return arr if row is not None else _take(arr, self.pick, self.index)
            if self._stacked is None:
                self._stacked, _ = read_array(snap.path, snap.tensor, field=FIELD)
            return _take(self._stacked[snap.index], self.pick, self.index)
        if i + 1 < len(self.snapshots):
            _prefetch(self.snapshots[i + 1].path)  # the disk reads it while this one is widened
        row = self.index if self.pick == "row" and self.file_ndim == 2 else None
        if row is None and snap.path.suffix.lower() == ".npy":
            whole = _npy_whole(snap.path)
            if whole is not None:
                return _take(whole, self.pick, self.index)
        arr, _ = read_array(snap.path, snap.tensor, row, field=FIELD)
        return arr if row is not None else _take(arr, self.pick, self.index)


def _prefetch(path: Path) -> None:
    """Ask the system to read ``path`` ahead into its page cache (where it can)."""
    if not hasattr(os, "posix_fadvise"):
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # said when the file is read
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


def _plain_npy_header(f) -> tuple[tuple[int, ...], np.dtype] | None:
    """The shape and dtype of the .npy array starting at ``f``'s position, which is left at
    its first number; None unless it is plain (C order, native numbers, not empty)."""
    fmt = np.lib.format
    version = fmt.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = fmt.read_array_header_1_0(f)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = fmt.read_array_header_2_0(f)
    else:
        return None
    if fortran or dtype.kind not in "fiu" or not dtype.isnative or dtype.hasobject or math.prod(shape) == 0:
        return None
    return tuple(int(s) for s in shape), dtype


def _stored_member(path: Path, name: str) -> StoredTensor | None:
    """Where the .npz member ``name`` lies in ``path`` when it is stored uncompressed (as
    np.savez stores it) and plain (_plain_npy_header); None otherwise (it is read whole)."""
    try:
        with zipfile.ZipFile(path) as z:
            member = z.getinfo(f"{name}.npy")
        if member.compress_type != zipfile.ZIP_STORED or member.flag_bits & 0x1:  # 0x1: encrypted
            return None
        with open(path, "rb", buffering=0) as f:
            f.seek(member.header_offset)
            local = f.read(30)  # the member's local header: its name and extra field follow
            if len(local) != 30 or local[:4] != b"PK\x03\x04":
                return None
            name_bytes, extra_bytes = struct.unpack("<HH", local[26:30])
            start = member.header_offset + 30 + name_bytes + extra_bytes
            f.seek(start)
            header = _plain_npy_header(f)
            offset = f.tell()
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, struct.error):
        return None
    if header is None:
        return None
    shape, dtype = header
    if offset - start + math.prod(shape) * dtype.itemsize != member.file_size:
        return None
    return StoredTensor(path, offset, shape, dtype)


def _npy_whole(path: Path) -> np.ndarray | None:
    """A plain .npy file (C order, native numbers, the size its header says), finite, in
    kept_dtype, read in pieces; None for any other .npy (read_array reads it, or says why)."""
    try:
        with open(path, "rb", buffering=0) as f:
            header = _plain_npy_header(f)
            if header is None:
                return None
            shape, dtype = header
            count = math.prod(shape)
            if os.fstat(f.fileno()).st_size != f.tell() + count * dtype.itemsize:
                return None
            out = np.empty(shape, dtype=kept_dtype(dtype))
            piece = np.empty(max(NPY_PIECE_BYTES // dtype.itemsize, 1), dtype=dtype)
            with np.errstate(over="ignore", invalid="ignore"):  # a sum past float64's range: below
                total = _read_pieces(f, out.reshape(-1), piece)
    except (OSError, ValueError):
        return None
    if total is None:
        return None  # shorter than its header says: read_array says so
    if not math.isfinite(total):  # a NaN or an inf somewhere (or a sum past float64's range)
        finite_float64(out, str(path), FIELD)
    return out


def kept_dtype(stored: np.dtype) -> np.dtype:
    """The dtype a snapshot is handed on in: float32 as stored (the comparison sums it in
    float64; widening 4 GB of it to float64 first cost more than reading it), any other
    number widened to float64."""
    return np.dtype(np.float32) if stored == np.float32 else np.dtype(np.float64)


def _read_pieces(f, flat: np.ndarray, piece: np.ndarray) -> float | None:
    """``flat``'s numbers from ``f``, a piece at a time, each widened while in the cache
    (read in place when ``flat`` keeps the stored dtype); the sum of their squares, to
    check them finite (it overflows only past 1e19 in float32, and a caller then checks
    each number), or None when the file ends first."""
    total = 0.0
    start = 0
    same = flat.dtype == piece.dtype
    while start < flat.size:
        stop = min(start + piece.size, flat.size)
        part = flat[start:stop] if same else piece[: stop - start]
        view = part.data.cast("B")  # the array's own buffer, as bytes
        got = 0
        while got < view.nbytes:
            n = f.readinto(view[got:])
            if not n:
                return None
            got += n
        into = flat[start:stop]
        if not same:
            np.copyto(into, part)
        total += float(np.dot(into, into))  # BLAS at the cache's speed; a NaN or inf stays one
        start = stop
    return total


def _take(arr: np.ndarray, pick: str, index: int | None) -> np.ndarray:
    if pick == "matrix" or arr.ndim == 1:
        return np.ascontiguousarray(arr)
    if pick == "row":
        return np.ascontiguousarray(arr[index])
    return np.ascontiguousarray(arr[:, index])


def _checked_pick(shape: tuple[int, ...], where: str, row: int | None, column: int | None, all_rows: bool):
    """(pick, index, shape read) for a snapshot of ``shape``."""
    if sum(x is not None and x is not False for x in (row, column, all_rows or None)) > 1:
        raise InputError(FIELD, "choose one of --row, --latent and --all-rows")
    if len(shape) == 1:
        if all_rows or column is not None:
            raise InputError(
                FIELD, f"{where}: a vector of {shape[0]} weights has no rows or columns to choose"
            )
        if row not in (None, 0):
            raise InputError(FIELD, f"{where}: a vector has only row 0")
        return "row", 0, shape
    if len(shape) != 2:
        raise InputError(FIELD, f"{where}: a snapshot is a matrix or a vector, not shape {tuple(shape)}")
    if all_rows:
        return "matrix", None, shape
    if row is not None:
        if not 0 <= row < shape[0]:
            raise InputError(FIELD, f"{where}: row {row} is out of range (0 to {shape[0] - 1})")
        return "row", row, (shape[1],)
    if column is not None:
        if not 0 <= column < shape[1]:
            raise InputError(FIELD, f"{where}: latent {column} is out of range (0 to {shape[1] - 1})")
        return "column", column, (shape[0],)
    raise InputError(
        FIELD, f"{where}: a matrix {shape[0]} x {shape[1]}; choose --row R, --latent K or --all-rows"
    )


def _saelens_step(folder: Path) -> int:
    """One SAELens folder's step: cfg.json's ``step``, else 0."""
    cfg = read_config(folder / SAE_CONFIG, "SAELens configuration")
    step = cfg.get("step", 0)
    return checked_step(step, f"{folder / SAE_CONFIG} [step]") if step is not None else 0


def open_series(
    path: str | Path,
    tensor: str | None = None,
    *,
    row: int | None = None,
    latent: int | None = None,
    all_rows: bool = False,
    sae: str | None = None,
) -> Series:
    """The series at ``path`` (a folder of snapshots, SAELens or dictionary_learning
    checkpoints, or one stacked file), checked: at least two snapshots, each step once, in
    order, every snapshot of the first one's shape, the chosen row, latent or matrix inside
    it, a snapshot that fits in memory. ``sae`` names one SAE of a MultiSAETrainer run."""
    path = Path(path)
    if not path.exists():
        raise InputError(FIELD, f"{path}: no such file or folder")
    if path.is_file():
        if sae is not None:
            raise InputError(FIELD, f"{path}: --sae NAME is for a MultiSAETrainer run's folder")
        return _stacked_series(path, tensor, row, latent, all_rows)
    if not path.is_dir():
        raise InputError(FIELD, f"{path}: not a file or a folder")
    run = saelens_run(path, sae)
    if run is None and is_saelens_folder(path):
        run = _one_saelens_folder(path)
    if run is None:
        run = dictlearn_run(path)
    if sae is not None and (run is None or run.layout != "saelens"):
        raise InputError(FIELD, f"{path}: --sae NAME is for a MultiSAETrainer run's folder")
    shapes: dict[Path, tuple[int, ...]] = {}  # each file's tensor's shape, from its header (read once)
    model: dict = {}
    latent_is_row = False
    if run is not None:
        default = run.entries[0][2]
        entries: list[Entry] = [(step, file, tensor or default) for step, file, _ in run.entries]
        layout, step_note, model, latent_is_row = run.layout, run.step_note, run.model, run.latent_is_row
    else:
        entries, shapes, step_note = folder_entries(path, tensor)
        layout = "files"
    entries.sort(key=lambda e: e[0])
    _check_steps(path, entries)
    first_shape = _common_shape(entries, shapes)
    where = f"{entries[0][1]}: a snapshot of shape {tuple(first_shape)}"
    check_fits(FIELD, 8 * math.prod(first_shape), where)
    if latent is not None and layout not in ("saelens", "dictionary_learning"):
        raise InputError(
            FIELD,
            f"{path}: --latent K is for SAELens (cfg.json beside {SAE_WEIGHTS}) and dictionary_learning "
            "(trainer_*/checkpoints/ae_<step>.pt) folders",
        )
    if latent_is_row and latent is not None:
        row, latent = latent, None  # dictionary_learning's encoder.weight: a latent is a row
    pick, index, shape = _checked_pick(first_shape, str(entries[0][1]), row, latent, all_rows)
    snaps = tuple(Snapshot(step, file, name) for step, file, name in entries)
    series = Series(snaps, pick, index, tuple(shape), layout, path.name, len(first_shape))
    series.step_note, series.model = step_note, model
    return series


def _check_steps(path: Path, entries: list[Entry]) -> None:
    """Sorted snapshots: each step once, two or more of them."""
    for (s0, f0, _), (s1, f1, _) in zip(entries, entries[1:], strict=False):
        if s0 == s1:
            raise InputError(FIELD, f"{f0} and {f1} both hold step {s0}")
    if len(entries) < 2:
        raise InputError(FIELD, f"{path}: one snapshot; a comparison needs two or more")


def _common_shape(entries: list[Entry], shapes: dict[Path, tuple[int, ...]]) -> tuple[int, ...]:
    """The snapshots' one shape (each read from its file's header unless in ``shapes``)."""
    first_shape: tuple[int, ...] | None = None
    first_file = entries[0][1]
    for _step, file, name in entries:
        shape = shapes.get(file)
        if shape is None:
            _, infos = list_arrays(file, FIELD)
            shape = next((i.shape for i in infos if i.name == name), None)
            if shape is None:
                listed = ", ".join(str(i.name) for i in infos[:8]) or "no tensors"
                raise InputError(FIELD, f"{file}: no tensor named {name!r} (it holds {listed})")
        if first_shape is None:
            first_shape, first_file = shape, file
        elif shape != first_shape:
            raise InputError(
                FIELD, f"{file}: shape {tuple(shape)}, but {first_file.name}'s is {tuple(first_shape)}"
            )
    assert first_shape is not None
    return first_shape


def _one_saelens_folder(folder: Path):
    from sparsity_gui.core.sae_series import SaeRun

    cfg = read_config(folder / SAE_CONFIG, "SAELens configuration")
    entries = [(_saelens_step(folder), folder / SAE_WEIGHTS, SAE_TENSOR)]
    return SaeRun(entries, "saelens", "", saelens_model(cfg))


def _stacked_series(path: Path, tensor: str | None, row, latent, all_rows) -> Series:
    if path.suffix.lower() not in EXTENSIONS:
        raise InputError(FIELD, f"{path}: not a series (a folder of snapshots, or one stacked file)")
    kind, infos = list_arrays(path, FIELD)
    names = [i.name for i in infos]
    steps_name = next((n for n in STEP_NAMES if n in names), None)
    if steps_name is None:
        raise InputError(
            FIELD, f"{path}: one file holds a series when it has a stacked tensor and a vector 'steps'"
        )
    stacked = [i for i in infos if i.name != steps_name and (tensor is None or i.name == tensor)]
    if len(stacked) != 1:
        listed = ", ".join(repr(i.name) for i in infos if i.name != steps_name)
        raise InputError(FIELD, f"{path}: name the stacked tensor with --tensor NAME (it holds {listed})")
    info = stacked[0]
    if len(info.shape) not in (2, 3):
        raise InputError(
            FIELD, f"{path}: a stacked tensor is [T, n, m] or [T, m], not shape {tuple(info.shape)}"
        )
    steps, _ = read_array(path, steps_name, field=FIELD)
    steps = steps.reshape(-1)
    if steps.size != info.shape[0]:
        raise InputError(FIELD, f"{path}: {steps.size} steps for {info.shape[0]} snapshots")
    if not np.all(np.isfinite(steps)) or not np.all(steps == np.round(steps)):
        raise InputError(FIELD, f"{path}: the steps are not whole numbers")
    if steps.size and (steps.min() < 0 or steps.max() >= 2.0**63):
        raise InputError(FIELD, f"{path}: a step outside 0 to 2^63 - 1 ({steps.max():.4g})")
    order = np.diff(steps)
    if (order <= 0).any():
        k = int(np.flatnonzero(order <= 0)[0])
        raise InputError(
            FIELD,
            f"{path}: steps out of order: {int(steps[k + 1])} follows {int(steps[k])} (snapshot {k + 1})",
        )
    if steps.size < 2:
        raise InputError(FIELD, f"{path}: one snapshot; a comparison needs two or more")
    pick, index, shape = _checked_pick(tuple(info.shape[1:]), f"{path} [{info.name}]", row, latent, all_rows)
    where = f"{path} [{info.name}]: a snapshot of shape {tuple(info.shape[1:])}"
    check_fits(FIELD, 8 * math.prod(info.shape[1:]), where)
    snaps = tuple(Snapshot(int(s), path, info.name, k) for k, s in enumerate(steps))
    stored = _stored_member(path, str(info.name)) if kind == "npz" else None
    if stored is not None and stored.shape != tuple(info.shape):
        stored = None
    return Series(snaps, pick, index, tuple(shape), "stacked", path.name, len(info.shape) - 1, stored)


# --- what was asked of a series (a window's File → Compare with checkpoints…, a session) ------
@dataclass(frozen=True)
class SeriesOptions:
    """A series and how it was trained, as the `checkpoints` command takes them: the path,
    the tensor and what is taken of each snapshot (``row``, ``latent`` or ``all_rows``),
    the run's ``l1``, ``lr``, ``optimizer`` and ``weight_decay``, the zero tolerance and
    whether the note's flow takes a fitted time scale. What a session keeps to read the
    series again."""

    path: str
    l1: float
    lr: float
    optimizer: str
    tensor: str | None = None
    row: int | None = None
    latent: int | None = None
    all_rows: bool = False
    weight_decay: float | None = None
    zero_tol: float | None = None
    fit_time_scale: bool = False
    sae: str | None = None  # one SAE of a MultiSAETrainer run

    def open(self) -> Series:
        """The series, checked (open_series: InputError naming the file)."""
        return open_series(
            self.path, self.tensor, row=self.row, latent=self.latent, all_rows=self.all_rows, sae=self.sae
        )

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "tensor": self.tensor,
            "row": self.row,
            "latent": self.latent,
            "all_rows": self.all_rows,
            "l1": self.l1,
            "lr": self.lr,
            "optimizer": self.optimizer,
            "weight_decay": self.weight_decay,
            "zero_tol": self.zero_tol,
            "fit_time_scale": self.fit_time_scale,
            **({"sae": self.sae} if self.sae is not None else {}),
        }

    @classmethod
    def from_dict(cls, obj, where: str = "series") -> SeriesOptions:
        """From to_dict's form (a session's entry); ValueError names the bad field."""
        if not isinstance(obj, dict):
            raise ValueError(f"field {where!r} must be an object {{...}}")

        def text(name: str) -> str:
            value = obj.get(name)
            if not isinstance(value, str) or not value or len(value) > 4096 or "\0" in value:
                raise ValueError(f"field '{where}.{name}' must be text, got {value!r}"[:200])
            return value

        def number(name: str) -> float:
            value = obj.get(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"field '{where}.{name}' must be a finite number, got {value!r}"[:200])
            return float(value)

        def optional_text(name: str) -> str | None:
            return None if obj.get(name) is None else text(name)

        def optional_number(name: str) -> float | None:
            return None if obj.get(name) is None else number(name)

        def whole(name: str) -> int | None:
            value = obj.get(name)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"field '{where}.{name}' must be a whole number >= 0, got {value!r}"[:200])
            return value

        def flag(name: str) -> bool:
            value = obj.get(name, False)
            if not isinstance(value, bool):
                raise ValueError(f"field '{where}.{name}' must be true or false, got {value!r}"[:200])
            return value

        return cls(
            path=text("path"),
            l1=number("l1"),
            lr=number("lr"),
            optimizer=text("optimizer"),
            tensor=optional_text("tensor"),
            row=whole("row"),
            latent=whole("latent"),
            all_rows=flag("all_rows"),
            weight_decay=optional_number("weight_decay"),
            zero_tol=optional_number("zero_tol"),
            fit_time_scale=flag("fit_time_scale"),
            sae=optional_text("sae"),
        )
