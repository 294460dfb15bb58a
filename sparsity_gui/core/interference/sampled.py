"""One training run recorded at K evenly spread steps: what `sparsity-gui interference`
writes to history.csv."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun


def sample_steps(steps: int, samples: int) -> np.ndarray:
    """The steps a history of ``samples`` rows is recorded at: round(i * steps / (K - 1)),
    i = 0 .. K-1, without repeats (fewer rows when steps < K - 1)."""
    return np.unique(np.round(np.linspace(0, steps, samples)).astype(np.int64))


def train_sampled(
    params: InterferenceParams,
    samples: int,
    on_step: Callable[[int], None] | None = None,
    chunk: int = 250,
    w0: np.ndarray | None = None,
    w0_source: dict | None = None,
) -> InterferenceRun:
    """One run from ``w0`` (default: the normal draw), recorded at sample_steps(params.steps,
    samples). ``on_step(step)`` is called every ``chunk`` steps or fewer. Raises InputError
    when the run diverges."""
    targets = sample_steps(params.steps, samples)
    run = InterferenceRun(params, w0, history_capacity=max(16, len(targets) + 1))
    if w0_source is not None:
        run.w0_source = w0_source
    for target in targets[1:]:
        while run.step < target and run.failure is None:
            run.advance(min(chunk, int(target) - run.step))
            if on_step is not None:
                on_step(run.step)
        if run.failure is not None:
            raise InputError("lr", run.failure)
        run.record()
    return run
