"""The interference dock's texts: the status line's step and note time, and the text below
its fields: the run's settings, the note's units and, with a schedule, the values in force at
the painted step (l1, lr, and JumpReLU's L0 coefficient), each setting written as its table
row writes it (as pinned runs and the figures' titles do), t as time_text writes it."""

from __future__ import annotations

import math

from sparsity_gui.core.interference.params import GD_OPTIMIZERS, InterferenceParams
from sparsity_gui.core.interference.pins import settings_named
from sparsity_gui.core.interference.schedules import (
    has_l0_schedule,
    has_l1_schedule,
    has_lr_schedule,
    l0_in_force,
    lr_sum,
    values_in_force,
)
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS as SETTINGS
from sparsity_gui.core.settings import format_value
from sparsity_gui.core.text import time_text


def units_text(p: InterferenceParams, step: int = 0, t: float = 0.0) -> str:
    """The note's units of the current parameters (meaningful for gradient descent): the
    time at the run's last step is the time ``t`` reached at ``step`` plus 4·Σ lr over the
    steps left, so a schedule and a live change of lr are followed and a finished run's
    value is the status line's, in its words (time_text). λ and η are written as the note's
    settings table writes them (λ as l1's row, format_sci; η in the tables' default format:
    the models' tables stay apart)."""
    t_end = t + 4.0 * lr_sum(p, step, p.steps)
    lam, eta = SETTINGS["l1"].fmt(p.lam), format_value(p.eta)
    steps = SETTINGS["steps"].fmt(p.steps)
    text = f"λ = l1/4 = {lam},  η = 4·lr = {eta},  t = 4·Σ lr = {time_text(t_end)} by step {steps}"
    if p.optimizer not in GD_OPTIMIZERS:
        text += " (Adam's steps have no note time)"
    return text


def run_line(values) -> str:
    """'run: m = 1,024, n = 256, l1 = 2.0e-3, noise = Bernoulli, noise σ = 0.1': the run's
    settings as pinned runs and the figures' titles name them (settings_named: m, n and l1
    always, then those that differ from a default run's)."""
    return "run: " + ", ".join(settings_named(values))


def status_head(step: int, p: InterferenceParams, t: float) -> str:
    """The status line's first line: 'step 1,200 / 7,500  (t = 4.8)' (t for gradient
    descent, written as the dock's t = 4·Σ lr is)."""
    text = f"step {step:,} / {SETTINGS['steps'].fmt(p.steps)}"
    if p.optimizer in GD_OPTIMIZERS:
        text += f"  (t = {time_text(t)})"
    return text


def in_force_line(p: InterferenceParams, meas) -> str | None:
    """'in force at step 1,500: l1 = 4.0e-2, lr = 5.0e-2' (and ', L0 = 1.0e-2' under JumpReLU,
    its L0 coefficient C; TopK has none, its K is fixed) while a schedule moves any of them,
    else None; ``meas``: the painted step's Measurement (None: before the first step)."""
    jump = p.sparsity == "jumprelu"
    if not (has_l1_schedule(p) or has_lr_schedule(p) or (jump and has_l0_schedule(p))):
        return None
    if meas is None:
        (l1, lr), l0, step = values_in_force(p, 0), l0_in_force(p, 0), 0
    else:
        l1, lr, l0, step = meas.l1, meas.lr, meas.l0, meas.step
    line = f"in force at step {step:,}: {SETTINGS['l1'].text(l1)}, {SETTINGS['lr'].text(lr)}"
    return line + (f", {SETTINGS['l0'].text(l0)}" if jump else "")


def dock_text(p: InterferenceParams, run_values, meas, saturated: str | None = None, found: str = "") -> str:
    """The run line, the note's units, the values in force (in_force_line), ``found`` (the
    run's readouts so far) and ``saturated`` (the line that says the l1 coefficient no
    longer matters), one a line; ``run_values``: run_settings' of the run."""
    gd = meas is not None and math.isfinite(meas.t)
    lines = [run_line(run_values), units_text(p, meas.step, meas.t) if gd else units_text(p)]
    return "\n".join(line for line in (*lines, in_force_line(p, meas), found, saturated) if line)
