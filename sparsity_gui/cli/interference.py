"""`sparsity-gui interference`: one training run of n encodings; and the interference
model's options, which `sweep` (cli/sweep.py) and the desktop app's command line share."""

from __future__ import annotations

import argparse
import shlex
import time
from collections.abc import Sequence
from pathlib import Path

from sparsity_gui.cli.common import (
    CleanParser,
    Progress,
    add_figure_options,
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
from sparsity_gui.core.interference.axes import AXES, KNOT_AXES
from sparsity_gui.core.interference.headless import (
    INTERFERENCE_DEFAULTS,
    SAMPLES,
    SAMPLES_CHECK,
    model_params,
    train,
    training_settings,
    training_w0,
    values_from_schedules,
)
from sparsity_gui.core.interference.params import DTYPES, NOISES, OPTIMIZERS, InterferenceParams
from sparsity_gui.core.interference.readouts import mechanism_text, run_readouts, saturation_line
from sparsity_gui.core.interference.schedules import LR_DECAYS
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS as S

INTERFERENCE_MODEL = """\
The interference model (Lecomte et al. 2023, "incidental polysemanticity"): n features,
m neurons, W n x m, trained as y = ReLU(W W^T x) on the n basis vectors with loss
  sum_i (1 - |W_i|^2)^2 + sum_{i != j} ReLU(W_i . W_j)^2 + l1 |W|_1.
Divided by 4 its gradient is the note's flow plus interference, with lam = l1/4 and
t = 4 lr steps for plain gradient descent (4 times the summed lr under a schedule). A
weight is active when 0.8 <= |w| <= 1.2; a neuron is polysemantic when more than one
feature is active on it. The paper predicts about n^2/(4m) polysemantic neurons, and
that colliding features have opposite signs.
"""


INTERFERENCE_DESCRIPTION = (
    """\
Train the interference model once, headless, and write into DIR: history.csv (the counts
at K steps spread evenly over the run), w0.npy and w_final.npy (W, n x m), neuron_counts.csv
(active features per neuron at the end) and run.json (parameters, the note's units, the
final counts and the prediction n^2/(4m)); with --figures, DIR/figures/ as well: each of
the window's seven panels (Thresholds among them) and the layout of the six it shows at once
as PNG, SVG and PDF (matplotlib), each with the arrays it is drawn from (.json) and the
script that redraws it (.py).

"""
    + INTERFERENCE_MODEL
)


def add_model_options(
    g, defaults: dict, paper: dict | None, sweep: bool, shared_with_note: bool = False
) -> None:
    """The interference model's options. Defaults are None here and filled in by
    resolve_defaults (so that --paper can supply its own and explicit options still win).
    With shared_with_note (the GUI parser) --m, --seed and --sigma are left out: the
    note's options of the same names serve both models."""
    g = recorded = RecordedGroup(g)

    def dflt(name: str) -> str:
        text = f"default {defaults[name]}"
        if paper and name in paper and paper[name] != defaults[name]:
            text += f"; --paper: {paper[name]}"
        return text

    def helped(name: str, what: str) -> str:
        """``what`` with the setting's bounds and this command's default (and --paper's),
        written as the settings table writes them."""
        setting = S[name]
        more = ""
        if paper and name in paper and paper[name] != defaults[name]:
            more = f"; --paper: {setting.fmt(paper[name])}"
        default = setting.fmt(defaults[name]) if name in defaults else None
        return setting_help(setting, what, default, more)

    g.add_argument(
        "--n",
        type=whole_arg,
        default=None,
        metavar="N",
        help=helped("n", "features (encodings, rows of W)"),
    )
    if shared_with_note:
        pass
    elif sweep:
        g.add_argument(
            "--m",
            default=None,
            metavar="LIST",
            help=helped(
                "m",
                "neurons (columns of W), each of a list like 64,128,256 or a range "
                "start:stop:step with stop included",
            ),
        )
        g.add_argument(
            "--seeds", type=whole_arg, default=None, metavar="S", help=f"runs (seeds) per m ({dflt('seeds')})"
        )
    else:
        g.add_argument(
            "--m",
            type=whole_arg,
            default=None,
            metavar="M",
            help=helped("m", "neurons (columns of W)"),
        )
    if shared_with_note:
        pass
    elif sweep:
        g.add_argument(
            "--seed",
            type=whole_arg,
            default=None,
            metavar="SEED",
            help=helped(
                "seed",
                "first random seed for W(0) ~ normal(0, sigma/sqrt(m)): each m runs "
                "with seeds SEED .. SEED+S-1",
            ),
        )
    else:
        g.add_argument(
            "--seed",
            type=whole_arg,
            default=None,
            metavar="N",
            help=helped("seed", "random seed for W(0) ~ normal(0, sigma/sqrt(m))"),
        )
    g.add_argument(
        "--steps", type=whole_arg, default=None, metavar="N", help=helped("steps", "training steps per run")
    )
    g.add_argument(
        "--optimizer",
        metavar="{" + ",".join(OPTIMIZERS) + "}",  # checked by InterferenceParams, as in the Python API
        default=None,
        help=helped(
            "optimizer",
            "adamw: torch's AdamW, the paper's; adam: Adam; gd-zero: gradient descent "
            "with the note's rule that a weight whose step crosses zero is set to "
            "zero; gd: plain gradient descent; ista: proximal gradient (soft-thresholding by "
            "lr*l1); signsgd: W - lr sign(gradient)",
        ),
    )
    g.add_argument(
        "--l1",
        type=number_arg,
        default=None,
        metavar="L",
        help=helped("l1", "L1 coefficient of the network's loss; the note's lam = l1/4"),
    )
    g.add_argument(
        "--lr",
        type=number_arg,
        default=None,
        metavar="R",
        help=helped("lr", "learning rate; for GD the note's eta = 4 lr, t = 4 lr steps at a constant lr"),
    )
    if not shared_with_note:
        g.add_argument(
            "--sigma",
            type=number_arg,
            default=None,
            metavar="S",
            help=helped("sigma", "W(0) ~ normal(0, sigma/sqrt(m)); 1 is the usual initialisation"),
        )
    g.add_argument(
        "--no-interference",
        action="store_true",
        help="drop the interference term: every feature trains alone (the note's model n times over)",
    )
    g.add_argument(
        "--weight-decay",
        type=number_arg,
        default=None,
        metavar="W",
        help=setting_help(
            S["weight_decay"],
            "weight decay: decoupled for adamw, L2 for adam, not used by GD",
            default_decays(),
        ),
    )
    g.add_argument(
        "--dtype",
        choices=DTYPES,
        default=None,
        help=helped(
            "dtype",
            "precision of W, the products and the optimizer's state: float32 is the "
            "paper's (torch's default) and about twice as fast in the products; counts agree "
            "with float64's in distribution, not run by run",
        ),
    )
    add_schedule_options(g)
    g.add_argument(
        "--noise",
        metavar="{" + ",".join(NOISES) + "}",  # checked by InterferenceParams, as in the Python API
        default=None,
        help=setting_help(
            S["noise"],
            "noise in the hidden layer, one vector per step for the whole batch, y = "
            "ReLU((xW + xi)W^T): bernoulli (+-sigma, equal odds) or gaussian (N(0, sigma^2)); the "
            "seed fixes it",
        ),
    )
    g.add_argument(
        "--noise-sigma",
        type=number_arg,
        default=None,
        metavar="S",
        help=setting_help(S["noise_sigma"], "the noise's sigma, needed with --noise"),
    )
    # the table's other options (the mechanisms', Adam's constants); the GUI's --m, --seed and
    # --sigma are the note's options of the same names
    shared = {"m", "seed", "sigma"} if shared_with_note else set()
    add_table_options(g, INTERFERENCE_SETTINGS, {a.dest for a in recorded.actions} | shared, grid=sweep)
    if sweep:
        take_lists(recorded.actions)


OPTION_TYPES = {"number": number_arg, "whole": whole_arg}  # a grid axis's kind: its argparse type


def add_table_options(g, settings, added: set[str], grid: bool = False) -> None:
    """An option for each setting of the table that a grid varies (Setting.axis) or that is
    an option of one run (Setting.option; not of a ``grid``'s command, whose runs take the
    default) and that has none written above (not in ``added``): its name, what it is, its
    bounds and its default from its row, so that a setting added to the table reaches the
    commands without an edit here. Its value is checked by the parameters, as every
    option's is."""
    for setting in settings:
        kind = setting.axis or ("" if grid else setting.option)
        if not kind or setting.name in added:
            continue
        goes_with = ""
        if setting.only_with is not None:
            field, values = setting.only_with
            goes_with = f"; only with --{field} {' or '.join(values)}"
        g.add_argument(
            "--" + setting.name.replace("_", "-"),
            type=OPTION_TYPES.get(kind),
            default=None,
            metavar=setting.metavar_text,
            help=setting_help(setting, setting.what, more=goes_with),
        )


def default_decays() -> str:
    """The weight decay a run has unless told: torch's, by optimizer (InterferenceParams)."""
    fmt = S["weight_decay"].fmt
    decay = {o: fmt(InterferenceParams(optimizer=o).effective_weight_decay) for o in ("adamw", "adam")}
    return f"torch's, {decay['adamw']} for adamw and {decay['adam']} for adam"


class RecordedGroup:
    """An argument group that keeps the actions added through it (argparse lists a group's
    actions only in a private attribute), so that take_lists can change them."""

    def __init__(self, group):
        self.group = group
        self.actions: list[argparse.Action] = []

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = self.group.add_argument(*args, **kwargs)
        self.actions.append(action)
        return action


def take_lists(actions: list[argparse.Action]) -> None:
    """`sweep`'s model options take lists (core/interference/axes.py): their text is kept
    as given and parsed there, as the Python API's lists and the window's fields are."""
    for action in actions:
        axis = action.dest
        if axis not in AXES or axis == "m":
            continue
        choices = action.choices
        action.type, action.choices = None, None
        if choices is not None:
            action.metavar = "{" + ",".join(choices) + "}[,...]"
        elif axis in KNOT_AXES:
            action.metavar = "KNOTS[;KNOTS...]"
        elif isinstance(action.metavar, str) and action.metavar.startswith("{"):
            action.metavar = action.metavar + "[,...]"
        else:
            action.metavar = "LIST"
        if axis in KNOT_AXES:
            action.help += '; several schedules separated by ";" sweep them, each setting its run\'s value'
        else:
            action.help += "; a list a,b,c sweeps it"


def add_schedule_options(g) -> None:
    """l1 and lr over steps (core/interference/schedules.py): step k = 1 .. steps uses the
    value at k."""
    g.add_argument(
        "--l1-warmup",
        type=whole_arg,
        default=None,
        metavar="STEPS",
        help=setting_help(
            S["l1_warmup"],
            "l1 rises linearly from 0 to --l1 over the first STEPS steps: l1 * min(1, k/STEPS) "
            "at step k = 1, 2, ... (SAELens' l1_warm_up_steps is one step behind: (k-1)/STEPS)",
        ),
    )
    g.add_argument(
        "--l1-schedule",
        default=None,
        metavar="KNOTS",
        help=setting_help(
            S["l1_schedule"],
            'l1 piecewise linear through knots step:value, like "0:0,1000:1e-3", constant '
            "before the first and after the last; sets --l1, the value after the last knot",
        ),
    )
    g.add_argument(
        "--lr-warmup",
        type=whole_arg,
        default=None,
        metavar="STEPS",
        help=setting_help(
            S["lr_warmup"],
            "lr rises linearly over the first STEPS steps: lr * min(1, k/STEPS) at step k, "
            "torch's LinearLR with start_factor 1/STEPS",
        ),
    )
    g.add_argument(
        "--lr-decay",
        choices=LR_DECAYS,
        default=None,
        help=setting_help(
            S["lr_decay"],
            "lr decays to 0 over the last --lr-decay-steps steps, linearly or as a half cosine "
            "(the last step's lr is 0); composes with --lr-warmup",
        ),
    )
    g.add_argument(
        "--lr-decay-steps",
        type=whole_arg,
        default=None,
        metavar="STEPS",
        help=setting_help(S["lr_decay_steps"], "the length of --lr-decay, in steps"),
    )
    g.add_argument(
        "--lr-schedule",
        default=None,
        metavar="KNOTS",
        help=setting_help(
            S["lr_schedule"],
            'lr piecewise linear through knots step:value, like "0:0,500:1e-3,7500:1e-4"; sets '
            "--lr; not with --lr-warmup or --lr-decay. For Adam and AdamW a schedule scales the "
            "whole step, decoupled weight decay included, as torch's LambdaLR",
        ),
    )


def resolve_defaults(args: argparse.Namespace, defaults: dict, paper: dict | None = None) -> None:
    base = dict(defaults)
    if paper is not None and getattr(args, "paper", False):
        base.update(paper)
    for name, value in base.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)


def base_params(args: argparse.Namespace, m: int):
    return model_params(**model_options(args), m=m)


def model_options(args: argparse.Namespace) -> dict:
    """The model's options but m, by name, for core/interference/headless.py: n, the first
    seed, every option a grid varies (axes.AXES, from the settings table), the table's
    options of one run (Setting.option) and the switch of the interference term (None: an
    option this parser does not have)."""
    option_names = INTERFERENCE_SETTINGS.option_names()
    names = ("n", "seed", *(a for a in AXES if a != "m"), *option_names, "no_interference")
    return {name: getattr(args, name, None) for name in names}


def build_interference_parser() -> CleanParser:
    p = CleanParser.for_command("interference", INTERFERENCE_DESCRIPTION)
    g = p.add_argument_group("model parameters")
    add_model_options(g, INTERFERENCE_DEFAULTS, None, sweep=False)
    add_w0_options(g)
    o = add_output_group(
        p,
        SAMPLES,
        f"rows in history.csv, at steps round(i*steps/(K-1)) ({SAMPLES_CHECK.bounds}; fewer when "
        f"steps < K-1; default {SAMPLES})",
    )
    o.add_argument(
        "--figures",
        action="store_true",
        help="also write DIR/figures/: the seven panels (Thresholds among them) and the "
        "layout of six as PNG, SVG and PDF, each with its data (.json) and the script that "
        "redraws it (.py)",
    )
    add_figure_options(o)
    add_movie_options(p, "weights, active, polysemantic, kept, signs, sparsity, thresholds")
    add_output_options(o)
    return p


def add_w0_options(g) -> None:
    g.add_argument(
        "--w0",
        metavar="FILE",
        help="start from W(0) in FILE, a matrix n x m (features x neurons): .npy, .npz, "
        ".safetensors, a PyTorch state_dict (.pt, needs torch) or text/CSV (a row per "
        "feature); sets n and m (--n and --m, if given, must match)",
    )
    g.add_argument(
        "--w0-tensor",
        metavar="NAME",
        help="the tensor of a --w0 .safetensors or PyTorch file (needed when it holds "
        "several; nested state_dict names joined by dots), or the array of a .npz",
    )


def w0_from_args(args: argparse.Namespace):
    """(W(0), where it came from for run.json) of --w0/--w0-tensor, or (None, None); sets
    args.n and args.m from the matrix. Before the defaults are filled in: an explicit --n
    or --m must match the file."""
    w0, source = training_w0(args.w0, args.w0_tensor, n=args.n, m=args.m, seed=args.seed, sigma=args.sigma)
    if w0 is not None:
        args.n, args.m = w0.shape
    return w0, source


def write_run_figures(folder, run, style, dpi: int, formats) -> list[Path]:
    """The seven panels of a finished run and their layout, with data and scripts."""
    from sparsity_gui.core.interference.run import HISTORY_COLUMNS
    from sparsity_gui.core.interference.settings import run_settings
    from sparsity_gui.core.interference.thresholds import run_threshold_curves
    from sparsity_gui.figures.interference.figures import run_data, run_figure_files
    from sparsity_gui.figures.save import write_files

    run.measure(with_loss=False)  # refreshes run.counts
    data = run_data(
        run.history_array(),
        HISTORY_COLUMNS,
        run.W,
        run.counts,
        run.params.n,
        settings=run_settings(run.params, run.w0_source),
        thresholds=run_threshold_curves(run),
    )
    return write_files(folder, run_figure_files(data, style, dpi, formats))


def interference_command(argv: Sequence[str]) -> int:
    args = build_interference_parser().parse_args(argv)
    try:
        w0, w0_source = w0_from_args(args)
        values_from_schedules(vars(args))
        resolve_defaults(args, INTERFERENCE_DEFAULTS)
        params = training_settings(samples=args.samples, m=args.m, **model_options(args))
        style, dpi = figure_style_from_args(args)
    except InputError as exc:
        fail(str(exc))
    movies, movie = movie_from_args(args, "interference")

    def body(result_dir):
        import threading

        from sparsity_gui.core.interference.files import write_interference_run

        progress = Progress(params.steps, params.optimizer)
        stop = threading.Event()

        def on_step(step: int) -> None:
            if stop.is_set():
                raise KeyboardInterrupt  # ends the worker; the main thread already left
            progress.update(step, detail=f"step {step}/{params.steps}")

        started = time.perf_counter()
        try:
            run = run_in_worker(
                lambda: train(params, args.samples, on_step, w0=w0, w0_source=w0_source), stop
            )
        finally:
            progress.close()
        wall = time.perf_counter() - started
        write_interference_run(result_dir, run, shlex.join(["sparsity-gui", "interference", *argv]), wall)
        if args.figures:
            folder = result_dir.path("figures")
            figures_kept_apart(
                folder, lambda: write_run_figures(folder, run, style, dpi, args.formats), figure_failures
            )
        if movies:
            from sparsity_gui.figures.interference.movie import write_interference_movie

            write_movies(
                result_dir,
                movies,
                movie,
                lambda panel, name, **hooks: write_interference_movie(
                    name, params, run.w0, panel, movie, args.samples, run.step, style=style, **hooks
                ),
            )
        return run

    figure_failures: list[str] = []
    run = write_headless(args.out, args.force, body)
    report_figure_failures(figure_failures, args.out)
    meas = run.measure(with_loss=False)
    say(
        f"wrote {args.out}: n = {params.n}, m = {params.m}, {run.step} steps ({params.optimizer}"
        f"{', float32' if params.dtype == 'float32' else ''}), "
        f"{len(run.history)} rows: {meas.polysemantic} polysemantic neuron(s) (predicted "
        f"n^2/(4m) = {params.prediction:.4g}), {meas.active} active weights, colliding pairs "
        f"{meas.opposite_pairs} of opposite / {meas.same_pairs} of equal sign"
    )
    saturated = saturation_line(run.rail_share_mean)
    if saturated:  # part of the summary: what the run's l1 means
        say(saturated)
    if run.mechanism is not None:
        found = run_readouts(run)["sparsity"]
        say(mechanism_text(found))
        if found.get("threshold_saturation"):
            say(found["threshold_saturation"])
    return 0
