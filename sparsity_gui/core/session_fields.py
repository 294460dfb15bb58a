"""What the sessions of both models share (core/note/session.py, core/interference/
session.py): the one error of a bad field, the checks of the fields both files hold (the
style, the pinned runs, the compared series), W(0) embedded as JSON or base64, and reading
a session file. Model-free and Qt-free."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from sparsity_gui.core.checks import input_text, read_input_bytes, whole_or_none
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.pins import MAX_PINS, PinnedRun, pin_from_dict
from sparsity_gui.core.series import SeriesOptions

# weights are written as a JSON list (readable) up to this many, as base64 above it
LIST_WEIGHTS_MAX = 100_000
MAX_STYLE_CHARS = 4096  # a path's length on Linux

T = TypeVar("T")


class SessionProblem(Exception):
    """A problem with one field of the session; becomes an InputError naming the file."""


def show(value: Any) -> str:
    """A field's value as a message quotes it: JSON, cut to 40 characters."""
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def object_field(value: Any, name: str) -> dict:
    if not isinstance(value, dict):
        raise SessionProblem(f"field {name!r} must be an object {{...}}, got {show(value)}")
    return value


def whole_field(value: Any, name: str) -> int:
    whole = whole_or_none(value, integral_floats=True)
    if whole is None:
        raise SessionProblem(f"field {name!r} must be a whole number, got {show(value)}")
    return whole


def style_field(value: Any) -> str:
    """The figures' style as saved: "paper", "talk" or a style file's path (whether that
    file can be used is told when the style is applied: the run opens either way)."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_STYLE_CHARS or "\0" in value:
        raise SessionProblem(
            f"field 'style' must be paper, talk or a .mplstyle file's path (text of at most "
            f"{MAX_STYLE_CHARS} characters), got {show(value)}"
        )
    return value


def pins_field(items: Any, columns: Sequence[str], symbols: Sequence[str]) -> tuple[PinnedRun, ...]:
    """The pinned runs of a session, each of the model's ``columns`` and ``symbols``."""
    if not isinstance(items, list) or len(items) > MAX_PINS:
        raise SessionProblem(f"field 'pins' must be a list of at most {MAX_PINS} pinned runs")
    out: list[PinnedRun] = []
    for i, item in enumerate(items):
        try:
            out.append(pin_from_dict(item, f"pins[{i}]", tuple(columns), tuple(symbols)))
        except ValueError as exc:
            raise SessionProblem(str(exc)) from None
    if len({p.number for p in out}) != len(out):
        raise SessionProblem("field 'pins': two pinned runs have the same number")
    return tuple(out)


def series_field(items: Any, taken: set[int]) -> tuple[tuple[int, SeriesOptions], ...]:
    """The series of snapshots a session pins: (pin number, options), each number free."""
    if not isinstance(items, list) or len(items) > MAX_PINS - len(taken):
        raise SessionProblem(f"field 'series' must be a list of at most {MAX_PINS} series, pins included")
    out = []
    for i, item in enumerate(items):
        where = f"series[{i}]"
        number = item.get("number") if isinstance(item, dict) else None
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_PINS:
            raise SessionProblem(f"field '{where}.number' must be a whole number from 1 to {MAX_PINS}")
        if number in taken:
            raise SessionProblem(f"field '{where}.number': pin {number} is taken twice")
        taken.add(number)
        try:
            options = SeriesOptions.from_dict({k: v for k, v in item.items() if k != "number"}, where)
        except ValueError as exc:
            raise SessionProblem(str(exc)) from None
        out.append((number, options))
    return tuple(out)


def weights_sha256(w0: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(w0, dtype="<f8").tobytes()).hexdigest()


def encode_weights(w0: np.ndarray) -> dict[str, Any]:
    """W(0) as a session embeds it, row by row: a JSON list (readable) up to
    LIST_WEIGHTS_MAX weights, little-endian float64 in base64 above."""
    flat = np.ascontiguousarray(w0, dtype="<f8").ravel()
    if flat.size <= LIST_WEIGHTS_MAX:
        return {"encoding": "list", "weights": [float(x) for x in flat]}
    return {"encoding": "base64-float64-le", "weights": base64.b64encode(flat.tobytes()).decode("ascii")}


def decode_weights(encoding: Any, raw: Any) -> np.ndarray:
    """W(0)'s numbers as encode_weights wrote them, flat, as float64 (their count and
    finiteness are the model's to check)."""
    if encoding == "list":
        if not isinstance(raw, list):
            raise SessionProblem(f"field 'w0.weights' must be a list of numbers, got {show(raw)}")
        for i, v in enumerate(raw):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise SessionProblem(f"field 'w0.weights': item {i} is {show(v)}, not a number")
        return np.array(raw, dtype=np.float64)
    if encoding == "base64-float64-le":
        if not isinstance(raw, str):
            raise SessionProblem(
                "field 'w0.weights' must be a base64 string for encoding "
                f"'base64-float64-le', got {show(raw)}"
            )
        try:
            data = base64.b64decode(raw.encode("ascii"), validate=True)
        except (ValueError, UnicodeEncodeError):
            raise SessionProblem("field 'w0.weights' is not valid base64") from None
        if len(data) % 8:
            raise SessionProblem(
                f"field 'w0.weights' holds {len(data)} bytes, not a whole number of float64 values"
            )
        return np.frombuffer(data, dtype="<f8").astype(np.float64)
    raise SessionProblem(f"field 'w0.encoding' must be 'list' or 'base64-float64-le', got {show(encoding)}")


def read_session_file(path: str | Path, max_bytes: int, parse: Callable[[str], T]) -> T:
    """Read and check a session file with ``parse`` (a model's). Any problem raises
    InputError("session", ...) with the file and the bad field named; nothing else changes."""
    path = Path(path)
    data = read_input_bytes(path, "session", max_bytes, "session file")
    text = input_text(data, path, "session", "session file")
    try:
        return parse(text)
    except SessionProblem as exc:
        raise InputError("session", f"{path}: {exc}") from None
