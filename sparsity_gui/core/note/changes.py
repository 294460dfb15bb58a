"""What a run's parameters do over time: the live changes made during a run (λ, η, the
method, at an instant), the script that replays a run with them (RunScript), and λ's
schedule they make. Qt-free; the solver steps with it (core/note/simulation.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sparsity_gui.core.note.metrics import DEFAULT_SAMPLES
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.schedule import Knots, lam_at


@dataclass(frozen=True)
class LamChange:
    t: float
    lam: float


@dataclass(frozen=True)
class LiveChange:
    """A parameter changed during a run (no reset): lam, eta or method, at time t."""

    t: float
    name: str
    value: float | str


@dataclass(frozen=True)
class RunScript:
    """Everything that determines a run's recorded time series: the parameters at t = 0,
    W(0), the schedule of live changes, and the sample times (`samples` evenly spaced
    instants from 0 to `t`). Replaying it stops exactly at each change and each sample,
    so the rows are a deterministic function of the script (not of wall-clock chunking).
    `Simulation.from_script` builds the run replayed to `t`, its history holding the
    sampled rows (a session opened in the window)."""

    params: SimParams
    w0: np.ndarray
    changes: tuple[LiveChange, ...] = ()
    t: float = 0.0
    samples: int = DEFAULT_SAMPLES

    def sample_times(self) -> np.ndarray:
        """`samples` instants evenly spaced from 0 to `t`, and each live change's instant
        twice: the row just before the change and the row at it (see with_change_instants)."""
        if self.t <= 0.0:
            return np.zeros(1)
        return with_change_instants(np.linspace(0.0, self.t, max(int(self.samples), 2)), self.changes)

    def final_params(self) -> SimParams:
        """The parameters in force at the end of the schedule."""
        params = self.params
        for c in self.changes:
            params = params.with_live_change(c.name, c.value)
        return params


def with_change_instants(times: np.ndarray, changes: Sequence[LiveChange]) -> np.ndarray:
    """``times`` (ascending) with the instant of each change inside them, twice: replay
    takes the first row of a repeated instant before the changes there, the second after,
    so θ's jump at a change of λ (and the weights it sends below θ) are in every file and
    frame, not smeared over the grid's neighbours. An instant already in ``times`` is
    added once more."""
    times = np.asarray(times, dtype=np.float64)
    if times.size == 0:
        return times
    extra = []
    for t in sorted({float(c.t) for c in changes if times[0] < c.t <= times[-1]}):
        extra += [t] * (2 - int(np.count_nonzero(times == t)))
    return np.sort(np.concatenate([times, extra]), kind="stable") if extra else times


def merged_changes(changes, span: float, share: float = 0.01) -> list:
    """Live changes closer together than ``share`` of the time ``span`` merged into the
    last of them, as the live panels and the figures mark them (a marker each would pile
    up into an unreadable stack)."""
    out: list = []
    for c in changes:
        if out and c.t - out[-1].t < share * span:
            out[-1] = c
        else:
            out.append(c)
    return out


def lam_schedule(lam0: float, changes: Sequence[LiveChange], knots: Knots = ()) -> tuple[LamChange, ...]:
    """lam at t = 0, at each knot of a schedule ``knots`` (until the first live change of
    lam, which ends it) and after each live change of lam (a later change at the same
    instant replaces the earlier one)."""
    out = [LamChange(0.0, lam0 if not knots else lam_at(knots, 0.0))]
    if knots:
        ended = min((c.t for c in changes if c.name == "lam"), default=math.inf)
        out += [LamChange(t, v) for t, v in knots if 0.0 < t < ended]
    for c in changes:
        if c.name != "lam":
            continue
        if out[-1].t == c.t:
            out[-1] = LamChange(c.t, float(c.value))
        else:
            out.append(LamChange(c.t, float(c.value)))
    return tuple(out)
