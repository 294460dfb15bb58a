"""Checks of user input shared by both models and every front end: numbers and whole
numbers (typed values, or text from a field or the command line), lists of them (the m
values of a sweep, the lam values of a scaling grid), the memory a run may still
allocate, the work a run may take (check_work), and input files (regular files only,
bounded in size and JSON depth: regular_file, read_input_bytes, read_json_file)."""

from __future__ import annotations

import json
import math
import operator
import os
import re
import stat
from collections.abc import Sequence
from typing import Any

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.text import round_number, short_number


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


def parse_m_values(text: str, m_max: int) -> tuple[int, ...]:
    """Values of m as a grid of runs takes them (both models' grids, every front end): a
    list '64,128,256', powers '1e3,1e4,1e5' or '10^3,10^4', or a range 'start:stop:step'
    (stop included), e.g. '256:4096:256'; each from 1 to ``m_max`` (the model's)."""
    text = text.strip()
    try:
        if ":" in text:
            parts = [_whole_item(x) for x in text.split(":")]
            if len(parts) != 3 or parts[2] <= 0:
                raise ValueError
            values: range | list[int] = range(parts[0], parts[1] + 1, parts[2])
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
    bad = [m for m in values if not 1 <= m <= m_max]
    if bad:
        raise InputError("m", f"every m must be from 1 to {short_number(m_max)}, got {bad[0]}")
    return tuple(values)


def check_list_kind(name: str, given: Any) -> None:
    """Refuses, naming ``name``, what the Python API may not give for a list option: a set,
    a dict (no order, or not values) or a numpy array of more than one dimension."""
    if isinstance(given, (set, frozenset, dict)) or (isinstance(given, np.ndarray) and given.ndim != 1):
        what = f"a {given.ndim}-D array" if isinstance(given, np.ndarray) else f"a {type(given).__name__}"
        raise InputError(
            name,
            f"must be one value or a list of values (a list, a tuple or a 1-D numpy array), not {what}",
        )


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


def check_fits(field: str, need: int, what: str) -> None:
    """Refuse ``need`` bytes for ``what`` (e.g. "m = 1000") when less memory is available
    now; the error names ``field``. Unknown free memory refuses nothing."""
    avail = available_memory()
    if avail is not None and need > avail:
        raise InputError(
            field,
            f"{what} needs about {need / 2**30:.1f} GiB of memory, only {avail / 2**30:.1f} GiB is available",
        )


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


# --- bounded work -----------------------------------------------------------------------------
# The most work one run may take, by its unit: the note model counts solver steps (the exact
# solver's DOP853 steps, or gradient-descent steps; about 10^9 is minutes to an hour here) and,
# for gradient descent, weight-steps too (each step passes over the weights still alive, about
# 10^10 a second here), the interference model multiply-adds (about 10^10 a second here: 10^15
# is about a day). A
# run estimated above its limit is refused before it starts, by every front end; the
# environment variable raises (or lowers) the limit for a run that is meant to be long.
WORK_LIMITS: dict[str, tuple[int, str]] = {
    "steps": (10**9, "SPARSITY_GUI_MAX_STEPS"),
    "weight-steps": (10**15, "SPARSITY_GUI_MAX_WEIGHT_STEPS"),
    "multiply-adds": (10**15, "SPARSITY_GUI_MAX_MULTIPLY_ADDS"),
}


def work_limit(unit: str) -> int:
    """The limit of ``unit`` (a key of WORK_LIMITS): its environment variable's value
    (a whole number such as 1e12) if set, else the default of WORK_LIMITS."""
    default, variable = WORK_LIMITS[unit]
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        limit = parse_whole(text)
    except (ValueError, OverflowError):
        limit = 0
    if limit < 1:
        raise InputError(variable, f"must be a whole number of at least 1, like 1e12, got {text!r}")
    return limit


def _amount(x: float) -> str:
    if not math.isfinite(x):
        return "infinitely many"
    return f"{x:.0f}" if x < 1e6 else round_number(x)


def check_work(field: str, what: str, need: float, unit: str) -> None:
    """Refuse (InputError naming ``field``) a run whose estimated work ``need`` (in ``unit``)
    is over the limit: "``what`` would need about N steps; the limit is L, raise it with
    VARIABLE=N". The one rule of bounded work, for both models and every front end."""
    limit = work_limit(unit)
    if need <= limit:  # False for NaN and inf too
        return
    variable = WORK_LIMITS[unit][1]
    if math.isfinite(need) and need < 1e300:
        suggested = f"1e{math.ceil(math.log10(need))}"
        how = f"raise it with the environment variable {variable}, e.g. {variable}={suggested}"
    else:
        how = "no run that long can end"
    raise InputError(
        field,
        f"{what} would need {'more than' if _amount(need) == _amount(limit) else 'about'} "
        f"{_amount(need)} {unit}; the limit is {_amount(limit)} per run ({how})",
    )


# --- input files ------------------------------------------------------------------------------
MAX_JSON_DEPTH = 32  # no file of ours nests deeper than about 5
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _not_regular(mode: int) -> str:
    for test, what in _KINDS:
        if test(mode):
            return what
    return "not a regular file"


def regular_file(path: str | os.PathLike, field: str) -> os.stat_result:
    """The status of ``path`` (symlinks followed) if it is a regular file; otherwise an
    InputError naming ``field``: missing, a folder, a FIFO, a socket or a device (which
    would block or never end if opened). Every reader of an input file asks this first."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(field, f"{path}: no such file") from None
    except PermissionError:
        raise InputError(field, f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(field, f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(field, f"{path}: is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(field, f"{path}: is {_not_regular(st.st_mode)}, not a regular file")
    return st


def read_input_bytes(path: str | os.PathLike, field: str, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (``what`` names it in the
    message). Opened without blocking, and checked again once open, so a FIFO put in its
    place meanwhile cannot hang the read."""
    st = regular_file(path, field)
    if st.st_size > max_bytes:
        raise InputError(field, f"{path}: {st.st_size} bytes is too large for a {what} (at most {max_bytes})")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except PermissionError:
        raise InputError(field, f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(field, f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(field, f"{path}: is {_not_regular(st.st_mode)}, not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(field, f"{path}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise InputError(field, f"{path}: too large for a {what} (more than {max_bytes} bytes)")
    return data


def input_text(data: bytes, path: str | os.PathLike, field: str, what: str) -> str:
    """File bytes as UTF-8 text (a byte-order mark dropped), or an InputError saying the
    file is empty or binary, not a ``what``."""
    if not data.strip():
        raise InputError(field, f"{path}: the file is empty")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(field, f"{path}: not a {what} (binary data, not UTF-8 text)") from None
    if "\x00" in text:
        raise InputError(field, f"{path}: not a {what} (binary data, not text)")
    return text


def json_depth(value: Any) -> int:
    """How deeply lists and objects nest in a parsed JSON value (0 for a number), found
    without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, depth)
        stack.extend((x, depth + 1) for x in item if isinstance(x, (list, dict)))
    return deepest


def parse_json_text(text: str, where: str, field: str, what: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """JSON text parsed, or an InputError naming ``where`` (if any): not JSON (where it breaks), or
    lists and objects nested deeper than ``max_depth`` (Python's parser would end in a
    RecursionError on deep enough nesting)."""
    at = f"{where}: " if where else ""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            field, f"{at}not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        obj = None
        depth = math.inf
    except ValueError as exc:  # an integer of more than 4300 digits (sys.get_int_max_str_digits)
        raise InputError(field, f"{at}not valid JSON ({str(exc).split(';')[0]})") from None
    else:
        depth = json_depth(obj)
    if depth > max_depth:
        raise InputError(field, f"{at}not a {what} (lists and objects nested more than {max_depth} deep)")
    return obj


def read_json_file(
    path: str | os.PathLike, field: str, what: str, max_bytes: int, max_depth: int = MAX_JSON_DEPTH
) -> Any:
    """A JSON file of at most ``max_bytes`` parsed, every failure an InputError naming the
    file: not a regular file, too large, empty, not UTF-8, not JSON, nested too deep."""
    text = input_text(read_input_bytes(path, field, max_bytes, what), path, field, what)
    return parse_json_text(text, str(path), field, what, max_depth)
