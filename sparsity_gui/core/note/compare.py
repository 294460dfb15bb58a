"""A row of a training run against the note's flow: the exact solution from the first
snapshot, at the snapshots' times. For plain SGD on the paper's loss (one feature alone)
the flow is the continuum limit of the steps, with lam = l1/4 and t = 4 lr (step - step0),
so the flow's error is O(lr)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import Simulation


def flow_at(w0: np.ndarray, lam: float, times: np.ndarray) -> Iterator[np.ndarray]:
    """The signed weights of the note's exact flow from ``w0`` at each of ``times``
    (increasing, from 0), one vector at a time."""
    w0 = np.asarray(w0, dtype=np.float64)
    sim = Simulation(SimParams(m=int(w0.size), lam=float(lam), method="exact"), w0=w0, record=False)
    for t in times:
        sim.advance(float(t))
        yield sim.solver.weights()
