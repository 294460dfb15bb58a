"""The note model's pinned runs: what a pinned run keeps of its settings and its name,
both from the settings table (core/note/settings.py)."""

from __future__ import annotations

from typing import Any

from sparsity_gui.core.note.metrics import COLUMNS
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.pins import PinnedRun, pin_label

PIN_COLUMNS = COLUMNS  # a pinned run keeps the recorded columns, not the tracked weights
PIN_NAMES = NOTE_SETTINGS.pin_names  # the settings a pinned run keeps (a session's pins too)


def pin_params(params) -> dict[str, Any]:
    """A run's settings as a pinned run keeps them (pins.json, sessions): every setting a
    pin's name may list, knots as text, W(0)'s file by its name."""
    return NOTE_SETTINGS.pin_values(params)


def note_pin_label(pin: PinnedRun, live) -> str:
    """'pin 1: λ = 2.0e-3, m = 10⁴': the settings where the pinned run differs from the
    live one (η only when either runs gradient descent, the exact flow having no step, or
    when nothing else differs)."""
    live_values = pin_params(live)
    skip = () if "gd" in (live_values["method"], pin.param_dict.get("method")) else ("eta",)
    # a step no run takes is named only when nothing else differs (never "same parameters")
    parts = NOTE_SETTINGS.differing(pin.param_dict, live_values, skip) or NOTE_SETTINGS.differing(
        pin.param_dict, live_values
    )
    return pin_label(pin, parts, PIN_NAMES)
