"""Knots of a piecewise-linear schedule, ``x:value`` pairs with x increasing (constant before
the first knot and after the last): the note's λ(t) (core/note/schedule.py) and the
interference model's l1 and lr over steps (core/interference/schedules.py) are written,
read and checked the same way. Qt-free, numpy-free."""

from __future__ import annotations

import itertools
import math
import numbers
import re
from typing import Any

from sparsity_gui.core.errors import InputError

Knots = tuple[tuple[float, float], ...]  # (x, value) with x increasing

MAX_KNOTS = 1000
# The longest text of knots read: MAX_KNOTS knots of two 24-character numbers, with room for
# spaces. A longer text is refused before it is split (16 MB once cost 800 MB to refuse).
MAX_KNOTS_TEXT = 64 * MAX_KNOTS


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
    if hasattr(knots, "__len__") and len(knots) > MAX_KNOTS:
        raise InputError(field, f"{len(knots)} knots; at most {MAX_KNOTS} are allowed")
    pairs = []
    for item in knots:
        if isinstance(item, (str, bytes, dict)) or not hasattr(item, "__len__") or len(item) != 2:
            raise InputError(field, f"every knot must be a pair ({time_name}, value), got {_shown(item)}")
        pairs.append(tuple(item))
        if len(pairs) > MAX_KNOTS:  # an endless iterator stops here
            raise InputError(field, f"more than {MAX_KNOTS} knots; at most {MAX_KNOTS} are allowed")
    given_knots(pairs, field, time_name)
    position = "time" if time_name == "t" else time_name
    out: list[tuple[float, float]] = []
    for x, value in pairs:
        for what, v in ((position, x), ("value", value)):
            # numpy's integers and floats too (numbers.Real), as a warm-up takes them; not bools
            if isinstance(v, bool) or type(v).__name__ == "bool_" or not isinstance(v, numbers.Real):
                raise InputError(field, f"every knot's {what} must be a finite number, got {v!r}")
            if not math.isfinite(v):
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


def given_knots(knots: Any, field: str, time_name: str = "t") -> Any:
    """``knots`` a user gave as an option or an argument (a settings table's check, which
    reads no knots as no schedule, has normalised them): at least one."""
    if not knots:
        raise InputError(field, f"needs at least one knot {time_name}:value")
    return knots


def parse_knots(text: str, field: str, time_name: str = "t") -> Knots:
    """'0:0,200:1e-3' as ((0, 0), (200, 1e-3)) (unchecked: see check_knots). A text of more
    than MAX_KNOTS knots or MAX_KNOTS_TEXT characters is refused before it is split."""
    if text.count(",") >= MAX_KNOTS and _items_past(text, MAX_KNOTS):
        raise InputError(field, f"more than {MAX_KNOTS} knots; at most {MAX_KNOTS} are allowed")
    if len(text) > MAX_KNOTS_TEXT:
        raise InputError(
            field, f"is {len(text)} characters long; the knots' text is at most {MAX_KNOTS_TEXT} characters"
        )
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
                f"expected knots {time_name}:value separated by commas, like 0:0,200:1e-3, "
                f"got {_shown(item)}",
            ) from None
    return tuple(out)


# An item the parser reads: from its first character other than a space or a comma to the
# next comma (spaces are dropped and empty items skipped, so '0:0, 1:1,' has two).
_ITEM = re.compile(r"[^, ][^,]*")


def _items_past(text: str, most: int) -> bool:
    """Whether ``text`` has more than ``most`` items as parse_knots reads them: at most
    ``most`` + 1 of them found, without a copy of the text."""
    return next(itertools.islice(_ITEM.finditer(text), most, None), None) is not None


def _shown(value: Any) -> str:
    """``value``'s repr for a message, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


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
