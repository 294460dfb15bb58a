"""The interference model's pinned runs: which parameters name a pinned run, and how."""

from __future__ import annotations

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.pins import PinnedRun, pin_label
from sparsity_gui.core.text import sci

PIN_COLUMNS = HISTORY_COLUMNS
# in the order the legend names them: what a comparison most often varies first
PIN_SYMBOLS = {
    "m": "m",
    "n": "n",
    "l1": "l1",
    "lr": "lr",
    "optimizer": "optimizer",
    "steps": "steps",
    "seed": "seed",
    "sigma": "σ",
    "interference": "interference",
    "weight_decay": "weight decay",
    "beta1": "β₁",
    "beta2": "β₂",
    "eps": "ε",
}


def pin_params(params: InterferenceParams) -> dict:
    return {name: getattr(params, name) for name in PIN_SYMBOLS}


def interference_pin_label(pin: PinnedRun, live: InterferenceParams) -> str:
    """'pin 1: m = 512, l1 = 2.0e-3': where the pinned run differs from the live one."""
    return pin_label(pin, pin_params(live), PIN_SYMBOLS, {"l1": sci, "lr": sci})
