"""A training run's snapshots (core/series.py) beside a window's live run, for both models
(File → Compare with checkpoints…): the checks made before any snapshot is read whole
(`series_request`: every refusal an InputError naming the field), then the comparison with
the theory (compare.py, as the `checkpoints` command makes it) and the snapshots as rows
of the model's pinned columns (`SeriesPin`). The window starts its live run from the first
snapshot with `SeriesPin.params`, pins the rows (drawn as points) and says how far the
snapshots it has reached are from the prediction (`SeriesPin.distance`: the largest
relative difference of |W|_1 in compare.csv's column the model names).

What is each model's (its columns, its checks and live parameters, its rows, its words)
is its `SeriesModel`: core/note/series_pin.py (one row: W(0) = the first snapshot's row;
t = 4 lr (step - step0), or a fitted time per step), core/interference/series_pin.py (the
matrix: W(0) = the first snapshot, step 0 = the first snapshot's step). Qt-free."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from sparsity_gui.core.checkpoints.compare import (
    COMPARE_OPTIMIZERS,
    FLOW_OPTIMIZERS,
    OPTIMIZER_ALIASES,
    Comparison,
    compare,
    finite_max,
)
from sparsity_gui.core.checkpoints.reference import reference_of
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.series_pin import INTERFERENCE_SERIES, training_params
from sparsity_gui.core.note.series_pin import NOTE_SERIES
from sparsity_gui.core.series import Series, SeriesOptions


class SnapshotRows(Protocol):
    """A model's pinned rows of a series: each snapshot given as it is read, then the rows,
    the live run's parameters and W(0) once the comparison is made."""

    def __call__(self, i: int, w: np.ndarray) -> None: ...

    def finish(self, result: Comparison, first: np.ndarray) -> tuple[np.ndarray, Any, np.ndarray]: ...


class SeriesModel(Protocol):
    """A model's part in a series pinned in its window (core/note/series_pin.NOTE_SERIES,
    core/interference/series_pin.INTERFERENCE_SERIES)."""

    name: str  # "note", "interference"
    columns: tuple[str, ...]  # its pinned runs' columns
    position_column: str  # the column of a snapshot's place on the live run's axis
    distance_column: str  # compare.csv's column of the distance from the prediction

    def check(self, options: SeriesOptions) -> None:
        """What the model refuses before the series is opened (InputError)."""

    def live_params(
        self, options: SeriesOptions, series: Series, live: Any, optimizer: str, flows: bool
    ) -> Any:
        """The live run's parameters before the comparison, checked (InputError); the run's
        ``optimizer`` as the model names it, ``flows``: whether a time maps its steps to the
        note's flow."""

    def prediction(self, comparison: Comparison) -> str:
        """What the snapshots are compared with, in words."""

    def follows(self, live: Any, params: Any) -> bool:
        """Whether the live parameters ``live`` still run the prediction made with ``params``."""

    def snapshot_rows(self, request: SeriesRequest) -> SnapshotRows: ...


@dataclass
class SeriesRequest:
    """A series checked for a window: the options, the series opened (headers only), the
    model and the live run's parameters before the comparison (the note's t_end is set
    once the time per step is known)."""

    options: SeriesOptions
    series: Series
    model: SeriesModel
    params: Any


def _model_optimizer(options: SeriesOptions) -> str:
    return OPTIMIZER_ALIASES.get(options.optimizer, options.optimizer)


def _check_training(options: SeriesOptions) -> None:
    """The run's l1, lr, optimizer and weight decay as the interference model takes them
    (InputError naming each): the comparison trains that model from the first snapshot."""
    if options.optimizer not in COMPARE_OPTIMIZERS:
        raise InputError(
            "optimizer", f"must be one of {', '.join(COMPARE_OPTIMIZERS)}, got {options.optimizer!r}"
        )
    if options.zero_tol is not None and not (math.isfinite(options.zero_tol) and options.zero_tol >= 0):
        raise InputError("zero_tol", f"must be a finite number >= 0, got {options.zero_tol}")
    training_params(options, _model_optimizer(options))


def series_request(options: SeriesOptions, live, model: SeriesModel) -> SeriesRequest:
    """A series for ``model``'s window, checked (the training, the series' headers, the
    model's limits); ``live``: the window's parameters (its seed and sigma kept)."""
    model.check(options)
    _check_training(options)
    series = options.open()
    optimizer = _model_optimizer(options)
    reference = reference_of(series)
    if reference.sparsity != "l1" and model.name == "note":
        raise InputError(
            "pick",
            f"the note's model is L1's; this {reference.name} SAE's reference uses its own mechanism: "
            "compare it in the interference window (File → Compare with checkpoints…)",
        )
    params = model.live_params(options, series, live, optimizer, optimizer in FLOW_OPTIMIZERS)
    if reference.sparsity != "l1":  # the live run trains the reference: the SAE's mechanism
        params = dataclasses.replace(params, **reference.params(options.l1))
    return SeriesRequest(options, series, model, params)


def note_request(options: SeriesOptions, live) -> SeriesRequest:
    """A series for the note's window: one row (a row, a latent or a vector), a time that
    maps steps to the flow (plain SGD's 4 lr, or a fitted one), a run the window can hold.
    ``live``: the window's SimParams (seed, sigma and eta kept)."""
    return series_request(options, live, NOTE_SERIES)


def interference_request(options: SeriesOptions, live) -> SeriesRequest:
    """A series for the interference window: the matrix (or one row: n = 1) within the
    model's limits, trained with the run's optimizer over the series' steps. ``live``: the
    window's InterferenceParams (seed and sigma kept)."""
    return series_request(options, live, INTERFERENCE_SERIES)


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
        """The window's model: "note" or "interference"."""
        return self.request.model.name

    @property
    def label(self) -> str:
        """The series' name: its folder's (or its stacked file's)."""
        return self.request.series.label

    @property
    def count(self) -> int:
        return int(self.rows.shape[0])

    @property
    def position_column(self) -> str:
        return self.request.model.position_column

    @property
    def positions(self) -> np.ndarray:
        """Where each snapshot is on the live run's axis: t (the note), steps after the
        first snapshot (the interference model)."""
        return self.rows[:, self.columns.index(self.position_column)]

    @property
    def distance_column(self) -> str:
        return self.request.model.distance_column

    @property
    def prediction(self) -> str:
        return self.request.model.prediction(self.comparison)

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
        return self.request.model.follows(live, self.params)


def _relative(value: float) -> str:
    return f"{value:.3g}"


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
    rows_of = request.model.snapshot_rows(request)

    def on_snapshot(i: int, w: np.ndarray) -> None:
        if i == 0:
            first.append(np.array(w, dtype=np.float64))
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
    rows, params, w0 = rows_of.finish(result, first[0])
    return SeriesPin(request, result, tuple(request.model.columns), rows, w0, params)
