"""A training run's matrix (or one row) against the interference model trained from its
first snapshot: the same optimizer, the same hyperparameters, the state at each snapshot's
step. In float64 the model's steps are torch's SGD, Adam and AdamW on the paper's loss, so
the prediction meets the snapshots to rounding when the run was this model's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from sparsity_gui.core.interference.kernels import measure
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun


def trained_at(
    w0: np.ndarray,
    offsets: np.ndarray,
    *,
    l1: float,
    lr: float,
    optimizer: str,
    weight_decay: float | None,
    **mechanism: Any,
) -> Iterator[np.ndarray]:
    """W of the model trained from ``w0`` (a matrix n x m, or one row) at each of
    ``offsets`` (steps after the first snapshot, increasing), one copy at a time; NaN once
    the training diverged. ``mechanism``: the sparsity mechanism's fields (sparsity, k, l0,
    ...; none: the paper's L1)."""
    w0 = np.atleast_2d(np.asarray(w0, dtype=np.float64))
    n, m = w0.shape
    total = max(int(offsets[-1]), 1)
    params = InterferenceParams(
        n=n, m=m, l1=l1, lr=lr, optimizer=optimizer, steps=total, weight_decay=weight_decay, **mechanism
    )
    run = InterferenceRun(params, w0=w0, history_capacity=16)
    for offset in offsets:
        run.advance(int(offset) - run.step)
        yield np.full_like(run.W, np.nan) if run.failure else run.W.copy()


def polysemantic(W: np.ndarray) -> int:
    """Neurons on which more than one feature is active (the paper's count)."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    counts = np.zeros(W.shape[1], dtype=np.int64)
    first = np.argmax(np.abs(W), axis=1).astype(np.int64)
    return int(measure(W, first, counts)[0])
