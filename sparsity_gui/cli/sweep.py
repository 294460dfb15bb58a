"""`sparsity-gui sweep`: polysemantic neurons against m, several seeds per m, with
--resume (the interference model's grid of runs, as `scaling` is the note's)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from sparsity_gui.cli.common import (
    CleanParser,
    fail,
    figure_style_from_args,
    log,
    say,
)
from sparsity_gui.cli.grid import add_grid_options, grid_command
from sparsity_gui.cli.interference import INTERFERENCE_MODEL, add_model_options
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.axes import (
    DEFAULT_READOUT,
    READOUTS,
    check_readout,
    value_text,
)
from sparsity_gui.core.interference.headless import (
    PAPER,
    SWEEP_DEFAULTS,
    SWEEP_OPTIONS,
    paper_text,
    sweep_order,
)
from sparsity_gui.core.interference.sweep import SETTLED_DEFINITION, cell_summaries, summarize
from sparsity_gui.core.text import format_duration

SWEEP_DESCRIPTION = (
    """\
Sweep m for a fixed n: train every m with several seeds and count the polysemantic
neurons of each run, against the paper's n^2/(4m) (its count-against-m figure). Any other
model option may be a list too (--l1 1e-3,1e-2 --optimizer adamw,gd-zero; knots of
schedules separated by ';'): the sweep is then the grid of every combination, times the
seeds.
Writes into DIR: sweep.csv (a row per run), sweep.json (the settings, the command line,
mean and std per m, per cell of a grid each readout's median, 10/90 % quantiles, mean and
std) and, in DIR/figures/, the figures drawn by matplotlib: sweep.png, .svg and .pdf (the
count against m), or for a grid curves.* (--readout against the first varied option) and,
with two varied options, heatmap.*; with --overlap, overlap.*; each with its .json (the
arrays drawn) and .py (the script that redraws its PNG from them, with numpy and matplotlib
only: restyle it there).

"""
    + INTERFERENCE_MODEL
)


def build_sweep_parser() -> CleanParser:
    p = CleanParser.for_command("sweep", SWEEP_DESCRIPTION)
    g = p.add_argument_group("model parameters")
    add_model_options(g, SWEEP_DEFAULTS, PAPER, sweep=True)
    g.add_argument(
        "--paper",
        action="store_true",
        help=f"the paper's settings: {paper_text()}, which takes hours (about 4 on two "
        "cores in float64, 2.5 with --dtype float32, the paper's precision; the progress "
        "bar shows the time left). Options given as well override these",
    )
    o = add_grid_options(
        p,
        "runs trained side by side, each with one BLAS thread (1 to 64; default: the number of "
        "cores, at most 8)",
        "train",
        "the figure and its script",
    )
    o.add_argument(
        "--readout",
        default=DEFAULT_READOUT,
        metavar="NAME",
        help="what the figures of a sweep over more than m draw, the median over seeds per "
        f"cell: {', '.join(READOUTS)} (default {DEFAULT_READOUT})",
    )
    o.add_argument(
        "--overlap",
        action="store_true",
        help="also write overlap.npy and the figure overlap: per cell of the grid, W(0) W(T)^T "
        "(features by features) averaged over its seeds, which features keep their initial "
        "direction (the paper's correlation figure; at most 1 GB of n x n matrices)",
    )
    o.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted sweep in DIR (Ctrl+C or SIGTERM keeps the runs "
        "that finished): the same options, only the missing runs are trained",
    )
    return p


def sweep_spec_from_args(args: argparse.Namespace):
    """The validated SweepSpec of parsed `sweep` options, through the sweep's front door
    (core/interference/headless.sweep_order, as api.sweep and the window's tab): sets
    args.jobs to the runs trained side by side and args.scheduler to where they go."""
    check_readout(args.readout)
    order = sweep_order({name: getattr(args, name) for name in SWEEP_OPTIONS})
    args.jobs, args.scheduler = order.jobs, order.scheduler
    return order.plan


def sweep_command(argv: Sequence[str]) -> int:
    args = build_sweep_parser().parse_args(argv)
    try:
        spec = sweep_spec_from_args(args)
        style, dpi = figure_style_from_args(args)
        if args.resume:
            from sparsity_gui.core.interference.files import resumed_rows

            done_rows, dropped = resumed_rows(args.out, spec)
        else:
            done_rows, dropped = [], 0
    except InputError as exc:
        fail(str(exc))
    if dropped:
        say(
            f"note: {dropped} row(s) of {args.out}/sweep.csv are not runs this sweep could have written "
            "(their settings or their values out of range): they are trained again"
        )
    from sparsity_gui.core.interference.files import write_sweep

    def figure_files(rows: list, interrupted: bool) -> dict:
        from sparsity_gui.figures.interference.grid import sweep_figures  # matplotlib: only if asked

        return sweep_figures(
            spec, rows, args.readout, cancelled=interrupted, style=style, dpi=dpi, formats=args.formats
        )

    outcome, status = grid_command(
        "sweep",
        argv,
        args,
        spec,
        args.jobs,
        lambda result_dir, rows, command_line: write_sweep(
            result_dir, spec, rows, command_line=command_line, scheduler=args.scheduler
        ),
        figure_files,
        describe=lambda p: "  " + spec.describe(p),
        done_rows=done_rows,
        hint="; the same command with --resume continues it",
    )
    if status is not None:
        return status
    runs = spec.runs()
    varied = spec.varied
    sizes = " x ".join(f"{len(spec.values_of(a))} value(s) of {a}" for a in varied or ("m",))
    b = spec.base
    fixed = [
        t
        for a, t in (("optimizer", b.optimizer), ("dtype", b.dtype), ("steps", f"{b.steps} steps"))
        if a not in varied
    ]
    say(
        f"wrote {args.out}: {len(runs)} runs (n = {spec.base.n}, {sizes} x {spec.seeds} seed(s)"
        f"{', ' if fixed else ''}{', '.join(fixed)}) in "
        f"{format_duration(outcome.seconds)} {outcome.ran_on(args.jobs, args.scheduler)}"
    )
    if set(varied) <= {"m"}:
        s = summarize(outcome.rows)
        say(f"{'m':>7} {'mean':>9} {'std':>8} {'predicted':>10}   polysemantic neurons")
        for i, m in enumerate(s.m):
            say(f"{int(m):>7} {s.mean[i]:>9.3f} {s.std[i]:>8.3f} {s.predicted[i]:>10.3f}")
        say(f"colliding pairs: {s.opposite_pairs} of opposite sign, {s.same_pairs} of equal sign")
    else:
        say_cells(spec, outcome.rows, args.readout)
    unsettled = [r for r in outcome.rows if not r.settled]
    if unsettled:
        where = ", ".join(spec.describe_row(r) for r in unsettled[:4]) + (
            ", ..." if len(unsettled) > 4 else ""
        )
        log.warning(
            f"{len(unsettled)} of {len(outcome.rows)} runs had not settled ({where}): "
            f"settled means {SETTLED_DEFINITION}; give more --steps"
        )
    return 0


def short(v: float) -> str:
    """A number in the summary table: whole numbers from 1000 up as they are (11080 steps),
    others with four significant digits."""
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def say_cells(spec, rows: list, readout: str) -> None:
    """The summary table of a sweep over more than m: per cell its values, the runs, and
    the median (10-90 %) over seeds of the polysemantic count and of the readout."""
    cells = cell_summaries(spec, rows)
    names = list(spec.varied)
    shown = ["polysemantic"] + ([readout] if readout != "polysemantic" else [])
    widths = [max(len(a), *(len(value_text(a, c["params"][a])) for c in cells)) for a in names]
    head = " ".join(f"{a:>{w}}" for a, w in zip(names, widths, strict=True))
    say(f"{head} {'runs':>5} " + " ".join(f"{name + ' (median, 10-90 %)':>34}" for name in shown))
    for c in cells:
        values = " ".join(f"{value_text(a, c['params'][a]):>{w}}" for a, w in zip(names, widths, strict=True))
        stats = []
        for name in shown:
            st = c[name]
            text = (
                ("never" if name == "steps_to_sparse" else "-")
                if st["median"] is None
                else f"{short(st['median'])} ({short(st['p10'])} .. {short(st['p90'])})"
            )
            stats.append(f"{text:>34}")
        say(f"{values} {c['runs']:>5} " + " ".join(stats))
