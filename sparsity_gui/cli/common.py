"""Command line: `sparsity-gui run|sweep|interference ...` (headless) and the GUI's options.

Nothing here imports Qt: the GUI is imported lazily by __main__ only when it is asked for.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Iterator, NoReturn, Sequence

import numpy as np

from sparsity_gui import __version__
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.params import SimParams, check_memory

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
"""

RUN_DESCRIPTION = """\
Simulate headless and write timeseries.csv, weights.csv, deaths.csv and run.json into DIR.
The exact method solves the flow through a two-variable reduction (cost independent of m
after one sort); gd runs discrete gradient descent W <- W + eta*[(1-||W||^2)W - lam sign(W)].
"""


INTERFERENCE_MODEL = """\
The interference model (Lecomte et al. 2023, "incidental polysemanticity"): n features,
m neurons, W n x m, trained as y = ReLU(W W^T x) on the n basis vectors with loss
  sum_i (1 - |W_i|^2)^2 + sum_{i != j} ReLU(W_i . W_j)^2 + l1 |W|_1.
Divided by 4 its gradient is the note's flow plus interference, with lam = l1/4 and
t = 4 lr steps for plain gradient descent. A weight is active when 0.8 <= |w| <= 1.2; a
neuron is polysemantic when more than one feature is active on it. The paper predicts
about n^2/(4m) polysemantic neurons, and that colliding features have opposite signs.
"""

SWEEP_DESCRIPTION = """\
Sweep m for a fixed n: train every m with several seeds and count the polysemantic
neurons of each run, against the paper's n^2/(4m) (its count-against-m figure).
Writes into DIR: sweep.csv (a row per run), sweep.json (the settings, the command line,
mean and std per m) and the figure as sweep.png and sweep.svg.

""" + INTERFERENCE_MODEL

INTERFERENCE_DESCRIPTION = """\
Train the interference model once, headless, and write into DIR: history.csv (the counts
at K steps spread evenly over the run), w0.npy and w_final.npy (W, n x m), neuron_counts.csv
(active features per neuron at the end) and run.json (parameters, the note's units, the
final counts and the prediction n^2/(4m)).

""" + INTERFERENCE_MODEL

SWEEP_DEFAULTS = dict(n=64, m="64,128,256,512,1024", seeds=4, seed=0, steps=5000,
                      optimizer="adamw", l1=1e-3, lr=1e-3, sigma=1.0)
PAPER = dict(n=256, m="256:4096:256", seeds=16, steps=7500, optimizer="adamw", l1=1e-3, lr=1e-3)
INTERFERENCE_DEFAULTS = dict(n=256, m=1024, seed=0, steps=7500, optimizer="adamw", l1=1e-3,
                             lr=1e-3, sigma=1.0)


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
    from sparsity_gui.core.note.initial import load_w0

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


def format_duration(seconds: float) -> str:
    """42 s, 2 min 05 s, 3 h 07 min; '—' when unknown (the CLI's bar and the GUI's sweep)."""
    if not math.isfinite(seconds) or seconds < 0:
        return "—"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {(seconds % 3600) // 60:02d} min"


class Progress:
    """A one-line progress bar on stderr, shown only on a terminal and only once a run
    has taken more than a second.

    ``update(done)`` shows done/total; a sweep passes what it knows better: the fraction
    of the total cost done, the time left and a detail (runs done, the current run)."""

    MIN_INTERVAL = 0.1  # seconds between redraws

    def __init__(self, total: int, label: str):
        self.total = max(total, 1)
        self.label = label
        self.start = time.perf_counter()
        self.enabled = sys.stderr.isatty()
        # quick commands stay quiet; SPARSITY_GUI_PROGRESS_AFTER (seconds) changes when the bar
        # first shows (tests set 0 so that a fast machine still shows one)
        try:
            self.after = float(os.environ.get("SPARSITY_GUI_PROGRESS_AFTER", "1"))
        except ValueError:
            self.after = 1.0
        self.shown = False
        self._last = -math.inf
        self._width = 0

    def update(self, done: int, fraction: float | None = None, eta: float | None = None,
               detail: str = "") -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self.start
        if elapsed < self.after and not self.shown:
            return
        frac = done / self.total if fraction is None else fraction
        frac = min(max(frac, 0.0), 1.0)
        if now - self._last < self.MIN_INTERVAL and frac < 1.0:
            return
        self._last = now
        self.shown = True
        bar = "#" * int(30 * frac)
        if eta is None:
            eta = elapsed / frac - elapsed if frac > 0 else math.nan
        line = (f"{self.label} [{bar:<30}] {detail + '  ' if detail else ''}{100 * frac:5.1f}%  "
                f"{format_duration(elapsed)} elapsed, about {format_duration(eta)} left")
        pad = max(self._width - len(line), 0)
        self._width = len(line)
        sys.stderr.write("\r" + line + " " * pad)
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.shown = False


def run_command(argv: Sequence[str]) -> int:
    from sparsity_gui.core.files import ResultDir

    args = build_run_parser().parse_args(argv)
    try:
        params, w0 = params_from_args(args)
        if not 2 <= args.samples <= 10**6:
            raise InputError("samples", f"must be from 2 to 1e6, got {args.samples}")
        result_dir = ResultDir(args.out, args.force)
    except InputError as exc:
        fail(str(exc))
    state: dict = {}

    def body() -> None:
        # numba and scipy load only once the arguments are known to be good
        from sparsity_gui.core.note.sampled import simulate_samples, write_results

        run = state["run"] = simulate_samples(params, w0, args.samples, Progress)
        if args.figures:
            from sparsity_gui.plots.render import write_figures  # needs Qt (offscreen); imported only here
            with interrupts_deferred():  # a signal inside Qt's drawing would crash it
                write_figures(run, result_dir.path("figures"))
        write_results(result_dir, run, params, include_weights=not args.no_weights,
                      command_line=shlex.join(["sparsity-gui", "run", *argv]))

    with interrupt_handlers():
        rc = _run_guarded(result_dir, args.out, body)
    if rc is not None:
        return rc
    run = state["run"]
    print(f"wrote {args.out}: {args.samples} rows, {run.nonzero_final} nonzero weight(s) at "
          f"t = {run.t_end:.6g}, fitted c = {run.fitted_c:.4g}")
    return 0


NOTE_GUI_DEFAULTS = dict(m=1000, seed=0, sigma=0.9)


def gui_params(args: argparse.Namespace):
    """(model, params, w0) of the GUI's options: the note's SimParams, or the interference
    model's InterferenceParams. Raises InputError for an option the model does not take."""
    if args.model == "interference":
        for flag, value in (("w0", args.w0), ("w0-row", args.w0_row)):
            if value is not None:
                raise InputError(flag, "is an option of the note's model, not of --model interference")
        note_only = {"lam": 1e-3, "method": "exact", "eta": 0.05, "t_end": None, "speed": None}
        for name, default in note_only.items():
            if getattr(args, name) != default:
                flag = "--" + name.replace("_", "-")
                raise InputError(name, f"{flag} is an option of the note's model; the "
                                 f"interference model takes --l1, --lr, --optimizer, --steps")
        _resolve(args, INTERFERENCE_DEFAULTS)
        params = _base_params(args, args.m)
        from sparsity_gui.core.interference.kernels import check_memory as check_interference_memory

        check_interference_memory(params.n, params.m)
        return "interference", params, None
    given = [name for name in ("n", "steps", "optimizer", "l1", "lr", "weight_decay")
             if getattr(args, name) is not None] + (["no-interference"] if args.no_interference else [])
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise InputError(given[0], f"{flag} is an option of --model interference")
    _resolve(args, NOTE_GUI_DEFAULTS)
    params, w0 = params_from_args(args)
    return "note", params, w0


def build_gui_parser() -> CleanParser:
    p = CleanParser(prog="sparsity-gui", description=DESCRIPTION,
                    formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"sparsity-gui {__version__}")
    p.add_argument("--model", choices=("note", "interference"), default="note",
                   help="note: one encoding W, the research note's model (default); "
                        "interference: n encodings with interference (Lecomte et al. 2023), "
                        "polysemantic neurons against n^2/(4m), and sweeps over m")
    add_param_options(p)
    # --m, --seed and --sigma serve both models: their defaults (the note's) are filled in
    # by gui_params once the model is known
    p.set_defaults(m=None, seed=None, sigma=None)
    g = p.add_argument_group("interference model (with --model interference; --m, --seed and "
                             "--sigma above apply to it too, defaults m=1024, sigma=1)")
    _add_model_options(g, INTERFERENCE_DEFAULTS, None, sweep=False, shared_with_note=True)
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


# --- the interference model: `sweep` and `interference` --------------------------------------
def _add_model_options(g, defaults: dict, paper: dict | None, sweep: bool,
                       shared_with_note: bool = False) -> None:
    """The interference model's options. Defaults are None here and filled in by
    _resolve (so that --paper can supply its own and explicit options still win).
    With shared_with_note (the GUI parser) --m, --seed and --sigma are left out: the
    note's options of the same names serve both models."""
    def dflt(name: str, fmt=str) -> str:
        text = f"default {fmt(defaults[name])}"
        if paper and name in paper and paper[name] != defaults[name]:
            text += f"; --paper: {fmt(paper[name])}"
        return text

    g.add_argument("--n", type=_positive_int, default=None, metavar="N",
                   help=f"features (encodings, rows of W), 1 to 4096 ({dflt('n')})")
    if shared_with_note:
        pass
    elif sweep:
        g.add_argument("--m", default=None, metavar="LIST",
                       help="neurons (columns of W): a list like 64,128,256 or a range "
                            f"start:stop:step with stop included, each 1 to 65536 ({dflt('m')})")
        g.add_argument("--seeds", type=_positive_int, default=None, metavar="S",
                       help=f"runs (seeds) per m ({dflt('seeds')})")
    else:
        g.add_argument("--m", type=_positive_int, default=None, metavar="M",
                       help=f"neurons (columns of W), 1 to 65536 ({dflt('m')})")
    if shared_with_note:
        pass
    elif sweep:
        g.add_argument("--seed", type=_positive_int, default=None, metavar="SEED",
                       help=f"first random seed for W(0) ~ normal(0, sigma/sqrt(m)): each m runs "
                            f"with seeds SEED .. SEED+S-1 ({dflt('seed')})")
    else:
        g.add_argument("--seed", type=_positive_int, default=None, metavar="N",
                       help=f"random seed for W(0) ~ normal(0, sigma/sqrt(m)) ({dflt('seed')})")
    g.add_argument("--steps", type=_positive_int, default=None, metavar="N",
                   help=f"training steps per run ({dflt('steps')})")
    g.add_argument("--optimizer", choices=("adamw", "adam", "gd-zero", "gd"), default=None,
                   help="adamw: torch's AdamW, the paper's; adam: Adam; gd-zero: gradient descent "
                        "with the note's rule that a weight whose step crosses zero is set to "
                        f"zero; gd: plain gradient descent ({dflt('optimizer')})")
    g.add_argument("--l1", type=_number, default=None, metavar="L",
                   help=f"L1 coefficient of the network's loss, 0 to 4; the note's lam = l1/4 "
                        f"({dflt('l1', lambda v: f'{v:g}')})")
    g.add_argument("--lr", type=_number, default=None, metavar="R",
                   help=f"learning rate, > 0 and at most 1; for GD the note's eta = 4 lr, "
                        f"t = 4 lr steps ({dflt('lr', lambda v: f'{v:g}')})")
    if not shared_with_note:
        g.add_argument("--sigma", type=_number, default=None, metavar="S",
                       help=f"W(0) ~ normal(0, sigma/sqrt(m)), > 0 "
                            f"({dflt('sigma', lambda v: f'{v:g}')}, the usual initialisation)")
    g.add_argument("--no-interference", action="store_true",
                   help="drop the interference term: every feature trains alone (the note's model "
                        "n times over)")
    g.add_argument("--weight-decay", type=_number, default=None, metavar="W",
                   help="weight decay: decoupled for adamw, L2 for adam, not used by GD "
                        "(default: torch's, 0.01 for adamw and 0 for adam)")


def _resolve(args: argparse.Namespace, defaults: dict, paper: dict | None = None) -> None:
    base = dict(defaults)
    if paper is not None and getattr(args, "paper", False):
        base.update(paper)
    for name, value in base.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)


def _base_params(args: argparse.Namespace, m: int):
    from sparsity_gui.core.interference.kernels import InterferenceParams

    return InterferenceParams(n=args.n, m=m, l1=args.l1, lr=args.lr, optimizer=args.optimizer,
                              steps=args.steps, seed=args.seed, sigma=args.sigma,
                              interference=not args.no_interference,
                              weight_decay=args.weight_decay)


def build_sweep_parser() -> CleanParser:
    p = CleanParser(prog="sparsity-gui sweep", description=SWEEP_DESCRIPTION,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("model parameters")
    _add_model_options(g, SWEEP_DEFAULTS, PAPER, sweep=True)
    g.add_argument("--paper", action="store_true",
                   help="the paper's settings: n=256, m=256:4096:256, 16 seeds, 7500 steps, adamw, "
                        "l1=lr=1e-3: 256 runs with W up to 256 x 4096, which takes hours (several "
                        "on a two-core laptop; the progress bar shows the time left). Options "
                        "given as well override these")
    r = p.add_argument_group("running")
    r.add_argument("--jobs", type=_positive_int, default=None, metavar="J",
                   help="runs trained side by side, each with one BLAS thread (1 to 64; default: "
                        "the number of cores, at most 8); the results do not depend on it")
    o = p.add_argument_group("output")
    o.add_argument("--out", required=True, metavar="DIR", help="folder to write (must be new or empty)")
    o.add_argument("--force", action="store_true", help="replace a non-empty DIR")
    o.add_argument("--no-figure", action="store_true",
                   help="skip sweep.png and sweep.svg (drawing them needs PySide6 and pyqtgraph)")
    o.add_argument("--resume", action="store_true",
                   help="continue an interrupted sweep in DIR (Ctrl+C or SIGTERM keeps the runs "
                        "that finished): the same options, only the missing runs are trained")
    return p


def sweep_spec_from_args(args: argparse.Namespace):
    """The validated SweepSpec of parsed `sweep` options (defaults and --paper applied)."""
    from sparsity_gui.core.interference.sweep import SweepSpec

    _resolve(args, SWEEP_DEFAULTS, PAPER)
    from sparsity_gui.core.interference.sweep import parse_m_values

    m_values = parse_m_values(str(args.m))
    spec = SweepSpec(base=_base_params(args, m_values[0]), m_values=m_values, seeds=args.seeds)
    if spec.base.seed + spec.seeds - 1 >= 2**63:
        raise InputError("seed", f"seeds {spec.base.seed} .. {spec.base.seed + spec.seeds - 1} "
                         f"go past 2^63-1")
    chosen = args.jobs is not None
    if not chosen:
        from sparsity_gui.core.interference.sweep import default_workers

        args.jobs = default_workers()
    if not 1 <= args.jobs <= 64:
        raise InputError("jobs", f"must be from 1 to 64, got {args.jobs}")
    args.jobs = min(args.jobs, len(spec.runs()))
    spec.check_memory(1)  # the largest run on its own
    while args.jobs > 1:
        try:
            spec.check_memory(args.jobs)
            break
        except InputError:
            if chosen:
                raise InputError("jobs", f"{args.jobs} runs of n = {spec.base.n}, m = "
                                 f"{max(spec.m_values)} side by side do not fit in the memory "
                                 f"available; give fewer --jobs") from None
            args.jobs -= 1  # the default: as many as fit
    return spec


class _Interrupts:
    """Ctrl+C and SIGTERM for `sweep` and `interference`: both raise KeyboardInterrupt,
    except inside ``interrupts_deferred()`` (drawing the figure: an exception raised in a
    Qt paint callback is printed by Qt, not propagated), which raises it on leaving."""

    deferred = False
    pending = False

    @classmethod
    def handler(cls, _signum, _frame) -> None:
        if cls.deferred:
            cls.pending = True
            return
        raise KeyboardInterrupt


@contextlib.contextmanager
def interrupt_handlers() -> Iterator[None]:
    """Ctrl+C and SIGTERM raise KeyboardInterrupt (unless deferred) while inside."""
    import signal

    saved = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            saved.append((sig, signal.signal(sig, _Interrupts.handler)))
        except ValueError:  # not the main thread (called from a test harness)
            pass
    try:
        yield
    finally:
        for sig, old in saved:
            signal.signal(sig, old)


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    outer = _Interrupts.deferred
    _Interrupts.deferred = True
    try:
        yield
    finally:
        _Interrupts.deferred = outer
        if not outer and _Interrupts.pending:
            _Interrupts.pending = False
            raise KeyboardInterrupt


# one Event per worker thread, set when its function has returned. Not Thread.is_alive():
# on Python 3.11 a join interrupted by Ctrl+C or SIGTERM marks the still-running thread as
# stopped (CPython gh-90882), and every later is_alive() and join() believes it.
_WORKERS: list = []


def run_in_worker(fn, stop=None):
    """fn() on a worker thread while the main thread waits, so that Ctrl+C and SIGTERM
    (handled on the main thread only) act at once even while a compiled kernel runs a
    long chunk of steps (the kernels release the GIL). On KeyboardInterrupt ``stop`` is
    set and the interrupt propagates; the daemon worker stops at its next check or dies
    with the process. fn's exception, if any, is raised here."""
    import threading

    result: dict = {}
    ended = threading.Event()

    def target() -> None:
        try:
            result["value"] = fn()
        except BaseException as exc:  # handed to the main thread
            result["error"] = exc
        finally:
            ended.set()

    worker = threading.Thread(target=target, name="sparsity-gui-cli-worker", daemon=True)
    _WORKERS[:] = [e for e in _WORKERS if not e.is_set()]
    _WORKERS.append(ended)
    worker.start()
    try:
        while not ended.wait(0.2):
            pass
    except KeyboardInterrupt:
        if stop is not None:
            stop.set()
        raise
    if "error" in result:
        raise result["error"]
    return result.get("value")


def _leave_if_worker_running(rc: int) -> None:
    """After an interrupt: a worker still inside a compiled kernel (the stop flag acts
    between chunks) would keep the interpreter's shutdown waiting in native code, so the
    process ends at once (the temporary folder is already gone)."""
    running = [e for e in _WORKERS if not e.is_set()]
    for e in running:
        e.wait(0.5)
    if any(not e.is_set() for e in running):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)


def _run_guarded(result_dir, out: str, body) -> int | None:
    """Run body(); on Ctrl+C/SIGTERM, bad input or a write error remove the temporary
    folder and report (130, or one `error:` line and status 2)."""
    try:
        body()
        result_dir.commit()
    except KeyboardInterrupt:
        result_dir.abort()
        sys.stderr.write("\nerror: interrupted; nothing was written\n")
        _leave_if_worker_running(130)
        return 130
    except InputError as exc:
        result_dir.abort()
        fail(str(exc))
    except OSError as exc:
        result_dir.abort()
        fail(f"cannot write results: {exc.strerror or exc} ({exc.filename or out})")
    except BaseException:
        result_dir.abort()
        raise
    return None


def resumed_rows(out: str, spec) -> list:
    """The finished runs of an earlier, interrupted sweep of the same settings in DIR."""
    import json

    from sparsity_gui.core.interference.files import rows_from_csv

    folder = Path(out)
    try:
        meta = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
        rows = rows_from_csv((folder / "sweep.csv").read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError("resume", f"{folder} holds no sweep to resume ({Path(exc.filename).name} "
                         f"is missing)") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError("resume", f"cannot read the sweep in {folder}: {exc}") from None
    if not isinstance(meta, dict) or meta.get("spec") != json.loads(json.dumps(spec.as_dict())):
        raise InputError("resume", f"the sweep in {folder} was run with other settings; give the "
                         f"same options as its command: {meta.get('command_line', '?')}")
    planned = {(p.m, p.seed) for p in spec.runs()}
    if any((r.m, r.seed) not in planned for r in rows):
        raise InputError("resume", f"{folder}/sweep.csv has runs this sweep does not plan")
    return rows


def sweep_command(argv: Sequence[str]) -> int:
    from sparsity_gui.core.files import ResultDir

    args = build_sweep_parser().parse_args(argv)
    try:
        spec = sweep_spec_from_args(args)
        done_rows = resumed_rows(args.out, spec) if args.resume else []
        result_dir = ResultDir(args.out, args.force or args.resume)
    except InputError as exc:
        fail(str(exc))
    runs = spec.runs()
    state: dict = {}
    command_line = shlex.join(["sparsity-gui", "sweep", *argv])

    def body() -> None:
        import threading

        from sparsity_gui.core.interference.sweep import SweepCancelled, run_sweep
        from sparsity_gui.core.interference.files import write_sweep

        progress = Progress(len(runs), "sweep")
        stop = threading.Event()
        cancelled: dict = {}

        def on_progress(pr) -> None:
            if stop.is_set():
                return
            where = f"  m={pr.current.m} seed={pr.current.seed}" if pr.current is not None else ""
            progress.update(pr.done_runs, fraction=pr.fraction, eta=pr.eta_seconds,
                            detail=f"runs {pr.done_runs}/{pr.total_runs}{where}")

        def work():
            try:
                return run_sweep(spec, on_progress=on_progress, should_stop=stop.is_set,
                                 done_rows=done_rows, workers=args.jobs)
            except SweepCancelled as exc:
                cancelled["rows"] = exc.rows
                raise
            finally:
                ended.set()

        ended = threading.Event()
        started = time.perf_counter()
        try:
            rows = run_in_worker(work, stop)
        except KeyboardInterrupt:
            # the workers stop between chunks (about 10 ms): keep the runs that finished.
            # (An Event, not Thread.join: on Python 3.11 a join interrupted by the signal
            # marks the still-running thread as stopped, so a second join returns at once.)
            ended.wait(10.0)
            rows = cancelled.get("rows", [])
            if len(rows) <= len(done_rows):
                raise  # nothing new: leave DIR as it was
            state["interrupted"] = True
        finally:
            progress.close()
        state["rows"] = rows
        state["seconds"] = time.perf_counter() - started
        with interrupts_deferred():  # Qt draws the figure
            write_sweep(result_dir, spec, rows, figures=not args.no_figure,
                        command_line=command_line)

    with interrupt_handlers():
        rc = _run_guarded(result_dir, args.out, body)
    if rc is not None:
        return rc
    if state.get("interrupted"):
        sys.stderr.write(f"\nerror: interrupted; wrote the {len(state['rows'])} of {len(runs)} runs "
                         f"that finished to {args.out} (sweep.json says complete: false); the "
                         f"same command with --resume continues it\n")
        return 130
    from sparsity_gui.core.interference.sweep import summarize

    s = summarize(state["rows"])
    print(f"wrote {args.out}: {len(runs)} runs (n = {spec.base.n}, {len(spec.m_values)} value(s) of m "
          f"x {spec.seeds} seed(s), {spec.base.optimizer}, {spec.base.steps} steps) in "
          f"{format_duration(state['seconds'])} with {args.jobs} job(s)")
    print(f"{'m':>7} {'mean':>9} {'std':>8} {'predicted':>10}   polysemantic neurons")
    for i, m in enumerate(s.m):
        print(f"{int(m):>7} {s.mean[i]:>9.3f} {s.std[i]:>8.3f} {s.predicted[i]:>10.3f}")
    print(f"colliding pairs: {s.opposite_pairs} of opposite sign, {s.same_pairs} of equal sign")
    return 0


def build_interference_parser() -> CleanParser:
    p = CleanParser(prog="sparsity-gui interference", description=INTERFERENCE_DESCRIPTION,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("model parameters")
    _add_model_options(g, INTERFERENCE_DEFAULTS, None, sweep=False)
    o = p.add_argument_group("output")
    o.add_argument("--samples", type=_positive_int, default=501, metavar="K",
                   help="rows in history.csv, at steps round(i*steps/(K-1)) (2 to 1e5; fewer when "
                        "steps < K-1; default 501)")
    o.add_argument("--out", required=True, metavar="DIR", help="folder to write (must be new or empty)")
    o.add_argument("--force", action="store_true", help="replace a non-empty DIR")
    return p


def interference_command(argv: Sequence[str]) -> int:
    from sparsity_gui.core.files import ResultDir

    args = build_interference_parser().parse_args(argv)
    try:
        _resolve(args, INTERFERENCE_DEFAULTS)
        params = _base_params(args, args.m)
        if not 2 <= args.samples <= 10**5:
            raise InputError("samples", f"must be from 2 to 1e5, got {args.samples}")
        from sparsity_gui.core.interference.kernels import check_memory as check_interference_memory

        check_interference_memory(params.n, params.m)
        result_dir = ResultDir(args.out, args.force)
    except InputError as exc:
        fail(str(exc))
    state: dict = {}

    def body() -> None:
        import threading

        from sparsity_gui.core.blas import limit_blas_threads
        from sparsity_gui.core.interference.files import train_sampled, write_interference_run

        limit_blas_threads(1)  # faster than OpenBLAS's pool here, and never collapses (core/blas.py)
        progress = Progress(params.steps, params.optimizer)
        stop = threading.Event()

        def on_step(step: int) -> None:
            if stop.is_set():
                raise KeyboardInterrupt  # ends the worker; the main thread already left
            progress.update(step, detail=f"step {step}/{params.steps}")

        # chunks of about 1e9 multiply-adds: the bar moves at least every second or so
        chunk = max(1, min(250, int(1e9 // (params.n * params.n * params.m + params.n * params.m))))
        started = time.perf_counter()
        try:
            run = run_in_worker(lambda: train_sampled(params, args.samples, on_step=on_step,
                                                      chunk=chunk), stop)
        finally:
            progress.close()
        wall = time.perf_counter() - started
        state["run"] = run
        write_interference_run(result_dir, run, shlex.join(["sparsity-gui", "interference", *argv]), wall)

    with interrupt_handlers():
        rc = _run_guarded(result_dir, args.out, body)
    if rc is not None:
        return rc
    run = state["run"]
    meas = run.measure(with_loss=False)
    print(f"wrote {args.out}: n = {params.n}, m = {params.m}, {run.step} steps ({params.optimizer}), "
          f"{len(run.history)} rows: {meas.polysemantic} polysemantic neuron(s) (predicted "
          f"n^2/(4m) = {params.prediction:.4g}), {meas.active} active weights, colliding pairs "
          f"{meas.opposite_pairs} of opposite / {meas.same_pairs} of equal sign")
    return 0
