"""Run parameters as a frozen, validated snapshot (what crosses to the worker thread)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from sparsity_gui.core.checks import check_fits, check_work
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.schedule import Knots
from sparsity_gui.core.note.settings import LAM_MAX, LIVE_FIELDS, M_MAX, METHODS, NOTE_SETTINGS, needs_restart
from sparsity_gui.core.settings import NumberCheck
from sparsity_gui.core.text import round_number, short_number

__all__ = ["LAM_MAX", "LIVE_FIELDS", "M_MAX", "METHODS", "SimParams", "needs_restart"]
# Bytes per weight the exact solver holds (W0, |W0| sorted, order, prefix sums,
# bounds for the actual and the idealized W0, death times) plus headroom for a copy.
BYTES_PER_WEIGHT = 160


@dataclass(frozen=True)
class SimParams:
    """Everything that defines a run. Invalid values raise InputError naming the field."""

    m: int = 1000
    lam: float = 1e-3
    sigma: float = 0.9
    seed: int = 0
    w0_path: str | None = None
    method: str = "exact"
    eta: float = 0.05
    t_end: float | None = None
    # λ(t) through knots (t, λ) (core/note/schedule.py); () for a constant λ. With a
    # schedule, lam is the value it ends at (the λ in force after the last knot).
    lam_schedule: Knots = ()

    def __post_init__(self) -> None:
        NOTE_SETTINGS.checked_fields(self)  # each field by its setting's check
        lam = self.lam
        if self.lam_schedule != ():
            knots = self.lam_schedule
            if knots[-1][1] != lam:
                raise InputError(
                    "lam_schedule",
                    f"ends at λ = {knots[-1][1]:g}, but lam is {lam:g} (lam is the λ a schedule ends at)",
                )

    def with_changes(self, **changes: Any) -> SimParams:
        return replace(self, **changes)

    def with_live_change(self, name: str, value: float | str) -> SimParams:
        """The parameters after a live change of ``name``: one of λ ends a schedule."""
        changes: dict[str, Any] = {name: value}
        if name == "lam":
            changes["lam_schedule"] = ()
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Every field; lam_schedule only when there is one (a run without a schedule
        writes the files it always has)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if not self.lam_schedule:
            del out["lam_schedule"]
        else:
            out["lam_schedule"] = [list(k) for k in self.lam_schedule]
        return out

    def settings(self) -> dict[str, Any]:
        """What sessions and presets save (SETTING_FIELDS; lam_schedule as as_dict)."""
        values = self.as_dict()
        return {name: values[name] for name in SETTING_FIELDS if name in values}


def check_lam(lam: Any) -> float:
    """One run's λ as a float, or InputError: the settings table's rule (NOTE_SETTINGS),
    which every front end's λ goes through (the dock's field, the commands' options, the
    API, SimParams)."""
    return NOTE_SETTINGS.check("lam", lam)


def _grid_lam_check() -> NumberCheck:
    run = NOTE_SETTINGS["lam"].check  # a run's λ, from its setting's row
    assert isinstance(run, NumberCheck)
    return replace(run, low_open=True)


# A scaling grid's λ: a run's (its row's bounds), but not 0 (a grid's run ends at one
# weight left, which λ = 0 never reaches). Its ``bounds`` are what --help and the tab say.
GRID_LAM = _grid_lam_check()


def check_grid_lam(lam: Any) -> float:
    """One λ of a scaling grid (the command, the API, the window's tab): GRID_LAM."""
    why = " (with lam = 0 no weight ever dies)" if lam == 0 and not isinstance(lam, bool) else ""
    try:
        return replace(GRID_LAM, why=why)(lam)
    except InputError as exc:
        raise InputError("lam", f"every lam {exc.message}") from None


def check_memory(m: int) -> None:
    """Refuse an m whose arrays cannot fit in the memory available now."""
    check_fits("m", m * BYTES_PER_WEIGHT, f"m = {m}")


# --- bounded work (core/checks.py: check_work) -------------------------------------------
# The exact solver's steps, fitted to measurements at m = 1e3 and 1e5, lam = 1e-2 to 1e-7
# (within 0.6 to 1.6 times): about one per death, plus 0.4 per unit of simulated time once
# the flow is at balance (the explicit integrator's stability against the relaxation at
# rate 2 holds a step near 2.5), plus 200 sqrt(t) on the way there. A run's time to one
# weight left grows as 1/lam (docs/theory.md §4): lam * t = 1.6 to 2.4 measured for the
# normal draw.
EXACT_STEPS_PER_TIME = 0.4
EXACT_STEPS_PER_ROOT_TIME = 200.0
# A schedule's knots: the solver lands on each, and under a ramp of λ it steps no further
# than its error control allows: 1 to 54 steps more per knot, measured for 1000 knots of
# λ alternating between two values (0 and 1e-3 the worst) 1e-6 to 100 apart at m = 1e3
# and 1e5. A piece too short for its slope is a jump (kernels.lam_piece), so the most
# knots allowed (MAX_KNOTS) add at most 1e5 steps.
EXACT_STEPS_PER_KNOT = 100
ONE_LEFT_LAM_T = 2.0  # lam * t to one weight left, before the last phase
NORMAL_LAST_PHASE = 0.5  # the last phase's ln((u1 - u3)/(u1 - u2)) for a typical normal draw


def one_left_time_estimate(lam: float, w0: np.ndarray | None = None) -> float:
    """About when one weight is left (inf for lam = 0): Θ(1/lam) plus the last phase, whose
    length (1/lam) ln((u1 - u3)/(u1 - u2)) grows as the top two weights of W(0) tie
    (docs/theory.md §4; from ``w0`` when given, else the normal draw's typical value)."""
    if lam <= 0.0:
        return math.inf
    last = NORMAL_LAST_PHASE
    if w0 is not None:
        if w0.size < 2:
            return 0.0
        top = np.sort(np.partition(np.abs(w0), w0.size - min(w0.size, 3))[-3:])[::-1]
        u1, u2 = float(top[0]), float(top[1])
        u3 = float(top[2]) if top.size > 2 else 0.0
        # tied top weights settle or die together: the solver tells which (no last phase)
        last = math.log((u1 - u3) / (u1 - u2)) if u1 > u2 and u1 > u3 else 0.0
    return (ONE_LEFT_LAM_T + last) / lam


def run_steps(m: int, segments: list[tuple[str, float, float]], knots: int = 0) -> float:
    """Solver steps of a run of m weights made of ``segments`` (method, eta, duration):
    gradient descent takes duration/eta steps, the exact solver about one per death plus
    EXACT_STEPS_PER_TIME * duration + EXACT_STEPS_PER_ROOT_TIME * sqrt(duration), and
    EXACT_STEPS_PER_KNOT for each of the ``knots`` of λ's schedule."""
    steps = 0.0
    exact = False
    for method, eta, duration in segments:
        if method == "gd":
            steps += duration / eta
        else:
            steps += EXACT_STEPS_PER_TIME * duration + EXACT_STEPS_PER_ROOT_TIME * math.sqrt(duration)
            exact = True
    return steps + (m + EXACT_STEPS_PER_KNOT * knots if exact else 0.0)


def gd_weight_steps(m: int, segments: list[tuple[str, float, float]]) -> float:
    """Weights passed over by the gradient-descent segments: at most m a step (dead weights
    drop out of the sorted kernel's loop, so this bounds the work from above)."""
    return m * sum(duration / eta for method, eta, duration in segments if method == "gd")


def check_segments_work(
    field: str, what: str, m: int, segments: list[tuple[str, float, float]], knots: int = 0
) -> None:
    """Refuse a run of m weights made of ``segments`` (and a schedule of ``knots``) whose
    solver steps, or whose gradient descent's weight-steps, pass their limits
    (checks.check_work)."""
    check_work(field, what, run_steps(m, segments, knots), "steps")
    check_work(field, what, gd_weight_steps(m, segments), "weight-steps")


def check_run_work(params: SimParams, w0: np.ndarray | None = None) -> None:
    """Refuse (InputError) a run of ``params`` (no live changes) whose steps would pass the
    limit: to t_end, or to one weight left (the default end; gradient descent runs there
    after an exact solve finds when). ``w0``: W(0) from a file, when known."""
    if params.t_end is not None:
        duration, what = params.t_end, f"t_end = {short_number(params.t_end)}"
        probe: list[tuple[str, float, float]] = []
    else:
        if params.lam == 0.0:
            return  # no default end: sampled.simulate_samples says so
        # (after a schedule's last knot λ is params.lam: its time to one weight from there, at most)
        ramp = params.lam_schedule[-1][0] if params.lam_schedule else 0.0
        duration = one_left_time_estimate(params.lam, w0) + ramp  # inf past the float range
        what = f"lam = {short_number(params.lam)} to one weight left (at t of about {round_number(duration)})"
        probe = [("exact", 0.0, duration)] if params.method == "gd" else []
        if params.method == "gd":
            duration *= 1.1
    field = "t_end" if params.t_end is not None else "lam"
    if params.method == "gd":
        what += f" by gradient descent at eta = {short_number(params.eta)}"
    check_segments_work(
        field, what, params.m, [*probe, (params.method, params.eta, duration)], len(params.lam_schedule)
    )


# What sessions and presets save (W(0) from a file is saved apart, with its source).
SETTING_FIELDS = tuple(f.name for f in fields(SimParams) if f.name != "w0_path")
