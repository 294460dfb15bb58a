"""A plain folder of snapshot files (core/series.py's first kind of series): each file's
step, from its name (``step_000100.safetensors``, ``ckpt-100.pt``, ``100.npy``; the one
number that differs between names holding several) or stored in it (a scalar ``step``),
and the tensor of its weights, from the files' headers. Problems raise InputError naming
the file. Qt-free."""

from __future__ import annotations

import re
from pathlib import Path

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.sae_series import checked_step
from sparsity_gui.core.weights_files import list_arrays, read_array

FIELD = "checkpoints"
SERIES_EXTENSIONS = (".safetensors", ".pt", ".pth", ".ckpt", ".npz", ".npy")
STEP_NAMES = ("step", "global_step", "steps", "iteration")
MAX_SNAPSHOTS = 100_000
_NUMBER = re.compile(r"\d+")

# a snapshot: (its step, its file, its weights' tensor: None for an array alone)
Entry = tuple[int, Path, str | None]


def folder_entries(path: Path, tensor: str | None) -> tuple[list[Entry], dict[Path, tuple[int, ...]], str]:
    """The snapshots of a folder of files, unsorted, each file's tensor's shape (from its
    header) and how the steps were told (``""``: each name's only number)."""
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in SERIES_EXTENSIONS)
    if not files:
        raise InputError(
            FIELD,
            f"{path}: no snapshots (files named with their step, like step_000100.safetensors, "
            f"ckpt-100.pt or 100.npy: {', '.join(SERIES_EXTENSIONS)})",
        )
    if len(files) > MAX_SNAPSHOTS:
        raise InputError(FIELD, f"{path}: {len(files)} files, at most {MAX_SNAPSHOTS} snapshots")
    named, step_note = _steps_in_names(files)
    ambiguous = step_note.startswith("ambiguous:")
    entries: list[Entry] = []
    shapes: dict[Path, tuple[int, ...]] = {}
    for file, step in zip(files, named, strict=True):
        kind, infos = list_arrays(file, FIELD)
        name, shape = _weights_tensor(file, infos, tensor)
        stored = _stored_step(file, [i.name for i in infos], kind) if step is None else None
        if stored is not None:
            step = stored
        elif ambiguous:
            raise InputError(
                FIELD, f"{step_note.partition(':')[2]}; rename the files or store a scalar 'step' in each"
            )
        if step is None:
            raise InputError(FIELD, f"{file}: no step in its name and none stored in it (a scalar 'step')")
        entries.append((checked_step(step, str(file)), file, name))
        shapes[file] = shape
    if ambiguous:
        step_note = "each file's step is the one stored in it (their names hold several numbers)"
    return entries, shapes, step_note


def _name_numbers(path: Path) -> list[int]:
    name = path.name[: -len(path.suffix)] if path.suffix else path.name
    return [int(n) for n in _NUMBER.findall(name)]


def _steps_in_names(files: list[Path]) -> tuple[list[int | None], str]:
    """Each file's step from its name, and how it was told: a name's only number; or, when
    the names hold several (``ckpt_step100_v2``), the one place where the names differ;
    None where no name tells it (a stored step is looked for). Refused when several
    numbers vary and none is known to be the step."""
    numbers = [_name_numbers(f) for f in files]
    counts = {len(n) for n in numbers}
    if counts <= {0, 1}:
        return [n[0] if n else None for n in numbers], ""
    if len(counts) == 1:
        varying = [k for k in range(counts.pop()) if len({n[k] for n in numbers}) > 1]
        if len(varying) == 1:
            k = varying[0]
            example = files[0].name
            return [n[k] for n in numbers], (
                f"the names hold several numbers ({example}): the step is the one that differs between them"
            )
    several = next(f for f, n in zip(files, numbers, strict=True) if len(n) > 1)
    return [None] * len(files), (
        f"ambiguous:{several}: its name holds several numbers "
        f"({', '.join(str(x) for x in _name_numbers(several))}) and the names do not tell which is the step"
    )


def _stored_step(path: Path, names: list[str | None], kind: str) -> int | None:
    """A scalar step stored in the file (a tensor or array named step, global_step, ...;
    in a PyTorch file also a plain number, ``{"step": 30}``)."""
    for name in STEP_NAMES:
        if name in names:
            value, _ = read_array(path, name, field=FIELD)
            if value.size == 1 and float(value.reshape(-1)[0]).is_integer():
                return checked_step(float(value.reshape(-1)[0]), f"{path} [{name}]")
            raise InputError(FIELD, f"{path}: {name!r} is not a whole step number")
    if kind == "torch":
        from sparsity_gui.core.torch_files import torch_numbers

        numbers = torch_numbers(path, FIELD)
        for name in STEP_NAMES:
            if name in numbers:
                return checked_step(numbers[name], f"{path} [{name}]")
    return None


def _weights_tensor(path: Path, infos, tensor: str | None) -> tuple[str | None, tuple[int, ...]]:
    """The tensor of a snapshot file: the one named, else the only one that is not a step."""
    weights = [i for i in infos if i.name not in STEP_NAMES]
    if tensor is not None:
        for info in infos:
            if info.name == tensor:
                return info.name, info.shape
        listed = ", ".join(str(i.name) for i in weights[:8])
        raise InputError(FIELD, f"{path}: no tensor named {tensor!r} (it holds {listed})")
    if len(weights) != 1:
        listed = ", ".join(repr(i.name) for i in weights[:8])
        raise InputError(
            FIELD, f"{path}: holds {len(weights)} tensors ({listed}); name one with --tensor NAME"
        )
    return weights[0].name, weights[0].shape
