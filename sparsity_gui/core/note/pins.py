"""The note model's pinned runs: which parameters name a pinned run, and how."""

from __future__ import annotations

from pathlib import Path

from sparsity_gui.core.note.metrics import COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.pins import PinnedRun, pin_label
from sparsity_gui.core.text import sci

PIN_COLUMNS = COLUMNS  # a pinned run keeps the recorded columns, not the tracked weights
# in the order the legend names them: what a comparison most often varies first
PIN_SYMBOLS = {
    "lam": "λ",
    "m": "m",
    "sigma": "σ",
    "method": "method",
    "eta": "η",
    "seed": "seed",
    "t_end": "t_end",
    "w0_path": "W(0)",
}


def pin_params(params: SimParams) -> dict:
    """A run's parameters as a pinned run keeps them (W(0)'s file by its name)."""
    out = {name: getattr(params, name) for name in PIN_SYMBOLS}
    if out["w0_path"] is not None:
        out["w0_path"] = Path(out["w0_path"]).name
    return out


def note_pin_label(pin: PinnedRun, live: SimParams) -> str:
    """'pin 1: λ = 2.0e-3, m = 10⁴': the parameters where the pinned run differs from the
    live one (η only when either runs gradient descent: the exact flow has no step)."""
    live_params = pin_params(live)
    symbols = dict(PIN_SYMBOLS)
    if "gd" not in (live_params["method"], pin.param_dict.get("method")):
        del symbols["eta"]
    # λ as the change markers write it; a W(0) drawn from the normal distribution has no file
    formats = {"lam": sci, "w0_path": lambda path: "normal draw" if path is None else path}
    return pin_label(pin, live_params, symbols, formats)
