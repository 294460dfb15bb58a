"""Sessions: a run saved as JSON so that opening it reproduces the run exactly.

A session holds the parameters at t = 0, where W(0) came from (a normal draw, rebuilt from
the seed; or a file, whose weights are embedded), the schedule of live changes of lam, eta
and method, and the current time; the pinned runs (their rows), and the series of
snapshots compared with the run (File → Compare with checkpoints…: what was asked of each,
read again when the session is opened). The time series is re-simulated from t = 0 stopping
exactly at each change and at each sample time (sampled.replay_script), so the same
session always gives the same time series to the last digit. Qt-free, like all of core/.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sparsity_gui import __version__
from sparsity_gui.core.checks import parse_json_text
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_text, json_text
from sparsity_gui.core.note.changes import LiveChange, RunScript
from sparsity_gui.core.note.initial import draw_normal
from sparsity_gui.core.note.metrics import DEFAULT_SAMPLES
from sparsity_gui.core.note.params import (
    LIVE_FIELDS,
    M_MAX,
    METHODS,
    SimParams,
    check_segments_work,
)
from sparsity_gui.core.note.pins import PIN_COLUMNS, PIN_NAMES
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.pins import PinnedRun, pin_dict
from sparsity_gui.core.series import SeriesOptions
from sparsity_gui.core.session_fields import (
    SessionProblem,
    decode_weights,
    encode_weights,
    object_field,
    pins_field,
    read_session_file,
    series_field,
    show,
    style_field,
    weights_sha256,
    whole_field,
)
from sparsity_gui.core.text import short_number

FORMAT = "sparsity-gui session"
VERSION = 1
MAX_SAMPLES = 10**6
MAX_SESSION_BYTES = 16 * (M_MAX + 1000)  # M_MAX weights as base64, pins and changes


@dataclass(frozen=True)
class W0Source:
    """Where W(0) came from: "normal" (drawn from m, sigma, seed) or "file"."""

    kind: str = "normal"
    path: str | None = None
    array: str | None = None  # the array's name in a .npz
    row: int | None = None  # the row of 2-D data

    def describe(self) -> str:
        if self.kind == "normal":
            return "normal draw"
        extra = []
        if self.array is not None:
            extra.append(f"array {self.array!r}")
        if self.row is not None:
            extra.append(f"row {self.row}")
        return f"{self.path}" + (f" ({', '.join(extra)})" if extra else "")


@dataclass(frozen=True)
class Session:
    script: RunScript
    source: W0Source
    pins: tuple[PinnedRun, ...] = ()  # the runs pinned beside it, as they were drawn
    style: str | None = None  # the figures' style: "paper", "talk" or a .mplstyle file's path
    # the series of snapshots pinned beside it: (pin number, what was asked), read again
    series: tuple[tuple[int, SeriesOptions], ...] = ()

    @property
    def params(self) -> SimParams:
        """The parameters now (after every live change)."""
        return self.script.final_params()


# --- writing ---------------------------------------------------------------------------


def session_dict(
    script: RunScript, source: W0Source, pins=(), results: dict | None = None, style: str | None = None
) -> dict[str, Any]:
    """The session's JSON. ``results`` (metrics.results_entry: the regime and the fitted
    constants of the run at script.t) is written for the reader under "results"; opening a
    session re-simulates and never reads it. ``style``: the figures' style, when chosen."""
    p = script.params
    w0_entry: dict[str, Any] = {"source": source.kind}
    if source.kind == "file":
        w0_entry.update(
            {
                "path": source.path,
                "array": source.array,
                "row": source.row,
                "m": int(script.w0.size),
                **encode_weights(script.w0),
            }
        )
    out = {
        "format": FORMAT,
        "version": VERSION,
        "program": f"sparsity-gui {__version__}",
        "parameters": p.settings(),
        "w0": w0_entry,
        "w0_sha256": weights_sha256(script.w0),
        "changes": [{"t": c.t, "name": c.name, "value": c.value} for c in script.changes],
        "t": float(script.t),
        "samples": int(script.samples),
    }
    if results is not None:
        out["results"] = results
    pins = list(pins)
    runs = [p for p in pins if p.series is None]
    if runs:  # optional: a session without pins reads as before
        out["pins"] = [pin_dict(p) for p in runs]
    series = [p for p in pins if p.series is not None]
    if series:  # a series of snapshots: what was asked of it, read again on opening
        out["series"] = [{"number": p.number, **p.series.to_dict()} for p in series]
    if style is not None:  # optional too
        out["style"] = str(style)
    return out


def session_text(
    script: RunScript, source: W0Source, pins=(), results: dict | None = None, style: str | None = None
) -> str:
    return json_text(session_dict(script, source, pins, results, style))


def save_session(
    path: str | Path,
    script: RunScript,
    source: W0Source,
    pins=(),
    results: dict | None = None,
    style: str | None = None,
) -> None:
    """Write atomically: the old file stays whole if anything fails."""
    atomic_write_text(path, session_text(script, source, pins, results, style))


# --- reading ---------------------------------------------------------------------------


def _get(
    obj: dict,
    key: str,
    where: str,
    default: Any = ...,
) -> Any:
    if key not in obj:
        if default is ...:
            raise SessionProblem(f"missing field {where + key!r}")
        return default
    return obj[key]


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SessionProblem(f"field {name!r} must be a number, got {show(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise SessionProblem(f"field {name!r} must be finite, got {value}")
    return value


def _params(obj: Any) -> SimParams:
    obj = object_field(obj, "parameters")
    values: dict[str, Any] = {}
    for name in ("m", "seed"):
        values[name] = whole_field(_get(obj, name, "parameters."), f"parameters.{name}")
    for name in ("lam", "sigma", "eta"):
        values[name] = _number(_get(obj, name, "parameters."), f"parameters.{name}")
    method = _get(obj, "method", "parameters.")
    if not isinstance(method, str):
        raise SessionProblem(
            f"field 'parameters.method' must be one of {', '.join(METHODS)}, got {show(method)}"
        )
    values["method"] = method
    t_end = obj.get("t_end")
    values["t_end"] = None if t_end is None else _number(t_end, "parameters.t_end")
    if "lam_schedule" in obj:  # (sessions of runs without one have none)
        values["lam_schedule"] = obj["lam_schedule"]
    try:
        return SimParams(**values)
    except InputError as exc:
        raise SessionProblem(f"field 'parameters.{exc.field}': {exc.message}") from None


def _decode_weights(entry: dict, m: int) -> np.ndarray:
    encoding = _get(entry, "encoding", "w0.", "list")
    raw = _get(entry, "weights", "w0.")
    w0 = decode_weights(encoding, raw)
    if w0.size != m:
        raise SessionProblem(f"field 'w0.weights' holds {w0.size} weights but parameters.m is {m}")
    if w0.size == 0:
        raise SessionProblem("field 'w0.weights' holds no weights")
    bad = ~np.isfinite(w0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise SessionProblem(f"field 'w0.weights': weight {k} is {w0[k]} (all weights must be finite)")
    return w0


def _w0(entry: Any, params: SimParams) -> tuple[np.ndarray, W0Source]:
    entry = object_field(entry, "w0")
    kind = _get(entry, "source", "w0.")
    if kind == "normal":
        try:
            return draw_normal(params.m, params.sigma, params.seed), W0Source("normal")
        except InputError as exc:
            raise SessionProblem(exc.message) from None
    if kind != "file":
        raise SessionProblem(f"field 'w0.source' must be 'normal' or 'file', got {show(kind)}")
    path = entry.get("path")
    array = entry.get("array")
    row = entry.get("row")
    if path is not None and not isinstance(path, str):
        raise SessionProblem(f"field 'w0.path' must be a string, got {show(path)}")
    if array is not None and not isinstance(array, str):
        raise SessionProblem(f"field 'w0.array' must be a string, got {show(array)}")
    if row is not None:
        row = whole_field(row, "w0.row")
    w0 = _decode_weights(entry, params.m)
    return w0, W0Source("file", path or "(embedded weights)", array, row)


def session_changes(items: Any, t_now: float) -> tuple[LiveChange, ...]:
    """A session's live changes (its "changes" list) checked: in time order, up to t_now,
    each value one its parameter may take; raises SessionProblem naming the item."""
    if not isinstance(items, list):
        raise SessionProblem(f"field 'changes' must be a list, got {show(items)}")
    out: list[LiveChange] = []
    last_t = 0.0
    for i, item in enumerate(items):
        name_i = f"changes[{i}]"
        item = object_field(item, name_i)
        t = _number(_get(item, "t", name_i + "."), f"{name_i}.t")
        if t < last_t:
            raise SessionProblem(
                f"field '{name_i}.t' = {t} comes before the previous change ({last_t}): "
                "changes must be in time order"
            )
        if t > t_now:
            raise SessionProblem(f"field '{name_i}.t' = {t} is after the session's time t = {t_now}")
        name = _get(item, "name", name_i + ".")
        if name not in LIVE_FIELDS:
            raise SessionProblem(
                f"field '{name_i}.name' must be one of {', '.join(LIVE_FIELDS)}, got {show(name)}"
            )
        value = _get(item, "value", name_i + ".")
        if name == "method":
            if not isinstance(value, str):
                raise SessionProblem(
                    f"field '{name_i}.value' must be one of {', '.join(METHODS)}, got {show(value)}"
                )
        else:
            value = _number(value, f"{name_i}.value")
        try:
            NOTE_SETTINGS.check(name, value)
        except InputError as exc:
            raise SessionProblem(f"field '{name_i}.value': {name} {exc.message}") from None
        out.append(LiveChange(t, name, value))
        last_t = t
    return tuple(out)


def check_session_work(script: RunScript) -> None:
    """Refuse a replay whose steps would pass the limit of bounded work (core/checks.py),
    counted by its segments between live changes (params.check_segments_work)."""
    segments = []
    params = script.params
    t_prev = 0.0
    for c in (*script.changes, LiveChange(script.t, "end", 0.0)):
        segments.append((params.method, params.eta, c.t - t_prev))
        if c.name != "end":
            params = params.with_live_change(c.name, c.value)
        t_prev = c.t
    try:
        check_segments_work(
            "t",
            f"replaying to t = {short_number(script.t)}",
            script.params.m,
            segments,
            len(script.params.lam_schedule),
        )
    except InputError as exc:
        raise SessionProblem(exc.message) from None


def parse_session(text: str) -> Session:
    """A Session from JSON text; raises SessionProblem naming the bad field."""
    try:
        obj = parse_json_text(text, "", "", "sparsity-gui session")
    except InputError as exc:
        raise SessionProblem(exc.message) from None
    if not isinstance(obj, dict):
        raise SessionProblem("not a sparsity-gui session (expected a JSON object)")
    if obj.get("format") != FORMAT:
        raise SessionProblem(f'not a sparsity-gui session (no "format": "{FORMAT}" field)')
    version = whole_field(_get(obj, "version", ""), "version")
    if version != VERSION:
        newer = " (saved by a newer sparsity-gui?)" if version > VERSION else ""
        raise SessionProblem(
            f"session format version {version} is not supported{newer}; this "
            f"sparsity-gui reads version {VERSION}"
        )
    params = _params(_get(obj, "parameters", ""))
    w0, source = _w0(_get(obj, "w0", ""), params)
    if source.kind == "file":
        params = params.with_changes(w0_path=source.path)
    digest = obj.get("w0_sha256")
    if digest is not None:
        if not isinstance(digest, str):
            raise SessionProblem(f"field 'w0_sha256' must be a string, got {show(digest)}")
        if digest != weights_sha256(w0):
            if source.kind == "normal":
                raise SessionProblem(
                    f"the W(0) drawn from seed {params.seed} differs from the one this session "
                    "was saved with (a different numpy random generator?)"
                )
            raise SessionProblem(
                "field 'w0.weights' does not match 'w0_sha256' (the file was altered or damaged)"
            )
    t = _number(_get(obj, "t", ""), "t")
    if t < 0:
        raise SessionProblem(f"field 't' must be >= 0, got {t}")
    changes = session_changes(_get(obj, "changes", "", []), t)
    samples = whole_field(_get(obj, "samples", "", DEFAULT_SAMPLES), "samples")
    if not 2 <= samples <= MAX_SAMPLES:
        raise SessionProblem(f"field 'samples' must be from 2 to {MAX_SAMPLES}, got {samples}")
    script = RunScript(params, w0, changes, t, samples)
    check_session_work(script)
    style = obj.get("style")
    pins = pins_field(obj.get("pins", []), PIN_COLUMNS, PIN_NAMES)
    series = series_field(obj.get("series", []), {p.number for p in pins})
    return Session(script, source, pins, None if style is None else style_field(style), series)


def load_session(path: str | Path) -> Session:
    """Read and check a session file. Any problem raises InputError("session", ...) with
    the file and the bad field named; nothing else changes."""
    return read_session_file(path, MAX_SESSION_BYTES, parse_session)
