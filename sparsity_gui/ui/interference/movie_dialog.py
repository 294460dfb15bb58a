"""The interference window's *Export movie…*: a movie of the run on screen from step 0 to
the step shown, trained again from W(0) in the export's thread (the window's worker goes on
untouched). The replay is checked against the W on screen at its last step."""

from __future__ import annotations

from sparsity_gui.core.errors import InputError
from sparsity_gui.figures.interference.figures import PANELS
from sparsity_gui.figures.interference.movie import MOVIE_PANELS, write_interference_movie
from sparsity_gui.ui.movie_dialog import MovieSource


def interference_movie_source(win) -> MovieSource:
    snap = win.snapshot
    if snap is None or snap.latest is None or snap.run_id != win.run_id:
        raise InputError("", "the run is still starting; try again in a moment")
    if snap.step <= 0:
        raise InputError("", "the run is at step 0: train it first, a movie needs some steps")
    changes = list(getattr(win.panels[2], "_changes", []))
    if changes:
        # the worker applies a live change at its next chunk and records no exact step: a
        # replay from W(0) could not put it where the run had it
        raise InputError(
            "",
            "this run was changed live (l1 or lr), and a movie trains it again from W(0) with "
            "fixed parameters: restart the run with the values you want, then export",
        )
    params = snap.params
    w0 = win.w0_file[0] if win.w0_file is not None else None
    shown_w = snap.W.copy()
    pins = list(win.pin_control.pins)
    labels = {p.number: (win.pin_control.labels.get(p.number, f"pin {p.number}"),) * 2 for p in pins}
    last = int(snap.step)
    style = win.exports.style()  # Export figure → Figure style: the movie's too

    def write(path, panel, settings, t_range, cancelled, progress):
        first, end = (int(t_range[0]), int(t_range[1])) if t_range is not None else (0, last)
        return write_interference_movie(
            path,
            params,
            w0,
            panel,
            settings,
            last_step=end,
            pins=pins,
            pin_labels=labels,
            expect_final=shown_w if end == last else None,
            first_step=first,
            style=style,
            cancelled=cancelled,
            progress=progress,
        )

    titles = {name: PANELS[name][1] if name in PANELS else "All panels (layout)" for name in MOVIE_PANELS}
    return MovieSource(titles, float(last), "step", write)
