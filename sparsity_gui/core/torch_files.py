"""PyTorch checkpoints as weights files (core/weights_files.py): torch.load with
weights_only=True, only when torch is installed (it is not a dependency). Whatever a file
holds (sparse, quantized, nested or complex tensors, a whole module, containers nested
10^5 deep, a pickle protocol torch refuses) is one InputError line, never torch's warnings,
traceback or terminal escapes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.text import printable

MAX_NESTING = 64  # a checkpoint's containers nest a few levels; a file nested deeper is not one


def _torch_load(path: Path, field: str, scalars: dict | None = None) -> dict:
    """The tensors of a PyTorch file as {dotted name: tensor}: a state_dict, a checkpoint
    holding one ({"model": {...}, "epoch": 3}) or a bare tensor; its plain Python ints and
    floats (``{"step": 30}``) into ``scalars`` by the same dotted names, when given. torch.load with
    weights_only=True: only tensors and plain containers are unpickled, never code.
    torch's warnings are kept off the terminal; a tensor numpy cannot hold (sparse,
    quantized, nested) is kept by name with the reason, for _torch_read to say."""
    import warnings

    shown = printable(str(path))
    try:
        import torch
    except ImportError:
        raise InputError(
            field,
            f"{shown}: a PyTorch checkpoint; reading it needs PyTorch, which is not "
            "installed (pip install torch), or save the weights as .safetensors or .npy",
        ) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's own advice, several lines, is not ours to print
            obj = torch.load(str(path), map_location="cpu", weights_only=True)
    except TypeError:
        raise InputError(
            field,
            f"{shown}: this PyTorch ({torch.__version__}) is too old to load files safely (weights_only)",
        ) from None
    except Exception as exc:  # noqa: BLE001 - torch raises many types: UnpicklingError, RuntimeError, ...
        raise InputError(field, f"{shown}: PyTorch cannot load it safely ({_torch_reason(exc)})") from None
    tensors: dict = {}
    # iteratively, by depth: a dict nested 10^5 deep is refused, not a RecursionError
    pending = [(obj, "", 0)]
    while pending:
        value, prefix, depth = pending.pop()
        if depth > MAX_NESTING:
            raise InputError(field, f"{shown}: containers nested over {MAX_NESTING} deep; not a checkpoint")
        if isinstance(value, torch.Tensor):
            tensors[prefix or "(tensor)"] = value
        elif scalars is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
            scalars[prefix or "(number)"] = value
        elif isinstance(value, dict):
            items = [(f"{prefix}.{key}" if prefix else str(key), item) for key, item in value.items()]
            pending.extend((item, name, depth + 1) for name, item in reversed(items))
        elif isinstance(value, (list, tuple)):
            items = [(f"{prefix}.{i}" if prefix else str(i), item) for i, item in enumerate(value)]
            pending.extend((item, name, depth + 1) for name, item in reversed(items))
    if not tensors and scalars is None:
        raise InputError(field, f"{shown}: the PyTorch file holds no tensors")
    return tensors


def _torch_reason(exc: Exception) -> str:
    """torch.load's reason in a few words: its unpickler's own line when there is one (not
    the paragraphs around it, nor the terminal escapes it puts in), and what to do."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    if "nested jagged" in text:  # torch refuses them unless torch._dynamo was imported first
        return "it holds a nested (jagged) tensor, which no weights file can hold: save a dense one"
    found = re.search(r"WeightsUnpickler error:\s*(.+)", text)
    if found is None:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return printable(lines[0] if lines else type(exc).__name__)[:200]
    reason = found.group(1).strip()
    if reason.startswith("Unsupported global:"):  # a whole pickled object (an nn.Module, ...)
        name = re.search(r"GLOBAL (\S+)", reason)
        what = name.group(1) if name else "an object"
        return f"it holds {printable(what)}, not only tensors: save model.state_dict() instead"
    if reason.startswith("Unsupported operand"):
        return f"{printable(reason)[:80]}: save it with torch.save's default pickle protocol"
    return printable(reason)[:200]


def _unusable(t) -> str | None:
    """Why numpy cannot hold tensor ``t`` as a dense real array, or None."""
    import torch

    if getattr(t, "is_nested", False):
        return "a nested (jagged) tensor"
    if t.layout != torch.strided:
        return f"sparse ({str(t.layout).removeprefix('torch.')}): save it dense (tensor.to_dense())"
    if t.is_quantized:
        return "quantized: save it dequantized (tensor.dequantize())"
    if t.is_complex():
        return "complex"
    return None


def torch_tensors(path: Path, field: str) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, shape, dtype) of every tensor in the file."""
    listed = []
    for name, t in _torch_load(path, field).items():
        # a nested tensor has no one shape: listed as 0-d, refused by name when chosen
        shape = () if getattr(t, "is_nested", False) else tuple(int(s) for s in t.shape)
        listed.append((name, shape, str(t.dtype).removeprefix("torch.")))
    return listed


def torch_numbers(path: Path, field: str) -> dict[str, int | float]:
    """The numbers a PyTorch file holds ({dotted name: int or float}): its plain Python
    numbers (a step saved as ``{"step": 30}``, SAELens' ``n_training_steps``) and its
    one-value real tensors (Adam's ``step`` per parameter), read in one load."""
    scalars: dict[str, int | float] = {}
    for name, t in _torch_load(path, field, scalars).items():
        if _unusable(t) is None and t.numel() == 1 and not t.is_complex():
            scalars.setdefault(name, t.detach().reshape(-1)[0].item())
    return scalars


def torch_read(path: Path, name: str, row: int | None, field: str) -> np.ndarray:
    import torch

    t = _torch_load(path, field)[name].detach()
    why = _unusable(t)
    if why is not None:
        raise InputError(field, f"{printable(str(path))}: tensor {printable(repr(name))} is {why}")
    if row is not None:
        t = t[row]
    try:
        if t.is_floating_point() and t.dtype not in (torch.float16, torch.float32, torch.float64):
            t = t.to(torch.float32)  # bfloat16 and float8 have no numpy type; float32 holds them exactly
        return t.cpu().contiguous().numpy()
    except (RuntimeError, TypeError) as exc:
        raise InputError(
            field, f"{printable(str(path))}: cannot convert tensor {printable(repr(name))} ({exc})"
        ) from None
