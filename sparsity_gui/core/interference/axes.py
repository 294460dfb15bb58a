"""The axes of a sweep: the interference model's options that `sweep` takes as lists (every
front end: the CLI's text, the Python API's lists, the window's fields), the value a run's
row keeps of each, and the readouts a grid's figures and sweep.json summarise per cell.

A sweep runs the product of its lists times its seeds (core/interference/sweep.SweepSpec).
Qt-free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sparsity_gui.core.checks import MAX_LIST_VALUES, check_list_kind, parse_whole
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.grid import grid_m_values
from sparsity_gui.core.interference.params import M_MAX
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.core.knots import given_knots, knots_text, parse_knots, short_knots_text

# The options a sweep takes as lists are the settings table's axes (Setting.axis, with the
# kind of their values), in the order its figures use them: the first varied one is the x
# axis, the second the heatmap's y axis and the curves' legend. An axis the table gains comes
# after these, in the table's order. A sparsity mechanism's coefficient comes before lr: a
# JumpReLU grid draws its readouts against C, a curve per lr (figures/interference/knee.py).
FIGURE_ORDER = (
    "m",
    "l1",
    "k",
    "l0",
    "lr",
    "optimizer",
    "weight_decay",
    "sigma",
    "steps",
    "dtype",
    "noise",
    "noise_sigma",
    "l1_warmup",
    "l1_schedule",
    "lr_warmup",
    "lr_decay",
    "lr_decay_steps",
    "lr_schedule",
)
_TABLE_AXES = INTERFERENCE_SETTINGS.axes()
AXES = (*(a for a in FIGURE_ORDER if a in _TABLE_AXES), *(a for a in _TABLE_AXES if a not in FIGURE_ORDER))
NUMBER_AXES = INTERFERENCE_SETTINGS.axes("number")
WHOLE_AXES = INTERFERENCE_SETTINGS.axes("whole")
KNOT_AXES = INTERFERENCE_SETTINGS.axes("knots")  # knots hold commas: their lists are split at ';'
TEXT_AXES = INTERFERENCE_SETTINGS.axes("choice")

# how figures and tables name an axis (an axis without words here: its setting's symbol)
AXIS_LABELS = {
    **{axis: INTERFERENCE_SETTINGS[axis].symbol for axis in AXES},
    "m": "$m$ (neurons)",
    "l1": "l1 coefficient",
    "lr": "learning rate",
    "optimizer": "optimizer",
    "weight_decay": "weight decay",
    "sigma": r"$\sigma$ of $W(0)$",
    "steps": "steps",
    "dtype": "precision",
    "noise": "noise",
    "noise_sigma": r"noise $\sigma$",
    "l1_warmup": "l1 warm-up (steps)",
    "l1_schedule": "l1 schedule",
    "lr_warmup": "lr warm-up (steps)",
    "lr_decay": "lr decay",
    "lr_decay_steps": "lr decay (steps)",
    "lr_schedule": "lr schedule",
}

# What a sweep can summarise per cell (sweep.csv's columns), with how figures name them.
READOUTS = {
    "polysemantic": "polysemantic neurons",
    "active": "active weights",
    "nonzero": "nonzero weights",
    "kept_share": "kept share",
    "opposite_pairs": "colliding pairs, opposite sign",
    "same_pairs": "colliding pairs, equal sign",
    "sum_w4": r"mean $\sum_k W_{ik}^4$",
    "steps_to_sparse": "steps to sparsity",
    "rail_share": "rail share",
    "shrinkage_ratio": "shrinkage (/ fixed point)",
    "l0_per_input": "units kept per input (L0)",
    "threshold_rail_share": "threshold rail share",
    "dead_units": "dead units (kept by no input)",
}
DEFAULT_READOUT = "polysemantic"
# a run that never became sparse has steps_to_sparse = -1: no value, not a number of steps
NEVER_SPARSE = -1


def option_name(axis: str) -> str:
    return "--" + axis.replace("_", "-")


def check_readout(name: Any) -> str:
    if name not in READOUTS:
        raise InputError("readout", f"must be one of {', '.join(READOUTS)}, got {name!r}")
    return name


def _item(axis: str, text: str, whole: str) -> Any:
    """One value of a list as text, converted as the option takes it."""
    item = text.strip()
    if not item:
        raise InputError(axis, f"an empty value in the list {whole!r}")
    try:
        if axis in NUMBER_AXES:
            value = float(item)
            if not math.isfinite(value):
                raise ValueError
            return value
        if axis in WHOLE_AXES:
            return parse_whole(item)
    except ValueError:
        kind = "a finite number" if axis in NUMBER_AXES else "a whole number"
        raise InputError(axis, f"{item!r} in the list {whole!r} is not {kind}") from None
    if axis in KNOT_AXES:
        return _knots(axis, item)
    return item


def _knots(axis: str, value: Any) -> Any:
    """One schedule of a knots axis, checked by its setting's row (at least one knot)."""
    return given_knots(INTERFERENCE_SETTINGS.check(axis, value), axis, "step")


def _knots_given(value: Any) -> bool:
    """Whether ``value`` is one schedule given as pairs ((0, 0), (1000, 1e-3)) rather than
    a list of schedules."""
    return bool(value) and all(
        isinstance(k, (tuple, list)) and len(k) == 2 and not isinstance(k[0], (tuple, list, str))
        for k in value
    )


def axis_values(axis: str, given: Any) -> tuple:
    """The values of one axis as given: the CLI's text (values separated by commas; for the
    schedules' knots, by ';'; m also takes 'start:stop:step' and powers, as before), a
    list, or one value. Each value is converted as the option takes it (its range is
    InterferenceParams' to check); repeats are dropped, numbers sorted."""
    if axis not in AXES:
        raise InputError("sweep", f"{axis!r} is not an option a sweep varies ({', '.join(AXES)})")
    if axis == "m":
        return grid_m_values(given, M_MAX)
    if isinstance(given, str):
        sep = ";" if axis in KNOT_AXES else ","
        values = [_item(axis, part, given) for part in given.split(sep)]
    elif axis in KNOT_AXES and _knots_given(given):
        values = [_knots(axis, given)]
    elif isinstance(given, (list, tuple, np.ndarray, range)):
        values = [
            _item(axis, v, str(list(given))) if isinstance(v, str) else _converted(axis, v) for v in given
        ]
    else:
        values = [_converted(axis, given)]
    if not values:
        raise InputError(axis, "an empty list")
    if len(values) > MAX_LIST_VALUES:
        raise InputError(axis, f"{len(values)} values; at most {MAX_LIST_VALUES} are allowed")
    unique = list(dict.fromkeys(values))
    if axis in NUMBER_AXES or axis in WHOLE_AXES:
        unique.sort()
    return tuple(unique)


def _converted(axis: str, v: Any) -> Any:
    """One value given as a Python object (the API's lists), as the option takes it."""
    if axis in KNOT_AXES:
        return _knots(axis, v)
    if isinstance(v, np.generic):
        v = v.item()
    if axis in NUMBER_AXES and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    return v


def split_lists(options: dict[str, Any]) -> dict[str, tuple]:
    """The options given with several values (all AXES but m), taken out of ``options`` and
    returned in AXES order; an option with one value stays in ``options``, as that value.
    In place, before the defaults are filled in (None: not given)."""
    lists: dict[str, tuple] = {}
    for axis in AXES[1:]:
        given = options.get(axis)
        if given is None:
            continue
        values = axis_values(axis, given)
        if len(values) == 1:
            options[axis] = values[0]
        else:
            lists[axis] = values
            options[axis] = None
    for name, schedule in (("l1", "l1_schedule"), ("l0", "l0_schedule"), ("lr", "lr_schedule")):
        if schedule in lists and (options.get(name) is not None or name in lists):
            raise InputError(
                name,
                f"a list of {option_name(schedule)} sets {name} for each run (the value after its "
                f"last knot): leave {option_name(name)} out",
            )
    return lists


def list_text(axis: str, values: Sequence) -> str:
    """An axis's values (axis_values') as the option's text, which reads back as them."""
    if axis in KNOT_AXES:
        return ";".join(knots_text(k) for k in values)
    return ",".join(repr(v) if isinstance(v, float) else str(v) for v in values)


def listed(axis: str, given: Any) -> Any:
    """A value the Python API was given for ``axis``: a list of several values as the
    option's text (list_text); one value, or text, unchanged."""
    if given is None or isinstance(given, str):
        return given
    check_list_kind(axis, given)
    several = isinstance(given, (list, tuple, np.ndarray, range))
    if several and not (axis in KNOT_AXES and _knots_given(given)):
        return list_text(axis, axis_values(axis, given))
    return given


def row_value(p: Any, axis: str) -> Any:
    """The value a run's row keeps of ``axis`` (``p``: its InterferenceParams): the weight
    decay in force, a schedule's knots as the option's text ('' without), k as 0 without TopK."""
    if axis == "weight_decay":
        return p.effective_weight_decay
    if axis == "k":  # 0: a run without TopK
        return p.k or 0
    if axis in KNOT_AXES:
        return knots_text(getattr(p, axis)) if getattr(p, axis) else ""
    return getattr(p, axis)


def value_text(axis: str, value: Any) -> str:
    """A value of an axis as tables, legends and tick labels show it."""
    if axis in KNOT_AXES:  # as the fields and pins' names write knots: '0:0,500:0.002'
        knots = parse_knots(value, axis, "step") if isinstance(value, str) else value
        return short_knots_text(knots) if knots else "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def setting_text(axis: str, value: Any) -> str:
    """A value of an axis as its settings row names it ('l1 = 1.0e-3', 'L0 schedule =
    0:0,500:0.05'), from the value a row keeps (row_value)."""
    setting = INTERFERENCE_SETTINGS[axis]
    if axis in KNOT_AXES or (axis == "k" and not value):  # kept as text; 0: no TopK
        return f"{setting.symbol} = {value_text(axis, value) if value else 'none'}"
    return setting.text(value)


def fixed_settings(spec: Any) -> list[tuple[str, str]]:
    """The settings every run of a sweep (``spec``: its SweepSpec) shares, as (option, text)
    in the order a figure's title and the live panel's note say them (n and the seeds are
    the callers'): m and l1 always, then every other that differs from a default run's,
    each written as a pinned run's name writes it (the settings table's row), none that
    the sweep varies."""
    from sparsity_gui.core.interference.pins import differing_from_default, pin_params

    values = pin_params(spec.base)
    named = set(differing_from_default(values))
    skip = {*spec.varied, "n", "seed"}
    if "noise" in spec.varied:  # a noise kind varied: its σ is shared (none has no σ)
        skip.discard("noise_sigma")
        named.add("noise_sigma")
    return [
        (s.name, s.text(values[s.name]))
        for s in INTERFERENCE_SETTINGS
        if s.name in values and s.name not in skip and (s.always or s.name in named)
    ]


def rows_settings(rows: Sequence[Any]) -> list[str]:
    """The settings of a sweep's rows (SweepRows) as the settings table names them, for a
    panel or a figure drawn from the rows alone: n and l1 always, then every setting that
    differs from a default run's (one shared by all rows: 'l1 warm-up = 50 steps'; several:
    'lr = 1.0e-2/1.0e-1'); m and the seeds are the callers'."""
    from sparsity_gui.core.interference.pins import differing_from_default

    shared: dict[str, Any] = {}
    several: dict[str, list[Any]] = {}
    for setting in INTERFERENCE_SETTINGS:
        if setting.name in ("m", "seed") or not rows or not hasattr(rows[0], setting.name):
            continue
        kept = {getattr(r, setting.name) for r in rows} - {""}  # '' : no knots
        values = sorted(v for v in kept if not (isinstance(v, float) and math.isnan(v)))
        if setting.name in KNOT_AXES:  # as a pin keeps knots: '0:0,500:0.002'
            values = [short_knots_text(parse_knots(v, setting.name, "step")) for v in values]
        if setting.name == "k":
            values = [v for v in values if v]  # 0: no TopK
        if len(values) > 1:
            several[setting.name] = values
        elif values:
            shared[setting.name] = values[0]
    named = set(differing_from_default(shared)) | set(several)
    texts = []
    for setting in INTERFERENCE_SETTINGS:
        if setting.name in several:
            shown = "/".join(setting.fmt(v) for v in several[setting.name])
            texts.append(f"{setting.symbol} = {shown}")
        elif setting.name in shared and (setting.always or setting.name in named):
            texts.append(setting.text(shared[setting.name]))
    return texts


def readout_values(rows: Sequence[Any], readout: str) -> np.ndarray:
    """A readout of each row as floats; NaN where a run has none (never sparse)."""
    y = np.array([getattr(r, readout) for r in rows], dtype=float)
    if readout == "steps_to_sparse":
        y[y == NEVER_SPARSE] = np.nan
    return y
