"""Which of the interference model's sparsity mechanisms (core/interference/mechanisms.py) a
series' reference curves use: the one the SAE was trained with, where its files give its
settings and the compared weights hold each input's latents along their last axis; else the
L1 model, saying why. A SAELens TopK SAE's cfg.json gives ``k``; a JumpReLU SAE's gives
``l0_coefficient``, ``jumprelu_bandwidth``, ``jumprelu_init_threshold`` and
``l0_warm_up_steps``, and its weights file says how the thresholds were trained: as they are
(``threshold``, SAELens 6.54) or as log theta (``log_threshold``, earlier versions). On the
paper's basis inputs a row of W_enc is one input's hidden pre-activation, so the mechanism
acts on it as the SAE acts on its latents. Qt-free.

SAELens' L0 warm-up counts from the SAE's step 0: its update s (from 0) uses
``C min(1, s / T)`` (its CoefficientScheduler: 0 at the first update). The reference starts
at the series' first snapshot, after s0 updates, so its step k (from 1) is the SAE's update
s0 + k - 1: the knots ``1: C min(1, s0 / T)`` and ``T - s0 + 1: C`` (none once s0 >= T)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sparsity_gui.core.series import Series

MECHANISM_NAMES = {"l1": "L1", "topk": "TopK", "jumprelu": "JumpReLU"}
THRESHOLD_WORDS = {
    "plain": "as they are, as SAELens 6.54 trains them (its weights file holds threshold; SAELens "
    "also keeps them >= 0, which the reference does not)",
    "log": "as log theta, as SAELens trained them before 6.54 (its weights file holds log_threshold)",
}


@dataclass(frozen=True)
class Reference:
    """The reference model's mechanism, its settings (InterferenceParams' fields) and what
    is said of it (``reason``: why the mechanism is L1 for an SAE trained otherwise)."""

    sparsity: str = "l1"
    settings: dict = field(default_factory=dict)
    reason: str = ""
    warmup: str = ""  # what the reference does with the SAE's L0 warm-up (JumpReLU)

    @property
    def name(self) -> str:
        return MECHANISM_NAMES[self.sparsity]

    @property
    def settings_text(self) -> str:
        """'k = 4', 'C = 1, eps = 0.001, theta0 = 0.001'; '' for L1."""
        s = self.settings
        if self.sparsity == "topk":
            return f"k = {s['k']}"
        if self.sparsity == "jumprelu":
            return f"C = {s['l0']:g}, eps = {s['bandwidth']:g}, theta0 = {s['threshold_init']:g}"
        return ""

    @property
    def short(self) -> str:
        """'TopK, k = 4' (the figures' titles and legends), 'L1'."""
        return f"{self.name}, {self.settings_text}" if self.settings_text else self.name

    def params(self, l1: float) -> dict:
        """The fields of InterferenceParams that set the mechanism: TopK and a SAELens
        JumpReLU have no L1 term, so l1 = 0 beside them."""
        if self.sparsity == "l1":
            return {"l1": l1}
        return {"l1": 0.0, "sparsity": self.sparsity, **self.settings}

    def text(self, l1: float) -> str:
        """run.json's, the command's and the dock's sentence on the reference's mechanism."""
        if self.sparsity == "topk":
            return (
                f"the reference uses the interference model's TopK with k = {self.settings['k']} "
                "(cfg.json's k): each input keeps its k largest |h| with their sign, no penalty, "
                f"so --l1 {l1:g} is not used"
            )
        if self.sparsity == "jumprelu":
            s = self.settings
            return (
                f"the reference uses the interference model's JumpReLU with the L0 coefficient "
                f"C = {s['l0']:g}, bandwidth {s['bandwidth']:g} and every threshold from "
                f"{s['threshold_init']:g} (cfg.json's l0_coefficient, jumprelu_bandwidth, "
                f"jumprelu_init_threshold), trained {THRESHOLD_WORDS[s['threshold_param']]}; the "
                "threshold acts on |h| (the SAE's own thresholds at the first snapshot are not read); "
                f"no L1 term, so --l1 {l1:g} is not used" + (f"; {self.warmup}" if self.warmup else "")
            )
        return self.reason


def _number_above(value, low: float, closed: bool) -> float | None:
    """A finite number from a config above ``low`` (at ``low`` too when ``closed``), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value) if value > low or (closed and value == low) else None


def reference_of(series: Series) -> Reference:
    """The reference's mechanism for ``series`` (module docstring)."""
    model = series.model
    arch = str(model.get("architecture", "")) if model else ""
    if arch not in ("topk", "jumprelu"):
        return Reference()
    name = MECHANISM_NAMES[arch]
    width = series.shape[-1]
    if series.layout != "saelens" or series.pick not in ("matrix", "row"):
        return Reference(
            reason=f"the reference uses the L1 model: {name} chooses among an input's latents, and "
            "the weights compared are not one input's latents (compare the matrix, or a row of "
            f"W_enc, to use {name})"
        )
    if arch == "topk":
        k = model.get("k")
        if isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= width:
            return Reference("topk", {"k": k})
        return Reference(
            reason=f"the reference uses the L1 model: cfg.json gives no k from 1 to {width} "
            f"(it says {k!r}), so TopK cannot be matched"
        )
    mode = model.get("jumprelu_sparsity_loss_mode", "step")
    if mode != "step":
        return Reference(
            reason=f"the reference uses the L1 model: the SAE's sparsity loss is {mode!r}, not the "
            "L0 step the interference model's JumpReLU has"
        )
    keys = {
        "l0": "l0_coefficient",
        "bandwidth": "jumprelu_bandwidth",
        "threshold_init": "jumprelu_init_threshold",
    }
    given = {ours: _number_above(model.get(theirs), 0.0, ours == "l0") for ours, theirs in keys.items()}
    missing = [keys[ours] for ours, value in given.items() if value is None]
    if missing:
        return Reference(
            reason="the reference uses the L1 model: cfg.json does not give "
            f"{', '.join(missing)} (C >= 0, the others > 0), so JumpReLU cannot be matched"
        )
    if model.get("jumprelu_ste_to_input"):
        return Reference(
            reason="the reference uses the L1 model: the SAE's straight-through estimator also reaches "
            "its pre-activations (jumprelu_ste_to_input), which the interference model's JumpReLU does not"
        )
    param = "log" if model.get("threshold_tensor") == "log_threshold" else "plain"
    c = given["l0"]
    assert c is not None  # (a missing one returned above)
    settings: dict[str, object] = {**given, "threshold_param": param}
    schedule, warmup = _warmup_knots(model.get("l0_warm_up_steps"), c, int(series.steps[0]))
    if schedule:
        settings["l0_schedule"] = schedule
    return Reference("jumprelu", settings, warmup=warmup)


def _warmup_knots(steps, c: float, s0: int) -> tuple[tuple[tuple[float, float], ...], str]:
    """SAELens' L0 warm-up over ``steps`` updates from the SAE's step 0, seen from the
    series' first snapshot after ``s0`` updates (module docstring): the reference's knots
    and what is said of them."""
    if steps in (None, 0):
        return (), ""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        return (
            (),
            f"cfg.json's l0_warm_up_steps {steps!r} is not a whole number of steps: the reference holds C",
        )
    if s0 >= steps:
        return (), f"the SAE's L0 warm-up over {steps} steps ended before the first snapshot (step {s0})"
    start = c * s0 / steps
    return (
        ((1.0, start), (float(steps - s0 + 1), c)),
        f"the SAE warmed C up from 0 over its first {steps} steps (l0_warm_up_steps): the reference, from "
        f"the SAE's step {s0}, follows the rest of that ramp: C = {start:g} there, {c:g} from step {steps}",
    )
