"""Which of the interference model's sparsity mechanisms (core/interference/mechanisms.py) a
series' reference curves use: the one the SAE was trained with, where its files give its
settings and the compared weights hold each input's latents along their last axis; else the
L1 model, saying why. A SAELens TopK SAE's cfg.json gives ``k``; a JumpReLU SAE's gives
``l0_coefficient``, ``jumprelu_bandwidth`` and ``jumprelu_init_threshold``, and SAELens trains
its thresholds as log theta. On the paper's basis inputs a row of W_enc is one input's hidden
pre-activation, so the mechanism acts on it as the SAE acts on its latents. Qt-free."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sparsity_gui.core.series import Series

MECHANISM_NAMES = {"l1": "L1", "topk": "TopK", "jumprelu": "JumpReLU"}


@dataclass(frozen=True)
class Reference:
    """The reference model's mechanism, its settings (InterferenceParams' fields) and what
    is said of it (``reason``: why the mechanism is L1 for an SAE trained otherwise)."""

    sparsity: str = "l1"
    settings: dict = field(default_factory=dict)
    reason: str = ""
    warmup: object = None  # cfg.json's l0_warm_up_steps (the reference has none)

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
                "jumprelu_init_threshold), trained as log theta as SAELens trains it; the threshold "
                f"acts on |h| (the SAE's own thresholds at the first snapshot are not read); no L1 "
                f"term, so --l1 {l1:g} is not used"
                + (
                    f"; the SAE warmed C up over {self.warmup} steps, the reference holds C from its start"
                    if isinstance(self.warmup, int) and self.warmup > 0
                    else ""
                )
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
    return Reference("jumprelu", {**given, "threshold_param": "log"}, warmup=model.get("l0_warm_up_steps"))
