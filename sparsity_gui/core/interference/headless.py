"""The interference model's headless runs, as the `interference` and `sweep` commands and the
Python API (sparsity_gui.api) make them: their defaults and their settings, checked in one
place (the CLI's option names, with ``no_interference`` for --no-interference); and the one
front door of a sweep (sweep_order), which the command, the API and the window's Sweep tab
all hand their options to, with the command line of the same options (sweep_argv)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from sparsity_gui.core.cluster import Scheduler
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.grid import GridOrder, given_options, grid_m_values, option_argv, scheduler_of
from sparsity_gui.core.interference.axes import AXES, axis_values, list_text, split_lists
from sparsity_gui.core.interference.params import (
    M_MAX,
    MECHANISM_SETTINGS,
    InterferenceParams,
    check_memory,
    check_training_work,
)
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS, MECHANISM_FIELDS
from sparsity_gui.core.interference.sweep import SweepSpec
from sparsity_gui.core.knots import given_knots, knots_text
from sparsity_gui.core.settings import whole_check

SWEEP_DEFAULTS = dict(
    n=64,
    m="64,128,256,512,1024",
    seeds=4,
    seed=0,
    steps=7500,
    optimizer="adamw",
    l1=1e-3,
    lr=1e-3,
    sigma=1.0,
    dtype="float64",
)

# --paper: the paper's settings (Lecomte et al. 2023)
PAPER: dict[str, Any] = dict(
    n=256, m="256:4096:256", seeds=16, steps=7500, optimizer="adamw", l1=1e-3, lr=1e-3
)

# a run's: its settings' rows' defaults (a sweep's differ above: a smaller n, a list of m)
INTERFERENCE_DEFAULTS = {
    name: INTERFERENCE_SETTINGS[name].default
    for name in ("n", "m", "seed", "steps", "optimizer", "l1", "lr", "sigma", "dtype")
}


def paper_text() -> str:
    """--paper's settings as its help says them, each as its row formats it: 'n=256,
    m=256:4096:256, 16 seeds, 7,500 steps, adamw, l1=lr=1.0e-3: 256 runs with W up to
    256 x 4096' (from PAPER)."""
    p, S = PAPER, INTERFERENCE_SETTINGS
    ms = grid_m_values(p["m"], M_MAX)
    l1, lr = S["l1"].fmt(p["l1"]), S["lr"].fmt(p["lr"])
    return (
        f"n={S['n'].fmt(p['n'])}, m={p['m']}, {p['seeds']} seeds, {S['steps'].fmt(p['steps'])} steps, "
        f"{p['optimizer']}, {f'l1=lr={l1}' if l1 == lr else f'l1={l1}, lr={lr}'}: "
        f"{len(ms) * p['seeds']} runs with W up to {p['n']} x {max(ms)}"
    )


SAMPLES = 501  # rows of history.csv by default
SAMPLES_MAX = 10**5
SAMPLES_CHECK = whole_check("samples", 2, SAMPLES_MAX)  # its bounds: what --help says


# the schedule options (core/interference/schedules.py), by name, and their values when
# not given: a constant l1 and lr
SCHEDULE_OPTIONS = dict(
    l1_warmup=None, l1_schedule=None, lr_warmup=None, lr_decay=None, lr_decay_steps=None, lr_schedule=None
)
# the options InterferenceParams takes only when given (None: its default)
OPTIONAL_OPTIONS = (*SCHEDULE_OPTIONS, "noise", "noise_sigma", "sparsity", *MECHANISM_FIELDS)


def model_params(*, no_interference: bool, **model: Any) -> InterferenceParams:
    """The run's InterferenceParams from the commands' options: ``model`` is its fields by
    name (n, m, seed, steps, optimizer, l1, lr, sigma, weight_decay, dtype, the
    SCHEDULE_OPTIONS and the table's other options, None where not given), and ``no_interference`` turns its
    interference off."""
    fields = {name: value for name, value in model.items() if value is not None}  # None: the default
    INTERFERENCE_SETTINGS.refuse_unless_goes_with(fields)  # Adam's β₁ given to gd
    if fields.get("noise", "none") != "none" and "noise_sigma" not in fields:
        raise InputError("noise-sigma", f"--noise {fields['noise']} needs --noise-sigma S (its sigma)")
    sparsity = fields.get("sparsity", "l1")
    # given, even at its default, for a mechanism that has it not (l0's schedule named before
    # l0, which values_from_schedules may have set from it)
    for name in reversed(MECHANISM_FIELDS):
        if name in fields and name not in MECHANISM_SETTINGS.get(sparsity, MECHANISM_FIELDS):
            takes = next(kind for kind, names in MECHANISM_SETTINGS.items() if name in names)
            raise InputError(name, f"goes with --sparsity {takes} (the run's is {sparsity})")
    return InterferenceParams(**fields, interference=not no_interference)


def values_from_schedules(options: dict[str, Any]) -> None:
    """Sets ``options["l1"]`` (``["l0"]``, ``["lr"]``) from --l1-schedule's (--l0-schedule's,
    --lr-schedule's) last knot when it was not given (None), or refuses a given one that the
    schedule does not end at; in place, before the defaults are filled in. Under --sparsity
    topk or jumprelu, whose penalties are not L1, l1 not given is 0 (topk refuses any other)."""
    l1_given = any(options.get(name) is not None for name in ("l1", "l1_schedule", "l1_warmup"))
    if options.get("sparsity") in ("topk", "jumprelu") and not l1_given:
        options["l1"] = 0.0
    for name in ("l1", "l0", "lr"):
        text = options.get(f"{name}_schedule")
        if text is None:
            continue
        field = f"{name}-schedule"  # the command's
        knots = given_knots(INTERFERENCE_SETTINGS.check(f"{name}_schedule", text, field), field, "step")
        if options.get(name) is None:
            options[name] = knots[-1][1]
        elif options[name] != knots[-1][1]:
            raise InputError(
                name,
                f"{options[name]:g} conflicts with --{name}-schedule, which ends at "
                f"{name} = {knots[-1][1]:g} (a schedule sets {name}: leave --{name} out)",
            )


def knots_option(name: str, knots: Any) -> str | None:
    """Knots given for the setting ``name`` (text or pairs) as the option's text, checked by
    its row (the Python API's, so that a saved result writes the option that reads back)."""
    if knots is None:
        return None
    return knots_text(given_knots(INTERFERENCE_SETTINGS.check(name, knots), name, "step"))


def training_settings(*, samples: int, **model) -> InterferenceParams:
    """The checked parameters of one `interference` run (``model``: model_params's)."""
    params = model_params(**model)
    SAMPLES_CHECK(samples)
    check_memory(params.n, params.m, params.dtype)
    check_training_work(params)
    return params


def training_w0(
    w0: str | np.ndarray | None,
    w0_tensor: str | None,
    *,
    n: int | None,
    m: int | None,
    seed: int | None,
    sigma: float | None,
) -> tuple[np.ndarray | None, dict | None]:
    """W(0) of an `interference` run (``--w0 FILE --w0-tensor NAME``; the Python API also
    takes an array) and where it came from, for run.json (None for an array: the run says
    "given"); (None, None) for the normal draw. The other options as given, None where
    not: ``n`` and ``m`` must match the matrix, ``seed`` and ``sigma`` (which draw W(0) at
    random) do not go with it."""
    from sparsity_gui.core.interference.initial import file_source, load_w0_matrix, w0_matrix_of_array

    if w0 is None:
        if w0_tensor is not None:
            raise InputError("w0-tensor", "needs --w0 FILE")
        return None, None
    for name, value in (("seed", seed), ("sigma", sigma)):
        if value is not None:
            raise InputError(name, f"--{name} draws W(0) at random; it does not go with --w0")
    if isinstance(w0, np.ndarray):
        if w0_tensor is not None:
            raise InputError("w0-tensor", "names a tensor of a --w0 file; w0 is an array")
        return w0_matrix_of_array(w0, n, m), None
    matrix, info = load_w0_matrix(w0, w0_tensor, n, m)
    return matrix, file_source(w0, info)


def train(
    params: InterferenceParams,
    samples: int,
    on_step: Callable[[int], None] | None = None,
    w0: np.ndarray | None = None,
    w0_source: dict | None = None,
):
    """One run recorded at ``samples`` steps (core/interference/sampled.py), with one BLAS
    thread (faster than OpenBLAS's pool here, and never collapses: core/blas.py; it caps
    the pool of this whole process) and chunks of about 1e9 multiply-adds between calls of
    ``on_step(step)`` (a progress bar moves at least every second or so)."""
    from sparsity_gui.core.blas import limit_blas_threads
    from sparsity_gui.core.interference.run import chunk_steps
    from sparsity_gui.core.interference.sampled import train_sampled

    limit_blas_threads(1)
    chunk = chunk_steps(params, 1e9, 250)
    return train_sampled(params, samples, on_step=on_step, chunk=chunk, w0=w0, w0_source=w0_source)


def sweep_settings(
    *,
    m: str | Sequence[int],
    seeds: int,
    jobs: int | None,
    scheduler: Scheduler | None = None,
    lists: dict[str, tuple] | None = None,
    overlap: bool = False,
    **model,
) -> tuple[SweepSpec, int | None]:
    """The checked SweepSpec of a `sweep` and the runs it trains side by side (``jobs`` and
    ``scheduler`` as GridPlan.settle_jobs takes them). ``lists``: the options given with
    several values (axes.split_lists, which took them out of ``model``); ``overlap``: each
    run keeps W(0) W(T)^T (SweepSpec.overlap)."""
    lists = dict(lists or {})
    m_values = grid_m_values(m, M_MAX)
    # the base run: the first value of each list; a kind that goes with the size given
    # (noise and its sigma, lr decay and its steps) and the l1 (lr) a schedule ends at
    first = {axis: values[0] for axis, values in lists.items()}
    for kind in ("noise", "lr_decay"):
        if kind in lists:
            first[kind] = next((k for k in lists[kind] if k != "none"), "none")
    for name in ("l1", "lr"):
        if f"{name}_schedule" in first:
            first[name] = first[f"{name}_schedule"][-1][1]
    base = model_params(m=m_values[0], **{**model, **first})
    spec = SweepSpec(base=base, m_values=m_values, seeds=seeds, axes=tuple(lists.items()), overlap=overlap)
    return spec, spec.settle_jobs(jobs, scheduler)


# --- the front door of every sweep -------------------------------------------------------------
# The options a sweep takes, in the order its command line writes them: the grid's own, the
# model's options a sweep varies (axes.AXES, from the settings table), the flags, where it runs.
SWEEP_OPTIONS = (
    "n",
    "m",
    "seeds",
    "seed",
    *AXES[1:],
    "no_interference",
    "paper",
    "overlap",
    "jobs",
    "scheduler",
)


def sweep_order(options: Mapping[str, Any]) -> GridOrder:
    """The one way into a sweep, for the `sweep` command, api.sweep and the window's Sweep
    tab: ``options`` by SWEEP_OPTIONS' names (None or absent: not given; a flag True or
    False), each model option one value, a list, or the command's text ("1e-3,1e-2"; knots
    separated by ';'), m as a list or its text. The defaults (SWEEP_DEFAULTS, or with
    ``paper`` the paper's, which the options given override) fill in the rest. Returns the
    checked SweepSpec, the runs side by side and the scheduler; InputError names the option."""
    given = given_options(options, SWEEP_OPTIONS, "a sweep")
    paper = bool(given.pop("paper", False))
    lists = split_lists(given)  # the options given with several values, out of ``given``
    values_from_schedules(given)
    settings: dict[str, Any] = {
        "weight_decay": None,
        "jobs": None,
        "no_interference": False,
        "overlap": False,
        **SWEEP_DEFAULTS,
        **(PAPER if paper else {}),
    }
    settings.update({k: v for k, v in given.items() if v is not None})
    scheduler = scheduler_of(settings.pop("scheduler", None))
    spec, jobs = sweep_settings(**settings, scheduler=scheduler, lists=lists)
    return GridOrder(spec, jobs, scheduler)


def sweep_defaults(paper: bool = False) -> dict[str, Any]:
    """What sweep_order takes for an option not given: the settings table's default of a
    model option, SWEEP_DEFAULTS' (or with ``paper`` the paper's) where the command has its own."""
    table = {name: INTERFERENCE_SETTINGS[name].default for name in AXES[1:]}
    return {**table, "weight_decay": None, **SWEEP_DEFAULTS, **(PAPER if paper else {})}


def sweep_argv(options: Mapping[str, Any], *, short: bool = False) -> list[str]:
    """The `sweep` command's options for ``options`` (sweep_order's mapping): each given
    value as the text that reads back as it (a list of an axis by axes.list_text), in
    SWEEP_OPTIONS' order; the command of the same grid, without --out. ``short``: an option
    whose value is the one sweep_order takes without it is left out."""
    given = given_options(options, SWEEP_OPTIONS, "a sweep")
    if short:
        defaults = sweep_defaults(bool(given.get("paper")))
        given = {k: v for k, v in given.items() if k not in defaults or not _same(v, defaults[k])}
    texts: dict[str, Any] = {}
    for name in SWEEP_OPTIONS:
        value = given.get(name)
        if name == "m" and value is not None and not isinstance(value, str):
            value = ",".join(str(int(v)) for v in np.atleast_1d(value))
        elif name in AXES and value is not None and not isinstance(value, str):
            value = list_text(name, axis_values(name, value))
        elif name == "scheduler" and value is not None:
            value = str(value)
        texts[name] = value
    return option_argv(texts)


def _same(value: Any, default: Any) -> bool:
    """Whether a value given is the default itself (1e-3 and 0.001 are; 1 and True are not)."""
    if isinstance(value, bool) or isinstance(default, bool):
        return value is default
    if isinstance(value, (int, float)) and isinstance(default, (int, float)):
        return value == default
    return type(value) is type(default) and value == default
