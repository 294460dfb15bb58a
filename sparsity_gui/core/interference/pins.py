"""The interference model's pinned runs: what a pinned run keeps of its settings and its
name, both from the settings table (core/interference/settings.py)."""

from __future__ import annotations

from typing import Any

from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS, w0_name
from sparsity_gui.core.pins import PinnedRun, pin_label

PIN_COLUMNS = HISTORY_COLUMNS
PIN_NAMES = INTERFERENCE_SETTINGS.pin_names  # the settings a pinned run keeps (a session's pins too)
ADAM_SETTINGS = ("beta1", "beta2", "eps")  # named only when either run is Adam's


def pin_params(params, w0_source: str | None = None) -> dict[str, Any]:
    """A run's settings as a pinned run keeps them (pins.json, sessions): every setting a
    pin's name may list, knots as text, the weight decay in force, W(0)'s source (None:
    the normal draw)."""
    return {**INTERFERENCE_SETTINGS.pin_values(params), "w0": w0_source}


__all__ = ["PIN_COLUMNS", "PIN_NAMES", "interference_pin_label", "pin_params", "w0_name"]


def interference_pin_label(pin: PinnedRun, live, w0_source: str | None = None) -> str:
    """'pin 1: m = 512, l1 = 2.0e-3': the settings where the pinned run differs from the
    live one (Adam's β₁, β₂, ε only when either run is Adam's, or nothing else differs)."""
    live_values = pin_params(live, w0_source)
    adam = {"adam", "adamw"} & {live_values["optimizer"], pin.param_dict.get("optimizer")}
    skip = () if adam else ADAM_SETTINGS
    # Adam's settings under another optimizer are named only when nothing else differs
    parts = INTERFERENCE_SETTINGS.differing(pin.param_dict, live_values, skip)
    return pin_label(pin, parts or INTERFERENCE_SETTINGS.differing(pin.param_dict, live_values), PIN_NAMES)
