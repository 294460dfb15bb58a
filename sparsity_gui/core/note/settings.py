"""The note model's settings, declared once (core/settings.py says what derives from them):
SimParams checks its fields through this table, the window and the engine decide "live
change or new run" by `live_change` / `needs_restart`, and a pinned run keeps and is named
by its settings (core/note/pins.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.knots import short_knots_text
from sparsity_gui.core.note.schedule import check_knots, warmup_time
from sparsity_gui.core.settings import (
    END,
    LIVE,
    NEW_RUN,
    Setting,
    Settings,
    choice_check,
    format_exact,
    format_sci,
    format_seed,
    format_time,
    number_check,
    whole_check,
    with_bounds,
)
from sparsity_gui.core.text import short_number

M_MAX = 10**8
LAM_MAX = 1.0
METHODS = ("exact", "gd")


def _t_end(value: Any) -> float | None:
    return None if value is None else number_check("t_end", 0.0, float("inf"), low_open=True)(value)


def _w0_path(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InputError("w0", f"must be a file path, got {value!r}")
    return value


def _lam_schedule(value: Any):
    return () if value in ((), None, "") else check_knots(value, LAM_MAX)


def _warmup(params) -> float:
    """T of a warm-up (the schedule 0:0,T:λ), 0 without one."""
    return warmup_time(params.lam_schedule, params.lam) or 0.0


def _schedule(params) -> str | None:
    """The schedule's knots as text, unless it is a warm-up (named as one) or there is none."""
    if not params.lam_schedule or _warmup(params):
        return None
    return short_knots_text(params.lam_schedule)


def _w0_name(params) -> str | None:
    return None if params.w0_path is None else Path(params.w0_path).name


def _t_end_text(value: Any) -> str:
    return "one weight left" if value is None else format_exact(value)


NOTE_SETTINGS = Settings(
    (
        Setting(
            "lam",
            "λ",
            1e-3,
            LIVE,
            "the L1 strength (with a schedule: the λ it ends at)",
            number_check("lam", 0.0, LAM_MAX),
            format_sci,
            always=True,
        ),
        Setting(
            "lam_warmup",
            "λ warm-up",
            0.0,
            NEW_RUN,
            "λ from 0 up to λ over [0, T]",
            number_check("lam_warmup", 0.0, float("inf")),
            format_time,
            get=_warmup,
            derived=True,
        ),
        Setting(
            "lam_schedule",
            "λ schedule",
            (),
            NEW_RUN,
            "λ(t) through knots t:λ (a warm-up is named as one)",
            with_bounds(_lam_schedule, f"knots t:value, each value from 0 to {short_number(LAM_MAX)}"),
            get=_schedule,
        ),
        Setting("m", "m", 1000, NEW_RUN, "the number of weights", whole_check("m", 1, M_MAX), always=True),
        Setting(
            "sigma", "σ", 0.9, NEW_RUN, "W(0) ~ N(0, σ²/m)", number_check("sigma", 0.0, 1e6, low_open=True)
        ),
        Setting(
            "method",
            "method",
            "exact",
            LIVE,
            "the exact flow or gradient descent",
            choice_check("method", METHODS),
        ),
        Setting(
            "eta",
            "η",
            0.05,
            LIVE,
            "gradient descent's step (t = η·step)",
            number_check("eta", 0.0, 2.0, low_open=True, why=" (GD is unstable near balance for eta >= 1)"),
        ),
        Setting(
            "seed",
            "seed",
            0,
            NEW_RUN,
            "the seed of W(0)'s draw",
            whole_check("seed", 0, 2**63 - 1, "2^63-1"),
            format_seed,
        ),
        Setting(
            "t_end",
            "t_end",
            None,
            END,
            "the run's end (none: one weight left)",
            with_bounds(_t_end, "> 0"),
            _t_end_text,
        ),
        Setting(
            "w0_path",
            "W(0)",
            None,
            NEW_RUN,
            "W(0) from a file (none: the normal draw)",
            _w0_path,
            lambda name: "normal draw" if name is None else name,
            get=_w0_name,
        ),
    )
)

# Fields that change during a run at an instant, continuing from W(t) (a session's live
# changes). t_end only moves the run's end; a change of any other field starts a new run.
LIVE_FIELDS = NOTE_SETTINGS.names(LIVE)


def needs_restart(old, new) -> bool:
    """Whether going from ``old`` to ``new`` (SimParams) needs a new run: a field whose
    change is NEW_RUN differs; a schedule ended (none now: a live change of λ) goes on."""
    return any(
        NOTE_SETTINGS[name].change == NEW_RUN and not (name == "lam_schedule" and not new.lam_schedule)
        for name in NOTE_SETTINGS.changed_fields(old, new)
    )


def live_change(params, changes: dict[str, Any]):
    """(the parameters after ``changes``, whether they need a new run): the one rule the
    window and the engine follow. A change of λ ends a schedule, as at any live change."""
    new = params
    if "lam" in changes:
        new = new.with_live_change("lam", changes["lam"])
    rest = {k: v for k, v in changes.items() if k != "lam"}
    if rest:
        new = new.with_changes(**rest)
    return new, needs_restart(params, new)
