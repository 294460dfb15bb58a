"""`sparsity-gui scaling`: the note's constants across m and lam (lam*T, the fitted c, the
relative-variance plateau), the exact solver run for every (m, lam, seed)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from sparsity_gui.cli.common import (
    CleanParser,
    fail,
    figure_style_from_args,
    number_arg,
    say,
    setting_help,
    whole_arg,
)
from sparsity_gui.cli.grid import add_grid_options, grid_command
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.headless import SCALING_DEFAULTS
from sparsity_gui.core.note.params import GRID_LAM
from sparsity_gui.core.note.settings import NOTE_SETTINGS as S
from sparsity_gui.core.text import format_duration

SCALING_DESCRIPTION = """\
The note's claims across m and lam: ||W||_1 = 1/Theta(1/sqrt(m) + lam t), and full sparsity
takes Theta(1/lam). For every m, lam and seed the exact solver runs to one weight left (the
`run` command of the same settings: its t_one_weight_left and fitted_c to the last digit).
Writes scaling.csv (a row per run: m, lam, seed, t_one, lam_t_one, fitted_c (m' >= 2),
fitted_c_bulk (m' >= 10, the bulk decay), fit_max_rel_dev, rel_var_mean, rel_var_min,
rel_var_max, balance_ratio, w_last, w_last_root, lam_norm1_0, norm2_w0, balance_possible,
theta_rises, theta_rise_condition, theta_fall, ...), scaling.json (the settings, the command
line, mean and standard deviation per (m, lam)) and, in DIR/figures/, the figures lam_t_one,
fitted_c and rel_var against m (matplotlib) as PNG, SVG and PDF, each with the arrays it is
drawn from (.json) and the script that redraws it (.py, numpy and matplotlib only). The law holds where
lam ||W(0)||_1 <= 1/4: the figures draw those means filled, the others hollow.

example: sparsity-gui scaling --m 1e3,1e4,1e5,1e6 --lam 1e-4,1e-3,1e-2 --seeds 3 --out DIR
"""


def build_scaling_parser() -> CleanParser:
    p = CleanParser.for_command("scaling", SCALING_DESCRIPTION)
    g = p.add_argument_group("the grid")
    g.add_argument(
        "--m",
        required=True,
        metavar="LIST",
        help="weights per run: a list like 1000,10000, powers like 1e3,1e4,1e5,1e6 (or 10^3,...) "
        f"or a range start:stop:step with stop included (each {S['m'].bounds})",
    )
    g.add_argument(
        "--lam",
        required=True,
        metavar="LIST",
        help=f"L1 strengths: a list like 1e-4,1e-3,1e-2 (each {GRID_LAM.bounds})",
    )
    default = SCALING_DEFAULTS  # the grid's front door fills in what is not given
    g.add_argument(
        "--seeds",
        type=whole_arg,
        default=None,
        metavar="S",
        help=f"runs (seeds) per (m, lam) (default {default['seeds']})",
    )
    g.add_argument(
        "--seed",
        type=whole_arg,
        default=None,
        metavar="N",
        help=setting_help(
            S["seed"],
            "first seed: each (m, lam) runs seeds N .. N+S-1, the same W(0) for every lam",
            S["seed"].fmt(default["seed"]),
        ),
    )
    g.add_argument(
        "--sigma",
        type=number_arg,
        default=None,
        metavar="S",
        help=setting_help(
            S["sigma"], "W_k(0) ~ normal(0, sigma/sqrt(m))", S["sigma"].fmt(default["sigma"]), ", as `run`"
        ),
    )
    add_grid_options(
        p,
        "runs side by side in threads (1 to 64; default: the number of cores, at most 8, fewer if "
        "they do not fit in memory)",
        "solve",
        "the figures and their scripts",
    )
    return p


def grid_from_args(args: argparse.Namespace):
    """The validated ScalingGrid of parsed options, through the grid's front door
    (core/note/headless.scaling_order, as the Python API's scaling() and the window's tab),
    and the jobs to run it with: None with --scheduler, which it turns into a Scheduler in
    args.scheduler."""
    from sparsity_gui.core.note.headless import SCALING_OPTIONS, scaling_order

    order = scaling_order({name: getattr(args, name) for name in SCALING_OPTIONS})
    args.scheduler = order.scheduler
    return order.plan, order.jobs


def _print_table(rows) -> None:
    from sparsity_gui.core.note.scaling import in_regime, summarize

    say(
        f"{'m':>10} {'lam':>8} {'runs':>4}  {'lam*T mean ± sd':>17}  {'c (m>=2) mean ± sd':>18}  "
        f"{'c_bulk (m>=10) ± sd':>19}  {'max dev':>7}  {'RV mean ± sd':>15}  {'balance':>8}  regime"
    )
    for c in summarize(rows):
        mu, sd = c.mean, c.std
        if not in_regime(c):
            regime = f"no: lam*||W(0)||_1 = {mu['lam_norm1_0']:.3g} > 1/4"
        elif c.theta_fell:
            regime = f"no: theta fell in {c.theta_fell} of {c.runs} runs"
        else:
            regime = "yes"
        say(
            f"{c.m:>10} {c.lam:>8.2g} {c.runs:>4}  {mu['lam_t_one']:>8.4g} ± {sd['lam_t_one']:<6.2g}  "
            f"{mu['fitted_c']:>9.4g} ± {sd['fitted_c']:<6.2g}  "
            f"{mu['fitted_c_bulk']:>10.4g} ± {sd['fitted_c_bulk']:<6.2g}  {mu['fit_max_rel_dev']:>7.2g}  "
            f"{mu['rel_var_mean']:>7.4g} ± {sd['rel_var_mean']:<5.2g}  {mu['balance_ratio']:>8.5g}  {regime}"
        )


def scaling_command(argv: Sequence[str]) -> int:
    args = build_scaling_parser().parse_args(argv)
    try:
        grid, jobs = grid_from_args(args)
        style, dpi = figure_style_from_args(args)
    except InputError as exc:
        fail(str(exc))
    from sparsity_gui.core.note.files import write_scaling

    def figure_files(rows: list, _interrupted: bool) -> dict:
        from sparsity_gui.figures.note.scaling import scaling_figure_files  # matplotlib: only if asked

        return scaling_figure_files(grid, rows, style=style, dpi=dpi, formats=args.formats)

    outcome, status = grid_command(
        "scaling",
        argv,
        args,
        grid,
        jobs,
        lambda result_dir, rows, command_line: write_scaling(
            result_dir, grid, rows, command_line=command_line, scheduler=args.scheduler
        ),
        figure_files,
        describe=lambda current: "  m={} lam={:g} seed={}".format(*current),
    )
    if status is not None:
        return status
    runs = grid.runs()
    say(
        f"wrote {args.out}: {len(runs)} runs ({len(grid.m_values)} value(s) of m x "
        f"{len(grid.lam_values)} of lam x {grid.seeds} seed(s)) in "
        f"{format_duration(outcome.seconds)} {outcome.ran_on(jobs, args.scheduler)}"
    )
    _print_table(outcome.rows)
    return 0
