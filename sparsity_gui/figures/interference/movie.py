"""A movie of an interference run: frame k is the panel's figure (figures/interference/figures.py)
at the step reached at or before the frame's time.

Training is a sequence of whole steps: the run is trained again from W(0) (the same
steps, deterministic), stopping at each recorded step of its history and at each frame's
step, so the state a frame shows is the one the optimizer had at that step, and the history
it draws holds the run's rows up to there."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS, InterferenceRun
from sparsity_gui.core.interference.sampled import sample_steps
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS as S
from sparsity_gui.core.interference.thresholds import run_threshold_curves
from sparsity_gui.core.text import printable
from sparsity_gui.figures.frames import Frame
from sparsity_gui.figures.interference.figures import (
    PANEL_ORDER,
    PANELS,
    layout,
    layout_data,
    layout_size,
    run_data,
)
from sparsity_gui.figures.movie import MovieSettings, frame_times, write_movie
from sparsity_gui.figures.scripted import panel_size
from sparsity_gui.figures.style import movie_style_params

MOVIE_PANELS = (*PANEL_ORDER, "layout")
CHUNK = 250  # steps per advance between stops (as train_sampled takes them)


def frame_steps(steps: int, count: int, spacing: str, first: int = 0, last: int | None = None) -> np.ndarray:
    """The step each frame shows: the last whole step at or before its time."""
    last = steps if last is None else last
    return np.floor(frame_times(float(first), float(last), count, spacing) + 1e-9).astype(np.int64)


def in_force_note(params: InterferenceParams, row: np.ndarray) -> str:
    """'adamw, l1 = 1.0e-3, lr = 2.5e-4': the optimizer and the l1 and lr the frame's step
    used (a history row: a schedule's or a live change's value), as the dock writes them."""
    used = (S[name].text(float(row[HISTORY_COLUMNS.index(name)])) for name in ("l1", "lr"))
    return ", ".join([params.optimizer, *used])


def interference_frames(
    params: InterferenceParams,
    w0: np.ndarray | None,
    panel: str,
    steps: np.ndarray,
    samples: int,
    style=None,
    width: float | None = None,
    changes: Sequence[tuple[float, str]] = (),
    pins: Sequence = (),
    pin_labels: dict | None = None,
    expect_final: np.ndarray | None = None,
) -> Iterator[Frame]:
    """The frames at `steps` (ascending), training the run again from `w0` (None: the
    normal draw of the parameters' seed). With `expect_final` (the W the window shows at
    the last step), a replay that does not reproduce it is refused before its last frame."""
    if panel not in MOVIE_PANELS:
        raise InputError("panel", f"unknown panel {panel!r}; use one of {', '.join(MOVIE_PANELS)}")
    params_style = movie_style_params(style)
    records = sample_steps(params.steps, samples)
    stops = np.union1d(records[records <= steps[-1]], steps)
    run = InterferenceRun(params, w0, history_capacity=max(16, stops.size + 1))
    frame_at = set(steps.tolist())
    next_frame = 0
    for stop in stops:
        while run.step < stop and run.failure is None:
            run.advance(min(CHUNK, int(stop) - run.step))
        if run.failure is not None:
            raise InputError("lr", run.failure)
        run.record()  # also refreshes run.counts
        if int(stop) not in frame_at:
            continue
        if expect_final is not None and stop == steps[-1] and not np.array_equal(run.W, expect_final):
            raise InputError("", "training the run again from W(0) does not reproduce the run on screen")
        shown = [c for c in changes if c[0] <= run.step]
        history = run.history_array()
        data = run_data(
            history,
            HISTORY_COLUMNS,
            run.W,
            run.counts,
            params.n,
            pins,
            pin_labels,
            shown,
            thresholds=run_threshold_curves(run),
        )
        if panel == "layout":
            drawing = (layout, layout_data(data), params_style, layout_size(style))
        else:
            drawing = (PANELS[panel][0], data[panel], params_style, panel_size(style, width))
        stamp = f"step {run.step:,} of {params.steps:,}"
        note = in_force_note(params, history[-1])
        while next_frame < steps.size and steps[next_frame] == stop:  # repeated steps: the same frame
            yield Frame(*drawing, stamp, note)
            next_frame += 1


def write_interference_movie(
    path: str | Path,
    params: InterferenceParams,
    w0: np.ndarray | None,
    panel: str,
    settings: MovieSettings,
    samples: int = 501,
    last_step: int | None = None,
    first_step: int = 0,
    cancelled: Callable[[], bool] = lambda: False,
    progress=None,
    write_with=None,
    **drawing,
) -> tuple[int, int]:
    """The movie of the run from `first_step` to `last_step` (default: its last) into
    `path`; ``drawing`` is interference_frames' (style, width, changes, pins, pin_labels,
    expect_final). Returns its (width, height) in pixels."""
    if panel not in MOVIE_PANELS:
        raise InputError("panel", f"unknown panel {panel!r}; use one of {', '.join(MOVIE_PANELS)}")
    width = drawing.get("width")
    if width is not None and (
        not isinstance(width, (int, float)) or isinstance(width, bool) or not 1.0 <= width <= 20.0
    ):
        raise InputError("width", f"must be a width in inches from 1 to 20, got {printable(repr(width))}")
    steps = frame_steps(params.steps, settings.frames, settings.spacing, first_step, last_step)
    return write_movie(
        path,
        lambda: interference_frames(params, w0, panel, steps, samples, **drawing),
        int(steps.size),
        settings,
        cancelled,
        progress,
        write_with,
    )
