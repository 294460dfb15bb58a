"""Sessions of the interference model: a training run saved as JSON so that opening it
replays the run exactly.

A session holds the parameters at step 0, where W(0) came from (a normal draw, rebuilt from
the seed and sigma; or a file, whose matrix is embedded and whose description is kept), the
live changes made during the run as (step, {field: value}), the current step, the pinned
runs (their rows), the series of checkpoints compared with the run (what was asked of each,
read again when the session is opened) and the figures' style. Opening trains again from
W(0), stopping at each live change's step to apply it (InterferenceParams.with_live_change),
up to the saved step: results do not depend on how the steps are chunked, so the replayed W
equals the saved run's to the last digit. The format is the note's (core/note/session.py)
in its conventions: a format name and version, size limits, every bad field named. Qt-free,
like all of core/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from sparsity_gui import __version__
from sparsity_gui.core.checks import check_work, parse_json_text
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_text, json_text
from sparsity_gui.core.interference.params import (
    LIVE_FIELDS,
    QUIET_FIELDS,
    InterferenceParams,
    check_memory,
    step_multiply_adds,
)
from sparsity_gui.core.interference.pins import PIN_COLUMNS, PIN_NAMES
from sparsity_gui.core.interference.run import InterferenceRun, chunk_steps, initial_weights
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

FORMAT = "sparsity-gui interference session"
VERSION = 1
# a file's W(0) is embedded up to this many weights (n x m; 32 MiB as float64)
MAX_EMBEDDED_WEIGHTS = 2**22
MAX_CHANGES = 100_000
# the embedded W(0) as base64 (about 10.7 bytes a weight), pins, changes and the rest
MAX_SESSION_BYTES = 11 * MAX_EMBEDDED_WEIGHTS + 2**25
# the fields of the source description kept beside an embedded W(0) (run.json's "w0")
SOURCE_FIELDS = ("path", "tensor", "dtype", "series_step")
# a replay's chunk: about this many multiply-adds between looks at should_stop
REPLAY_CHUNK_WORK = 2e8
ROWS = 500  # history rows over a run's steps while replaying (the worker's RECORD_ROWS)

PARAM_FIELDS = tuple(f.name for f in fields(InterferenceParams))
REQUIRED_FIELDS = tuple(f for f in PARAM_FIELDS if f not in QUIET_FIELDS)


class ReplayStopped(Exception):
    """A replay given up because its should_stop said so (the window closed)."""


@dataclass(frozen=True)
class LiveChange:
    """A live change: the fields set (with_live_change) after ``step`` steps."""

    step: int
    values: tuple[tuple[str, Any], ...]

    @property
    def value_dict(self) -> dict[str, Any]:
        return dict(self.values)


def live_change_of(old: InterferenceParams, new: InterferenceParams) -> dict[str, Any]:
    """The live fields (params.LIVE_FIELDS) that differ from ``old`` to ``new``: what a
    live change sets (a schedule it ends follows from with_live_change)."""
    return {f: getattr(new, f) for f in LIVE_FIELDS if getattr(old, f) != getattr(new, f)}


@dataclass(frozen=True)
class InterferenceScript:
    """A run to replay: parameters at step 0, W(0) (None: drawn from them), the live
    changes in step order and the step reached."""

    params: InterferenceParams
    w0: np.ndarray | None
    changes: tuple[LiveChange, ...] = ()
    step: int = 0

    def initial_w0(self) -> np.ndarray:
        return initial_weights(self.params) if self.w0 is None else self.w0

    def final_params(self) -> InterferenceParams:
        """The parameters at ``step`` (after every live change)."""
        params = self.params
        for change in self.changes:
            params = params.with_live_change(**change.value_dict)
        return params


@dataclass(frozen=True)
class InterferenceSession:
    script: InterferenceScript
    # where W(0) came from, as run.json says it: {"source": "normal"} or {"source": "file",
    # "path": ..., "tensor": ..., ...} (its matrix is script.w0)
    source: dict
    pins: tuple[PinnedRun, ...] = ()
    style: str | None = None
    series: tuple[tuple[int, SeriesOptions], ...] = ()

    @property
    def params(self) -> InterferenceParams:
        """The parameters at the saved step (after every live change)."""
        return self.script.final_params()


# --- replaying ---------------------------------------------------------------------------
def replay(
    script: InterferenceScript, should_stop: Callable[[], bool] | None = None, rows: int = ROWS
) -> InterferenceRun:
    """The run of ``script`` trained again from W(0) to script.step, each live change
    applied at its step; a history row every steps/rows steps, as the worker records them.
    Raises ReplayStopped when ``should_stop()`` says so (looked at between chunks)."""
    run = InterferenceRun(script.params, w0=script.w0)
    for target, change in (*((c.step, c) for c in script.changes), (script.step, None)):
        _advance_to(run, target, should_stop, rows)
        if change is not None:
            run.params = run.params.with_live_change(**change.value_dict)
    run.record()
    return run


def _advance_to(run: InterferenceRun, target: int, should_stop, rows: int) -> None:
    while run.step < target and not run.finished:
        if should_stop is not None and should_stop():
            raise ReplayStopped
        every = max(1, run.params.steps // rows)
        most = chunk_steps(run.params, REPLAY_CHUNK_WORK, 100_000)
        if not run.advance(min(target - run.step, every - run.step % every, most)):
            break
        if run.step % every == 0:
            run.record()


# --- writing -----------------------------------------------------------------------------


def params_dict(params: InterferenceParams) -> dict[str, Any]:
    """as_dict's fields (schedules and noise only when set), weight_decay as given (null:
    the optimizer's default), so that InterferenceParams(**fields) is the same parameters."""
    d = params.as_dict()
    d["weight_decay"] = params.weight_decay
    return d


def session_dict(
    script: InterferenceScript, source: dict, pins=(), style: str | None = None
) -> dict[str, Any]:
    """The session's JSON; InputError when a file's W(0) is too large to embed."""
    p = script.params
    w0 = script.initial_w0()
    kind = "normal" if source.get("source") == "normal" else "file"
    w0_entry: dict[str, Any] = {"source": kind}
    if kind == "file":
        if w0.size > MAX_EMBEDDED_WEIGHTS:
            raise InputError(
                "session",
                f"W(0) from a file has {w0.size:,} weights; a session embeds at most "
                f"{MAX_EMBEDDED_WEIGHTS:,} (n × m)",
            )
        w0_entry.update({k: source.get(k) for k in SOURCE_FIELDS if source.get(k) is not None})
        w0_entry.update({"n": int(w0.shape[0]), "m": int(w0.shape[1]), **encode_weights(w0)})
    out: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "program": f"sparsity-gui {__version__}",
        "parameters": params_dict(p),
        "w0": w0_entry,
        "w0_sha256": weights_sha256(w0),
        "changes": [{"step": c.step, "values": c.value_dict} for c in script.changes],
        "step": int(script.step),
    }
    pins = list(pins)
    runs = [pin for pin in pins if pin.series is None]
    if runs:
        out["pins"] = [pin_dict(pin) for pin in runs]
    series = [pin for pin in pins if pin.series is not None]
    if series:
        out["series"] = [{"number": pin.number, **pin.series.to_dict()} for pin in series]
    if style is not None:
        out["style"] = str(style)
    return out


def session_text(script: InterferenceScript, source: dict, pins=(), style: str | None = None) -> str:
    return json_text(session_dict(script, source, pins, style))


def save_session(
    path: str | Path, script: InterferenceScript, source: dict, pins=(), style: str | None = None
) -> None:
    """Write atomically (the user's umask): the old file stays whole if anything fails."""
    atomic_write_text(path, session_text(script, source, pins, style))


# --- reading -----------------------------------------------------------------------------


def _params(obj: Any) -> InterferenceParams:
    obj = object_field(obj, "parameters")
    unknown = sorted(set(obj) - set(PARAM_FIELDS))
    if unknown:
        raise SessionProblem(f"field 'parameters.{unknown[0]}' is not a parameter of the interference model")
    missing = [f for f in REQUIRED_FIELDS if f not in obj]
    if missing:
        raise SessionProblem(f"missing field 'parameters.{missing[0]}'")
    try:
        return InterferenceParams(**obj)
    except InputError as exc:
        raise SessionProblem(f"field 'parameters.{exc.field}': {exc.message}") from None
    except (TypeError, ValueError) as exc:  # a value of a type the checks do not expect
        raise SessionProblem(f"field 'parameters': {exc}") from None


def _decode_weights(entry: dict, n: int, m: int) -> np.ndarray:
    encoding = entry.get("encoding", "list")
    raw = entry.get("weights")
    if raw is None:
        raise SessionProblem("missing field 'w0.weights' (a file's W(0) is embedded)")
    w0 = decode_weights(encoding, raw)
    if w0.size != n * m:
        raise SessionProblem(f"field 'w0.weights' holds {w0.size} weights, not n × m = {n} × {m}")
    bad = ~np.isfinite(w0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise SessionProblem(f"field 'w0.weights': weight {k} is {w0[k]} (all weights must be finite)")
    return w0.reshape(n, m)


def _w0(entry: Any, params: InterferenceParams) -> tuple[np.ndarray | None, dict]:
    entry = object_field(entry, "w0")
    kind = entry.get("source")
    if kind == "normal":
        return None, {"source": "normal"}
    if kind != "file":
        raise SessionProblem(f"field 'w0.source' must be 'normal' or 'file', got {show(kind)}")
    source: dict[str, Any] = {"source": "file"}
    for name in SOURCE_FIELDS:
        value = entry.get(name)
        if value is None:
            continue
        if name == "series_step":
            value = whole_field(value, "w0.series_step")
        elif not isinstance(value, str) or len(value) > 4096:
            raise SessionProblem(f"field 'w0.{name}' must be text, got {show(value)}")
        source[name] = value
    n, m = (whole_field(entry.get(k), f"w0.{k}") for k in ("n", "m"))
    if (n, m) != (params.n, params.m):
        raise SessionProblem(
            f"field 'w0': W(0) is {n} × {m} but the parameters say n × m = {params.n} × {params.m}"
        )
    return _decode_weights(entry, n, m), source


def _changes(items: Any, step_now: int, params: InterferenceParams) -> tuple[LiveChange, ...]:
    """The live changes checked: in step order, each within the run (no later than the
    steps in force, nor the session's step), each a valid change of live fields."""
    if not isinstance(items, list):
        raise SessionProblem(f"field 'changes' must be a list, got {show(items)}")
    if len(items) > MAX_CHANGES:
        raise SessionProblem(f"field 'changes' holds {len(items)} changes; at most {MAX_CHANGES}")
    out: list[LiveChange] = []
    last = 0
    for i, item in enumerate(items):
        where = f"changes[{i}]"
        item = object_field(item, where)
        if "step" not in item:
            raise SessionProblem(f"missing field '{where}.step'")
        step = whole_field(item["step"], f"{where}.step")
        if step < last:
            raise SessionProblem(
                f"field '{where}.step' = {step} comes before the previous change (step {last}): "
                "changes must be in step order"
            )
        if step > step_now:
            raise SessionProblem(f"field '{where}.step' = {step} is after the session's step {step_now}")
        if step > max(params.steps, last):  # training stops at steps (a run lowered live stays)
            raise SessionProblem(
                f"field '{where}.step' = {step} is after the run's end (steps = {params.steps} then)"
            )
        values = object_field(item.get("values"), f"{where}.values")
        if not values:
            raise SessionProblem(f"field '{where}.values' changes nothing")
        for name in values:
            if name not in LIVE_FIELDS:
                raise SessionProblem(
                    f"field '{where}.values.{name}': only {', '.join(LIVE_FIELDS)} change during a run"
                )
        try:
            params = params.with_live_change(**values)
        except InputError as exc:
            raise SessionProblem(f"field '{where}.values.{exc.field}': {exc.message}") from None
        out.append(LiveChange(step, tuple(values.items())))
        last = step
    if step_now > max(params.steps, last):
        raise SessionProblem(f"field 'step' = {step_now} is after the run's end (steps = {params.steps})")
    return tuple(out)


def parse_session(text: str) -> InterferenceSession:
    """An InterferenceSession from JSON text; raises SessionProblem naming the bad field."""
    try:
        obj = parse_json_text(text, "", "", "sparsity-gui interference session")
    except InputError as exc:
        raise SessionProblem(exc.message) from None
    if not isinstance(obj, dict):
        raise SessionProblem("not a sparsity-gui interference session (expected a JSON object)")
    kind = obj.get("format")
    if kind != FORMAT:
        other = " (a session of the note's window: open it there)" if kind == "sparsity-gui session" else ""
        raise SessionProblem(
            f'not a sparsity-gui interference session (no "format": "{FORMAT}" field){other}'
        )
    if "version" not in obj:
        raise SessionProblem("missing field 'version'")
    version = whole_field(obj["version"], "version")
    if version != VERSION:
        newer = " (saved by a newer sparsity-gui?)" if version > VERSION else ""
        raise SessionProblem(
            f"interference session format version {version} is not supported{newer}; this "
            f"sparsity-gui reads version {VERSION}"
        )
    for name in ("parameters", "w0", "step"):
        if name not in obj:
            raise SessionProblem(f"missing field {name!r}")
    params = _params(obj["parameters"])
    try:
        check_memory(params.n, params.m, params.dtype)
    except InputError as exc:
        raise SessionProblem(f"field 'parameters.n' and 'parameters.m': {exc.message}") from None
    w0, source = _w0(obj["w0"], params)
    digest = obj.get("w0_sha256")
    if digest is not None:
        if not isinstance(digest, str):
            raise SessionProblem(f"field 'w0_sha256' must be text, got {show(digest)}")
        # W(0) as the run holds it: rounded to the run's dtype
        actual = initial_weights(params) if w0 is None else w0.astype(params.dtype)
        if digest != weights_sha256(actual):
            if w0 is None:
                raise SessionProblem(
                    f"the W(0) drawn from seed {params.seed} differs from the one this session "
                    "was saved with (a different numpy random generator?)"
                )
            raise SessionProblem(
                "field 'w0.weights' does not match 'w0_sha256' (the file was altered or damaged)"
            )
    step = whole_field(obj["step"], "step")
    if step < 0:
        raise SessionProblem(f"field 'step' must be >= 0, got {step}")
    changes = _changes(obj.get("changes", []), step, params)
    try:  # replaying is training: the same limit of bounded work as a run
        what = f"replaying {step} steps at n = {params.n}, m = {params.m}"
        check_work("step", what, step_multiply_adds(params.n, params.m) * step, "multiply-adds")
    except InputError as exc:
        raise SessionProblem(exc.message) from None
    style = obj.get("style")
    pins = pins_field(obj.get("pins", []), PIN_COLUMNS, PIN_NAMES)
    series = series_field(obj.get("series", []), {p.number for p in pins})
    script = InterferenceScript(params, w0, changes, step)
    return InterferenceSession(script, source, pins, None if style is None else style_field(style), series)


def load_session(path: str | Path) -> InterferenceSession:
    """Read and check a session file. Any problem raises InputError("session", ...) with
    the file and the bad field named; nothing else changes."""
    return read_session_file(path, MAX_SESSION_BYTES, parse_session)
