"""The note's part in a training run's series pinned in its window (File → Compare with
checkpoints…; the shared part is core/checkpoints/series_pin.py, which takes this as its
`SeriesModel`): one row, a latent or a vector; W(0) the first snapshot's row; the
snapshots drawn at t = 4 lr (step - step0), or at a fitted time per step; how far they are
from the prediction is compare.csv's ``rel_diff_norm1_flow``."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note import params as nparams
from sparsity_gui.core.note.metrics import COLUMNS, Moments
from sparsity_gui.core.note.params import SimParams


class NoteSeries:
    name = "note"
    columns: tuple[str, ...] = COLUMNS
    position_column = "t"  # where a snapshot is on the live run's axis
    distance_column = "rel_diff_norm1_flow"

    def check(self, options) -> None:
        """Nothing the note refuses before the series is opened."""

    def live_params(self, options, series, live: SimParams, optimizer: str, flows: bool) -> SimParams:
        """The live run's parameters (``live``'s seed, sigma and eta kept) before the
        comparison, checked: one row, a time that maps steps to the flow (``flows``: plain
        SGD's 4 lr, or a fitted one), a run the window can hold."""
        if series.pick == "matrix":
            raise InputError(
                "pick",
                "the note's model takes one row: choose a row or a SAELens latent "
                "(the whole matrix: the interference window's File → Compare with checkpoints…)",
            )
        if not flows and not options.fit_time_scale:
            raise InputError(
                "optimizer",
                f"under {options.optimizer} no time maps steps to the note's flow: tick "
                "'fit a time scale' (fitted to the snapshots, not predicted), or compare the whole "
                "matrix in the interference window",
            )
        m = int(series.shape[0])
        nparams.check_memory(m)
        span = int(series.steps[-1] - series.steps[0])
        lam = options.l1 / 4.0
        changes: dict[str, Any] = dict(m=m, lam=lam, method="exact", w0_path=options.path, lam_schedule=())
        if 0 < 4.0 * options.lr <= 2.0:
            changes["eta"] = 4.0 * options.lr  # gradient descent in the note's units: the run's steps
        if not options.fit_time_scale:
            changes["t_end"] = 4.0 * options.lr * span
        else:
            changes["t_end"] = None  # known once fitted
        params = live.with_changes(**changes)
        if not options.fit_time_scale:
            nparams.check_run_work(params)
        return params

    def prediction(self, comparison) -> str:
        if comparison.time_fitted:
            return f"the note's flow at a FITTED t = {comparison.time_per_step:.4g} per step"
        return "the note's exact flow (t = 4 lr per step)"

    def follows(self, live, params: SimParams) -> bool:
        """Whether ``live`` still runs the prediction (seed, sigma, t_end and eta may differ)."""
        p = params
        return dataclasses.replace(live, t_end=p.t_end, eta=p.eta, seed=p.seed, sigma=p.sigma) == p

    def snapshot_rows(self, request) -> NoteRows:
        return NoteRows(request)


class NoteRows:
    """The note's pinned rows, made from the comparison once it is made."""

    def __init__(self, request):
        self.request = request

    def __call__(self, i: int, w: np.ndarray) -> None:
        """A snapshot as it is read: the note's rows are compare.csv's, made at the end."""

    def finish(self, result, first: np.ndarray) -> tuple[np.ndarray, SimParams, np.ndarray]:
        """(the rows, the live run's parameters with t_end at the last snapshot, W(0))."""
        options, series = self.request.options, self.request.series
        rows = note_rows(result, options.l1 / 4.0)
        span = float(series.steps[-1] - series.steps[0])
        assert result.time_per_step is not None  # live_params refused a run without one
        params = self.request.params.with_changes(t_end=result.time_per_step * span)
        nparams.check_run_work(params)
        return rows, params, first.reshape(-1)


def note_rows(result, lam: float) -> np.ndarray:
    """The snapshots in the note's columns (what its panels draw of a pinned run): the
    measures compare.csv holds (m' above the zero tolerance) and those made from them."""
    col = result.column
    rows = np.full((result.rows.shape[0], len(COLUMNS)), np.nan)
    at = {name: i for i, name in enumerate(COLUMNS)}
    t, norm1, norm2, nonzero = col("t"), col("norm1"), col("norm2"), col("nonzero")
    rows[:, at["t"]] = t
    rows[:, at["norm2_sq"]] = norm2
    rows[:, at["norm1"]] = norm1
    rows[:, at["nonzero"]] = nonzero
    rows[:, at["s"]] = 1.0 - norm2
    with np.errstate(divide="ignore", invalid="ignore"):
        rows[:, at["theta"]] = np.where(norm2 < 1.0, lam / (1.0 - norm2), np.inf)
        rows[:, at["w"]] = np.where(norm1 > 0, 1.0 / norm1, np.inf)
    rows[:, at["feature_push"]] = (1.0 - norm2) * norm2
    rows[:, at["reg_push"]] = lam * norm1
    rows[:, at["lam"]] = lam
    rows[:, at["lam_t"]] = lam * t
    rows[:, at["rel_var"]] = [
        Moments(float(a), lam, int(k), float(b), float(c)).rel_var
        for a, k, b, c in zip(t, nonzero, norm1, norm2, strict=True)
    ]
    return rows


NOTE_SERIES = NoteSeries()
