"""What the headless commands share: a parser whose errors are one `error:` line and whose
--verbose/--quiet set the messages and the logs, the number parsers, the progress bar,
the worker thread a command runs in, the frame that writes a
command's folder, and the guard that turns failures into exit statuses (a grid of runs:
cli/grid.py; Ctrl+C, SIGTERM and SIGHUP: cli/interrupts.py).

Nothing in cli/ imports Qt at module level: figures are drawn (through plots/) only when
asked for, and the GUI is imported by __main__ only when it is asked for.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TypeVar

from sparsity_gui.cli.interrupts import (
    Interrupted,
    exit_status,
    interrupt_handlers,
    raise_swallowed,
)
from sparsity_gui.core.checks import parse_whole
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import ResultDir
from sparsity_gui.core.settings import Setting
from sparsity_gui.core.text import format_duration, printable

T = TypeVar("T")


log = logging.getLogger("sparsity_gui")
_say = logging.getLogger("sparsity_gui.say")  # what a command tells its user, on stdout


class CleanParser(argparse.ArgumentParser):
    """argparse, but a usage error is one `error:` line and exit status 2; every command
    (and the app) takes --verbose and --quiet, and parsing sets the messages by them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        talk = self.add_argument_group("messages").add_mutually_exclusive_group()
        talk.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="also log what is done, for a developer, and dask.distributed's own log (without "
            "it a cluster that fails the run is one error: line)",
        )
        talk.add_argument("-q", "--quiet", action="store_true", help="print only errors")

    @classmethod
    def for_command(cls, command: str, description: str, epilog: str | None = None) -> CleanParser:
        """The parser of `sparsity-gui COMMAND` (or of the app, ``command`` ""), its
        description as written."""
        return cls(
            prog=f"sparsity-gui {command}".strip(),
            description=description,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            epilog=epilog,
        )

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed = super().parse_args(args, namespace)
        configure_logging(verbose=parsed.verbose, quiet=parsed.quiet)
        return parsed

    def error(self, message: str) -> NoReturn:
        fail(message)

    def _print_message(self, message: str, file=None) -> None:
        # argparse drops an OSError here; a closed stdout under --help must end as every
        # command's does (headless_command: status 141)
        if message:
            (file or sys.stderr).write(message)


class _Lines(logging.Formatter):
    """Lines as the commands have always written them: `warning: …` and `error: …`; with
    --verbose the developer's lines name their module (`debug sparsity_gui.core.blas: …`)."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.levelno >= logging.WARNING:
            return f"{record.levelname.lower()}: {text}"
        return f"{record.levelname.lower()} {record.name}: {text}"


class _CurrentStream(logging.StreamHandler):
    """Writes to sys.stdout or sys.stderr as they are when a line is written (a test's
    capture, a redirect), not as they were when the logs were configured."""

    def __init__(self, which: str):
        self._which = which  # "stdout" or "stderr"
        super().__init__()

    @property
    def stream(self):  # type: ignore[override]
        return getattr(sys, self._which)

    @stream.setter
    def stream(self, _value) -> None:
        pass

    def handleError(self, record: logging.LogRecord) -> None:
        # a closed pipe or terminal must reach headless_command (status 141, quietly), not be
        # printed as logging's own "--- Logging error ---" report
        if isinstance(sys.exc_info()[1], OSError):
            raise
        super().handleError(record)


def configure_logging(verbose: bool = False, quiet: bool = False) -> None:
    """The user's messages (say) go to stdout, the logs to stderr: warnings and errors by
    default, also the developer's info and debug lines with ``verbose``, only errors with
    ``quiet``. Dask's own log (it configures its loggers when first imported) follows:
    its info with ``verbose``, nothing below critical with ``quiet``."""
    level = logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING
    for name, stream, fmt in ((log.name, "stderr", _Lines()), (_say.name, "stdout", None)):
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if isinstance(h, _CurrentStream)]:
            logger.removeHandler(old)
        handler = _CurrentStream(stream)
        if fmt is not None:
            handler.setFormatter(fmt)
        logger.addHandler(handler)
        logger.propagate = False
    log.setLevel(level)
    _say.setLevel(logging.ERROR if quiet else logging.INFO)
    if verbose or quiet:
        os.environ["DASK_LOGGING__DISTRIBUTED"] = "info" if verbose else "critical"
        if "distributed" in sys.modules:  # already imported: its loggers are set up
            logging.getLogger("distributed").setLevel(logging.INFO if verbose else logging.CRITICAL)


def say(text: str) -> None:
    """Tell the user (stdout): a command's summary. Nothing with --quiet."""
    _say.info(text)


def fail(message: str) -> NoReturn:
    # one line, and never the terminal's escapes a file or a library put in the message
    sys.stderr.write(f"error: {printable(str(message))}\n")
    raise SystemExit(2)


def figures_kept_apart(folder: Path, draw: Callable[[], object], failures: list[str]) -> None:
    """``draw()`` the figures into ``folder`` after the data are written: a drawing that
    fails (a style matplotlib chokes on after all) removes the figures and is kept in
    ``failures`` as one line, not a lost run. A write error or an interrupt still ends the
    command as any other does."""
    import shutil

    try:
        draw()
    except (KeyboardInterrupt, SystemExit, OSError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - whatever matplotlib raised, said in one line
        shutil.rmtree(folder, ignore_errors=True)
        failures.append(f"{type(exc).__name__}: {exc}")


def report_figure_failures(failures: list[str], out: str) -> None:
    """The one `error:` line (status 2) of figures that could not be drawn, if any."""
    if failures:
        fail(f"the figures could not be drawn ({failures[0]}); the data are in {out}, without figures/")


def add_output_options(group) -> None:
    """--out DIR and --force, as every headless command takes them (see write_headless)."""
    group.add_argument("--out", required=True, metavar="DIR", help="folder to write (must be new or empty)")
    group.add_argument("--force", action="store_true", help="replace a non-empty DIR")


def add_output_group(parser: argparse.ArgumentParser, default_samples: int, samples_help: str):
    """The "output" option group, starting with --samples K (the rows of the run's time
    series: ``samples_help`` says which and where)."""
    group = parser.add_argument_group("output")
    group.add_argument("--samples", type=whole_arg, default=default_samples, metavar="K", help=samples_help)
    return group


def add_figure_options(group) -> None:
    """--style and --dpi of the figures a command writes (sparsity_gui/figures)."""
    group.add_argument(
        "--style",
        default=None,
        metavar="FILE",
        help="the figures' style: paper (the default: 3.5 in wide, 8 pt text, thin lines, "
        "colour-blind-safe colours), talk (larger text and lines, for slides) or a matplotlib "
        ".mplstyle FILE, applied on top of the paper style",
    )
    add_dpi_option(group)
    add_formats_option(group)


def formats_arg(text: str) -> tuple[str, ...]:
    """argparse type of --formats: figures/save.py's one check of the figure formats."""
    from sparsity_gui.figures.save import figure_formats

    try:
        return figure_formats(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def add_formats_option(group) -> None:
    """--formats: which of PNG, SVG and PDF the figures are written in (their scripts
    write the same)."""
    from sparsity_gui.figures.save import FORMATS, FORMATS_WORDS

    group.add_argument(
        "--formats",
        type=formats_arg,
        default=FORMATS,
        metavar="LIST",
        help=f"the figures' file formats: {FORMATS_WORDS}; each figure's script writes the same "
        "(default png,svg,pdf)",
    )


def add_dpi_option(group) -> None:
    """--dpi: the PNG figures' resolution, checked by figure_style_from_args."""
    group.add_argument(
        "--dpi",
        type=whole_arg,
        default=None,
        metavar="N",
        help="the PNG figures' resolution (50 to 1200; default 300)",
    )


def figure_style_from_args(args) -> tuple[str | None, int]:
    """(style, dpi) of --style and --dpi, checked before anything runs: a style file that
    cannot be read is an InputError naming it."""
    from sparsity_gui.figures.style import DEFAULT_DPI, STYLES, style_params

    if args.style is not None and args.style not in STYLES:
        style_params(args.style)
    if getattr(args, "movie", None):
        from sparsity_gui.figures.style import movie_style_params

        movie_style_params(args.style)
    dpi = DEFAULT_DPI if args.dpi is None else args.dpi
    if not 50 <= dpi <= 1200:
        raise InputError("dpi", f"must be from 50 to 1200, got {dpi}")
    return args.style, int(dpi)


def setting_help(setting: Setting, what: str, default: str | None = None, more: str = "") -> str:
    """An option's help with its setting's bounds and default from the model's settings
    table, as the refusal and the names write them: 'what (from 0 to 1; default 1.0e-3)'.
    ``default``: the option's own default where it is not the table's; ``more``: after it."""
    return f"{what} ({setting.accepts(default, more)})".replace("%", "%%")


def whole_arg(text: str) -> int:
    """argparse type: a whole number ('250', '1e6'); its range is checked later, with the
    other parameters."""
    try:
        return parse_whole(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def number_arg(text: str) -> float:
    """argparse type: any float (inf and nan are refused later, naming the option)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


class Progress:
    """The progress bar of a headless command, drawn by tqdm on stderr: only on a terminal,
    only once the command has taken more than a second (SPARSITY_GUI_PROGRESS_AFTER, in
    seconds, changes that: tests set 0), with the time elapsed and the time left.

    ``update(done, total)`` moves it (``total`` may change between calls: a sweep passes
    the share of its cost done out of 1.0). ``detail`` is shown before the percentage;
    ``eta`` (seconds) replaces the estimate done/elapsed when the caller knows better."""

    MIN_INTERVAL = 0.1  # seconds between redraws

    def __init__(self, total: float, label: str):
        try:
            after = float(os.environ.get("SPARSITY_GUI_PROGRESS_AFTER", "1"))
        except ValueError:
            after = 1.0
        self._after = after if math.isfinite(after) else 1.0
        self._bar = _progress_bar(total, label, self._after)
        self._started = time.monotonic()
        self._shown = False

    def update(
        self, done: float, total: float | None = None, *, detail: str = "", eta: float | None = None
    ) -> None:
        bar = self._bar
        if bar.disable:  # not a terminal, or closed
            return
        if total is not None:
            bar.total = max(total, 1e-300)
        bar.detail, bar.eta = detail, eta
        try:
            bar.update(min(max(done, 0), bar.total) - bar.n)
            if not self._shown and time.monotonic() - self._started >= self._after:
                # the first update past the delay is drawn: tqdm skips one within 0.1 s of
                # the start, and a run of few samples makes its next only at its end
                bar.refresh()
                self._shown = True
        except OSError:  # the terminal is gone (closed: SIGHUP follows): draw no more
            bar.disable = True

    def close(self) -> None:
        """End the line (if the bar was shown at all; not on a terminal that is gone, where
        it would raise over the cleanup of an interrupt)."""
        with contextlib.suppress(OSError):
            self._bar.close()


def _progress_bar(total: float, label: str, after: float):
    """A tqdm bar with the line the commands have always shown:
    ``label [####      ] detail  42.0%  12 s elapsed, about 17 s left``."""
    import threading

    from tqdm import tqdm

    class Bar(tqdm):
        monitor_interval = 0  # no monitor thread: redraws happen in update()
        # a thread lock: tqdm's default also makes a multiprocessing lock, which fixes the
        # process's multiprocessing start method as a side effect
        _lock = threading.RLock()
        detail = ""
        eta: float | None = None

        @property
        def format_dict(self):
            d = super().format_dict
            elapsed, done, total = d["elapsed"], d["n"], d["total"] or 1
            eta = self.eta
            if eta is None:  # from the rate since the start, as tqdm's own {remaining}
                worked = done - d["initial"]
                eta = (total - done) * elapsed / worked if worked > 0 and elapsed > 0 else math.nan
            return {
                **d,
                "detail": f"{self.detail}  " if self.detail else "",
                "elapsed_text": format_duration(elapsed),
                "left": format_duration(eta),
            }

    bar = Bar(
        total=max(total, 1),
        desc=label,
        file=sys.stderr,
        disable=None,  # tqdm: off unless the file is a terminal
        delay=max(after, 0.0),
        mininterval=Progress.MIN_INTERVAL,
        smoothing=0,  # the average rate since the start, not the recent one
        ascii=" #",
        dynamic_ncols=True,  # trimmed to the terminal's width, as it is now
        bar_format="{desc} [{bar:30}] {detail}{percentage:5.1f}%  {elapsed_text} elapsed, about {left} left",
    )
    if getattr(bar, "ncols", None) is not None and bar.ncols < 1:  # (a disabled bar has none)
        # a terminal that reports no size (a bare pseudo-terminal): tqdm would hide the bar
        bar.dynamic_ncols = False
        bar.ncols = bar.nrows = None
    return bar


def say_error(text: str) -> None:
    """A line on stderr that may have nowhere to go (the terminal closed: SIGHUP, or a
    closed pipe): then it is dropped rather than raised over the cleanup."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def headless_command(
    load: Callable[[], Callable[[Sequence[str]], int]], argv: Sequence[str], whole_process: bool = False
) -> int:
    """A headless command (``load()`` imports it) from its first line to its last: SIGINT,
    SIGTERM and SIGHUP handled from the start (while modules load and the arguments and
    input files are read, too), and a closed stdout (``| head``) or stderr ending it quietly
    once its files are written. A worker an interrupt left behind (a grid's run that could
    not stop) does not hold up the end (_leave_if_worker_running). With ``whole_process``
    (the command is the process: not a call from Python) an interrupted command, once it has
    cleaned up, ends the process at once: the interpreter's own shutdown (numba's and
    llvmlite's modules, the collection of every object) took seconds on a loaded machine."""
    _COMMITTED.clear()
    try:
        try:
            with interrupt_handlers():
                try:
                    status = load()(argv)
                except Interrupted as exc:  # before DIR was begun, or while the summary prints
                    done = f"{_COMMITTED[-1]} was written" if _COMMITTED else "nothing was written"
                    say_error(f"\nerror: interrupted; {done}\n")
                    status = exc.status
        finally:
            sys.stdout.flush()  # here (--help's text too), not at exit, where it cannot be handled
    except BrokenPipeError:
        status = closed_pipe_status()
    except SystemExit as exc:  # write_headless's interrupt or error, argparse's --help
        if not (whole_process and isinstance(exc.code, int) and exc.code > 128):
            raise
        status = exc.code
    _leave_if_worker_running(status)
    if whole_process and status > 128 and status != SIGPIPE_STATUS:
        _end_process(status)
    return status


def _end_process(status: int) -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(status)


_COMMITTED: list[str] = []  # the DIR a command has committed (its summary may still print)


def parse_args_quietly(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """parser.parse_args(argv), its --help and --version text into a closed stdout ending
    the process quietly with status 141, as a headless command's (closed_pipe_status)."""
    try:
        try:
            return parser.parse_args(argv)
        finally:
            sys.stdout.flush()
    except BrokenPipeError:
        raise SystemExit(closed_pipe_status()) from None


# a process killed by SIGPIPE reports this status to its shell (a plain `yes | head -0`)
SIGPIPE_STATUS = 141


def closed_pipe_status() -> int:
    """The reader of stdout (or stderr) went away. What the command wrote is written and
    committed already (it prints only after its files are in place); the rest of its text
    is dropped, as a Unix tool killed by SIGPIPE drops it, with the status such a tool gets
    (141 = 128 + SIGPIPE). stdout and stderr are pointed at /dev/null so that Python's flush
    at exit has nothing to complain about."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    os.close(devnull)
    return SIGPIPE_STATUS


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


def write_headless(out: str, replace: bool, body: Callable[[ResultDir], T]) -> T:
    """The frame of every headless command: DIR made new (or, with ``replace``, emptied),
    ``body(result_dir)`` writing into its temporary folder with SIGINT, SIGTERM and SIGHUP
    handled, and DIR committed at once. Bad input, an output location that cannot be used
    (checked before ``body`` runs) or a write error (naming the file and the reason): the
    temporary folder removed, DIR as it was, one `error:` line, status 2. An interrupt:
    nothing written, status 130, 143 or 129 (SystemExit)."""
    with interrupt_handlers():  # from before the temporary folder exists
        try:
            result_dir = ResultDir(out, replace)
        except InputError as exc:
            fail(str(exc))
        started = time.perf_counter()
        log.debug(f"command: {' '.join(sys.argv)}; writing {out} through a temporary folder")
        try:
            value = body(result_dir)
            raise_swallowed()  # a signal whose exception went nowhere
            result_dir.commit()
            _COMMITTED.append(out)
            log.info(f"{out} written in {time.perf_counter() - started:.3f} s")
        except KeyboardInterrupt as exc:
            result_dir.abort()
            say_error("\nerror: interrupted; nothing was written\n")
            _leave_if_worker_running(exit_status(exc))
            raise SystemExit(exit_status(exc)) from None
        except InputError as exc:
            result_dir.abort()
            fail(str(exc))
        except OSError as exc:  # a full disk, a file size limit, DIR taken meanwhile, ...
            result_dir.abort()
            fail(f"{result_dir.describe(exc)}; nothing was written")
        except BaseException:
            result_dir.abort()
            raise
    return value
