"""The interference model's parameters: `InterferenceParams` (frozen, validated; what
crosses to the worker), the optimizers, the fields that change live, the memory check and
the window's presets.

Lecomte et al. (2023) train a tied-weight autoencoder y = ReLU(W W^T x) on the n basis
vectors, with loss  sum_i (1 - |W_i|^2)^2 + sum_{i != j} ReLU(W_i . W_j)^2 + l1 |W|_1.
Its gradient, divided by 4, is the note's flow plus interference (docs/theory.md §5):

    dW_i/dt = (1 - |W_i|^2) W_i - sum_{j != i} ReLU(W_i . W_j) W_j - lam sign(W_i),

with lam = l1/4 and, for plain gradient descent, t = 4 * lr * steps. W is n x m
(features by neurons, as in the paper's code). Parameters are in the network's units
(l1, lr, steps) because Adam and the paper use them; ``lam``/``eta``/``t`` give the note's.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from sparsity_gui.core.checks import check_fits, check_work
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.schedules import (
    SCHEDULE_FIELDS,
    SCHEDULE_GROUPS,
    check_schedules,
    schedule_summary,
)
from sparsity_gui.core.interference.settings import (
    DTYPES,
    INTERFERENCE_SETTINGS,
    LIVE_FIELDS,
    M_MAX,
    MECHANISM_FIELDS,
    N_MAX,
    NOISES,
    OPTIMIZERS,
    SPARSITIES,
    STEPS_MAX,
    needs_restart,
)
from sparsity_gui.core.knots import Knots

__all__ = [
    "DTYPES",
    "LIVE_FIELDS",
    "M_MAX",
    "N_MAX",
    "NOISES",
    "OPTIMIZERS",
    "SPARSITIES",
    "STEPS_MAX",
    "InterferenceParams",
    "needs_restart",
]

OPTIMIZER_LABELS = {
    "gd-zero": "GD with zero rule",
    "gd": "plain GD",
    "adam": "Adam",
    "adamw": "AdamW (paper)",
    "ista": "ISTA (proximal GD)",
    "signsgd": "signSGD",
}


DTYPE_LABELS = {"float64": "float64 (default)", "float32": "float32 (paper's)"}


# fields as_dict writes only when set: run.json and sweep.json of a run without them are
# what they were before these fields existed
QUIET_FIELDS = (*SCHEDULE_FIELDS, "noise", "noise_sigma", "sparsity", *MECHANISM_FIELDS)
# each mechanism's own settings (the others refuse a value other than their default)
MECHANISM_SETTINGS = {
    "l1": (),
    "topk": ("k",),
    "jumprelu": ("l0", "bandwidth", "threshold_init", "threshold_param", "l0_warmup", "l0_schedule"),
}


# those whose steps are the note's flow discretised, at t = 4 lr steps
GD_OPTIMIZERS = ("gd-zero", "gd", "ista")


# arrays held per weight: W, W(0), two Adam moments, interference, headroom (8 of them).
ARRAYS_PER_WEIGHT = 8


def predicted_polysemantic(n: int, m: int) -> float:
    """The paper's estimate of polysemantic neurons after training: n^2 / (4 m)."""
    return n * n / (4.0 * m)


@dataclass(frozen=True)
class InterferenceParams:
    """One training run of the n-encoding model. Invalid values raise InputError."""

    n: int = 256
    m: int = 1024
    l1: float = 1e-3
    lr: float = 1e-3
    optimizer: str = "adamw"
    steps: int = 7500
    seed: int = 0
    sigma: float = 1.0  # W(0) ~ normal(0, sigma / sqrt(m)); the paper's is sigma = 1
    interference: bool = True
    weight_decay: float | None = None  # None: 0.01 for adamw, 0 otherwise (torch defaults)
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    dtype: str = "float64"  # or "float32", the paper's precision (see DTYPES)
    # l1 and lr over steps (core/interference/schedules.py); the defaults: constant. With
    # knots, l1 (lr) is the value after the last knot.
    l1_warmup: int = 0
    l1_schedule: Knots = ()
    lr_warmup: int = 0
    lr_decay: str = "none"  # or "linear", "cosine": to 0 over the last lr_decay_steps
    lr_decay_steps: int = 0
    lr_schedule: Knots = ()
    # noise in the hidden layer (core/interference/noise.py): one vector xi per step,
    # y = ReLU((x W + xi) W^T); "bernoulli" (+-sigma) or "gaussian" (N(0, sigma^2))
    noise: str = "none"
    noise_sigma: float = 0.0
    # the hidden layer's sparsity mechanism (core/interference/mechanisms.py): "l1" (the
    # paper's), "topk" (keeps k units per input; no penalty, so l1 = 0) or "jumprelu" (a
    # threshold per unit, the L0 penalty l0, kernel width bandwidth, thresholds from
    # threshold_init, trained as theta or log theta; l0 over steps as l1: a warm-up or knots,
    # ending at l0)
    sparsity: str = "l1"
    k: int | None = None
    l0: float = 0.0
    bandwidth: float = 1e-3
    threshold_init: float = 1e-3
    threshold_param: str = "plain"
    l0_warmup: int = 0
    l0_schedule: Knots = ()

    def __post_init__(self) -> None:
        INTERFERENCE_SETTINGS.checked_fields(self)  # each field by its setting's check
        if self.weight_decay is not None and not self.weight_decay * self.lr < 1.0:
            raise InputError(
                "weight_decay", f"must be >= 0 with weight_decay * lr < 1, got {self.weight_decay}"
            )
        if self.noise == "none" and self.noise_sigma != 0.0:
            raise InputError("noise_sigma", "needs a noise kind (--noise bernoulli|gaussian)")
        self._check_mechanism()
        check_schedules({f: getattr(self, f) for f in SCHEDULE_FIELDS}, self.l1, self.lr, self.l0)

    def _check_mechanism(self) -> None:
        """The sparsity mechanism's settings: each goes with its own mechanism only."""
        own = MECHANISM_SETTINGS[self.sparsity]
        for name in MECHANISM_FIELDS:
            if name not in own and getattr(self, name) != INTERFERENCE_SETTINGS[name].default:
                takes = next(s for s, names in MECHANISM_SETTINGS.items() if name in names)
                raise InputError(name, f"goes with sparsity {takes} only (the run's is {self.sparsity})")
        if self.sparsity == "topk":
            if self.k is None:
                raise InputError("k", "topk needs k, the units it keeps per input (1 to m)")
            if self.k > self.m:
                raise InputError("k", f"must be a whole number from 1 to m = {self.m}, got {self.k}")
            if self.l1 != 0.0 or self.l1_warmup or self.l1_schedule:
                raise InputError("l1", "topk has no penalty: leave l1 out (it is 0 under topk)")

    # --- the note's units ---------------------------------------------------------------
    @property
    def lam(self) -> float:
        """The note's L1 strength: lam = l1 / 4."""
        return self.l1 / 4.0

    @property
    def eta(self) -> float:
        """The note's step for plain GD: eta = 4 * lr (so t = 4 * lr * steps)."""
        return 4.0 * self.lr

    def time_of(self, steps: int | float | np.ndarray) -> Any:
        """The note's time after ``steps`` steps of plain GD: t = 4 * lr * steps."""
        return self.eta * steps

    @property
    def effective_weight_decay(self) -> float:
        if self.weight_decay is not None:
            return self.weight_decay
        return 0.01 if self.optimizer == "adamw" else 0.0

    @property
    def prediction(self) -> float:
        return predicted_polysemantic(self.n, self.m)

    def with_changes(self, **changes: Any) -> InterferenceParams:
        return replace(self, **changes)

    def with_live_change(self, **changes: Any) -> InterferenceParams:
        """``changes`` made during a run: a new l1 (l0, lr) ends l1's (l0's, lr's) schedule,
        the value given holds from then on (as for the note's λ)."""
        for name, dropped in SCHEDULE_GROUPS:
            if name in changes and changes[name] != getattr(self, name):
                changes = {**dropped, **changes}
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Every field; the schedule, noise and sparsity mechanism fields only when set (a
        run without them writes the same parameters as before they existed)."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in QUIET_FIELDS}
        d["weight_decay"] = self.effective_weight_decay
        d.update(schedule_summary(self))
        if self.noise != "none":
            d.update(noise=self.noise, noise_sigma=self.noise_sigma)
        if self.sparsity != "l1":  # (l0's schedule, as the others: by schedule_summary, when set)
            own = (f for f in MECHANISM_SETTINGS[self.sparsity] if f not in SCHEDULE_FIELDS)
            d.update(sparsity=self.sparsity, **{f: getattr(self, f) for f in own})
        return d


# Starting points of the window's Presets menu: (name, what it shows, parameters)
PRESETS: tuple[tuple[str, str, InterferenceParams], ...] = (
    (
        "The paper's setting",
        "n = 256, m = 1024, AdamW, l1 = lr = 1e-3, 7500 steps: about 16 polysemantic neurons predicted",
        InterferenceParams(),
    ),
    (
        "Quick demo",
        "n = 64, m = 256, AdamW at lr = 3e-3: settles in a few seconds",
        InterferenceParams(n=64, m=256, lr=3e-3, steps=4000),
    ),
    (
        "The note's flow, with interference",
        "n = 48, m = 128, GD with the zero rule at "
        "lam = 0.05 (l1 = 0.2), eta = 0.2 (lr = 0.05): one weight per feature, collisions of "
        "opposite sign only",
        InterferenceParams(n=48, m=128, optimizer="gd-zero", l1=0.2, lr=0.05, steps=2000),
    ),
    (
        "Control: no interference",
        "the same, every feature alone (the note's model n times "
        "over): each keeps its initial largest neuron, collisions of both signs",
        InterferenceParams(n=48, m=128, optimizer="gd-zero", l1=0.2, lr=0.05, steps=2000, interference=False),
    ),
    (
        "Adam at the same size",
        "n = 48, m = 128, Adam at lr = 3e-3: per-coordinate steps, "
        "few features end on their initial largest neuron",
        InterferenceParams(n=48, m=128, optimizer="adam", lr=3e-3, steps=4000),
    ),
)


def check_memory(n: int, m: int, dtype: str = "float64") -> None:
    size = np.dtype(dtype).itemsize
    need = n * m * ARRAYS_PER_WEIGHT * size + 3 * n * n * size
    check_fits("m", need, f"n = {n}, m = {m}")


def step_multiply_adds(n: int, m: int) -> float:
    """Multiply-adds of one training step: the two n x n x m products of the interference
    term, and the passes over W (the unit of every chunk and progress estimate)."""
    return float(n) * n * m + float(n) * m


def check_training_work(p: InterferenceParams) -> None:
    """Refuse (InputError naming steps) a run whose multiply-adds would pass the limit of
    bounded work (core/checks.py): about 10^10 a second here."""
    check_steps_work(p.n, p.m, p.steps)


def check_steps_work(n: int, m: int, steps: int) -> None:
    """check_training_work for ``steps`` steps of an n x m model (a series' training too)."""
    check_work(
        "steps", f"{steps} steps at n = {n}, m = {m}", step_multiply_adds(n, m) * steps, "multiply-adds"
    )
