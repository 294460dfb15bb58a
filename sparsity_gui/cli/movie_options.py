"""The --movie options of `run` and `interference`: which panel, how long, how fast, how
the frame times are spread, which format; checked before the run starts (the missing
[movie] extra included: one `error:` line naming it)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from sparsity_gui.cli.common import Progress, fail, number_arg, run_in_worker, whole_arg
from sparsity_gui.core.errors import InputError


def add_movie_options(p: argparse.ArgumentParser, panels: str) -> None:
    """``panels``: the panel names, as the help shows them."""
    g = p.add_argument_group("movie (needs the [movie] extra: pip install 'sparsity-gui[movie]')")
    g.add_argument(
        "--movie",
        action="append",
        metavar="PANEL",
        help="also write DIR/movies/PANEL.mp4, frame k the panel's figure at time t_k "
        f"({panels}; layout: all panels in one; repeat for several)",
    )
    g.add_argument("--movie-seconds", type=number_arg, default=10.0, metavar="S", help="length (default 10)")
    g.add_argument(
        "--movie-fps", type=whole_arg, default=30, metavar="N", help="frames per second (default 30)"
    )
    g.add_argument(
        "--movie-spacing",
        default="linear",
        metavar="{linear,log}",
        help="frame times evenly spaced or log-spaced over the run (default linear)",
    )
    g.add_argument(
        "--movie-format", default="mp4", metavar="{mp4,gif}", help="MP4 (H.264) or GIF (default mp4)"
    )
    g.add_argument(
        "--movie-dpi", type=number_arg, default=150, metavar="D", help="pixels per inch (default 150)"
    )


def movie_from_args(args: argparse.Namespace, model: str):
    """(panels asked for, MovieSettings), or (empty, None) without --movie. The panels are
    those of ``model``'s movies (MOVIE_PANELS of figures/<model>/movie.py, imported only
    when a movie is asked for: it loads matplotlib). Exits with one error line on a bad
    value or without the encoder."""
    if not args.movie:
        return [], None
    import importlib

    from sparsity_gui.figures.movie import MovieExtraMissing, movie_settings, require_encoder

    try:
        names = importlib.import_module(f"sparsity_gui.figures.{model}.movie").MOVIE_PANELS
        for panel in args.movie:
            if panel not in names:
                raise InputError("movie", f"unknown panel {panel!r}; use one of {', '.join(names)}")
        settings = movie_settings(
            args.movie_seconds, args.movie_fps, args.movie_spacing, args.movie_format, args.movie_dpi
        )
        require_encoder()
    except InputError as exc:
        fail(f"--movie-{exc.field}: {exc.message}" if exc.field != "movie" else f"--movie: {exc.message}")
    except MovieExtraMissing as exc:
        fail(str(exc))
    return list(dict.fromkeys(args.movie)), settings


def movie_progress(panel: str):
    """A progress bar per movie (shown on a terminal after a second)."""
    bar: list[Progress] = []

    def update(done: int, total: int) -> None:
        if not bar:
            bar.append(Progress(total, f"movie {panel}"))
        bar[0].update(done, total)
        if done == total:
            bar[0].close()

    return update


def write_movies(result_dir, panels: Sequence[str], settings, write_one) -> None:
    """DIR/movies/PANEL.<format> for each panel: ``write_one(panel, name, cancelled=...,
    progress=..., write_with=...)`` draws and encodes it, on a worker thread (Ctrl+C acts
    at once; the result folder is then removed whole, as for any other file)."""
    import threading

    stop = threading.Event()
    for panel in panels:
        hooks = {
            "cancelled": stop.is_set,
            "progress": movie_progress(panel),
            "write_with": result_dir.write_with,
        }
        name = f"movies/{panel}.{settings.fmt}"
        run_in_worker(lambda panel=panel, name=name, hooks=hooks: write_one(panel, name, **hooks), stop)
