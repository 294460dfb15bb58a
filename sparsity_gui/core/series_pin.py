"""A training run's snapshots (core/series.py) beside a window's live run, for both models
(File → Compare with checkpoints…): the checks made before any snapshot is read whole
(`note_request`, `interference_request`: every refusal an InputError naming the field),
then the comparison with the theory (core/compare.py, as the `checkpoints` command makes
it) and the snapshots as rows of the model's pinned columns (`SeriesPin`). The window
starts its live run from the first snapshot with `SeriesPin.params`, pins the rows (drawn
as points) and says how far the snapshots it has reached are from the prediction
(`SeriesPin.distance`: the largest relative difference of |W|_1, compare.csv's
``rel_diff_norm1_flow`` for the note's flow, ``rel_diff_norm1`` for the trained model).

The note's window takes one row (W(0) = the first snapshot's row; t = 4 lr (step - step0),
or a fitted time per step); the interference window the matrix (W(0) = the first snapshot,
step 0 = the first snapshot's step). Qt-free; the one shared module that knows both models'
columns (each model's own modules stay apart)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparsity_gui.core.compare import (
    FLOW_OPTIMIZERS,
    OPTIMIZER_ALIASES,
    Comparison,
    compare,
    finite_max,
)
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference import params as iparams
from sparsity_gui.core.interference.kernels import measure
from sparsity_gui.core.interference.pins import PIN_COLUMNS as INTERFERENCE_COLUMNS
from sparsity_gui.core.interference.run import mean_sum_w4, network_loss
from sparsity_gui.core.note import params as nparams
from sparsity_gui.core.note.metrics import COLUMNS as NOTE_COLUMNS
from sparsity_gui.core.note.metrics import Moments
from sparsity_gui.core.series import Series, SeriesOptions

NOTE = "note"
INTERFERENCE = "interference"


@dataclass
class SeriesRequest:
    """A series checked for a window: the options, the series opened (headers only), the
    model and the live run's parameters before the comparison (the note's t_end is set
    once the time per step is known)."""

    options: SeriesOptions
    series: Series
    model: str
    params: Any


def _model_optimizer(options: SeriesOptions) -> str:
    return OPTIMIZER_ALIASES.get(options.optimizer, options.optimizer)


def _check_training(options: SeriesOptions, n: int = 1, m: int = 1, steps: int = 1):
    """The run's l1, lr, optimizer and weight decay as the interference model takes them
    (InputError naming each): the comparison trains that model from the first snapshot."""
    from sparsity_gui.core.compare import COMPARE_OPTIMIZERS

    if options.optimizer not in COMPARE_OPTIMIZERS:
        raise InputError(
            "optimizer", f"must be one of {', '.join(COMPARE_OPTIMIZERS)}, got {options.optimizer!r}"
        )
    if options.zero_tol is not None and not (math.isfinite(options.zero_tol) and options.zero_tol >= 0):
        raise InputError("zero_tol", f"must be a finite number >= 0, got {options.zero_tol}")
    return iparams.InterferenceParams(
        n=n,
        m=m,
        l1=options.l1,
        lr=options.lr,
        optimizer=_model_optimizer(options),
        steps=steps,
        weight_decay=options.weight_decay,
    )


def note_request(options: SeriesOptions, live) -> SeriesRequest:
    """A series for the note's window, checked: one row (a row, a latent or a vector), a
    time that maps steps to the flow (plain SGD's 4 lr, or a fitted one), a run the window
    can hold. ``live``: the window's SimParams (seed, sigma and eta kept)."""
    _check_training(options)
    series = options.open()
    if series.pick == "matrix":
        raise InputError(
            "pick",
            "the note's model takes one row: choose a row or a SAELens latent "
            "(the whole matrix: the interference window's File → Compare with checkpoints…)",
        )
    if _model_optimizer(options) not in FLOW_OPTIMIZERS and not options.fit_time_scale:
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
    return SeriesRequest(options, series, NOTE, params)


def interference_request(options: SeriesOptions, live) -> SeriesRequest:
    """A series for the interference window, checked: the matrix (or one row: n = 1) within
    the model's limits, trained with the run's optimizer over the series' steps. ``live``:
    the window's InterferenceParams (seed and sigma kept)."""
    if options.fit_time_scale:
        raise InputError("fit_time_scale", "a fitted time scale is the note's flow's: the note's window")
    _check_training(options)
    series = options.open()
    n, m = (1, series.shape[0]) if len(series.shape) == 1 else series.shape
    for name, value, top in (("n", n, iparams.N_MAX), ("m", m, iparams.M_MAX)):
        if value > top:
            raise InputError(
                "pick",
                f"{series.label}: a snapshot of {n} x {m}; the model takes {name} up to {top} "
                "(choose a row or a latent)",
            )
    span = max(int(series.steps[-1] - series.steps[0]), 1)
    params = dataclasses.replace(_check_training(options, n, m, span), seed=live.seed, sigma=live.sigma)
    iparams.check_memory(n, m)
    iparams.check_training_work(params)
    return SeriesRequest(options, series, INTERFERENCE, params)


@dataclass
class SeriesPin:
    """The comparison of a series made for a window, and the snapshots as the model's
    pinned rows (``columns``, ``rows``: what the window pins, drawn as points)."""

    request: SeriesRequest
    comparison: Comparison
    columns: tuple[str, ...]
    rows: np.ndarray
    first: np.ndarray  # the first snapshot: the live run's W(0) (a row, or a matrix n x m)
    params: Any  # the live run's parameters (the prediction: the note's flow, or the model)

    @property
    def options(self) -> SeriesOptions:
        return self.request.options

    @property
    def model(self) -> str:
        return self.request.model

    @property
    def label(self) -> str:
        """The series' name: its folder's (or its stacked file's)."""
        return self.request.series.label

    @property
    def count(self) -> int:
        return int(self.rows.shape[0])

    @property
    def position_column(self) -> str:
        return "t" if self.model == NOTE else "step"

    @property
    def positions(self) -> np.ndarray:
        """Where each snapshot is on the live run's axis: t (the note), steps after the
        first snapshot (the interference model)."""
        return self.rows[:, self.columns.index(self.position_column)]

    @property
    def distance_column(self) -> str:
        return "rel_diff_norm1_flow" if self.model == NOTE else "rel_diff_norm1"

    @property
    def prediction(self) -> str:
        if self.model == INTERFERENCE:
            return f"the model trained from the first snapshot ({self.comparison.optimizer})"
        if self.comparison.time_fitted:
            return f"the note's flow at a FITTED t = {self.comparison.time_per_step:.4g} per step"
        return "the note's exact flow (t = 4 lr per step)"

    def distance(self, reached: float | None = None) -> tuple[float | None, int]:
        """The largest relative difference of |W|_1 between the snapshots and the prediction
        (compare.csv's column) over the snapshots at or before ``reached`` on the live run's
        axis (None: all), and how many those are."""
        keep = np.ones(self.count, bool)
        if reached is not None:
            positions = self.positions
            keep = positions <= reached + 1e-9 * max(abs(reached), 1.0)
        return finite_max(self.comparison.column(self.distance_column)[keep]), int(keep.sum())

    def distance_text(self, reached: float | None = None) -> str:
        """'‖W‖₁ off by at most 0.0023 (relative) over 8 of 21 snapshots, from the note's
        exact flow (t = 4 lr per step)'."""
        value, count = self.distance(reached)
        which = f"all {self.count}" if count == self.count else f"{count} of {self.count}"
        if value is None:
            return f"no snapshot reached yet; the prediction: {self.prediction}"
        return (
            f"‖W‖₁ off by at most {_relative(value)} (relative) over {which} snapshots, "
            f"from {self.prediction}"
        )

    def follows(self, live, w0_kept: bool = True) -> bool:
        """Whether the live parameters ``live`` still run the prediction (what does not
        change the run may differ: seed and sigma, which W(0) from the series overrides,
        the note's t_end and eta, the model's steps)."""
        if not w0_kept or type(live) is not type(self.params):
            return False
        p = self.params
        if self.model == NOTE:
            return dataclasses.replace(live, t_end=p.t_end, eta=p.eta, seed=p.seed, sigma=p.sigma) == p
        return dataclasses.replace(live, steps=p.steps, seed=p.seed, sigma=p.sigma) == p


def _relative(value: float) -> str:
    return f"{value:.3g}"


def _note_rows(result: Comparison, lam: float) -> np.ndarray:
    """The snapshots in the note's columns (what its panels draw of a pinned run): the
    measures compare.csv holds (m' above the zero tolerance) and those made from them."""
    col = result.column
    rows = np.full((result.rows.shape[0], len(NOTE_COLUMNS)), np.nan)
    at = {name: i for i, name in enumerate(NOTE_COLUMNS)}
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


class _InterferenceRows:
    """Each snapshot measured as the live run measures its W (InterferenceRun.measure):
    the counts, |W|_1, the mean |W_i|^2, the loss, sum W^4; step = steps after the first."""

    def __init__(self, params, steps: np.ndarray):
        self.params = params
        self.offsets = steps - steps[0]
        self.rows = np.full((len(steps), len(INTERFERENCE_COLUMNS)), np.nan)
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
        self.rows[i] = [float(values.get(c, math.nan)) for c in INTERFERENCE_COLUMNS]


def series_pin(
    request: SeriesRequest,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SeriesPin:
    """Read and compare the series (compare.csv's table), the snapshots as pinned rows and
    the live run's parameters. ``progress(done, total)`` after each snapshot read;
    ``should_stop()`` stops it (KeyboardInterrupt) between steps of the work."""
    options, series = request.options, request.series
    total = len(series.snapshots)
    first: list[np.ndarray] = []
    rows_of = _InterferenceRows(request.params, series.steps) if request.model == INTERFERENCE else None

    def on_snapshot(i: int, w: np.ndarray) -> None:
        if i == 0:
            first.append(np.array(w, dtype=np.float64))
        if rows_of is not None:
            rows_of(i, w)
        if progress is not None:
            progress(i + 1, total)

    result = compare(
        series,
        l1=options.l1,
        lr=options.lr,
        optimizer=options.optimizer,
        weight_decay=options.weight_decay,
        zero_tol=options.zero_tol,
        should_stop=should_stop,
        fit_time_scale=options.fit_time_scale,
        on_snapshot=on_snapshot,
    )
    params = request.params
    if request.model == NOTE:
        lam = options.l1 / 4.0
        rows = _note_rows(result, lam)
        span = float(series.steps[-1] - series.steps[0])
        assert result.time_per_step is not None  # note_request refused a run without one
        params = params.with_changes(t_end=result.time_per_step * span)
        nparams.check_run_work(params)
        columns: tuple[str, ...] = NOTE_COLUMNS
        w0 = first[0].reshape(-1)
    else:
        assert rows_of is not None
        rows = rows_of.rows
        columns = INTERFERENCE_COLUMNS
        w0 = np.atleast_2d(first[0])
    return SeriesPin(request, result, tuple(columns), rows, w0, params)
