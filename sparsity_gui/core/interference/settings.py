"""The interference model's settings, declared once (core/settings.py says what derives
from them): InterferenceParams checks its fields through this table, the window and the
worker decide "live change or new run" by `live_change` / `needs_restart`, and a pinned
run keeps and is named by its settings (core/interference/pins.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.schedules import (
    LR_DECAYS,
    SCHEDULE_GROUPS,
    check_step_knots,
    check_steps_count,
)
from sparsity_gui.core.settings import (
    LIVE,
    NEW_RUN,
    Setting,
    Settings,
    choice_check,
    format_count,
    format_sci,
    format_seed,
    format_steps,
    number_check,
    whole_check,
    with_bounds,
)
from sparsity_gui.core.text import short_number

OPTIMIZERS = ("gd-zero", "gd", "adam", "adamw", "ista", "signsgd")
# the optimizers with Adam's constants β₁, β₂, ε (the others have none)
ADAM = ("optimizer", ("adam", "adamw"))
NOISES = ("none", "bernoulli", "gaussian")
# the hidden layer's sparsity mechanism (core/interference/mechanisms.py): an L1 penalty on
# the activations (W itself, on the basis inputs), TopK, JumpReLU with an L0 penalty
SPARSITIES = ("l1", "topk", "jumprelu")
THRESHOLD_PARAMS = ("plain", "log")  # JumpReLU's thresholds stored as theta or as log theta
# the settings of the mechanisms beside L1: a run under l1 neither writes nor names them
MECHANISM_FIELDS = ("k", "l0", "bandwidth", "threshold_init", "threshold_param", "l0_warmup", "l0_schedule")
# Precision of W, the products and the optimizer's state. float64 is the default; float32 is
# the paper's (the authors trained in torch's default float32) and about twice as fast in the
# products. The per-weight arithmetic of the update is done in float64 either way.
DTYPES = ("float64", "float32")
N_MAX = 4096
M_MAX = 65536
STEPS_MAX = 10**8
L1_MAX = 4.0  # lam = l1/4 at most 1, the note's bound
LR_MAX = 1.0


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise InputError("interference", f"must be true or false, got {value!r}")
    return value


def _weight_decay(value: Any) -> float | None:
    """None (the optimizer's default) or a number >= 0 (with lr: InterferenceParams)."""
    if value is None:
        return None
    return number_check("weight_decay", 0.0, float("inf"))(value)


def _positive(name: str):
    return number_check(name, 0.0, float("inf"), low_open=True)


def _k(value: Any) -> int | None:
    """None (no TopK) or the units TopK keeps, 1 to m (with m: InterferenceParams)."""
    return None if value is None else whole_check("k", 1, M_MAX)(value)


def _steps_count(name: str):
    return with_bounds(
        lambda value: check_steps_count(name, value, STEPS_MAX),
        f"a whole number of steps from 0 to {short_number(STEPS_MAX)}",
    )


def _knots(name: str, value_name: str, most: float):
    most_text = f"from 0 to {short_number(most)}" if most < float("inf") else ">= 0"
    return with_bounds(
        lambda value: () if value in ((), None, "") else check_step_knots(name, value, value_name, most),
        f"knots step:value, each value {most_text}",
    )


def _effective_weight_decay(params) -> float:
    return params.effective_weight_decay


def _noise_text(kind: Any) -> str:
    return {"bernoulli": "Bernoulli", "gaussian": "Gaussian"}.get(kind, str(kind))


INTERFERENCE_SETTINGS = Settings(
    (
        Setting(
            "m",
            "m",
            1024,
            NEW_RUN,
            "neurons, the columns of W",
            whole_check("m", 1, M_MAX),
            axis="whole",
            always=True,
        ),
        Setting("n", "n", 256, NEW_RUN, "features, the rows of W", whole_check("n", 1, N_MAX), always=True),
        Setting(
            "l1",
            "l1",
            1e-3,
            LIVE,
            "the L1 coefficient (λ = l1/4; with a schedule: the l1 it ends at)",
            number_check("l1", 0.0, L1_MAX, why=" (lam = l1/4 at most 1)"),
            format_sci,
            axis="number",
            always=True,
        ),
        Setting(
            "lr",
            "lr",
            1e-3,
            LIVE,
            "the learning rate (with a schedule: the lr it ends at)",
            number_check("lr", 0.0, LR_MAX, low_open=True),
            format_sci,
            axis="number",
        ),
        Setting(
            "optimizer",
            "optimizer",
            "adamw",
            NEW_RUN,
            "the integrator",
            choice_check("optimizer", OPTIMIZERS),
            axis="choice",
        ),
        Setting(
            "steps",
            "steps",
            7500,
            LIVE,
            "steps to train",
            whole_check("steps", 1, STEPS_MAX, short_number(STEPS_MAX)),
            format_count,
            axis="whole",
        ),
        Setting(
            "seed",
            "seed",
            0,
            NEW_RUN,
            "the seed of W(0)",
            whole_check("seed", 0, 2**63 - 1, "2^63-1"),
            format_seed,
        ),
        Setting(
            "sigma",
            "σ",
            1.0,
            NEW_RUN,
            "W(0) ~ N(0, σ²/m)",
            number_check("sigma", 0.0, 1e3, low_open=True),
            axis="number",
        ),
        Setting("interference", "interference", True, LIVE, "the interference term on or off", _bool),
        Setting(
            "weight_decay",
            "weight decay",
            None,
            LIVE,
            "weight decay (none: 0.01 for adamw, else 0; a pin keeps the one in force)",
            with_bounds(_weight_decay, ">= 0"),
            get=_effective_weight_decay,
            axis="number",
        ),
        Setting(
            "dtype",
            "dtype",
            "float64",
            NEW_RUN,
            "the precision of W",
            choice_check("dtype", DTYPES),
            axis="choice",
        ),
        Setting(
            "noise",
            "noise",
            "none",
            NEW_RUN,
            "noise in the hidden layer",
            choice_check("noise", NOISES),
            _noise_text,
            axis="choice",
        ),
        Setting(
            "noise_sigma",
            "noise σ",
            0.0,
            LIVE,
            "the hidden noise's σ",
            number_check("noise_sigma", 0.0, 10.0),
            axis="number",
        ),
        Setting(
            "l1_warmup",
            "l1 warm-up",
            0,
            NEW_RUN,
            "l1 from 0 over the first steps",
            _steps_count("l1_warmup"),
            format_steps,
            "steps",
            axis="whole",
        ),
        Setting(
            "l1_schedule",
            "l1 schedule",
            (),
            NEW_RUN,
            "l1 through knots step:l1",
            _knots("l1_schedule", "l1", L1_MAX),
            axis="knots",
        ),
        Setting(
            "lr_warmup",
            "lr warm-up",
            0,
            NEW_RUN,
            "lr from 0 over the first steps",
            _steps_count("lr_warmup"),
            format_steps,
            "steps",
            axis="whole",
        ),
        Setting(
            "lr_decay",
            "lr decay",
            "none",
            NEW_RUN,
            "lr to 0 at the end",
            choice_check("lr_decay", LR_DECAYS),
            axis="choice",
        ),
        Setting(
            "lr_decay_steps",
            "lr decay steps",
            0,
            NEW_RUN,
            "the lr decay's length",
            _steps_count("lr_decay_steps"),
            format_count,
            axis="whole",
        ),
        Setting(
            "lr_schedule",
            "lr schedule",
            (),
            NEW_RUN,
            "lr through knots step:lr",
            _knots("lr_schedule", "lr", LR_MAX),
            axis="knots",
        ),
        Setting(
            "beta1",
            "β₁",
            0.9,
            LIVE,
            "Adam's first moment decay",
            number_check("beta1", 0.0, 1.0, high_open=True),
            option="number",
            only_with=ADAM,
            metavar="B1",
        ),
        Setting(
            "beta2",
            "β₂",
            0.999,
            LIVE,
            "Adam's second moment decay",
            number_check("beta2", 0.0, 1.0, high_open=True),
            option="number",
            only_with=ADAM,
            metavar="B2",
        ),
        Setting(
            "eps",
            "ε",
            1e-8,
            LIVE,
            "Adam's eps, added to the square root of its second moment",
            _positive("eps"),
            option="number",
            only_with=ADAM,
            metavar="EPS",
        ),
        Setting(
            "sparsity",
            "sparsity",
            "l1",
            NEW_RUN,
            "the sparsity mechanism on the hidden layer h = W^T x (W_i for feature i): l1, the L1 "
            "penalty; topk, the --k units of largest |h| per input kept with their sign, no penalty "
            "(l1 is 0); jumprelu, h H(|h| - theta) with a learned threshold per unit and the penalty "
            "--l0 times the units kept (l1 is 0 unless given)",
            choice_check("sparsity", SPARSITIES),
            axis="choice",
        ),
        Setting(
            "k",
            "K",
            None,
            NEW_RUN,
            "topk: the units kept per input (needed with topk)",
            with_bounds(_k, "a whole number from 1 to m"),
            format_count,
            axis="whole",
            metavar="K",
        ),
        Setting(
            "l0",
            "L0",
            0.0,
            LIVE,
            "jumprelu: the L0 coefficient C of C * (units kept, summed over the inputs); with a "
            "schedule: the C it ends at",
            number_check("l0", 0.0, float("inf")),
            format_sci,
            axis="number",
            metavar="C",
        ),
        Setting(
            "bandwidth",
            "ε_K",
            1e-3,
            NEW_RUN,
            "jumprelu: the width eps of the rectangle kernel (the thresholds' straight-through gradient)",
            _positive("bandwidth"),
            format_sci,
            axis="number",
            metavar="E",
        ),
        Setting(
            "threshold_init",
            "θ(0)",
            1e-3,
            NEW_RUN,
            "jumprelu: every threshold's start theta0",
            _positive("threshold_init"),
            format_sci,
            axis="number",
            metavar="T0",
        ),
        Setting(
            "threshold_param",
            "θ stored as",
            "plain",
            NEW_RUN,
            "jumprelu: the thresholds trained as theta (plain) or as log theta (log)",
            choice_check("threshold_param", THRESHOLD_PARAMS),
            axis="choice",
        ),
        Setting(
            "l0_warmup",
            "L0 warm-up",
            0,
            NEW_RUN,
            "jumprelu: l0 rises linearly from 0 to --l0 over the first STEPS steps: l0 * min(1, k/STEPS) "
            "at step k = 1, 2, ... (SAELens' l0_warm_up_steps is one step behind: (k-1)/STEPS)",
            _steps_count("l0_warmup"),
            format_steps,
            "steps",
            axis="whole",
        ),
        Setting(
            "l0_schedule",
            "L0 schedule",
            (),
            NEW_RUN,
            "jumprelu: l0 piecewise linear through knots step:l0, like 0:0,1000:0.01 (constant before "
            "the first and after the last; sets l0, the value after the last knot)",
            _knots("l0_schedule", "l0", float("inf")),
            axis="knots",
        ),
        Setting(
            "w0",
            "W(0)",
            None,
            NEW_RUN,
            "W(0) from a file (none: the normal draw)",
            fmt=lambda source: "normal draw" if source is None else source,
            get=lambda params: None,
            derived=True,
        ),
    )
)

# Fields that change during a run, keeping W and the optimizer's state (the next chunk
# uses them); a change of any other field starts a new run.
LIVE_FIELDS = INTERFERENCE_SETTINGS.names(LIVE)


def w0_name(source: dict | None) -> str | None:
    """W(0)'s source (run.json's "w0") as a pin keeps it: a file by its name (and tensor),
    None for the normal draw."""
    if not source or source.get("source") == "normal":
        return None
    if source.get("source") == "file" and source.get("path"):
        name = Path(str(source["path"])).name
        return f"{name} [{source['tensor']}]" if source.get("tensor") else name
    return str(source.get("source"))


def run_settings(params, w0_source: dict | None = None) -> dict[str, Any]:
    """Every setting of a run as figure JSON stores it (knots as text, W(0)'s source by
    name): what the figures were drawn from; the sparsity mechanism's only when it is not l1."""
    values = INTERFERENCE_SETTINGS.values(params)
    if params.sparsity == "l1":  # a run without the mechanisms: its settings as before them
        for name in ("sparsity", *MECHANISM_FIELDS):
            values.pop(name)
    return {**values, "w0": w0_name(w0_source)}


def needs_restart(old, new) -> bool:
    """Whether going from ``old`` to ``new`` (InterferenceParams) needs a new run: a change
    of a field that is not live, other than a schedule ended by a live change (with_live_change)."""
    ended = {}
    for name, group in SCHEDULE_GROUPS:
        if getattr(old, name) != getattr(new, name) and all(getattr(new, f) == v for f, v in group.items()):
            ended.update(group)
    return any(
        name not in LIVE_FIELDS and name not in ended
        for name in INTERFERENCE_SETTINGS.changed_fields(old, new)
    )


def live_change(params, changes: dict[str, Any]):
    """(the parameters after ``changes``, whether they need a new run): the one rule the
    window and the worker follow. A new l1 (l0, lr) ends its schedule."""
    new = params.with_live_change(**changes)
    return new, needs_restart(params, new)
