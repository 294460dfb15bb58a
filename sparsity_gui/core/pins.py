"""Pinned runs (XPPAUT's "freeze"): a run's recorded time series kept, read-only, beside
the live run, so that a run with other parameters can be compared with it.

`PinBoard` holds up to MAX_PINS of them, each a `PinnedRun`: the settings it ran with (as
its model's settings table stores them, core/settings.py) and a read-only copy of its
history. `pin_label` names a pinned run by the settings that differ from the live run's.
`pin_dict` / `pin_from_dict` carry a pinned run in a session file. Model-free and Qt-free:
each model passes its own columns and the names of the settings a pin keeps.

A pinned run may also be a training run's series of snapshots (File → Compare with
checkpoints…): its rows are the snapshots, drawn as points (``marks="points"``), it is named
after its folder (``name``) and keeps what was asked of the series (``series``: a
core.series.SeriesOptions), which a session saves in place of the rows.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparsity_gui.core.errors import InputError

MAX_PINS = 8


def frozen_copy(rows: np.ndarray) -> np.ndarray:
    """A float64 copy nobody can write to (a pinned run must never change under the view)."""
    out = np.array(rows, dtype=np.float64, copy=True, order="C")
    out.setflags(write=False)
    return out


def pin_dashes(number: int) -> tuple[float, ...]:
    """A pinned run's dash pattern, one per pin number, told apart at a glance: lengths in
    line widths, on and off in turn. The one table of both models' pinned curves, live
    (plots/pins.py) and in figures (figures/draw.py: a figure's script carries it)."""
    dashes = (
        (6.0, 3.0),
        (1.5, 2.5),
        (8.0, 3.0, 1.5, 3.0),
        (3.0, 3.0),
        (12.0, 4.0),
        (8.0, 3.0, 1.5, 3.0, 1.5, 3.0),
        (1.5, 5.0),
        (14.0, 3.0, 4.0, 3.0),
    )
    return dashes[(number - 1) % len(dashes)]


@dataclass(frozen=True)
class PinnedRun:
    number: int  # "pin 3": its name, kept while it is pinned
    params: tuple[tuple[str, Any], ...]  # (name, value) as the run had them when pinned
    columns: tuple[str, ...]
    rows: np.ndarray  # read-only, one column per name in `columns`
    marks: str = "line"  # "line": a run's curves; "points": a series of snapshots, a mark each
    name: str | None = None  # a fixed name (a series': its folder's), else named by parameters
    series: Any = None  # a series' core.series.SeriesOptions (sessions read it again)

    def column(self, name: str) -> np.ndarray:
        return self.rows[:, self.columns.index(name)]

    @property
    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)


def pin_label(pin: PinnedRun, parts: list[str], names: tuple[str, ...] = ()) -> str:
    """'pin 1: λ = 2.0e-3, m = 10⁴' from the settings that differ from the live run's
    (``parts``: Settings.differing), or 'pin 1: same parameters'; a named pin (a series of
    snapshots) 'pin 2: my-run (snapshots)'. A pin from an older file that did not keep
    all of ``names`` (the settings a pin keeps now) and differs in none it kept is 'pin 1:
    same recorded parameters': what it did not keep may differ."""
    if pin.name is not None:
        return f"pin {pin.number}: {pin.name} (snapshots)"
    if parts:
        return f"pin {pin.number}: " + ", ".join(parts)
    kept = pin.param_dict
    same = "same parameters" if all(n in kept for n in names) else "same recorded parameters"
    return f"pin {pin.number}: {same}"


class PinBoard:
    """Up to MAX_PINS pinned runs, numbered 1, 2, ... (a freed number is taken again)."""

    def __init__(self) -> None:
        self._pins: dict[int, PinnedRun] = {}

    def __len__(self) -> int:
        return len(self._pins)

    def __iter__(self) -> Iterator[PinnedRun]:
        return iter(sorted(self._pins.values(), key=lambda p: p.number))

    @property
    def full(self) -> bool:
        return len(self._pins) >= MAX_PINS

    def add(
        self,
        params: Mapping[str, Any],
        columns,
        rows: np.ndarray,
        number: int | None = None,
        *,
        marks: str = "line",
        name: str | None = None,
        series: Any = None,
    ) -> PinnedRun:
        """Pin a run: its history is copied (read-only). Raises InputError when full.
        ``marks``, ``name`` and ``series``: a series of snapshots' (see PinnedRun)."""
        if self.full:
            raise InputError(
                "pin", f"{MAX_PINS} runs are pinned already; remove one first (Simulation → Pinned runs)"
            )
        if number is None:
            number = min(set(range(1, MAX_PINS + 1)) - set(self._pins))
        elif number in self._pins or not 1 <= number <= MAX_PINS:
            raise InputError("pin", f"pin number {number} is taken or out of range 1 to {MAX_PINS}")
        rows = frozen_copy(rows)
        columns = tuple(columns)
        if rows.ndim != 2 or rows.shape[1] != len(columns):
            raise InputError("pin", f"pinned rows of shape {rows.shape} do not match {len(columns)} columns")
        pin = PinnedRun(number, tuple(params.items()), columns, rows, marks, name, series)
        self._pins[number] = pin
        return pin

    def remove(self, number: int) -> PinnedRun | None:
        return self._pins.pop(number, None)

    def clear(self) -> None:
        self._pins.clear()

    def replace(self, pins) -> None:
        """The pins of a session, in place of these."""
        self._pins = {p.number: p for p in list(pins)[:MAX_PINS]}


# --- in a session file ---------------------------------------------------------------------
def pin_dict(pin: PinnedRun) -> dict[str, Any]:
    rows = np.ascontiguousarray(pin.rows, dtype="<f8")
    return {
        "number": pin.number,
        "parameters": dict(pin.params),
        "columns": list(pin.columns),
        "rows": int(rows.shape[0]),
        "encoding": "base64-float64-le",  # NaN and inf (θ once ‖W‖² ≥ 1) survive
        "data": base64.b64encode(rows.tobytes()).decode("ascii"),
    }


def pin_from_dict(obj: Any, where: str, columns, param_names) -> PinnedRun:
    """A PinnedRun from its session entry; ValueError names the bad field. The columns must
    be this model's ``columns``; the parameters, scalars named in ``param_names``."""
    if not isinstance(obj, dict):
        raise ValueError(f"field {where!r} must be an object {{...}}")
    number = obj.get("number")
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_PINS:
        raise ValueError(f"field '{where}.number' must be a whole number from 1 to {MAX_PINS}")
    params = obj.get("parameters")
    if not isinstance(params, dict) or set(params) - set(param_names):
        raise ValueError(f"field '{where}.parameters' must be an object of {', '.join(param_names)}")
    for name, value in params.items():
        if value is not None and not isinstance(value, (int, float, str)):
            raise ValueError(f"field '{where}.parameters.{name}' must be a number or a string")
    if obj.get("columns") != list(columns):
        raise ValueError(f"field '{where}.columns' must be {list(columns)}")
    if obj.get("encoding") != "base64-float64-le":
        raise ValueError(f"field '{where}.encoding' must be 'base64-float64-le'")
    n = obj.get("rows")
    data = obj.get("data")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or not isinstance(data, str):
        raise ValueError(f"fields '{where}.rows' and '{where}.data' must be a row count and base64 text")
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise ValueError(f"field '{where}.data' is not valid base64") from None
    if len(raw) != 8 * n * len(columns):
        raise ValueError(
            f"field '{where}.data' holds {len(raw)} bytes, not {n} rows of {len(columns)} numbers"
        )
    rows = frozen_copy(np.frombuffer(raw, dtype="<f8").reshape(n, len(columns)))
    return PinnedRun(number, tuple(params.items()), tuple(columns), rows)
