"""The desktop app's command-line options (`sparsity-gui [--model note|interference]
...`): parsed here, without Qt, into (model, parameters, W(0)) for app.main."""

from __future__ import annotations

import argparse

from sparsity_gui import __version__
from sparsity_gui.cli.common import CleanParser, number_arg, whole_arg
from sparsity_gui.cli.interference import (
    INTERFERENCE_DEFAULTS,
    add_model_options,
    base_params,
    resolve_defaults,
    w0_from_args,
)
from sparsity_gui.cli.note import add_param_options, params_from_args
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.headless import OPTIONAL_OPTIONS, values_from_schedules
from sparsity_gui.core.interference.initial import W0File, w0_label
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS

DESCRIPTION = """\
sparsity-gui: watch L1 regularization drive one feature encoding W to sparsity.

Each weight feels feature benefit (1 - ||W||^2) W_k pushing it up in proportion to itself
and L1 regularization lam*sign(W_k) pushing it down by a constant; weights above the
moving threshold theta = lam / (1 - ||W||^2) grow, the others die, until one is left.
Without a subcommand the desktop app opens (already running with the given parameters).

A second model, --model interference, trains n such encodings together with the
interference between them (the tied autoencoder of Lecomte et al. 2023), where about
n^2/(4m) of the m neurons end up polysemantic.
"""


EPILOG = """\
headless commands:
  sparsity-gui run --out DIR [options]           one encoding W (see `run --help`)
  sparsity-gui interference --out DIR [options]  one training run of n encodings with
                                                 interference (see `interference --help`)
  sparsity-gui sweep --out DIR [options]         polysemantic neurons against m, several
                                                 seeds per m, and the figure (`sweep --help`)
  sparsity-gui scaling --m LIST --lam LIST --out DIR
                                                 the note's lam*T, c and relative variance
                                                 across m and lam (`scaling --help`)
"""


NOTE_GUI_DEFAULTS = dict(m=1000, seed=0, sigma=0.9)


def gui_params(args: argparse.Namespace):
    """(model, params, w0) of the GUI's options: the note's SimParams and W(0) (a vector or
    None), or the interference model's InterferenceParams and W(0) as (matrix, its name
    for the window) or None. Raises InputError for an option the model does not take."""
    if args.model == "interference":
        if args.w0_row is not None:
            raise InputError(
                "w0-row",
                "is an option of the note's model: with --model interference W(0) is the whole matrix",
            )
        note_only = {
            "lam": None,
            "lam_schedule": None,
            "lam_warmup": None,
            "method": "exact",
            "eta": 0.05,
            "t_end": None,
            "speed": None,
        }
        for name, default in note_only.items():
            if getattr(args, name) != default:
                flag = "--" + name.replace("_", "-")
                raise InputError(
                    name,
                    f"{flag} is an option of the note's model; the "
                    f"interference model takes --l1, --lr, --optimizer, --steps",
                )
        matrix, source = w0_from_args(args)  # --w0 FILE sets n and m, as `interference` does
        values_from_schedules(vars(args))
        resolve_defaults(args, INTERFERENCE_DEFAULTS)
        params = base_params(args, args.m)
        from sparsity_gui.core.interference.params import check_memory as check_interference_memory
        from sparsity_gui.core.interference.params import check_training_work

        check_interference_memory(params.n, params.m, params.dtype)
        check_training_work(params)
        if matrix is None:
            return "interference", params, None
        return "interference", params, W0File(matrix, w0_label(source["path"], source["tensor"]), source)
    interference_only = ("n", "steps", "optimizer", "l1", "lr", "weight_decay", "dtype", *OPTIONAL_OPTIONS)
    given = [
        name
        for name in (*interference_only, *INTERFERENCE_SETTINGS.option_names())
        if getattr(args, name, None) is not None
    ] + (["no-interference"] if args.no_interference else [])
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise InputError(given[0], f"{flag} is an option of --model interference")
    resolve_defaults(args, NOTE_GUI_DEFAULTS)
    params, w0 = params_from_args(args)
    return "note", params, w0


MAX_QUIT_AFTER_MS = 2**31 - 1  # Qt's timers take a signed 32-bit interval (about 24 days)


def check_automation(args: argparse.Namespace) -> None:
    """--quit-after, --screenshot and --speed checked before the window opens (InputError):
    a time Qt can wait, a PNG in a folder that exists, a speed that is a number >= 0."""
    import math
    import os
    from pathlib import Path

    from sparsity_gui.core.text import printable

    if args.quit_after is not None and not 0 <= args.quit_after <= MAX_QUIT_AFTER_MS:
        raise InputError(
            "quit-after", f"must be from 0 to {MAX_QUIT_AFTER_MS} milliseconds, got {args.quit_after}"
        )
    if args.speed is not None and not (math.isfinite(args.speed) and args.speed >= 0):
        raise InputError("speed", f"must be a number >= 0 (0: as fast as possible), got {args.speed:g}")
    if args.screenshot:
        if args.quit_after is None:
            raise InputError(
                "screenshot", "needs --quit-after MS (the screenshot is taken just before quitting)"
            )
        path = Path(args.screenshot)
        shown = printable(str(path))
        if path.suffix.lower() != ".png":
            raise InputError("screenshot", f"{shown}: the screenshot is a PNG; name it .png")
        if path.is_dir():
            raise InputError("screenshot", f"{shown} is a folder")
        folder = path.parent
        if not folder.is_dir():
            raise InputError("screenshot", f"{printable(str(folder))}: no such folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError("screenshot", f"{printable(str(folder))}: cannot write there")


def build_gui_parser() -> CleanParser:
    p = CleanParser.for_command("", DESCRIPTION, EPILOG)
    p.add_argument("--version", action="version", version=f"sparsity-gui {__version__}")
    p.add_argument(
        "--model",
        choices=("note", "interference"),
        default="note",
        help="note: one encoding W, the research note's model (default); "
        "interference: n encodings with interference (Lecomte et al. 2023), "
        "polysemantic neurons against n^2/(4m), and sweeps over m",
    )
    add_param_options(p)
    # --m, --seed and --sigma serve both models: their defaults (the note's) are filled in
    # by gui_params once the model is known
    p.set_defaults(m=None, seed=None, sigma=None)
    g = p.add_argument_group(
        "interference model (with --model interference; --m, --seed and "
        "--sigma above apply to it too, defaults m=1024, sigma=1; --w0 FILE and "
        "--w0-tensor NAME above load W(0) as the whole matrix n x m, features x neurons, "
        "which sets n and m)"
    )
    add_model_options(g, INTERFERENCE_DEFAULTS, None, sweep=False, shared_with_note=True)
    a = p.add_argument_group("automation")
    a.add_argument(
        "--quit-after",
        type=whole_arg,
        default=None,
        metavar="MS",
        help="run for MS milliseconds, then close cleanly",
    )
    a.add_argument(
        "--screenshot",
        metavar="PATH",
        help="save a PNG of the whole window just before quitting (with --quit-after)",
    )
    a.add_argument("--paused", action="store_true", help="start paused instead of running")
    a.add_argument(
        "--speed",
        type=number_arg,
        default=None,
        metavar="V",
        help="simulated time per second of wall time (default: chosen from lam); 0 means as fast as possible",
    )
    return p
