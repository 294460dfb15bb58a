"""Knots of a piecewise-linear schedule, ``x:value`` pairs with x increasing (constant before
the first knot and after the last): the note's λ(t) (core/note/schedule.py) and the
interference model's l1 and lr over steps (core/interference/schedules.py) are written,
read and checked the same way. Qt-free, numpy-free."""

from __future__ import annotations

import math
from typing import Any

from sparsity_gui.core.errors import InputError

Knots = tuple[tuple[float, float], ...]  # (x, value) with x increasing

MAX_KNOTS = 1000


def check_knots(
    knots: Any, value_max: float, field: str, *, value_name: str = "value", time_name: str = "t"
) -> Knots:
    """``knots`` (pairs (x, value), or their text) as Knots, or InputError naming ``field``:
    positions finite, from 0, strictly increasing; each value from 0 to ``value_max``.
    ``value_name`` and ``time_name`` (λ and t, or l1 and step) are what the messages say."""
    if isinstance(knots, str):
        knots = parse_knots(knots, field, time_name)
    if isinstance(knots, (bytes, dict)) or not hasattr(knots, "__iter__"):
        raise InputError(
            field, f"must be knots {time_name}:value (or ({time_name}, value) pairs), got {knots!r}"
        )
    pairs = []
    for item in knots:
        if isinstance(item, (str, bytes, dict)) or not hasattr(item, "__len__") or len(item) != 2:
            raise InputError(field, f"every knot must be a pair ({time_name}, value), got {item!r}")
        pairs.append(tuple(item))
    if not pairs:
        raise InputError(field, f"needs at least one knot {time_name}:value")
    if len(pairs) > MAX_KNOTS:
        raise InputError(field, f"{len(pairs)} knots; at most {MAX_KNOTS} are allowed")
    position = "time" if time_name == "t" else time_name
    out = []
    for x, value in pairs:
        for what, v in ((position, x), ("value", value)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InputError(field, f"every knot's {what} must be a finite number, got {v!r}")
        x, value = float(x), float(value)
        if x < 0.0:
            raise InputError(field, f"a knot's {position} must be >= 0, got {x:g}")
        if not 0.0 <= value <= value_max:
            raise InputError(
                field,
                f"every {value_name} must be from 0 to {value_max:g}, got {value:g} at {time_name} = {x:g}",
            )
        if out and x <= out[-1][0]:
            order = "repeated" if x == out[-1][0] else "out of order"
            raise InputError(
                field,
                f"knot {position}s must increase; {time_name} = {x:g} is {order} "
                f"(after {time_name} = {out[-1][0]:g})",
            )
        out.append((x, value))
    return tuple(out)


def parse_knots(text: str, field: str, time_name: str = "t") -> Knots:
    """'0:0,200:1e-3' as ((0, 0), (200, 1e-3)) (unchecked: see check_knots)."""
    out = []
    for item in (x for x in text.replace(" ", "").split(",") if x):
        parts = item.split(":")
        try:
            if len(parts) != 2:
                raise ValueError
            out.append((float(parts[0]), float(parts[1])))
        except ValueError:
            raise InputError(
                field,
                f"expected knots {time_name}:value separated by commas, like 0:0,200:1e-3, got {item!r}",
            ) from None
    return tuple(out)


def knots_text(knots: Knots) -> str:
    """The option's text of ``knots`` ('0:0,200:0.001'), exact (repr of each number)."""
    return ",".join(f"{t!r}:{v!r}" for t, v in knots)


def exact_number_text(x: float) -> str:
    """A number as short as it reads back exactly (200, 0.001, 1e-05)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


def short_knots_text(knots: Knots) -> str:
    """``knots`` as a field and a pin's name show them ('0:0,200:0.001'), each number as
    short as reads back exactly."""
    return ",".join(f"{exact_number_text(t)}:{exact_number_text(v)}" for t, v in knots)
