"""The note model's headless runs, as the `run` and `scaling` commands and the Python API
(sparsity_gui.api) make them: their settings checked in one place, the one front door of a
scaling grid (scaling_order: the command, the API and the window's Scaling tab hand it their
options) with its command line (scaling_argv), and runs with a schedule of live changes (what
a session records) for the API."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sparsity_gui.core.checks import list_text, parse_number_list
from sparsity_gui.core.cluster import Scheduler
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.grid import GridOrder, given_options, grid_m_values, option_argv, scheduler_of
from sparsity_gui.core.knots import given_knots
from sparsity_gui.core.note.params import M_MAX, SimParams, check_lam, check_memory, check_run_work
from sparsity_gui.core.note.scaling import ScalingGrid
from sparsity_gui.core.note.schedule import Knots, warmup_knots
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.settings import whole_check

SAMPLES = 501  # rows of timeseries.csv by default
SAMPLES_MAX = 10**6
SAMPLES_CHECK = whole_check("samples", 2, SAMPLES_MAX)  # its bounds: what --help says
FORMATS = ("auto", "csv", "npz")  # how weights and deaths are written
# "auto": CSV up to this many weights, .npz above. Shortest-repr CSV text of both files
# costs about 4 s per 10^6 weights here, .npz about a twentieth of that: at 10^7 CSV
# alone takes 40 s.
CSV_MAX_WEIGHTS = 1_000_000


def run_settings(
    *,
    m: int,
    lam: float | None,
    sigma: float,
    seed: int,
    w0: str | np.ndarray | None,
    w0_row: int | None,
    method: str,
    eta: float,
    t_end: float | None,
    samples: int,
    w0_tensor: str | None = None,
    scheduled: bool = False,
    lam_schedule: str | Knots | None = None,
    lam_warmup: float | None = None,
) -> tuple[SimParams, np.ndarray | None]:
    """The checked parameters of a `run` (the CLI's options, by name) and, with ``w0`` (a
    file, or for the Python API an array), the loaded weights. Raises InputError naming the
    option, or the work the run would take past the limit (check_run_work; a ``scheduled``
    run's work is scheduled_run's to check, by its segments). ``lam`` None: 1e-3, or the
    λ a schedule ends at (``lam_schedule`` knots, or ``lam_warmup``: 0 up to lam)."""
    from sparsity_gui.core.note.initial import load_w0, vector_from

    loaded = None
    for flag, value in (("w0-row", w0_row), ("w0-tensor", w0_tensor)):
        if value is not None and w0 is None:
            raise InputError(flag, "needs --w0 FILE")
    if isinstance(w0, np.ndarray):
        if w0_tensor is not None:
            raise InputError("w0-tensor", "names a tensor of a --w0 file; w0 is an array")
        # checked as a file's array is: a vector, a single row or column, or row w0_row
        loaded = vector_from(w0, "the array", w0_row)
        m, w0 = int(loaded.shape[0]), None
    elif w0 is not None:
        loaded = load_w0(w0, w0_row, w0_tensor)
        m = int(loaded.shape[0])
    lam, knots = lam_settings(lam, lam_schedule, lam_warmup, t_end)
    params = SimParams(
        m=m,
        lam=lam,
        sigma=sigma,
        seed=seed,
        w0_path=w0,
        method=method,
        eta=eta,
        t_end=t_end,
        lam_schedule=knots,
    )
    if loaded is None:
        check_memory(params.m)
    SAMPLES_CHECK(samples)
    if not scheduled:
        check_run_work(params, loaded)
    return params, loaded


def lam_settings(
    lam: float | None, lam_schedule: str | Knots | None, lam_warmup: float | None, t_end: float | None
) -> tuple[float, Knots]:
    """λ and its schedule's knots from the options: --lam alone, --lam-schedule (which
    sets λ: --lam, if given, must be where it ends) or --lam-warmup T (0 up to --lam over
    [0, T]). A schedule whose last knot comes after --t-end is refused: the run would end
    before λ reached it."""
    default_lam = NOTE_SETTINGS["lam"].default
    # T by its row (>= 0; 0, the default, is no warm-up), as the dock's field checks it
    warmup = None if lam_warmup is None else NOTE_SETTINGS.check("lam_warmup", lam_warmup, "lam-warmup")
    if lam_schedule is not None and warmup:
        raise InputError("lam-warmup", "and --lam-schedule both give λ(t): give one of them")
    if lam_schedule is not None:
        knots = given_knots(NOTE_SETTINGS.check("lam_schedule", lam_schedule, "lam-schedule"), "lam-schedule")
        if lam is not None and lam != knots[-1][1]:
            raise InputError(
                "lam",
                f"{lam:g} conflicts with --lam-schedule, which ends at λ = {knots[-1][1]:g} "
                "(a schedule sets λ: leave --lam out)",
            )
        option = "lam-schedule"
    elif warmup:
        lam = check_lam(default_lam if lam is None else lam)
        if lam == 0.0:
            raise InputError("lam-warmup", "warms λ up to --lam, which is 0: give --lam > 0")
        knots = warmup_knots(warmup, lam)
        option = "lam-warmup"
    else:
        return (default_lam if lam is None else lam), ()
    if t_end is not None and isinstance(t_end, (int, float)) and knots[-1][0] > t_end:
        raise InputError(
            option,
            f"reaches its last λ at t = {knots[-1][0]:g}, after the run's end (t_end = {t_end:g}): "
            "λ would never get there; shorten it or give a later --t-end",
        )
    return knots[-1][1], knots


def scaling_settings(
    *,
    m: str | Sequence[int],
    lam: str | Sequence[float],
    seeds: int,
    seed: int,
    sigma: float,
    jobs: int | None,
    scheduler: Scheduler | None = None,
) -> tuple[ScalingGrid, int | None]:
    """The checked ScalingGrid of a `scaling` run (the CLI's options by name; ``m`` and
    ``lam`` as its text, '1e3,1e4', or as lists) and the runs it makes side by side:
    ``jobs`` and ``scheduler`` as GridPlan.settle_jobs takes them. Raises InputError naming
    the option."""
    grid = ScalingGrid(
        m_values=grid_m_values(m, M_MAX),
        lam_values=parse_number_list("lam", list_text(lam)),
        seeds=seeds,
        seed=seed,
        sigma=sigma,
    )
    return grid, grid.settle_jobs(jobs, scheduler)


# --- the front door of every scaling grid ---------------------------------------------------
# The options a scaling grid takes, in the order its command line writes them.
SCALING_OPTIONS = ("m", "lam", "seeds", "seed", "sigma", "jobs", "scheduler")
# the defaults of the options a grid may leave out: its seeds, and the first seed and σ of
# W(0) as a run of the note has them (its settings table)
SCALING_DEFAULTS = dict(
    seeds=3, seed=NOTE_SETTINGS["seed"].default, sigma=NOTE_SETTINGS["sigma"].default, jobs=None
)


def scaling_order(options: Mapping[str, Any]) -> GridOrder:
    """The one way into a scaling grid, for the `scaling` command, api.scaling and the note
    window's Scaling tab: ``options`` by SCALING_OPTIONS' names (None or absent: not given,
    then SCALING_DEFAULTS'), ``m`` and ``lam`` needed, each a list or the command's text
    ('1e3,1e4'). Returns the checked ScalingGrid, the runs side by side and the scheduler;
    InputError names the option."""
    given = given_options(options, SCALING_OPTIONS, "a scaling grid")
    for name in ("m", "lam"):
        if name not in given:
            raise InputError(name, "is needed: the grid's values of it")
    settings = {**SCALING_DEFAULTS, **given}
    scheduler = scheduler_of(settings.pop("scheduler", None))
    grid, jobs = scaling_settings(**settings, scheduler=scheduler)
    return GridOrder(grid, jobs, scheduler)


def scaling_argv(options: Mapping[str, Any]) -> list[str]:
    """The `scaling` command's options for ``options`` (scaling_order's mapping), each given
    value as the text that reads back as it, in SCALING_OPTIONS' order; without --out."""
    given = given_options(options, SCALING_OPTIONS, "a scaling grid")
    texts = {name: given.get(name) for name in SCALING_OPTIONS}
    for name in ("m", "lam"):
        value = texts[name]
        if value is not None and not isinstance(value, str):
            texts[name] = list_text(value)
    if texts["scheduler"] is not None:
        texts["scheduler"] = str(texts["scheduler"])
    return option_argv(texts)


def resolved_format(fmt: str, m: int) -> str:
    """ "csv" or "npz": the format asked for, or the one "auto" picks for m weights."""
    if fmt == "auto":
        return "csv" if m <= CSV_MAX_WEIGHTS else "npz"
    return fmt


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise InputError("format", f"must be one of {', '.join(FORMATS)}, got {fmt!r}")


def scheduled_run(
    params: SimParams,
    w0: np.ndarray | None,
    schedule: Sequence[tuple[float, Mapping[str, Any]]],
    samples: int,
):
    """The run with live changes at given times, ``schedule`` = [(t, {name: value}), ...]
    with names lam, eta and method (a session's changes, checked by the same rules: in
    time order, from 0 to t_end, each value one the parameter may take), sampled at
    ``samples`` times from 0 to params.t_end (needed: the default end, one weight left,
    depends on the changes). A diverged gradient descent raises InputError, as in `run`."""
    from sparsity_gui.core.note.changes import RunScript
    from sparsity_gui.core.note.initial import initial_weights
    from sparsity_gui.core.note.sampled import replay_script
    from sparsity_gui.core.note.session import SessionProblem, check_session_work, session_changes

    if params.t_end is None:
        raise InputError("t_end", "a schedule of live changes needs an end time: give t_end")
    items: list[dict[str, Any]] = []
    for i, entry in enumerate(schedule):
        if not (isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[1], Mapping)):
            raise InputError("schedule", f"item {i} must be (t, {{name: value}}), got {entry!r}")
        items.extend({"t": entry[0], "name": name, "value": value} for name, value in entry[1].items())
    try:
        changes = session_changes(items, params.t_end)
        script = RunScript(
            params, initial_weights(params) if w0 is None else w0, changes, params.t_end, samples
        )
        check_session_work(script)
    except SessionProblem as exc:  # the session's wording: "changes[i]" counts the changes in order
        raise InputError("schedule", str(exc)) from None
    run = replay_script(script)
    if "diverged" in run.extra:
        raise InputError("eta", run.extra["diverged"])
    return dataclasses.replace(run, extra={})  # no "t_session": this is not a session's export
