"""Checks of user input shared by both models and every front end: numbers and whole
numbers (typed values, or text from a field or the command line), and the memory a run may
still allocate."""

from __future__ import annotations

import math
import operator
import os
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
