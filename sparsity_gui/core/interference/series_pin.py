"""The interference model's part in a training run's series pinned in its window (File →
Compare with checkpoints…; the shared part is core/checkpoints/series_pin.py, which takes
this as its `SeriesModel`): the matrix (or one row: n = 1) within the model's limits,
trained with the run's optimizer over the series' steps from the first snapshot (W(0));
each snapshot measured as the live run measures its W, at its steps after the first; how
far they are from the prediction is compare.csv's ``rel_diff_norm1``."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference import params as iparams
from sparsity_gui.core.interference.kernels import measure
from sparsity_gui.core.interference.pins import PIN_COLUMNS
from sparsity_gui.core.interference.run import mean_sum_w4, network_loss


class InterferenceSeries:
    name = "interference"
    columns: tuple[str, ...] = PIN_COLUMNS
    position_column = "step"  # steps after the first snapshot
    distance_column = "rel_diff_norm1"

    def check(self, options) -> None:
        """Refused before the series is opened: a fitted time scale (the note's flow's)."""
        if options.fit_time_scale:
            raise InputError("fit_time_scale", "a fitted time scale is the note's flow's: the note's window")

    def live_params(self, options, series, live, optimizer: str, flows: bool) -> iparams.InterferenceParams:
        """The live run's parameters (``live``'s seed and sigma kept), checked: the matrix
        (or one row) within the model's limits, trained with the run's ``optimizer`` (as the
        model names it) over the series' steps."""
        n, m = (1, series.shape[0]) if len(series.shape) == 1 else series.shape
        for name, value, top in (("n", n, iparams.N_MAX), ("m", m, iparams.M_MAX)):
            if value > top:
                raise InputError(
                    "pick",
                    f"{series.label}: a snapshot of {n} x {m}; the model takes {name} up to {top} "
                    "(choose a row or a latent)",
                )
        span = max(int(series.steps[-1] - series.steps[0]), 1)
        params = training_params(options, optimizer, n, m, span)
        params = dataclasses.replace(params, seed=live.seed, sigma=live.sigma)
        iparams.check_memory(n, m)
        iparams.check_training_work(params)
        return params

    def prediction(self, comparison) -> str:
        mechanism = comparison.reference
        with_it = f", {mechanism.short}" if mechanism.sparsity != "l1" else ""
        return f"the model trained from the first snapshot ({comparison.optimizer}{with_it})"

    def follows(self, live, params: iparams.InterferenceParams) -> bool:
        """Whether ``live`` still runs the prediction (seed, sigma and steps may differ)."""
        p = params
        return dataclasses.replace(live, steps=p.steps, seed=p.seed, sigma=p.sigma) == p

    def snapshot_rows(self, request) -> InterferenceRows:
        return InterferenceRows(request.params, request.series.steps)


def training_params(
    options, optimizer: str, n: int = 1, m: int = 1, steps: int = 1
) -> iparams.InterferenceParams:
    """The run's l1, lr, ``optimizer`` (as the model names it) and weight decay as the
    model takes them (InputError naming each): a comparison trains the
    model from the first snapshot."""
    return iparams.InterferenceParams(
        n=n,
        m=m,
        l1=options.l1,
        lr=options.lr,
        optimizer=optimizer,
        steps=steps,
        weight_decay=options.weight_decay,
    )


class InterferenceRows:
    """Each snapshot measured as the live run measures its W (InterferenceRun.measure):
    the counts, |W|_1, the mean |W_i|^2, the loss, sum W^4; step = steps after the first."""

    def __init__(self, params, steps: np.ndarray):
        self.params = params
        self.offsets = steps - steps[0]
        self.rows = np.full((len(steps), len(PIN_COLUMNS)), np.nan)
        self.first_neuron: np.ndarray | None = None
        self.counts = np.zeros(params.m, dtype=np.int64)

    def __call__(self, i: int, w: np.ndarray) -> None:
        p = self.params
        W = np.ascontiguousarray(np.atleast_2d(w), dtype=np.float64)
        if self.first_neuron is None:
            self.first_neuron = np.argmax(np.abs(W), axis=1).astype(np.int64)
        poly, active, opp, same, kept, nonzero, norm1 = measure(W, self.first_neuron, self.counts)
        offset = int(self.offsets[i])
        values = {
            "step": offset,
            "t": 4.0 * p.lr * offset if p.optimizer in iparams.GD_OPTIMIZERS else math.nan,
            "polysemantic": poly,
            "predicted": p.prediction,
            "active": active,
            "opposite_pairs": opp,
            "same_pairs": same,
            "kept_share": kept / p.n,
            "nonzero": nonzero,
            "norm1": norm1,
            "mean_norm2": float(np.mean(np.einsum("ij,ij->i", W, W))),
            "loss": network_loss(p, W),
            "l1": p.l1,
            "lr": p.lr,
            "sum_w4": mean_sum_w4(W),
        }
        self.rows[i] = [float(values.get(c, math.nan)) for c in PIN_COLUMNS]

    def finish(self, result, first: np.ndarray) -> tuple[np.ndarray, iparams.InterferenceParams, np.ndarray]:
        """(the rows, the live run's parameters, W(0): the first snapshot as a matrix)."""
        return self.rows, self.params, np.atleast_2d(first)


INTERFERENCE_SERIES = InterferenceSeries()
