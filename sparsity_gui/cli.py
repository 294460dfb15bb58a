"""Command line: `sparsity-gui run ...` (headless) and the GUI's options.

Nothing here imports Qt: the GUI is imported lazily by __main__ only when it is asked for.
"""
from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from typing import NoReturn, Sequence

import numpy as np

from . import __version__
from .core.errors import InputError
from .core.params import SimParams, check_memory

DESCRIPTION = """\
sparsity-gui: watch L1 regularization drive one feature encoding W to sparsity.

Each weight feels feature benefit (1 - ||W||^2) W_k pushing it up in proportion to itself
and L1 regularization lam*sign(W_k) pushing it down by a constant; weights above the
moving threshold theta = lam / (1 - ||W||^2) grow, the others die, until one is left.
Without a subcommand the desktop app opens (already running with the given parameters).
"""

RUN_DESCRIPTION = """\
Simulate headless and write timeseries.csv, weights.csv, deaths.csv and run.json into DIR.
The exact method solves the flow through a two-variable reduction (cost independent of m
after one sort); gd runs discrete gradient descent W <- W + eta*[(1-||W||^2)W - lam sign(W)].
"""


class CleanParser(argparse.ArgumentParser):
    """argparse, but a usage error is one `error:` line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        fail(message)


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"error: {message}\n")
    raise SystemExit(2)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not f.is_integer():
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        value = int(f)
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def add_param_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("simulation parameters")
    g.add_argument("--m", type=_positive_int, default=1000, metavar="M",
                   help="number of weights in W (1 to 1e8; default 1000)")
    g.add_argument("--lam", type=_number, default=1e-3, metavar="L",
                   help="L1 regularization strength lam (0 to 1; default 1e-3)")
    g.add_argument("--sigma", type=_number, default=0.9, metavar="S",
                   help="W_k(0) ~ normal(0, sigma/sqrt(m)) (> 0; default 0.9)")
    g.add_argument("--seed", type=_positive_int, default=0, metavar="N",
                   help="random seed for W(0) (default 0)")
    g.add_argument("--w0", metavar="FILE",
                   help="load W(0) from .npy/.npz or text/CSV (one number per line); sets m")
    g.add_argument("--w0-row", type=_positive_int, default=None, metavar="R",
                   help="with a 2-D --w0 file (a weight matrix), use row R (0-based) as W(0)")
    g.add_argument("--method", choices=("exact", "gd"), default="exact",
                   help="exact flow or gradient descent (default exact)")
    g.add_argument("--eta", type=_number, default=0.05, metavar="H",
                   help="gradient-descent step; simulated time t = eta*step (default 0.05)")
    g.add_argument("--t-end", type=_number, default=None, metavar="T",
                   help="simulated end time (default: when one weight is left, plus 10%%)")


def params_from_args(args: argparse.Namespace) -> tuple[SimParams, np.ndarray | None]:
    """Validated parameters and, with --w0, the loaded weights."""
    from .core.initial import load_w0

    w0 = None
    m = args.m
    if args.w0_row is not None and args.w0 is None:
        raise InputError("w0-row", "needs --w0 FILE")
    if args.w0 is not None:
        w0 = load_w0(args.w0, args.w0_row)
        m = int(w0.shape[0])
    params = SimParams(m=m, lam=args.lam, sigma=args.sigma, seed=args.seed, w0_path=args.w0,
                       method=args.method, eta=args.eta, t_end=args.t_end)
    if w0 is None:
        check_memory(params.m)
    return params, w0


def build_run_parser() -> CleanParser:
    p = CleanParser(prog="sparsity-gui run", description=RUN_DESCRIPTION,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    add_param_options(p)
    o = p.add_argument_group("output")
    o.add_argument("--samples", type=_positive_int, default=501, metavar="K",
                   help="rows in timeseries.csv, at t = i*T/(K-1) (2 to 1e6; default 501)")
    o.add_argument("--no-weights", action="store_true", help="skip weights.csv (for very large m)")
    o.add_argument("--figures", action="store_true",
                   help="also write each panel as PNG and SVG and the whole layout as PNG into "
                        "DIR/figures/ (offscreen, no display needed)")
    o.add_argument("--out", required=True, metavar="DIR", help="folder to write (must be new or empty)")
    o.add_argument("--force", action="store_true", help="replace a non-empty DIR")
    return p


class Progress:
    """A one-line progress bar on stderr, shown only on a terminal and only once a run
    has taken more than a second."""

    def __init__(self, total: int, label: str):
        self.total = max(total, 1)
        self.label = label
        self.start = time.perf_counter()
        self.enabled = sys.stderr.isatty()
        self.shown = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        if elapsed < 1.0 and not self.shown:
            return
        self.shown = True
        frac = done / self.total
        bar = "#" * int(30 * frac)
        eta = elapsed / frac - elapsed if frac > 0 else math.nan
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {100 * frac:5.1f}%  {elapsed:6.1f}s"
                         f"  (about {eta:5.0f}s left)  ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _interrupt_on_sigterm() -> None:
    """SIGTERM (a closed terminal, `kill`) cleans up like Ctrl+C does."""
    import signal

    def handler(_signum, _frame):
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (called from a test harness)
        pass


def run_command(argv: Sequence[str]) -> int:
    from .core.files import ResultDir

    args = build_run_parser().parse_args(argv)
    try:
        params, w0 = params_from_args(args)
        if not 2 <= args.samples <= 10**6:
            raise InputError("samples", f"must be from 2 to 1e6, got {args.samples}")
        result_dir = ResultDir(args.out, args.force)
    except InputError as exc:
        fail(str(exc))
    _interrupt_on_sigterm()
    try:
        # numba and scipy load only once the arguments are known to be good
        from .core.runfiles import simulate_samples, write_results

        run = simulate_samples(params, w0, args.samples, Progress)
        if args.figures:
            from .figures import write_figures  # needs Qt (offscreen); imported only here
            write_figures(run, result_dir.path("figures"))
        write_results(result_dir, run, params, include_weights=not args.no_weights,
                      command_line=shlex.join(["sparsity-gui", "run", *argv]))
        result_dir.commit()
    except KeyboardInterrupt:
        result_dir.abort()
        sys.stderr.write("\nerror: interrupted; nothing was written\n")
        return 130
    except InputError as exc:
        result_dir.abort()
        fail(str(exc))
    except OSError as exc:
        result_dir.abort()
        fail(f"cannot write results: {exc.strerror or exc} ({exc.filename or args.out})")
    except BaseException:
        result_dir.abort()
        raise
    print(f"wrote {args.out}: {args.samples} rows, {run.nonzero_final} nonzero weight(s) at "
          f"t = {run.t_end:.6g}, fitted c = {run.fitted_c:.4g}")
    return 0


def build_gui_parser() -> CleanParser:
    p = CleanParser(prog="sparsity-gui", description=DESCRIPTION,
                    formatter_class=argparse.RawDescriptionHelpFormatter,
                    epilog="Headless runs: `sparsity-gui run --out DIR [options]` "
                           "(see `sparsity-gui run --help`).")
    p.add_argument("--version", action="version", version=f"sparsity-gui {__version__}")
    add_param_options(p)
    a = p.add_argument_group("automation")
    a.add_argument("--quit-after", type=_positive_int, default=None, metavar="MS",
                   help="run for MS milliseconds, then close cleanly")
    a.add_argument("--screenshot", metavar="PATH",
                   help="save a PNG of the whole window just before quitting (with --quit-after)")
    a.add_argument("--paused", action="store_true", help="start paused instead of running")
    a.add_argument("--speed", type=_number, default=None, metavar="V",
                   help="simulated time per second of wall time (default: chosen from lam); "
                        "0 means as fast as possible")
    return p
