"""The note window's *Export movie…*: a movie of the run on screen up to the instant
shown, its pinned runs and live changes of λ drawn as in its figures (figures/note/movie.py
replays the script; the window's engine goes on untouched)."""

from __future__ import annotations

from sparsity_gui.core.errors import InputError
from sparsity_gui.figures.note.figures import TITLES
from sparsity_gui.figures.note.movie import MOVIE_PANELS, write_note_movie
from sparsity_gui.ui.movie_dialog import MovieSource


def note_movie_source(win) -> MovieSource:
    """Read on the GUI thread: the script of the run on screen, the pins and their names,
    each panel's view (log axes, tracked weights)."""
    script, _source = win.current_script()
    if script.t <= 0.0:
        raise InputError("", "the run is at t = 0: play it first, a movie needs a stretch of time")
    pins = list(win.pin_control.pins)
    labels = dict(win.pin_control.labels)
    views = win.exports.views()  # each panel's toggles on screen, as its figures take them
    style = win.exports.style()  # Export figure → Figure style: the movie's too

    def write(path, panel, settings, t_range, cancelled, progress):
        return write_note_movie(
            path,
            script,
            panel,
            settings,
            t_range,
            style=style,
            views=views,
            pins=pins,
            pin_labels=labels,
            cancelled=cancelled,
            progress=progress,
        )

    titles = {name: TITLES.get(name, "All panels (layout)") for name in MOVIE_PANELS}
    return MovieSource(titles, float(script.t), "t", write)
