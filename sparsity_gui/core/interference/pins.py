"""The interference model's pinned runs: what a pinned run keeps of its settings and its
name, both from the settings table (core/interference/settings.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparsity_gui.core.interference.params import OPTIMIZERS, InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.interference.settings import ADAM, INTERFERENCE_SETTINGS, w0_name
from sparsity_gui.core.pins import PinnedRun, pin_label

PIN_COLUMNS = HISTORY_COLUMNS
PIN_NAMES = INTERFERENCE_SETTINGS.pin_names  # the settings a pinned run keeps (a session's pins too)
# named only when either run's optimizer has them (Adam's β₁, β₂, ε: Setting.only_with)
ADAM_SETTINGS = tuple(s.name for s in INTERFERENCE_SETTINGS if s.only_with == ADAM)


def pin_params(params, w0_source: str | None = None) -> dict[str, Any]:
    """A run's settings as a pinned run keeps them (pins.json, sessions): every setting a
    pin's name may list, knots as text, the weight decay in force, W(0)'s source (None:
    the normal draw)."""
    return {**INTERFERENCE_SETTINGS.pin_values(params), "w0": w0_source}


__all__ = [
    "PIN_COLUMNS",
    "PIN_NAMES",
    "differing_settings",
    "interference_pin_label",
    "pin_params",
    "settings_named",
    "w0_name",
]


def differing_settings(values: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """['m = 512', 'l1 = 2.0e-3']: the settings of ``values`` that differ from ``other``'s
    (Adam's β₁, β₂, ε only when either run is Adam's, or when nothing else differs)."""
    adam = set(ADAM[1]) & {values.get("optimizer"), other.get("optimizer")}
    skip = () if adam else ADAM_SETTINGS
    parts = INTERFERENCE_SETTINGS.differing(values, other, skip)
    return parts or INTERFERENCE_SETTINGS.differing(values, other)


def settings_named(values: Mapping[str, Any]) -> list[str]:
    """A run's settings (run_settings, or a pin's) as the figures' titles and the dock name
    a run: n, m and l1 always, then every other that differs from a default run's, written
    as a pinned run's name writes them. Its weight decay is named where it differs from its
    optimizer's default (0 for Adam is no choice of the user's); Adam's settings only for
    Adam's runs."""
    return INTERFERENCE_SETTINGS.described(values, differing_from_default(values))


def differing_from_default(values: Mapping[str, Any]) -> list[str]:
    """The settings of ``values`` (a run's pin values) that differ from a default run's, as
    settings_named chooses them."""
    default = pin_params(InterferenceParams())
    if values.get("optimizer") in OPTIMIZERS:
        own = InterferenceParams(optimizer=values["optimizer"])
        default["weight_decay"] = own.effective_weight_decay
    skip = () if values.get("optimizer") in ADAM[1] else ADAM_SETTINGS
    return INTERFERENCE_SETTINGS.differing_names(values, default, skip)


def interference_pin_label(pin: PinnedRun, live, w0_source: str | None = None) -> str:
    """'pin 1: m = 512, l1 = 2.0e-3': the settings where the pinned run differs from the
    live one (differing_settings)."""
    return pin_label(pin, differing_settings(pin.param_dict, pin_params(live, w0_source)), PIN_NAMES)
