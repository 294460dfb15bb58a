"""A movie of a run of the note's model: frame k is the panel's figure (figures/note/figures.py)
at simulated time t_k.

The run is replayed from its script (parameters at t = 0, W(0), the live changes) by
`Simulation.replay`, stopping exactly at each live change, at each row of the history the
figures draw and at each frame's time: the exact method's state in frame k is the solver's
state at t_k, and every curve drawn is made of the solver's rows up to t_k. Gradient
descent moves in whole steps: its frame shows the step at or before t_k, and its stamp
says so. The replay shares W(0)'s sorted InitialState with the run (no second sort)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.changes import RunScript, with_change_instants
from sparsity_gui.core.note.runner import snapshot_of
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.note.simulation import Simulation
from sparsity_gui.core.text import printable
from sparsity_gui.figures.frames import Frame
from sparsity_gui.figures.movie import MovieSettings, frame_times, write_movie
from sparsity_gui.figures.note.figures import MAX_ROWS, PANELS, fit_entry, note_drawing, panel_data
from sparsity_gui.figures.style import WIDTHS, movie_style_params

MOVIE_PANELS = (*PANELS, "layout")
GD_BEFORE = 0.5 - 1e-6  # GD lands on the step nearest its target: aim half a step earlier


def check_panel(panel: str) -> str:
    if panel not in MOVIE_PANELS:
        raise InputError("panel", f"unknown panel {panel!r}; use one of {', '.join(MOVIE_PANELS)}")
    return panel


def params_at(script: RunScript, t: float):
    """The parameters in force at time t (the live changes up to t applied)."""
    params = script.params
    for c in script.changes:
        if c.t <= t:
            params = params.with_live_change(c.name, c.value)
    return params


def solver_targets(script: RunScript, times: np.ndarray) -> np.ndarray:
    """Where the replay stops for each frame time: t_k itself for the exact method; for
    gradient descent, half a step before it (it lands on the nearest step: the one at or
    before t_k)."""
    out = np.array(times, dtype=np.float64)
    for k, t in enumerate(times):
        p = params_at(script, float(t))
        if p.method == "gd" and t > 0:
            out[k] = max(0.0, t - GD_BEFORE * p.eta)
    return out


def history_times(script: RunScript) -> np.ndarray:
    """The rows the figures draw besides the frames': the script's samples, at most
    MAX_ROWS of them (the figures thin longer series to that many), and each live change's
    instant on both sides, as an export's."""
    if script.t <= 0:
        return np.zeros(1)
    grid = np.linspace(0.0, script.t, min(max(int(script.samples), 2), MAX_ROWS))
    return with_change_instants(grid, script.changes)


def note_frames(
    script: RunScript,
    panel: str,
    times: np.ndarray,
    style=None,
    width: str = "single",
    views: Mapping | None = None,
    pins: Iterable = (),
    pin_labels: Mapping[int, str] | None = None,
) -> Iterator[Frame]:
    """The frames at `times` (ascending), replaying the script."""
    check_panel(panel)
    movie_style_params(style)  # a bad style is refused before the replay
    pins = list(pins)
    targets = solver_targets(script, times)
    rows = history_times(script)
    rows = rows[rows <= targets[-1]]
    # the rows (a change's instant twice: before it and at it) and the frames' instants
    stops = np.sort(np.concatenate([rows, np.setdiff1d(targets, rows)]), kind="stable")
    # frame k is taken at stops[frame_of_stop[k]]: at a change's instant, the row after it
    frame_of_stop = np.searchsorted(stops, targets, side="right") - 1
    sim = Simulation(script.params, script.w0, record=False)
    changes = sorted(script.changes, key=lambda c: c.t)
    applied = 0
    k = 0
    for i, t in enumerate(stops):
        before = i + 1 < stops.size and stops[i + 1] == t  # the row before the changes at t
        due = [c for c in changes[applied:] if c.t < t or (c.t == t and not before)]
        applied += len(due)
        sim.replay(due, np.array([t]), record=True)
        while k < len(times) and frame_of_stop[k] == i:
            snap = snapshot_of(sim, sim.params, run_id=1, seq=k + 1, state="paused")
            # the decay law's constants (c, bulk c, deviation) fitted to the frame's rows as
            # they are, as an export's: never a resample between rows
            fit = fit_entry(sim.decay_fit(exported=True))
            data = panel_data(snap, views, pins, pin_labels, fit)
            drawing = note_drawing(panel, data, style, width)  # the style by name: its size too
            yield Frame(*drawing, stamp_text(float(times[k]), sim.lam), solver_note(sim, float(times[k])))
            k += 1


def stamp_text(t: float, lam: float) -> str:
    # plain text, not mathtext: a new time at every frame would be a new mathtext parse
    return f"t = {t:.4g}     {NOTE_SETTINGS['lam'].text(lam)}"


def solver_note(sim: Simulation, t: float) -> str:
    if sim.method == "gd":  # whole steps: the one at or before t, and where it is
        return f"GD: its step at t = {sim.t:.5g} (at or before t)"
    return "exact flow at t"


def write_note_movie(
    path: str | Path,
    script: RunScript,
    panel: str,
    settings: MovieSettings,
    t_range: tuple[float, float] | None = None,
    style=None,
    width: str = "single",
    views: Mapping | None = None,
    pins: Iterable = (),
    pin_labels: Mapping[int, str] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    progress=None,
    write_with=None,
) -> tuple[int, int]:
    """The movie of the run in `script` from t = 0 (or t_range[0]) to its end (or
    t_range[1]) into `path`. Returns its (width, height) in pixels."""
    check_panel(panel)
    if width not in WIDTHS:
        raise InputError("width", f"must be one of {', '.join(WIDTHS)}, got {printable(repr(width))}")
    start, end = (0.0, script.t) if t_range is None else (float(t_range[0]), float(t_range[1]))
    if not (math.isfinite(start) and math.isfinite(end) and 0.0 <= start < end <= script.t):
        raise InputError("t_range", f"must lie within the run, 0 to {script.t:.6g}, start before end")
    times = frame_times(start, end, settings.frames, settings.spacing)
    return write_movie(
        path,
        lambda: note_frames(script, panel, times, style, width, views, pins, pin_labels),
        int(times.size),
        settings,
        cancelled,
        progress,
        write_with,
    )
