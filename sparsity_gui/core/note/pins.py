"""The note model's pinned runs: what a pinned run keeps of its settings and its name,
both from the settings table (core/note/settings.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparsity_gui.core.note.metrics import COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.pins import PinnedRun, pin_label

PIN_COLUMNS = COLUMNS  # a pinned run keeps the recorded columns, not the tracked weights
PIN_NAMES = NOTE_SETTINGS.pin_names  # the settings a pinned run keeps (a session's pins too)


def pin_params(params) -> dict[str, Any]:
    """A run's settings as a pinned run keeps them (pins.json, sessions): every setting a
    pin's name may list, knots as text, W(0)'s file by its name."""
    return NOTE_SETTINGS.pin_values(params)


def differing_settings(values: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """['λ = 2.0e-3', 'm = 10⁴']: the settings of ``values`` that differ from ``other``'s
    (η only when either runs gradient descent, the exact flow having no step, or when
    nothing else differs: a step no run takes is never hidden behind "same parameters")."""
    skip = () if "gd" in (values.get("method"), other.get("method")) else ("eta",)
    return NOTE_SETTINGS.differing(values, other, skip) or NOTE_SETTINGS.differing(values, other)


def settings_named(values: Mapping[str, Any]) -> list[str]:
    """A run's settings (NOTE_SETTINGS.values) as the figures' titles and the argument dock
    name a run: λ and m always, then every other that differs from a default run's, written
    as a pinned run's name writes them (η as differing_settings names it)."""
    default = pin_params(SimParams())
    skip = () if values.get("method") == "gd" else ("eta",)
    return NOTE_SETTINGS.described(values, NOTE_SETTINGS.differing_names(values, default, skip))


def note_pin_label(pin: PinnedRun, live) -> str:
    """'pin 1: λ = 2.0e-3, m = 10⁴': the settings where the pinned run differs from the
    live one (differing_settings)."""
    return pin_label(pin, differing_settings(pin.param_dict, pin_params(live)), PIN_NAMES)
