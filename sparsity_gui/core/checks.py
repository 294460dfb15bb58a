"""Checks of user input shared by both models and every front end: numbers and whole
numbers (typed values, or text from a field or the command line), lists of them (the m
values of a sweep, the lam values of a scaling grid), and the memory a run may still
allocate."""

from __future__ import annotations

import math
import operator
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from sparsity_gui.core.errors import InputError


def finite_number(name: str, value: Any) -> float:
    """``value`` as a finite float (ints and floats only: not bools, not strings)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(name, f"must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise InputError(name, f"must be finite, got {value}")
    return value


def whole_or_none(value: Any, integral_floats: bool = False) -> int | None:
    """A Python int from an int or numpy integer (and, with ``integral_floats``, from a
    float such as 3.0, as JSON may give); None for anything else, bools included."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if integral_floats and isinstance(value, float):
        return int(value) if value.is_integer() else None
    try:
        return operator.index(value)
    except TypeError:
        return None


def parse_whole(text: str) -> int:
    """A whole number from text: '250', '1e6' or '2.0'. Text that is not a number raises
    ValueError; a number that is not whole (2.5, inf) raises InputError (a ValueError
    too) saying so."""
    text = text.strip()
    try:
        return int(text)  # exact, however many digits
    except ValueError:
        pass
    value = float(text)
    if not math.isfinite(value) or not value.is_integer():
        raise InputError("", f"must be a whole number, got {text!r}")
    return int(value)


MAX_LIST_VALUES = 1000  # values in one list or range: 1:1e12:1 is a typo, not a plan
_POWER = re.compile(r"^\s*(\d+)\s*(?:\^|\*\*)\s*(\d+)\s*$")


def _whole_item(text: str) -> int:
    """A whole number of a list: parse_whole's forms, or a power written 10^3 or 10**3."""
    power = _POWER.match(text)
    if power is not None:
        base, exponent = int(power.group(1)), int(power.group(2))
        if exponent > 30:
            raise ValueError(text)
        return base**exponent
    return parse_whole(text)


def parse_m_values(text: str) -> tuple[int, ...]:
    """Values of m as a sweep takes them: a list '64,128,256', powers '1e3,1e4,1e5' or
    '10^3,10^4', or a range 'start:stop:step' (stop included), e.g. '256:4096:256'. The
    range of each value is the caller's to check (each model has its own)."""
    text = text.strip()
    try:
        if ":" in text:
            parts = [_whole_item(x) for x in text.split(":")]
            if len(parts) != 3 or parts[2] <= 0:
                raise ValueError
            values = range(parts[0], parts[1] + 1, parts[2])
        else:
            values = [_whole_item(x) for x in text.replace(" ", "").split(",") if x]
    except (ValueError, OverflowError):
        raise InputError(
            "m",
            f"expected a list like 64,128,256, powers like 1e3,1e4,1e5 or a range "
            f"start:stop:step, got {text!r}",
        ) from None
    if len(values) > MAX_LIST_VALUES:
        raise InputError(
            "m", f"{text!r} gives {len(values)} values of m; at most {MAX_LIST_VALUES} are allowed"
        )
    if not values:
        raise InputError("m", f"no values of m in {text!r}")
    return tuple(values)


def list_text(values: str | int | float | Sequence[int | float]) -> str:
    """A list option as the CLI's text: text as given, a list or one value joined with commas
    (each value as str, which for a float is the text that reads back bit for bit)."""
    if isinstance(values, str):
        return values
    if isinstance(values, Sequence):
        return ",".join(str(v) for v in values)
    return str(values)


def parse_number_list(name: str, text: str) -> tuple[float, ...]:
    """Finite numbers separated by commas ('1e-4,1e-3,1e-2'); their range is the caller's
    to check."""
    items = [x for x in text.replace(" ", "").split(",") if x]
    values = []
    for item in items:
        try:
            value = float(item)
        except ValueError:
            raise InputError(
                name, f"expected numbers separated by commas, like 1e-4,1e-3, got {text!r}"
            ) from None
        if not math.isfinite(value):
            raise InputError(name, f"every value must be finite, got {item}")
        values.append(value)
    if not values:
        raise InputError(name, f"no values of {name} in {text!r}")
    if len(values) > MAX_LIST_VALUES:
        raise InputError(name, f"{len(values)} values of {name}; at most {MAX_LIST_VALUES} are allowed")
    return tuple(values)


def available_memory() -> int | None:
    """Bytes this process can still allocate: free RAM, or less under a ulimit -v."""
    limit = None
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limit = soft
    except (ImportError, OSError, ValueError):
        pass
    ram = free_ram()
    if ram is None:
        return limit
    return ram if limit is None else min(ram, limit)


def free_ram() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def default_workers() -> int:
    """Runs side by side on this machine by default: one per core, at most 8 (both models'
    sweeps and the scaling grid)."""
    return max(1, min(os.cpu_count() or 1, 8))
