"""`sparsity-gui checkpoints`: a series of snapshots from a training run against the theory
(core/checkpoints/compare.py), written as DIR/compare.csv and DIR/run.json."""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence

from sparsity_gui.cli.common import (
    CleanParser,
    add_figure_options,
    add_output_options,
    fail,
    figure_style_from_args,
    figures_kept_apart,
    number_arg,
    report_figure_failures,
    run_in_worker,
    say,
    whole_arg,
    write_headless,
)
from sparsity_gui.core.errors import InputError

CHECKPOINTS_DESCRIPTION = """\
Compare a series of weight snapshots from your own training run with the theory, from its
first snapshot on: at every snapshot's step, the interference model trained from the first
snapshot with the same optimizer and hyperparameters (exact in the steps), and for one row
trained by plain SGD the note's exact flow at t = 4 lr (step - step0) with lam = l1/4 (the
continuum limit, off by O(lr)). PATH is a folder of files named with their step
(step_000100.safetensors, ckpt-100.pt, 100.npy, ...; or a scalar 'step' stored in each),
a SAELens run (its checkpoints/<id>/ folder: each sub-folder's step is its optimizer's
update count from trainer_state.pt, not the samples its name counts; --latent K picks
W_enc's column K; --sae NAME one SAE of a MultiSAETrainer run), a dictionary_learning
trainer_*/ folder (checkpoints/ae_<step>.pt and config.json; --latent K picks
encoder.weight's row K), or one file holding a stacked tensor [T, n, m] or [T, m] and a
vector 'steps'. For an SAE the curves are what the paper's toy model would do from the
first snapshot: a reference, not a prediction of that run (the command says why); a TopK or
JumpReLU SAE's reference uses the model's matching mechanism with the settings its cfg.json
gives (the whole matrix or a row of W_enc; --l1 is then not used).
Writes DIR/compare.csv (per optimizer step of a snapshot: measured, predicted and flow
values of |W|_1, |W|^2, the weights above the zero tolerance, theta and the polysemantic
count, and their differences; and, for any trainer, the share of weights moving at Adam's most rate,
lr a step, the share dead, SAELens latents that never fire and a death forecast),
DIR/deaths.csv (each weight's forecast and observed death step) and DIR/run.json (with the
saturation verdict: whether the shrinking weights moved at the learning rate over the last
20 % of the steps, so that a larger coefficient would not sparsify faster).
"""


def build_checkpoints_parser() -> CleanParser:
    from sparsity_gui.core.checkpoints.compare import COMPARE_OPTIMIZERS

    p = CleanParser.for_command("checkpoints", CHECKPOINTS_DESCRIPTION)
    p.add_argument("path", metavar="PATH", help="the series: a folder of snapshots or one stacked file")
    g = p.add_argument_group("what to compare")
    g.add_argument(
        "--tensor", metavar="NAME", help="the tensor of each file (needed when a file holds several)"
    )
    pick = g.add_mutually_exclusive_group()
    pick.add_argument("--row", type=whole_arg, metavar="R", help="row R of a matrix (one feature's encoding)")
    pick.add_argument(
        "--latent",
        type=whole_arg,
        metavar="K",
        help="latent K of an SAE's encoder (SAELens: a column of W_enc; dictionary_learning: a row)",
    )
    g.add_argument("--sae", metavar="NAME", help="the SAE of a MultiSAETrainer run (<samples>/<NAME>/)")
    pick.add_argument("--all-rows", action="store_true", help="the whole matrix (features x neurons)")
    t = p.add_argument_group("the training run's settings")
    t.add_argument("--l1", type=number_arg, required=True, metavar="L", help="the L1 coefficient of the loss")
    t.add_argument("--lr", type=number_arg, required=True, metavar="R", help="the learning rate")
    t.add_argument(
        "--optimizer",
        required=True,
        choices=COMPARE_OPTIMIZERS,
        help="sgd (torch.optim.SGD, the model's gd), gd-zero, gd, adam or adamw",
    )
    t.add_argument(
        "--weight-decay",
        type=number_arg,
        metavar="WD",
        help="torch's weight decay (default torch's: 0.01 for adamw, 0 otherwise)",
    )
    t.add_argument(
        "--fit-time-scale",
        action="store_true",
        help="for one row: place the note's flow at t = tau (step - step0) with tau FITTED to the "
        "snapshots' |W|_1 (under Adam no time maps steps to the flow; written as "
        "fitted_time_per_step in run.json, labelled fitted)",
    )
    t.add_argument(
        "--zero-tol",
        type=number_arg,
        metavar="TOL",
        help="a weight counts as zero when |w| <= TOL (default 2 lr l1 under SGD: one L1 step either "
        "side of zero; 2 lr under adam and adamw: a dead weight chatters by about lr a step)",
    )
    o = p.add_argument_group("output")
    o.add_argument(
        "--figures",
        action="store_true",
        help="also write DIR/figures/: each measure's snapshots over the predicted curves, the rail "
        "share, the deaths and the death forecast against the observed deaths, as PNG, SVG and PDF, "
        "each with its data (.json) and the script that redraws it (.py)",
    )
    add_figure_options(o)
    add_output_options(o)
    return p


def checkpoints_command(argv: Sequence[str]) -> int:
    from sparsity_gui.core.checkpoints.compare import compare, finite_max, write_comparison
    from sparsity_gui.core.series import open_series

    args = build_checkpoints_parser().parse_args(argv)
    try:
        series = open_series(
            args.path, args.tensor, row=args.row, latent=args.latent, all_rows=args.all_rows, sae=args.sae
        )
        if args.fit_time_scale and series.pick == "matrix":
            raise InputError(
                "fit-time-scale", "the note's flow is for one row: fit a time scale with --row or --latent"
            )
        style, dpi = figure_style_from_args(args)
    except InputError as exc:
        fail(str(exc))

    def body(result_dir):
        import threading

        stop = threading.Event()
        started = time.perf_counter()
        result = run_in_worker(
            lambda: compare(
                series,
                l1=args.l1,
                lr=args.lr,
                optimizer=args.optimizer,
                weight_decay=args.weight_decay,
                zero_tol=args.zero_tol,
                should_stop=stop.is_set,
                fit_time_scale=args.fit_time_scale,
            ),
            stop,
        )
        command_line = shlex.join(["sparsity-gui", "checkpoints", *argv])
        write_comparison(result_dir, result, args.path, command_line, time.perf_counter() - started)
        if args.figures:
            from sparsity_gui.figures.compare import comparison_figure_files
            from sparsity_gui.figures.save import write_files

            folder = result_dir.path("figures")
            figures_kept_apart(
                folder,
                lambda: write_files(
                    folder, comparison_figure_files(result, style=style, dpi=dpi, formats=args.formats)
                ),
                figure_failures,
            )
        return result

    figure_failures: list[str] = []
    result = write_headless(args.out, args.force, body)
    report_figure_failures(figure_failures, args.out)
    if series.step_note:
        say(f"steps: {series.step_note}")
    for statement in result.statements:  # what the curves are, once, plainly
        say(f"note: {statement}")
    if result.flow_note:
        say(f"note: {result.flow_note}")
    say(f"note: {result.zero_tol_note}")
    flow = finite_max(result.column("max_abs_diff_flow"))
    model = finite_max(result.column("max_abs_diff"))
    say(
        f"wrote {args.out}: {len(series.snapshots)} snapshots, steps {int(series.steps[0])} to "
        f"{int(series.steps[-1])}; largest |W - trained model| = {model:.3g}"
        + (f", |W - note's flow| = {flow:.3g}" if flow is not None else "")
    )
    for line in result.diagnostics.lines():  # any trainer's: the rail, the deaths, the forecast
        say(line)
    return 0
