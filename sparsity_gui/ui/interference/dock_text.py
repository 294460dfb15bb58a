"""The interference dock's text below its fields: the run's settings, the note's units and,
with a schedule, the values in force at the painted step (l1, lr, and JumpReLU's L0
coefficient), each written as the settings table writes it."""

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
from sparsity_gui.core.settings import format_sci, format_value


def units_text(p: InterferenceParams, step: int = 0, t: float = 0.0) -> str:
    """The note's units of the current parameters (meaningful for gradient descent): the
    time at the run's last step is the time ``t`` reached at ``step`` plus 4·Σ lr over the
    steps left, so a schedule and a live change of lr are followed and a finished run's
    value is the status line's. λ and η are written as the note's settings table writes them."""
    t_end = t + 4.0 * lr_sum(p, step, p.steps)
    lam, eta = format_sci(p.lam), format_value(p.eta)
    steps = SETTINGS["steps"].fmt(p.steps)
    text = f"λ = l1/4 = {lam},  η = 4·lr = {eta},  t = 4·Σ lr = {t_end:.6g} by step {steps}"
    if p.optimizer not in GD_OPTIMIZERS:
        text += " (Adam's steps have no note time)"
    return text


def run_line(values) -> str:
    """'run: l1 = 2.0e-3, noise = Bernoulli, noise σ = 0.1': the run's settings that differ
    from a default run's, as pinned runs and the figures' titles name them."""
    named = settings_named(values)
    return "run: " + (", ".join(named) if named else "every setting at its default")


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
