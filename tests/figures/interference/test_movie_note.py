"""A movie frame's note says the l1 and lr its step used (a schedule's value, as the dock's
"in force" line), not the constant a schedule ends at: the values written out here from the
knots, formatted as the settings rows write them."""

from __future__ import annotations

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.figures.interference.movie import interference_frames


def test_each_frames_note_is_the_l1_and_lr_its_step_used():
    params = InterferenceParams(
        n=4, m=8, steps=200, seed=1, optimizer="adamw", l1=0.002, l1_warmup=100,
        lr=0.001, lr_schedule=((0.0, 0.004), (200.0, 0.001)),
    )  # fmt: skip
    steps = np.array([40, 100, 200])
    notes = [f.note for f in interference_frames(params, None, "weights", steps, samples=20)]
    # l1 * min(1, k/100); lr from 4e-3 at step 0 to 1e-3 at step 200, linearly
    assert notes == [
        "adamw, l1 = 8.0e-4, lr = 3.4e-3",  # step 40: 2e-3 * 0.4; 4e-3 - 3e-3 * 40/200
        "adamw, l1 = 2.0e-3, lr = 2.5e-3",
        "adamw, l1 = 2.0e-3, lr = 1.0e-3",
    ]
