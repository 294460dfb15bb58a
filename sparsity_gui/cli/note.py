"""`sparsity-gui run`: the note's model headless, into timeseries.csv, weights.csv,
deaths.csv and run.json (and, with --figures, every panel as PNG, SVG and PDF with the
script that redraws it, drawn by matplotlib without Qt)."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence

import numpy as np

from sparsity_gui.cli.common import (
    CleanParser,
    Progress,
    add_dpi_option,
    add_formats_option,
    add_output_group,
    add_output_options,
    fail,
    figure_style_from_args,
    figures_kept_apart,
    number_arg,
    report_figure_failures,
    run_in_worker,
    say,
    setting_help,
    whole_arg,
    write_headless,
)
from sparsity_gui.cli.movie_options import add_movie_options, movie_from_args, write_movies
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.headless import (
    CSV_MAX_WEIGHTS,
    FORMATS,
    SAMPLES,
    SAMPLES_CHECK,
    check_format,
    resolved_format,
    run_settings,
)
from sparsity_gui.core.note.params import METHODS, SimParams
from sparsity_gui.core.note.settings import NOTE_SETTINGS as S

RUN_DESCRIPTION = """\
Simulate headless and write timeseries.csv, weights.csv, deaths.csv (above m = 10^6: weights.npz,
deaths.npz) and run.json into DIR.
The exact method solves the flow through a two-variable reduction (cost independent of m
after one sort); gd runs discrete gradient descent W <- W + eta*[(1-||W||^2)W - lam sign(W)].
"""


def _choices(names) -> str:
    """The metavar argparse shows for choices. The value itself is checked with the other
    parameters (core: SimParams, core/note/headless.py), so that the CLI and the Python API
    refuse it with the same message."""
    return "{" + ",".join(names) + "}"


def add_param_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("simulation parameters")
    g.add_argument(
        "--m",
        type=whole_arg,
        default=1000,
        metavar="M",
        help=setting_help(S["m"], "number of weights in W"),
    )
    g.add_argument(
        "--lam",
        type=number_arg,
        default=None,
        metavar="L",
        help=setting_help(S["lam"], "L1 regularization strength lam", more=", or where --lam-schedule ends"),
    )
    g.add_argument(
        "--lam-schedule",
        default=None,
        metavar="KNOTS",
        help=setting_help(
            S["lam_schedule"],
            "lam(t) piecewise linear through knots t:value, like 0:0,200:1e-3,3000:5e-4, times "
            "increasing from 0, constant before the first knot and after the last, where it sets "
            "--lam; the exact flow and GD both follow it",
        ),
    )
    g.add_argument(
        "--lam-warmup",
        type=number_arg,
        default=None,
        metavar="T",
        help=setting_help(
            S["lam_warmup"],
            "lam rises linearly from 0 to --lam over [0, T], then stays: the schedule 0:0,T:lam",
        ),
    )
    g.add_argument(
        "--sigma",
        type=number_arg,
        default=0.9,
        metavar="S",
        help=setting_help(S["sigma"], "W_k(0) ~ normal(0, sigma/sqrt(m))"),
    )
    g.add_argument(
        "--seed", type=whole_arg, default=0, metavar="N", help=setting_help(S["seed"], "random seed for W(0)")
    )
    g.add_argument(
        "--w0",
        metavar="FILE",
        help="load W(0) from .npy, .npz, .safetensors, a PyTorch state_dict (.pt, needs torch) "
        "or text/CSV (one number per line); the format is read from the content; sets m",
    )
    g.add_argument(
        "--w0-tensor",
        default=None,
        metavar="NAME",
        help="the tensor of a --w0 .safetensors or PyTorch file (needed when it holds several; "
        "nested state_dict names joined by dots), or the array of a .npz (default: its first)",
    )
    g.add_argument(
        "--w0-row",
        type=whole_arg,
        default=None,
        metavar="R",
        help="with a 2-D --w0 array (a weight matrix), use row R (0-based) as W(0)",
    )
    g.add_argument(
        "--method",
        default="exact",
        metavar=_choices(METHODS),
        help=setting_help(S["method"], "exact flow or gradient descent"),
    )
    g.add_argument(
        "--eta",
        type=number_arg,
        default=0.05,
        metavar="H",
        help=setting_help(S["eta"], "gradient-descent step; simulated time t = eta*step"),
    )
    g.add_argument(
        "--t-end",
        type=number_arg,
        default=None,
        metavar="T",
        help=setting_help(S["t_end"], "simulated end time", "when one weight is left, plus 10%"),
    )


def params_from_args(args: argparse.Namespace) -> tuple[SimParams, np.ndarray | None]:
    """Validated parameters and, with --w0, the loaded weights (core/note/headless.py: the
    Python API checks its arguments there too)."""
    names = (
        "m",
        "lam",
        "sigma",
        "seed",
        "w0",
        "w0_row",
        "w0_tensor",
        "method",
        "eta",
        "t_end",
        "lam_schedule",
        "lam_warmup",
    )
    options = {name: getattr(args, name) for name in names}
    return run_settings(**options, samples=getattr(args, "samples", SAMPLES))  # the GUI has no --samples


def build_run_parser() -> CleanParser:
    p = CleanParser.for_command("run", RUN_DESCRIPTION)
    add_param_options(p)
    o = add_output_group(
        p, SAMPLES, f"rows in timeseries.csv, at t = i*T/(K-1) ({SAMPLES_CHECK.bounds}; default {SAMPLES})"
    )
    o.add_argument("--no-weights", action="store_true", help="skip the weights file (weights.csv or .npz)")
    o.add_argument(
        "--format",
        metavar=_choices(FORMATS),
        default="auto",
        help="weights and deaths as CSV text or as binary NumPy .npz, exact and far faster "
        "to write and read (10^7 weights: under 2 s against 40 s; weights.npz: k, w0, w_final; "
        "deaths.npz: k, u, t_death); "
        f"auto (default): CSV up to m = {CSV_MAX_WEIGHTS:,}, .npz above; timeseries.csv and "
        "run.json are written either way",
    )
    o.add_argument(
        "--figures",
        action="store_true",
        help="also write each panel and the whole layout as PNG (--dpi), SVG and PDF (--formats) into "
        "DIR/figures/, each with <panel>.json (the arrays drawn) and <panel>.py, a script "
        "that redraws it (matplotlib; no Qt or display needed)",
    )
    o.add_argument(
        "--style",
        metavar="FILE",
        default=None,
        help="with --figures or --movie: a matplotlib .mplstyle file applied on top of the paper style "
        "(e.g. font.size: 10); 'paper' (default) or 'talk' for the built-in styles",
    )
    add_dpi_option(o)
    add_formats_option(o)
    add_output_options(o)
    add_movie_options(
        p,
        "weights_sorted, threshold_crossing, norm_balance, l1_decay, "
        "relative_variance, sparsity_force, phase_plane",
    )
    return p


def run_command(argv: Sequence[str]) -> int:
    args = build_run_parser().parse_args(argv)
    try:
        params, w0 = params_from_args(args)
        check_format(args.format)
        if args.style is not None and not args.figures and not args.movie:
            raise InputError("style", "applies to figures and movies: add --figures or --movie")
        style, dpi = figure_style_from_args(args)  # a bad style file is refused before the run
    except InputError as exc:
        fail(str(exc))
    movies, movie = movie_from_args(args, "note")

    def body(result_dir):
        import threading

        # numba and scipy load only once the arguments are known to be good
        from sparsity_gui.core.note.files import write_results
        from sparsity_gui.core.note.sampled import simulate_samples

        # in a worker, so that a signal acts at once; the solve stops at its next chunk
        stop = threading.Event()
        run = run_in_worker(
            lambda: simulate_samples(params, w0, args.samples, Progress, should_stop=stop.is_set), stop
        )
        from sparsity_gui.core.note.session import W0Source

        source = W0Source("file", args.w0, args.w0_tensor, args.w0_row) if args.w0 is not None else None
        write_results(
            result_dir,
            run,
            params,
            include_weights=not args.no_weights,
            fmt=args.format,
            command_line=shlex.join(["sparsity-gui", "run", *argv]),
            source=source,
        )
        if args.figures:  # after the data: a figure that cannot be drawn loses no run
            from sparsity_gui.figures.note.figures import write_note_figures  # matplotlib, no Qt

            folder = result_dir.path("figures")
            figures_kept_apart(
                folder,
                lambda: write_note_figures(run, folder, style=style, dpi=dpi, formats=args.formats),
                figure_failures,
            )
        if movies:
            from sparsity_gui.figures.note.movie import write_note_movie

            script = run.sim.script(run.t_end, args.samples)
            write_movies(
                result_dir,
                movies,
                movie,
                lambda panel, name, **hooks: write_note_movie(
                    name, script, panel, movie, style=args.style, **hooks
                ),
            )
        return run

    figure_failures: list[str] = []
    run = write_headless(args.out, args.force, body)
    report_figure_failures(figure_failures, args.out)
    fmt = resolved_format(args.format, run.sim.m)
    files = (
        ""
        if args.format != "auto" or fmt == "csv"
        else f" (m > {CSV_MAX_WEIGHTS:,}: weights and deaths as .npz)"
    )
    say(
        f"wrote {args.out}{files}: {args.samples} rows, {run.nonzero_final} nonzero weight(s) at "
        f"t = {run.t_end:.6g}, fitted c = {run.fitted_c:.4g} (m' >= 2), "
        f"bulk c = {run.fit.c_bulk:.4g} (m' >= 10), max deviation of the law {run.fit.max_rel_dev:.2g}"
        + (f" [{run.fit.flag_text()}]" if run.fit.flags else "")
    )
    return 0
