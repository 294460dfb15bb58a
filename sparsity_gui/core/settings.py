"""One declared description of a model's settings: each model lists its settings once
(core/note/settings.py, core/interference/settings.py) as `Setting`s, and whatever checks,
names, stores or prints a setting derives from that table: the parameters' checks (and so
the dock's fields, the commands' options and the API's arguments, which check through
them), whether a change is live or starts a new run, a pinned run's name, what pins.json,
sessions and figure JSON keep of a run. A new setting is added to its model's table.

A `Setting` is either a field of the model's parameters (its ``check`` normalises a value
or raises InputError naming it) or derived from them (``get``: the note's λ warm-up is a
schedule of two knots). Qt-free, numpy-free.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sparsity_gui.core.checks import finite_number, whole_or_none
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.knots import exact_number_text, short_knots_text
from sparsity_gui.core.text import sci, short_number

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")

# How a change of a setting meets a run in progress:
LIVE = "live"  # it goes on from the state now, recorded as a live change (a session replays it)
END = "end"  # it only moves the run's end (the note's t_end)
NEW_RUN = "new run"  # it starts a new run


def format_value(value: Any) -> str:
    """A setting as names and legends show it: 10⁴, 12,345, 100, 2.0e-3, 0.9, 0, gd, none."""
    if isinstance(value, str):
        return value
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int) or whole_or_none(value) is not None:
        value = int(value)
        if value >= 10_000 and str(value).rstrip("0") == "1":  # 10⁴, not 100 steps as 10²
            return "10" + str(len(str(value)) - 1).translate(_SUPERSCRIPT)
        return f"{value:,}"
    value = float(value)
    if not math.isfinite(value) or value == 0 or 1e-2 <= abs(value) < 1e4:
        return f"{value:.3g}"
    return sci(value)


def format_sci(value: Any) -> str:
    """A strength in scientific notation, as the change markers write it (2.0e-3); 0 as 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return format_value(value)
    return "0" if value == 0 else sci(value)


def format_count(value: Any) -> str:
    """A count (steps) as it is read: 10,000 and 100,000,000, never as a power 10⁴."""
    whole = whole_or_none(value, integral_floats=True)
    return format_value(value) if whole is None else f"{whole:,}"


def format_seed(value: Any) -> str:
    """A seed is a name, not a quantity: its digits as `--seed` takes them (12345)."""
    whole = whole_or_none(value, integral_floats=True)
    return format_value(value) if whole is None else str(whole)


def format_steps(value: Any) -> str:
    """A warm-up's length in steps: 0 as none, else a count (10,000)."""
    return "none" if value in (0, None) else format_count(value)


def format_time(value: Any) -> str:
    """A warm-up's length: 0 as none."""
    return "none" if value in (0, None) else format_exact(value)


def format_exact(value: Any) -> str:
    """A number as short as reads back exactly (200, 0.001, 1e-05); anything else as format_value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return format_value(value)
    return exact_number_text(value)


# --- checks, made from bounds ----------------------------------------------------------------
Check = Callable[[Any], Any]


def with_bounds(check: Check, bounds: str) -> Check:
    """``check`` declaring what it accepts (Setting.bounds: the commands' help states it)."""
    check.bounds = bounds  # type: ignore[attr-defined]
    return check


def whole_check(name: str, low: int, high: int, high_text: str | None = None) -> Check:
    """A whole number from ``low`` to ``high`` (as a Python int)."""
    bounds = f"a whole number from {low} to {high_text or short_number(high)}"

    def check(value: Any) -> int:
        v = whole_or_none(value)
        if v is None or not low <= v <= high:
            raise InputError(name, f"must be {bounds}, got {value!r}")
        return v

    return with_bounds(check, bounds)


@dataclass(frozen=True)
class NumberCheck:
    """A finite number within [low, high] (an open end excludes its bound), as a float; its
    bounds are data, so a narrower check (a grid's λ, which is not 0) is made from them."""

    name: str
    low: float
    high: float
    low_open: bool = False
    high_open: bool = False
    why: str = ""  # what the refusal adds in parentheses

    @property
    def bounds(self) -> str:
        """What it accepts, as its refusal says it (Setting.bounds: the commands' help)."""
        return bounds_text(self.low, self.high, self.low_open, self.high_open)

    def __call__(self, value: Any) -> float:
        v = finite_number(self.name, value)
        low, high = self.low, self.high
        if (v <= low if self.low_open else v < low) or (v >= high if self.high_open else v > high):
            raise InputError(self.name, f"must be {self.bounds}{self.why}, got {value}")
        return v


def number_check(
    name: str, low: float, high: float, *, low_open: bool = False, high_open: bool = False, why: str = ""
) -> NumberCheck:
    """A finite number within [low, high] (an open end excludes its bound), as a float.
    ``why``: what the refusal adds in parentheses."""
    return NumberCheck(name, low, high, low_open, high_open, why)


def bounds_text(low: float, high: float, low_open: bool = False, high_open: bool = False) -> str:
    """'from 0 to 1', '> 0 and at most 2', 'from 0 to below 1'; '>= 0' or '> 0' with no
    upper bound (never 'to inf')."""
    lo, hi = short_number(low), short_number(high)
    if math.isinf(high):
        return f"> {lo}" if low_open else f">= {lo}"
    if low_open:
        return f"> {lo} and {'below' if high_open else 'at most'} {hi}"
    return f"from {lo} to {'below ' if high_open else ''}{hi}"


def choice_check(name: str, choices: Iterable[str]) -> Check:
    allowed = tuple(choices)

    bounds = f"one of {', '.join(allowed)}"

    def check(value: Any) -> str:
        if value not in allowed:
            raise InputError(name, f"must be {bounds}, got {value!r}")
        return value

    check.choices = allowed  # type: ignore[attr-defined]  # the commands' help lists them
    return with_bounds(check, bounds)


# --- the table -------------------------------------------------------------------------------
# what a grid axis's values are: numbers, whole numbers, names of a choice, knots step:value
AXIS_KINDS = ("number", "whole", "choice", "knots")


@dataclass(frozen=True)
class Setting:
    """One setting of a model's runs."""

    name: str  # the parameters' field (or, with ``get``, a name of its own)
    symbol: str  # how names and legends write it: λ, m, σ, λ warm-up
    default: Any  # the value a run has unless told otherwise (as stored)
    change: str  # LIVE, END or NEW_RUN: what a change does to a run in progress
    what: str  # one line: what it is (with its unit)
    check: Check | None = None  # value -> normalised value, or InputError naming it
    fmt: Callable[[Any], str] = format_value
    unit: str = ""  # after the value: '50 steps'
    in_pin_name: bool = True  # a pinned run's name lists it when it differs
    get: Callable[[Any], Any] | None = None  # its stored value from the params (else the field's)
    derived: bool = False  # not a field of the parameters: made from others (``get``)
    # A grid of runs may take several values of it (a sweep's axis: its command, the Python
    # API and the window's grid tab take a list of it, core/interference/axes.py): the kind of
    # its values, one of AXIS_KINDS; "" for a setting every run of a grid shares.
    axis: str = ""
    # A command option (and the Python API's argument) that is no grid axis: the kind of its
    # value, one of AXIS_KINDS; every run of a grid shares it. An axis is an option anyway.
    option: str = ""
    # (field, values): a command or API call that gives this setting refuses it unless the
    # run's ``field`` is one of ``values`` (Adam's β₁ under gradient descent means nothing)
    only_with: tuple[str, tuple[str, ...]] | None = None
    # the placeholder of its command option's value ('C', 'T0'); '' for the one its kind
    # gives (see ``metavar_text``)
    metavar: str = ""
    # A run's description (the figures' titles, the docks' run lines) names it even at its
    # default: what a reader needs to place the run (λ and m; n, m and l1)
    always: bool = False

    def __post_init__(self) -> None:
        for kind in (self.axis, self.option):
            if kind and kind not in AXIS_KINDS:
                raise ValueError(f"{self.name}: a kind must be one of {', '.join(AXIS_KINDS)}, got {kind!r}")
        if self.axis and self.option:
            raise ValueError(f"{self.name}: an axis is an option already; give axis or option")

    @property
    def bounds(self) -> str:
        """What the check accepts, as its refusal says it ('from 0 to 1', '> 0', 'a whole
        number from 1 to 1e8', 'one of exact, gd'); '' for a check that declares none."""
        return getattr(self.check, "bounds", "")

    @property
    def metavar_text(self) -> str:
        """How a command's help writes its value: the row's own, else KNOTS for knots, STEPS
        for a count of steps, the choices as argparse writes them ('{l1,topk,jumprelu}')."""
        choices = getattr(self.check, "choices", None)
        if self.metavar:
            return self.metavar
        if "knots" in (self.axis, self.option):
            return "KNOTS"
        if self.unit == "steps":
            return "STEPS"
        if choices is not None:
            return "{" + ",".join(choices) + "}"
        return self.name.upper()

    @property
    def default_text(self) -> str:
        """The default as names write it, with the unit: '1.0e-3', '7,500', 'none'."""
        shown = self.fmt(None if self.default == () else self.default)  # no knots: none
        return f"{shown} {self.unit}" if self.unit and shown != "none" else shown

    def accepts(self, default: str | None = None, more: str = "") -> str:
        """What it accepts and starts at, as the refusal and the names write them: 'from 0 to
        1; default 1.0e-3' (the commands' help and the dock's tooltips say it so).
        ``default``: a surface's own default where it is not the table's; ``more``: after it."""
        shown = self.default_text if default is None else default
        return "; ".join(part for part in (self.bounds, f"default {shown}{more}") if part)

    @property
    def live(self) -> bool:
        """Whether a change goes on with the run (a live change, or the run's end moved)."""
        return self.change != NEW_RUN

    def value(self, params: Any) -> Any:
        """The setting of ``params`` as it is stored and compared (JSON: knots as text)."""
        if self.get is not None:
            return self.get(params)
        value = getattr(params, self.name)
        if isinstance(value, tuple):  # knots
            return short_knots_text(value) if value else None
        return value

    def text(self, value: Any) -> str:
        """'λ = 2.0e-3', 'λ warm-up = 50', 'steps = 1,000'."""
        shown = self.fmt(value)
        return f"{self.symbol} = {shown}{' ' + self.unit if self.unit and shown != 'none' else ''}"


class Settings:
    """A model's settings, in the order names and legends list them."""

    def __init__(self, settings: Iterable[Setting]):
        self.items: tuple[Setting, ...] = tuple(settings)
        self.by_name: dict[str, Setting] = {s.name: s for s in self.items}
        if len(self.by_name) != len(self.items):
            raise ValueError("two settings have the same name")

    def __iter__(self) -> Iterator[Setting]:
        return iter(self.items)

    def __getitem__(self, name: str) -> Setting:
        return self.by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    @property
    def fields(self) -> tuple[str, ...]:
        """The settings that are fields of the parameters (not derived)."""
        return tuple(s.name for s in self.items if not s.derived)

    def axes(self, kind: str | None = None) -> tuple[str, ...]:
        """The settings a grid may vary (of the ``kind`` given), in the table's order."""
        return tuple(s.name for s in self.items if s.axis and (kind is None or s.axis == kind))

    def option_names(self) -> tuple[str, ...]:
        """The settings that are a command option but no grid axis (Setting.option)."""
        return tuple(s.name for s in self.items if s.option)

    def refuse_unless_goes_with(self, given: Mapping[str, Any]) -> None:
        """InputError for a setting ``given`` (its name: its value) whose row says it goes
        only with values of another field (Setting.only_with) that the run's is not (the
        run's: ``given``'s, else the table's default)."""
        for name in given:
            row = self.by_name.get(name)
            if row is None or row.only_with is None:
                continue
            field, values = row.only_with
            run_value = given.get(field, self[field].default)
            if run_value not in values:
                allowed = " or ".join(values)
                raise InputError(
                    name, f"goes with --{field} {allowed}; the run's {run_value} has no {row.symbol}"
                )

    def names(self, change: str) -> tuple[str, ...]:
        """The fields whose change is ``change`` (LIVE: a session's live changes)."""
        return tuple(s.name for s in self.items if not s.derived and s.change == change)

    def check(self, name: str, value: Any, field: str | None = None) -> Any:
        """``value`` of setting ``name`` normalised, or InputError naming it (or ``field``:
        the name a surface gives it, the command's 'l1-schedule')."""
        check = self[name].check
        if check is None:
            return value
        try:
            return check(value)
        except InputError as exc:
            if field is None or exc.field == field:
                raise
            raise InputError(field, exc.message) from None

    def checked_fields(self, params: Any) -> None:
        """Every field of ``params`` (a frozen dataclass being built) checked and normalised
        in place: the parameters' __post_init__ (cross-field rules are theirs)."""
        for s in self.items:
            if not s.derived and s.check is not None:
                object.__setattr__(params, s.name, s.check(getattr(params, s.name)))

    def values(self, params: Any, names: Iterable[str] | None = None) -> dict[str, Any]:
        """{name: stored value} of every setting (or of ``names``)."""
        chosen = self.items if names is None else [self[n] for n in names]
        return {s.name: s.value(params) for s in chosen}

    def pin_values(self, params: Any) -> dict[str, Any]:
        """What a pinned run keeps of its settings: every one its name may list."""
        return {s.name: s.value(params) for s in self.items if s.in_pin_name}

    @property
    def pin_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.items if s.in_pin_name)

    def differing_names(
        self, pinned: Mapping[str, Any], live: Mapping[str, Any], skip: Iterable[str] = ()
    ) -> list[str]:
        """The settings a pinned run's name lists whose value differs from the live run's (a
        setting a pin from an older file did not keep is not compared), in the table's order."""
        skipped = set(skip)
        return [
            s.name
            for s in self.items
            if s.in_pin_name
            and s.name not in skipped
            and s.name in pinned
            and pinned[s.name] != live.get(s.name)
        ]

    def differing(
        self, pinned: Mapping[str, Any], live: Mapping[str, Any], skip: Iterable[str] = ()
    ) -> list[str]:
        """'λ = 2.0e-3' for each setting of differing_names."""
        return [self[name].text(pinned[name]) for name in self.differing_names(pinned, live, skip)]

    def described(self, values: Mapping[str, Any], named: Iterable[str]) -> list[str]:
        """A run's description (``values``: its pin values), in the table's order: 'λ = 2.0e-3'
        for each setting always named (Setting.always) and each one of ``named`` (those that
        differ from a default run's: differing_names); the words of a pin's name."""
        chosen = set(named)
        return [
            s.text(values[s.name]) for s in self.items if s.name in values and (s.always or s.name in chosen)
        ]

    def changed_fields(self, old: Any, new: Any) -> list[str]:
        """The fields whose values differ from ``old`` to ``new``."""
        return [n for n in self.fields if getattr(old, n) != getattr(new, n)]
