"""The interference model's schedules over steps: the l1 coefficient, JumpReLU's L0
coefficient and the learning rate in force at each step, as the field schedules them
(SAELens, torch's LR schedulers).

A schedule's value at step k (k = 1 .. steps, the step that uses it; a run's history row
after k steps shows the value of step k, and row 0 that of step 1):
- l1: knots ``step:value`` piecewise linear (constant before the first knot and after the
  last), or the warm-up ``l1 * min(1, k / T)`` (the knots 0:0, T:l1; SAELens'
  ``l1_warm_up_steps`` is one step behind, its k-th update using (k - 1) / T);
- l0 (JumpReLU's C): the same two, ``l0_schedule`` knots or ``l0 * min(1, k / T)``
  (SAELens' ``l0_warm_up_steps`` for its JumpReLU SAE, one step behind as above);
- lr: knots, or the constant lr times a warm-up factor ``min(1, k / T)`` (torch's
  ``LinearLR(start_factor=1/T, total_iters=T-1)``, SAELens' lr warm-up) and a decay to 0
  over the last D steps, ``1 - x`` (linear) or ``(1 + cos(pi x)) / 2`` (cosine) with
  ``x = (k - (steps - D)) / D``: the last step's lr is 0.
For Adam and AdamW the lr schedule is torch's LambdaLR: the whole step scales with it,
decoupled weight decay (``1 - lr wd``) included. A live change of l1 (of l0, of lr) ends
its schedule: the value given holds from then on. Qt-free.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.knots import Knots, check_knots
from sparsity_gui.core.text import short_number

LR_DECAYS = ("none", "linear", "cosine")

# the fields of InterferenceParams that schedule l1, l0 and lr (a live change of l1, l0 or
# lr resets its group to these defaults)
L1_SCHEDULE_DEFAULTS = {"l1_warmup": 0, "l1_schedule": ()}
L0_SCHEDULE_DEFAULTS = {"l0_warmup": 0, "l0_schedule": ()}
LR_SCHEDULE_DEFAULTS = {"lr_warmup": 0, "lr_decay": "none", "lr_decay_steps": 0, "lr_schedule": ()}
SCHEDULE_FIELDS = (*L1_SCHEDULE_DEFAULTS, *L0_SCHEDULE_DEFAULTS, *LR_SCHEDULE_DEFAULTS)
# each scheduled quantity with its group (a live change of the quantity ends the group)
SCHEDULE_GROUPS = (("l1", L1_SCHEDULE_DEFAULTS), ("l0", L0_SCHEDULE_DEFAULTS), ("lr", LR_SCHEDULE_DEFAULTS))


def check_steps_count(field: str, value: Any, most: int) -> int:
    """A count of steps from 0 to ``most`` (a warm-up or decay length; longer than the run
    is allowed: the ramp is then cut by the run's end)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InputError(field, f"must be a whole number of steps, got {value!r}")
    if not float(value).is_integer() or not 0 <= value <= most:
        raise InputError(
            field, f"must be a whole number of steps from 0 to {short_number(most)}, got {value:g}"
        )
    return int(value)


def check_step_knots(field: str, knots: Any, value_name: str, value_max: float) -> Knots:
    return check_knots(knots, value_max, field, value_name=value_name, time_name="step")


def check_schedules(values: dict[str, Any], l1: float, lr: float, l0: float = 0.0) -> None:
    """The rules between the schedule fields (SCHEDULE_FIELDS), each already checked by its
    setting's row (core/interference/settings.py), or InputError: a decay and its length go
    together; a warm-up and knots of the same quantity do not; a schedule ends at the value
    given for that quantity (l1, l0, lr), which is the one in force after its last knot."""
    if (values["lr_decay"] == "none") != (values["lr_decay_steps"] == 0):
        raise InputError(
            "lr_decay_steps",
            "goes with --lr-decay linear|cosine: both, or neither "
            f"(got lr_decay {values['lr_decay']!r}, lr_decay_steps {values['lr_decay_steps']})",
        )
    for name, value, warm in (("l1", l1, "l1_warmup"), ("l0", l0, "l0_warmup"), ("lr", lr, "lr_warmup")):
        field, knots = f"{name}_schedule", values[f"{name}_schedule"]
        if not knots:
            continue
        if values[warm] or (name == "lr" and values["lr_decay"] != "none"):
            other = warm if values[warm] else "lr_decay"
            raise InputError(field, f"and {other} do not go together: give one or the other")
        if knots[-1][1] != value:
            raise InputError(
                field, f"ends at {name} = {knots[-1][1]:g}, but {name} is {value:g}: they must be the same"
            )


def _knot_values(knots: Knots, k: np.ndarray) -> np.ndarray:
    xs = np.array([x for x, _ in knots])
    vs = np.array([v for _, v in knots])
    return np.interp(k, xs, vs)


def _coefficient_values(value: float, warmup: int, knots: Knots, k0: int, count: int) -> np.ndarray:
    """A penalty's coefficient at steps k0 + 1 .. k0 + count: its knots, its warm-up from 0
    (``value * min(1, k / warmup)``) or ``value`` throughout."""
    k = np.arange(k0 + 1, k0 + count + 1, dtype=float)
    if knots:
        return _knot_values(knots, k)
    if warmup:
        return value * np.minimum(1.0, k / warmup)
    return np.full(count, value)


def l1_values(p, k0: int, count: int) -> np.ndarray:
    """l1 at steps k0 + 1 .. k0 + count of ``p`` (InterferenceParams)."""
    return _coefficient_values(p.l1, p.l1_warmup, p.l1_schedule, k0, count)


def l0_values(p, k0: int, count: int) -> np.ndarray:
    """JumpReLU's l0 at steps k0 + 1 .. k0 + count of ``p`` (InterferenceParams)."""
    return _coefficient_values(p.l0, p.l0_warmup, p.l0_schedule, k0, count)


def lr_values(p, k0: int, count: int) -> np.ndarray:
    """lr at steps k0 + 1 .. k0 + count of ``p`` (InterferenceParams)."""
    k = np.arange(k0 + 1, k0 + count + 1, dtype=float)
    if p.lr_schedule:
        return _knot_values(p.lr_schedule, k)
    out = np.full(count, p.lr)
    if p.lr_warmup:
        out *= np.minimum(1.0, k / p.lr_warmup)
    if p.lr_decay != "none":
        x = np.clip((k - (p.steps - p.lr_decay_steps)) / p.lr_decay_steps, 0.0, 1.0)
        out *= 1.0 - x if p.lr_decay == "linear" else 0.5 * (1.0 + np.cos(math.pi * x))
    return out


# lr_sum's prefix sums are kept at every SUM_BLOCK-th step: a call sums at most one block
SUM_BLOCK = 1 << 16


@functools.lru_cache(maxsize=4)
def _lr_block_sums(p) -> np.ndarray:
    """Σ lr over steps 1 .. b·SUM_BLOCK of ``p``, for b = 0, 1, … (one pass per params)."""
    blocks = p.steps // SUM_BLOCK
    sums = [float(np.sum(lr_values(p, b * SUM_BLOCK, SUM_BLOCK))) for b in range(blocks)]
    return np.concatenate(([0.0], np.cumsum(sums)))


def _lr_prefix(p, k: int) -> float:
    b = k // SUM_BLOCK
    return float(_lr_block_sums(p)[b]) + float(np.sum(lr_values(p, b * SUM_BLOCK, k - b * SUM_BLOCK)))


def lr_sum(p, k0: int, k1: int) -> float:
    """Σ lr over steps k0 + 1 .. k1 of ``p`` (InterferenceParams): the note's time of those
    steps is 4 times it (t = 4·Σ lr, what a run sums step by step)."""
    k0, k1 = max(0, int(k0)), min(int(k1), p.steps)
    if k1 <= k0:
        return 0.0
    if not has_lr_schedule(p):
        return p.lr * (k1 - k0)
    return _lr_prefix(p, k1) - _lr_prefix(p, k0)


def has_l1_schedule(p) -> bool:
    return bool(p.l1_schedule or p.l1_warmup)


def has_l0_schedule(p) -> bool:
    return bool(p.l0_schedule or p.l0_warmup)


def has_lr_schedule(p) -> bool:
    return bool(p.lr_schedule or p.lr_warmup or p.lr_decay != "none")


def values_in_force(p, step: int) -> tuple[float, float]:
    """(l1, lr) of the step that brought the run to ``step`` (of the first step at 0)."""
    k0 = max(step, 1) - 1
    return float(l1_values(p, k0, 1)[0]), float(lr_values(p, k0, 1)[0])


def l0_in_force(p, step: int) -> float:
    """JumpReLU's l0 of the step that brought the run to ``step`` (of the first step at 0)."""
    return float(l0_values(p, max(step, 1) - 1, 1)[0])


def schedule_summary(p) -> dict[str, Any]:
    """The schedule fields that are set, for run.json and a sweep's rows (empty without)."""
    out: dict[str, Any] = {}
    for name, default in (group for _, defaults in SCHEDULE_GROUPS for group in defaults.items()):
        value = getattr(p, name)
        if value != default:
            out[name] = [list(k) for k in value] if name.endswith("_schedule") else value
    return out


def schedule_marks(p) -> list[tuple[float, str]]:
    """Where the schedules of ``p`` turn, as (step, label), in step order: the ends of the
    warm-ups, the start of the lr decay, every knot after step 0 (the step panels mark them),
    a knot's value as the settings table writes it ('l1 = 2.0e-3')."""
    from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS  # (it imports this)

    marks: list[tuple[float, str]] = []
    for name in ("l1", "l0", "lr"):
        if getattr(p, f"{name}_warmup"):
            marks.append((float(getattr(p, f"{name}_warmup")), f"{name} warmed up"))
    if p.lr_decay != "none":
        marks.append((float(max(p.steps - p.lr_decay_steps, 0)), f"lr {p.lr_decay} decay"))
    for name, knots in (("l1", p.l1_schedule), ("l0", p.l0_schedule), ("lr", p.lr_schedule)):
        marks += [(x, INTERFERENCE_SETTINGS[name].text(v)) for x, v in knots if x > 0.0]
    return sorted(marks)
