"""Random settings across every knob of each model (a seeded generator), for the tests of
the settings tables (tests/core/test_settings.py, tests/ui/test_random_settings.py): each
draw is a valid run, small enough to run in well under a second."""

from __future__ import annotations

import dataclasses

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.schedules import LR_DECAYS
from sparsity_gui.core.interference.settings import DTYPES, NOISES, OPTIMIZERS
from sparsity_gui.core.note.params import METHODS, SimParams
from sparsity_gui.core.note.schedule import warmup_knots


def _pick(rng, values):
    return values[int(rng.integers(len(values)))]


def _round(x: float, digits: int = 3) -> float:
    return float(f"{x:.{digits}g}")


def note_draw(rng: np.random.Generator, *, t_end: bool = False) -> SimParams:
    """A note run: λ (0 now and then), a warm-up, a schedule or neither, m, σ, seed,
    method, η and (with ``t_end``, or at random) an end time past the schedule."""
    lam = 0.0 if rng.random() < 0.15 else _round(10 ** rng.uniform(-2.5, -1))
    kind = _pick(rng, ("constant", "warm-up", "schedule")) if lam > 0 else "constant"
    knots: tuple = ()
    if kind == "warm-up":
        knots = warmup_knots(_round(rng.uniform(0.5, 8.0), 2), lam)
    elif kind == "schedule":
        times = np.sort(rng.choice(np.arange(1, 20), size=int(rng.integers(1, 4)), replace=False))
        values = [_round(10 ** rng.uniform(-3, -1)) for _ in times[:-1]]
        knots = (
            (0.0, _round(10 ** rng.uniform(-3, -1))),
            *zip(map(float, times), [*values, lam], strict=True),
        )
    end = None
    if t_end or rng.random() < 0.5:
        end = _round((knots[-1][0] if knots else 0.0) + rng.uniform(2.0, 12.0), 3)
    return SimParams(
        m=int(rng.integers(2, 200)),
        lam=lam,
        sigma=_round(rng.uniform(0.3, 1.5)),
        seed=int(rng.integers(0, 2**40)),
        method=_pick(rng, METHODS),
        eta=_round(rng.uniform(0.02, 0.4)),
        t_end=end,
        lam_schedule=knots,
    )


def interference_draw(rng: np.random.Generator) -> InterferenceParams:
    """An interference run: every field, the schedules and the noise included."""
    optimizer = _pick(rng, OPTIMIZERS)
    steps = int(rng.integers(20, 120))
    l1 = 0.0 if rng.random() < 0.15 else _round(10 ** rng.uniform(-3.5, -1))
    lr = _round(10 ** rng.uniform(-3, -1.5))
    fields: dict = dict(
        n=int(rng.integers(2, 12)),
        m=int(rng.integers(2, 24)),
        l1=l1,
        lr=lr,
        optimizer=optimizer,
        steps=steps,
        seed=int(rng.integers(0, 2**40)),
        sigma=_round(rng.uniform(0.5, 1.5)),
        interference=bool(rng.random() < 0.8),
        weight_decay=None if rng.random() < 0.5 else _round(rng.uniform(0.0, 0.1)),
        beta1=_round(rng.uniform(0.5, 0.95)),
        beta2=_round(rng.uniform(0.9, 0.9999), 4),
        eps=_round(10 ** rng.uniform(-10, -6)),
        dtype=_pick(rng, DTYPES),
    )
    noise = _pick(rng, NOISES)
    fields.update(noise=noise, noise_sigma=0.0 if noise == "none" else _round(rng.uniform(0.01, 0.5)))
    l1_kind = _pick(rng, ("none", "warm-up", "knots"))
    if l1_kind == "warm-up":
        fields["l1_warmup"] = int(rng.integers(1, steps))
    elif l1_kind == "knots":
        fields["l1_schedule"] = (
            (0.0, _round(10 ** rng.uniform(-4, -2))),
            (float(rng.integers(1, steps)), l1),
        )
    lr_kind = _pick(rng, ("none", "warm-up", "decay", "warm-up and decay", "knots"))
    if "warm-up" in lr_kind:
        fields["lr_warmup"] = int(rng.integers(1, steps))
    if "decay" in lr_kind:
        fields["lr_decay"] = _pick(rng, LR_DECAYS[1:])
        fields["lr_decay_steps"] = int(rng.integers(1, steps))
    if lr_kind == "knots":
        fields["lr_schedule"] = (
            (0.0, _round(10 ** rng.uniform(-4, -2))),
            (float(rng.integers(1, steps)), lr),
        )
    return InterferenceParams(**fields)


# a change of each sparsity mechanism setting (with sparsity jumprelu unless it is TopK's k)
MECHANISM_CHANGES = {
    "sparsity": {},
    "k": {},
    "l0": {"l0": 0.003},
    "bandwidth": {"bandwidth": 0.02},
    "threshold_init": {"threshold_init": 0.05},
    "threshold_param": {"threshold_param": "log"},
    "l0_warmup": {"l0": 0.003, "l0_warmup": 7},
    "l0_schedule": {"l0": 0.003, "l0_schedule": ((0.0, 0.0), (5.0, 0.003))},
}


def _mechanism_changes(params, name: str) -> dict:
    """Another sparsity mechanism (and what it needs: for TopK l1 = 0)."""
    changes = {"sparsity": "jumprelu", **MECHANISM_CHANGES[name]}
    if name == "k":
        changes.update(sparsity="topk", k=min(2, params.m), l1=0.0, l1_warmup=0, l1_schedule=())
    if name == "sparsity" and params.sparsity != "l1":
        changes = {"sparsity": "l1", "k": None, "l0": 0.0, "bandwidth": 1e-3, "threshold_init": 1e-3}
        changes.update(threshold_param="plain", l0_warmup=0, l0_schedule=())
    return changes


def one_changed(params, other, name: str):
    """``params`` with setting ``name`` taken from ``other`` (with what it needs to stay
    valid: a schedule's end, a noise's kind), or None when no valid run differs so."""
    if name == "lam_warmup":  # derived: a warm-up in place of what λ(t) was
        if other.lam <= 0 or params.lam <= 0:
            return None
        t = 1.0 + (other.lam_schedule[-1][0] if other.lam_schedule else 3.0)
        changes = {"lam_schedule": warmup_knots(t, params.lam)}
    elif name == "lam_schedule":
        knots = ((0.0, 0.0), (2.5, 0.004), (4.0, params.lam))
        changes = {"lam_schedule": () if params.lam_schedule else knots}
    elif name in ("l1_schedule", "lr_schedule"):
        value = params.l1 if name == "l1_schedule" else params.lr
        group = ("l1_warmup",) if name == "l1_schedule" else ("lr_warmup", "lr_decay", "lr_decay_steps")
        knots = () if getattr(params, name) else ((0.0, 0.0), (float(max(params.steps // 2, 1)), value))
        changes = {name: knots, **{f: (0 if f != "lr_decay" else "none") for f in group}}
    elif name == "lr_decay" or name == "lr_decay_steps":
        on = params.lr_decay == "none"
        changes = {
            "lr_decay": ("linear" if on else "none"),
            "lr_decay_steps": (max(params.steps // 3, 1) if on else 0),
            "lr_schedule": (),
        }
    elif name in ("noise", "noise_sigma"):
        kind = "gaussian" if params.noise == "bernoulli" else "bernoulli"
        changes = {"noise": kind, "noise_sigma": params.noise_sigma or 0.05}
        if name == "noise_sigma":
            changes = {"noise": params.noise if params.noise != "none" else "gaussian"}
            changes["noise_sigma"] = _round(params.noise_sigma + 0.07)
    elif name in MECHANISM_CHANGES:
        changes = _mechanism_changes(params, name)
    elif name in ("l1", "lam", "lr"):
        changes = {name: _round(getattr(params, name) * 1.5 + 1e-4)}
        if name == "lam" and params.lam_schedule:
            changes["lam_schedule"] = ()
        if name in ("l1", "lr"):
            changes.update({f"{name}_schedule": (), f"{name}_warmup": 0})
            if name == "lr":
                changes.update(lr_decay="none", lr_decay_steps=0)
    else:
        value = getattr(other, name)
        if value == getattr(params, name):
            return None
        changes = {name: value}
    try:
        return dataclasses.replace(params, **changes)
    except InputError:
        return None
