"""The solvers for notebooks and scripts, without Qt: ``simulate`` (the note's model),
``scaling`` (the note's constants across m and lam), ``train`` (one run of the interference
model) and ``sweep`` (polysemantic neurons against m). Keyword arguments carry the CLI's
option names (``--t-end`` is ``t_end``, ``--no-interference`` is ``no_interference``) and
defaults; a bad one raises ValueError (``sparsity_gui.core.errors.InputError``) with the
message the CLI prints after ``error:``, as both check their arguments in the same place
(core/*/headless.py).

Units: the note's model runs in its own time ``t`` (W' = (1 - |W|^2) W - lam sign(W));
gradient descent (``method="gd"``) takes steps of ``eta`` in that time, t = eta * step.
The interference model takes the network's units: the loss's L1 coefficient ``l1`` and
the learning rate ``lr``, per step. Its gradient divided by 4 is the note's flow plus
interference, so the note's lam = l1/4 and, for plain gradient descent, eta = 4 lr and
t = 4 lr * steps.

Each call returns a result whose arrays are numpy arrays. ``to_pandas()`` gives its main
table as a DataFrame when pandas is installed (it is not a dependency), and
``save(dir)`` writes the files the CLI command with the same options writes, with the
same digits, into a new or empty folder (atomically: all of it or nothing), recording
that command line in its metadata.

>>> from sparsity_gui import api
>>> run = api.simulate(m=1000, lam=1e-3, seed=0)
>>> run.nonzero_final
1
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import operator
import os
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sparsity_gui.core.files import ResultDir

if TYPE_CHECKING:
    import pandas
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from sparsity_gui.core.cluster import Scheduler
    from sparsity_gui.core.interference.params import InterferenceParams
    from sparsity_gui.core.interference.run import InterferenceRun
    from sparsity_gui.core.interference.sweep import SweepRow, SweepSpec
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.core.note.sampled import SampledRun
    from sparsity_gui.core.note.scaling import ScalingGrid, ScalingRow

__all__ = [
    "ScalingResult",
    "SimulationResult",
    "SweepResult",
    "TrainingResult",
    "scaling",
    "simulate",
    "sweep",
    "train",
]

Schedule = Sequence[tuple[float, Mapping[str, "float | str"]]]


# --- what every result shares ---------------------------------------------------------------
class _Result:
    """A finished run: arrays as numpy, ``to_pandas()``, ``save(dir)``.

    A new kind of result (e.g. the scaling sweep) names its CLI command, keeps the options
    it was called with, and says how to write its files and what its table is."""

    command: str  # the CLI command whose files save() writes
    options: dict[str, Any]  # the options given that differ from the defaults, in order

    def command_line(self, out: str | Path, save_options: Mapping[str, Any] | None = None) -> str:
        """The CLI command that writes the same files into ``out`` (with save()'s options)."""
        argv = _argv({**self.options, **(save_options or {})})
        return shlex.join(["sparsity-gui", self.command, *argv, "--out", str(out)])

    def save(self, out: str | Path, *, force: bool = False) -> Path:
        """Write the result files into the folder ``out`` (new or empty; ``force``
        replaces a non-empty one), atomically. Returns its path. Raises ValueError for an
        output location that cannot be used and OSError (naming the file) for a failed
        write; either way nothing is left behind."""
        return self._save(out, force)

    def _save(
        self,
        out: str | Path,
        force: bool,
        save_options: Mapping[str, Any] | None = None,
        **write_options: Any,
    ) -> Path:
        result_dir = ResultDir(out, force)
        try:
            self._write(result_dir, self.command_line(out, save_options), **write_options)
            result_dir.commit()
        except BaseException:
            result_dir.abort()
            raise
        return result_dir.out

    def _write(self, result_dir: ResultDir, command_line: str, **write_options: Any) -> None:
        raise NotImplementedError

    def _summary(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:  # short: a notebook shows it after each call
        return f"<{type(self).__name__} {self._summary()}; files as: {self.command_line('DIR')}>"

    def _table(self) -> tuple[Sequence[str], np.ndarray | dict[str, np.ndarray]]:
        raise NotImplementedError

    def to_pandas(self) -> pandas.DataFrame:
        """The result's main table as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas
        except ImportError:
            raise ImportError(
                "to_pandas() needs pandas, which sparsity-gui does not install: pip install pandas"
            ) from None
        columns, data = self._table()
        if isinstance(data, dict):
            return pandas.DataFrame({name: data[name] for name in columns})
        return pandas.DataFrame(data, columns=list(columns))


def _given(fn: Callable[..., Any], values: dict[str, Any]) -> dict[str, Any]:
    """The arguments of ``fn`` that differ from its defaults (the CLI's), in its order."""
    params = inspect.signature(fn).parameters
    return {
        name: values[name]
        for name, p in params.items()
        if name in values and not _same(values[name], p.default)
    }


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def _api_call(
    fn: str,
    options: Mapping[str, Any],
    out: str | Path,
    save_options: Mapping[str, Any] | None,
    array_note: str,
) -> str:
    """The Python call that makes a result's files when no CLI command can (a W(0) array,
    live changes): the options as Python, an array by its dtype and shape and ``array_note``."""
    args = ", ".join(
        f"{k}=<{v.dtype} array {' x '.join(map(str, v.shape))}{array_note}>"
        if isinstance(v, np.ndarray)
        else f"{k}={v!r}"
        for k, v in options.items()
    )
    saving = "".join(f", {k}={v!r}" for k, v in (save_options or {}).items())
    return f"sparsity_gui.api.{fn}({args}).save({str(out)!r}{saving})"


def _argv(options: dict[str, Any]) -> list[str]:
    """The CLI options of ``options``: every value as the text that reads back as it."""
    argv: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif isinstance(value, float):
            argv += [flag, repr(value)]  # the shortest text that reads back bit for bit
        elif isinstance(value, (list, tuple)):
            argv += [flag, ",".join(str(v) for v in value)]
        else:
            argv += [flag, str(value)]
    return argv


def _whole(value: Any) -> Any:
    """A whole number as an int, as the CLI reads '1e6' (1e6, np.int64(5) -> int); any other
    value unchanged, for the checks to name."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        return value


def _path(value: Any) -> str:
    """A file's path as text (a str or a pathlib.Path); anything else refused, naming w0."""
    if isinstance(value, (str, os.PathLike)):
        return str(os.fspath(value))
    from sparsity_gui.core.errors import InputError

    raise InputError("w0", f"must be a file's path or a numpy array, got {type(value).__name__}")


def _number(value: Any) -> Any:
    """numpy floats and ints as Python floats (as the CLI reads its text); others unchanged."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return value


# --- the note's model -----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class SimulationResult(_Result):
    """A run of the note's model (``sparsity-gui run``).

    ``timeseries``: a row per sample time, columns ``columns`` (``t`` in the note's time,
    ``norm2_sq`` = |W|^2, ``norm1`` = |W|_1, ``nonzero`` = m', ...; timeseries.csv's).
    ``w0`` and ``w_final``: W(0) and W(t_end), signed, in input order. ``deaths``: the
    input index ``k``, ``u`` = |W_k(0)| and ``t_death`` of each weight that died, in order
    of death. ``t_one``: when one weight was left (NaN if not by t_end). ``fitted_c``
    (rows with m' >= 2), ``fitted_c_bulk`` (rows with m' >= 10: the bulk decay, the
    constant to quote) and ``fit_max_rel_dev`` (max |1/(w(0) + c lam t) - |W|_1| / |W|_1
    over fitted_c's rows), NaN with a reason in ``fit_flags`` where there is no c;
    ``regime``: run.json's (lam |W(0)|_1, whether the balance is possible, |W(0)|^2,
    whether theta rises, and the values at each live change of lam)."""

    params: SimParams
    schedule: tuple[tuple[float, str, float | str], ...]  # (t, name, value) of each live change
    columns: tuple[str, ...]
    timeseries: np.ndarray
    w0: np.ndarray
    w_final: np.ndarray
    deaths: dict[str, np.ndarray]
    t_end: float
    t_one: float
    fitted_c: float
    nonzero_final: int
    run: SampledRun = dataclasses.field(repr=False)
    options: dict[str, Any] = dataclasses.field(repr=False)
    # the bulk constant (rows with m' >= 10), the law's largest relative deviation on fitted_c's
    # rows, what is wrong with either (NaN and a flag where there is no c), and the regime
    fitted_c_bulk: float = math.nan
    fit_max_rel_dev: float = math.nan
    fit_flags: tuple[str, ...] = ()
    regime: dict[str, Any] = dataclasses.field(default_factory=dict)
    command = "run"

    def command_line(self, out: str | Path, save_options: Mapping[str, Any] | None = None) -> str:
        if not self.schedule and not isinstance(self.options.get("w0"), np.ndarray):
            return super().command_line(out, save_options)
        # no CLI option takes live changes or an array
        return _api_call("simulate", self.options, out, save_options, ": W(0) is the w0 of the weights file")

    def save(
        self, out: str | Path, *, force: bool = False, format: str = "auto", no_weights: bool = False
    ) -> Path:
        """timeseries.csv, weights.csv (unless ``no_weights``), deaths.csv and run.json
        into ``out`` (``format="npz"``: weights.npz and deaths.npz; "auto", the default:
        CSV up to m = 10^6, .npz above), as `run --out DIR` with the same options. See
        _Result.save."""
        from sparsity_gui.core.note.headless import check_format

        check_format(format)
        given = {"format": format, "no_weights": no_weights}
        save_options = {
            k: v for k, v in given.items() if not _same(v, {"format": "auto", "no_weights": False}[k])
        }
        return self._save(out, force, save_options, fmt=format, include_weights=not no_weights)

    def _write(self, result_dir: ResultDir, command_line: str, **write_options: Any) -> None:
        from sparsity_gui.core.note.files import write_results
        from sparsity_gui.core.note.session import W0Source

        w0 = self.options.get("w0")
        source = None
        if w0 is not None:  # a file (as `run --w0` records it) or an array given to simulate()
            kind, path = ("array", None) if isinstance(w0, np.ndarray) else ("file", str(w0))
            source = W0Source(kind, path, self.options.get("w0_tensor"), self.options.get("w0_row"))
        write_results(
            result_dir, self.run, self.params, command_line=command_line, source=source, **write_options
        )

    def _table(self) -> tuple[Sequence[str], np.ndarray]:
        return self.columns, self.timeseries

    def plot(self, panel: str, ax: Axes | None = None, style: str | os.PathLike | None = None) -> Figure:
        """One of the window's panels, drawn by matplotlib as `run --figures` draws it:
        ``panel`` is weights_sorted, threshold_crossing, norm_balance, l1_decay,
        relative_variance, sparsity_force, phase_plane or layout (all six of the grid).
        Without ``ax``: a new Figure at a journal's column width in ``style`` ("paper",
        the default, "talk" or a .mplstyle file). With ``ax``: drawn into it (a panel of
        two sub-plots splits its place), in the current rcParams; its Figure is returned."""
        from sparsity_gui.core.errors import InputError
        from sparsity_gui.figures.note import (
            PANELS,
            fit_constants,
            note_figure,
            panel_data,
            run_snapshot,
        )

        names = [*PANELS, "layout"]
        if panel not in names:
            raise InputError("panel", f"must be one of {', '.join(names)}, got {panel!r}")
        data = panel_data(run_snapshot(self.run), fit=fit_constants(self.run))
        if ax is None:
            return note_figure(panel, data, style=style)
        if panel == "layout":
            raise InputError("panel", "the layout is a figure of its own: call plot('layout') without ax")
        PANELS[panel](ax.figure, data[panel], ax=ax)
        return ax.figure

    def movie(
        self,
        path: str | Path,
        *,
        panel: str = "layout",
        seconds: float = 10.0,
        fps: int = 30,
        spacing: str = "linear",
        t_range: tuple[float, float] | None = None,
        style: Any = None,
        width: str = "single",
        dpi: float = 150,
        format: str | None = None,
    ) -> Path:
        """A movie of the run, as `run --movie PANEL` writes it: frame k is the figure of
        ``panel`` (a panel name of plot(), or "layout") at simulated time t_k, the run
        replayed to stop exactly there (gradient descent: the step at or before t_k), a
        time stamp below. ``seconds`` x ``fps`` frames at times evenly (``spacing=
        "linear"``) or log-spaced from t = 0 (or t_range[0]) to the end; MP4 (H.264,
        yuv420p) or GIF by the path's suffix or ``format``; as wide as the style's figure
        at ``dpi``. Written atomically. Needs the [movie] extra (PyAV): without it,
        MovieExtraMissing, an ImportError naming it. Returns the path."""
        from sparsity_gui.figures.movie import movie_format, movie_settings, require_encoder
        from sparsity_gui.figures.note_movie import write_note_movie

        require_encoder()
        settings = movie_settings(seconds, fps, spacing, movie_format(path, format), dpi)
        script = self.run.sim.script(self.t_end, len(self.timeseries))
        write_note_movie(path, script, panel, settings, t_range, style, width)
        return Path(path)

    def _summary(self) -> str:
        p = self.params
        return (
            f"m={p.m} lam={p.lam:g} {p.method}: {self.nonzero_final} nonzero weight(s) at "
            f"t={self.t_end:.6g}, fitted c={self.fitted_c:.4g}, bulk c={self.fitted_c_bulk:.4g}"
        )


def simulate(
    *,
    m: int = 1000,
    lam: float = 1e-3,
    sigma: float = 0.9,
    seed: int = 0,
    w0: str | os.PathLike[str] | np.ndarray | None = None,
    w0_row: int | None = None,
    w0_tensor: str | None = None,
    method: str = "exact",
    eta: float = 0.05,
    t_end: float | None = None,
    samples: int = 501,
    schedule: Schedule = (),
) -> SimulationResult:
    """Run the note's model, W' = (1 - |W|^2) W - lam sign(W), from W(0) ~ normal(0,
    sigma/sqrt(m)) drawn with ``seed`` (or the weights in the file ``w0``: .npy, .npz,
    .safetensors, a PyTorch state_dict if torch is installed, or text; its tensor or array
    ``w0_tensor`` and row ``w0_row`` of a matrix), as ``sparsity-gui run`` does. ``w0``
    may also be a numpy array (a vector, or a matrix with ``w0_row``), checked as a file's
    array is; m is its length, and save() records this call (W(0) is the weights file's
    w0 column).

    ``lam``: the L1 strength, 0 to 1 (the interference model's l1 = 4 lam). ``method``:
    "exact" (the flow, solved exactly) or "gd" (gradient descent with step ``eta`` in the
    note's time: t = eta * step). ``t_end``: the end, in the note's time (default: when one
    weight is left, plus 10 %). ``samples``: rows of the time series, at t = i t_end/(K-1).

    ``schedule``: live changes of lam, eta or method during the run, as the window's
    sessions record them: ``[(t, {"lam": 2e-3}), (t2, {"method": "gd", "eta": 0.1})]``,
    times in order from 0 to ``t_end`` (which a schedule needs). A change at a sample's
    time comes before that sample. The CLI has no such option: save() then records this
    call instead of a command line."""
    from sparsity_gui.core.note.files import death_columns
    from sparsity_gui.core.note.headless import run_settings, scheduled_run
    from sparsity_gui.core.note.metrics import COLUMNS
    from sparsity_gui.core.note.sampled import simulate_samples

    values = dict(
        m=_whole(m),
        lam=_number(lam),
        sigma=_number(sigma),
        seed=_whole(seed),
        w0=w0 if w0 is None or isinstance(w0, np.ndarray) else _path(w0),
        w0_row=None if w0_row is None else _whole(w0_row),
        w0_tensor=w0_tensor,
        method=method,
        eta=_number(eta),
        t_end=None if t_end is None else _number(t_end),
        samples=_whole(samples),
    )
    params, weights = run_settings(**values, scheduled=bool(schedule))
    if schedule:
        run = scheduled_run(params, weights, schedule, values["samples"])
    else:
        run = simulate_samples(params, weights, values["samples"])
    options = _given(simulate, values)
    if schedule:
        options["schedule"] = [(c.t, {c.name: c.value}) for c in run.sim.changes]
    sim = run.sim
    k, u, t_death = (col.copy() for col in death_columns(sim))  # the result's own arrays
    return SimulationResult(
        params=params,
        schedule=tuple((c.t, c.name, c.value) for c in sim.changes),
        columns=tuple(COLUMNS),
        timeseries=run.rows[:, : len(COLUMNS)].copy(),
        w0=sim.init.w0.copy(),
        w_final=sim.solver.weights(),
        deaths={"k": k, "u": u, "t_death": t_death},
        t_end=run.t_end,
        t_one=run.t_one,
        fitted_c=run.fitted_c,
        nonzero_final=run.nonzero_final,
        run=run,
        options=options,
        fitted_c_bulk=run.fit.c_bulk,
        fit_max_rel_dev=run.fit.max_rel_dev,
        fit_flags=run.fit.flags,
        regime=run.regime,
    )


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ScalingResult(_Result):
    """The note's constants across m and lam (``sparsity-gui scaling --no-figure``;
    ``plot()`` draws its figures).

    ``rows``: a column per field of scaling.csv, a row per run in its order (m, then lam,
    then seed), as numpy arrays: ``t_one`` (when one weight is left, in the note's time),
    ``lam_t_one`` = lam t_one, ``fitted_c`` (m' >= 2), ``fitted_c_bulk`` (m' >= 10),
    ``fit_max_rel_dev``, ``rel_var_mean``/``_min``/``_max``, ``balance_ratio``, ``w_last``,
    ``w_last_root`` (the stable root of (1 - w^2) w = lam), ``lam_norm1_0``, ``norm2_w0``,
    ``balance_possible`` (lam |W(0)|_1 <= 1/4), ``theta_rises`` (|W(0)|^2 < 1), ``sigma``,
    ``t_end`` and ``seconds`` (wall time of the run).
    ``m``, ``lam``, ``runs``: one entry per (m, lam), ordered by m, then lam; ``mean`` and
    ``std``: {column: array over those (m, lam)} of the mean and sample standard deviation
    over the seeds of each column of scaling.json's summary (NaN values left out).
    ``jobs``: the runs solved side by side here; on a cluster None, and ``scheduler``
    where they ran (str() gives its address or local:N; None: this machine's threads)."""

    grid: ScalingGrid
    rows: dict[str, np.ndarray]
    m: np.ndarray
    lam: np.ndarray
    runs: np.ndarray
    mean: dict[str, np.ndarray]
    std: dict[str, np.ndarray]
    jobs: int | None
    scheduler: Scheduler | None
    scaling_rows: tuple[ScalingRow, ...] = dataclasses.field(repr=False)
    options: dict[str, Any] = dataclasses.field(repr=False)
    command = "scaling"

    def save(self, out: str | Path, *, force: bool = False) -> Path:
        """scaling.csv and scaling.json into ``out``, as `scaling --no-figure --out DIR`
        with the same options (no figures: ``plot()`` draws them). See _Result.save."""
        return self._save(out, force)

    def _write(self, result_dir: ResultDir, command_line: str, **write_options: Any) -> None:
        from sparsity_gui.core.note.files import write_scaling

        write_scaling(
            result_dir,
            self.grid,
            list(self.scaling_rows),
            command_line=command_line,
            scheduler=self.scheduler,
        )

    def _table(self) -> tuple[Sequence[str], dict[str, np.ndarray]]:
        return tuple(self.rows), self.rows

    def plot(self, panel: str = "lam_t_one", ax: Axes | None = None, style: Any = None) -> Figure:
        """One scaling figure against m, as `scaling` draws it into DIR/figures/:
        ``lam_t_one`` (λ·T), ``fitted_c`` or ``rel_var``. A new
        ``matplotlib.figure.Figure``, or drawn in place of ``ax``. ``style``: "paper" (the
        default), "talk", a dict of rcParams or a .mplstyle path."""
        from sparsity_gui.figures.scaling import FIGURES, scaling_data, scaling_panel
        from sparsity_gui.figures.scripted import panel_named, plot_panel

        panel_named(FIGURES, panel)
        data = scaling_data(self.scaling_rows, panel, self.grid.m_values, self.grid.lam_values)
        return plot_panel(scaling_panel, data, ax, style)

    def _summary(self) -> str:
        g = self.grid
        return (
            f"{len(g.m_values)} value(s) of m x {len(g.lam_values)} of lam x {g.seeds} seed(s), "
            f"lam*t_one from {np.nanmin(self.mean['lam_t_one']):.4g} "
            f"to {np.nanmax(self.mean['lam_t_one']):.4g}"
        )


def scaling(
    *,
    m: str | Sequence[int],
    lam: str | Sequence[float],
    seeds: int = 3,
    seed: int = 0,
    sigma: float = 0.9,
    jobs: int | None = None,
    scheduler: str | None = None,
) -> ScalingResult:
    """Run the note's model with the exact solver for every m, lam and seed (``seed`` ..
    ``seed + seeds - 1``, the same W(0) ~ normal(0, sigma/sqrt(m)) for every lam at one m)
    to one weight left, each run reduced to a row, as ``sparsity-gui scaling --no-figure``
    does: each row is `run --m m --lam lam --seed s --sigma sigma` (its t_one and fitted c
    to the last digit).

    ``m``: a list of values, or the CLI's text ("1e3,1e4,1e5", "10^3,10^4" or
    "start:stop:step", stop included), each 1 to 1e8. ``lam``: a list, or the CLI's text
    ("1e-4,1e-3"): the note's L1 strength, > 0 and at most 1 (the interference model's
    l1 = 4 lam). Times (``t_one``, ``t_end``) are the note's time t. ``jobs``: runs side by
    side in threads, 1 to 64 (default: one per core up to 8, fewer if they do not fit in
    memory); the results do not depend on it. ``scheduler``: solve each run as a task on a
    dask.distributed cluster instead (the extra ``pip install 'sparsity-gui[cluster]'``):
    the address of a running scheduler, "tcp://HOST:PORT", or "local:N" to start N worker
    processes on this machine for this call; the rows are the same digit for digit (all
    but ``seconds``). Ctrl+C (KeyboardInterrupt) stops every run within milliseconds
    (drawing W(0) at large m excepted; a cluster's tasks are cancelled) and raises;
    nothing is kept."""
    from sparsity_gui.core.cluster import parse_scheduler
    from sparsity_gui.core.note.headless import scaling_settings
    from sparsity_gui.core.note.scaling import ROW_COLUMNS, SUMMARY_COLUMNS, run_scaling, summarize

    def as_list(values: Any, item: Callable[[Any], Any]) -> Any:
        if isinstance(values, (list, tuple, range, np.ndarray)):
            return [item(v) for v in values]
        return values

    values = dict(
        m=as_list(m, _whole),
        lam=as_list(lam, _number),
        seeds=_whole(seeds),
        seed=_whole(seed),
        sigma=_number(sigma),
        jobs=None if jobs is None else _whole(jobs),
        scheduler=scheduler,
    )
    cluster = parse_scheduler("" if scheduler is None else str(scheduler))
    grid, workers = scaling_settings(**{**values, "scheduler": cluster})
    rows = run_scaling(grid, workers=workers or 1, scheduler=cluster)
    cells = summarize(rows)
    options = _given(scaling, values)
    options["no_figure"] = True  # the files of `scaling --no-figure`
    return ScalingResult(
        grid=grid,
        rows={name: np.array([getattr(r, name) for r in rows]) for name in ROW_COLUMNS},
        m=np.array([c.m for c in cells], dtype=np.int64),
        lam=np.array([c.lam for c in cells], dtype=float),
        runs=np.array([c.runs for c in cells], dtype=np.int64),
        mean={name: np.array([c.mean[name] for c in cells]) for name in SUMMARY_COLUMNS},
        std={name: np.array([c.std[name] for c in cells]) for name in SUMMARY_COLUMNS},
        jobs=workers,
        scheduler=cluster,
        scaling_rows=tuple(rows),
        options=options,
    )


# --- the interference model -----------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class TrainingResult(_Result):
    """One training run of the interference model (``sparsity-gui interference``).

    ``history``: a row per recorded step, columns ``columns`` (history.csv's: ``step``,
    ``t`` in the note's time = 4 lr per step, NaN for Adam, ``polysemantic``, ...).
    ``w0``, ``w_final``: W (n x m: features by neurons) at the start and the end.
    ``neuron_counts``: active features per neuron at the end (|w| from 0.8 to 1.2)."""

    params: InterferenceParams
    columns: tuple[str, ...]
    history: np.ndarray
    w0: np.ndarray
    w_final: np.ndarray
    neuron_counts: np.ndarray
    polysemantic: int
    predicted: float  # the paper's n^2/(4m)
    wall_seconds: float
    run: InterferenceRun = dataclasses.field(repr=False)
    options: dict[str, Any] = dataclasses.field(repr=False)
    command = "interference"

    def command_line(self, out: str | Path, save_options: Mapping[str, Any] | None = None) -> str:
        if not isinstance(self.options.get("w0"), np.ndarray):
            return super().command_line(out, save_options)
        return _api_call(
            "train", self.options, out, save_options, ", saved as w0.npy"
        )  # no CLI option takes an array

    def save(self, out: str | Path, *, force: bool = False) -> Path:
        """history.csv, w0.npy, w_final.npy, neuron_counts.csv and run.json into ``out``,
        as `interference --out DIR` with the same options. See _Result.save."""
        return self._save(out, force)

    def _write(self, result_dir: ResultDir, command_line: str, **write_options: Any) -> None:
        from sparsity_gui.core.interference.files import write_interference_run

        write_interference_run(result_dir, self.run, command_line, self.wall_seconds)

    def _table(self) -> tuple[Sequence[str], np.ndarray]:
        return self.columns, self.history

    def movie(
        self,
        path: str | Path,
        *,
        panel: str = "layout",
        seconds: float = 10.0,
        fps: int = 30,
        spacing: str = "linear",
        style: Any = None,
        width: float | None = None,
        dpi: float = 150,
        format: str | None = None,
    ) -> Path:
        """A movie of the run, as `interference --movie PANEL` writes it: frame k is the
        figure of ``panel`` (a panel name of plot(), or "layout") at the last step at or
        before its time, the run trained again from W(0) to stop there, a stamp below.
        ``seconds`` x ``fps`` frames, evenly or log-spaced (``spacing``) over the steps;
        MP4 (H.264, yuv420p) or GIF by the path's suffix or ``format``. Written atomically.
        Needs the [movie] extra (PyAV): without it, MovieExtraMissing, an ImportError naming
        it. Returns the path."""
        from sparsity_gui.figures.interference_movie import write_interference_movie
        from sparsity_gui.figures.movie import movie_format, movie_settings, require_encoder

        require_encoder()
        settings = movie_settings(seconds, fps, spacing, movie_format(path, format), dpi)
        samples = int(self.options.get("samples", 501))
        write_interference_movie(
            path, self.params, self.w0, panel, settings, samples, style=style, width=width
        )
        return Path(path)

    def plot(self, panel: str = "layout", ax: Axes | None = None, style: Any = None) -> Figure:
        """One of the interference window's panels, drawn by matplotlib as `interference
        --figures` draws it: ``weights``, ``active``, ``polysemantic``, ``kept``, ``signs``,
        ``sparsity`` or ``layout`` (all six; not into an ``ax``). Returns a new
        ``matplotlib.figure.Figure``, or draws in place of ``ax`` and returns its figure.
        ``style``: "paper" (the default), "talk", a dict of rcParams or a .mplstyle path."""
        from sparsity_gui.figures.interference import PANELS, layout, layout_size, run_data
        from sparsity_gui.figures.scripted import panel_named, plot_panel

        data = run_data(self.history, self.columns, self.w_final, self.neuron_counts, self.params.n)
        if panel == "layout":
            if ax is not None:
                raise ValueError("the layout draws six panels: it takes no ax")
            return plot_panel(
                layout, {"panels": [data[name] for name in PANELS]}, None, style, layout_size(style)
            )
        function, _title = panel_named({**PANELS, "layout": (layout, "")}, panel)
        return plot_panel(function, data[panel], ax, style)

    def _summary(self) -> str:
        p = self.params
        return (
            f"n={p.n} m={p.m} {p.optimizer}, {p.steps} steps: {self.polysemantic} polysemantic "
            f"neuron(s), predicted n^2/(4m)={self.predicted:.4g}"
        )


def train(
    *,
    n: int | None = None,
    m: int | None = None,
    seed: int | None = None,
    steps: int = 7500,
    optimizer: str = "adamw",
    l1: float = 1e-3,
    lr: float = 1e-3,
    sigma: float | None = None,
    w0: str | os.PathLike[str] | np.ndarray | None = None,
    w0_tensor: str | None = None,
    no_interference: bool = False,
    weight_decay: float | None = None,
    dtype: str = "float64",
    samples: int = 501,
) -> TrainingResult:
    """Train the interference model once (Lecomte et al. 2023: y = ReLU(W W^T x) on the n
    basis vectors, loss sum_i (1 - |W_i|^2)^2 + sum_{i != j} ReLU(W_i . W_j)^2 + l1 |W|_1),
    W (n x m) from normal(0, sigma/sqrt(m)) drawn with ``seed`` (defaults: n=256, m=1024,
    seed=0, sigma=1), as ``sparsity-gui interference`` does.

    ``w0``: start from this W(0) instead, a matrix n x m (features x neurons) that sets n
    and m (given as well, they must match; seed and sigma do not go with it): the path of
    a file (.npy, .npz, .safetensors, a PyTorch state_dict if torch is installed, or text,
    a row per feature), its tensor or array ``w0_tensor``; or a numpy array. An array has
    no CLI option: save() then records this call instead of a command line.

    Network units: ``l1`` the loss's L1 coefficient, 0 to 4 (the note's lam = l1/4), ``lr``
    the learning rate per step (for gradient descent the note's eta = 4 lr and t = 4 lr
    steps). ``optimizer``: "adamw" (the paper's), "adam", "gd-zero" (gradient descent with
    the note's zero rule) or "gd". ``weight_decay``: None for torch's (0.01 for adamw, 0
    for adam). ``no_interference``: every feature trains alone. ``dtype``: "float64" or
    "float32" (the paper's precision: W, the products and the optimizer's state in float32;
    counts agree with float64's in distribution, not run by run). ``samples``: rows of the
    history, at steps round(i steps/(K-1)).

    Like the CLI this caps OpenBLAS at one thread in this process (faster for these
    products, and the same numbers as the CLI's)."""
    from sparsity_gui.core.interference.headless import INTERFERENCE_DEFAULTS, training_settings, training_w0
    from sparsity_gui.core.interference.headless import train as train_run
    from sparsity_gui.core.interference.run import HISTORY_COLUMNS

    values = dict(
        n=_whole(n),
        m=_whole(m),
        seed=_whole(seed),
        steps=_whole(steps),
        optimizer=optimizer,
        l1=_number(l1),
        lr=_number(lr),
        sigma=_number(sigma),
        w0=w0 if w0 is None or isinstance(w0, np.ndarray) else _path(w0),
        w0_tensor=w0_tensor,
        no_interference=no_interference,
        weight_decay=None if weight_decay is None else _number(weight_decay),
        dtype=dtype,
        samples=_whole(samples),
    )
    given = {k: v for k, v in values.items() if k not in ("w0", "w0_tensor")}
    matrix, source = training_w0(
        values["w0"], w0_tensor, n=given["n"], m=given["m"], seed=given["seed"], sigma=given["sigma"]
    )
    if matrix is not None:
        given["n"], given["m"] = matrix.shape
    for name in ("n", "m", "seed", "sigma"):  # None: the CLI's default (or the matrix's shape)
        if given[name] is None:
            given[name] = INTERFERENCE_DEFAULTS[name]
    params = training_settings(**given)
    started = time.perf_counter()
    run = train_run(params, values["samples"], w0=matrix, w0_source=source)
    wall = time.perf_counter() - started
    meas = run.measure(with_loss=False)
    return TrainingResult(
        params=params,
        columns=tuple(HISTORY_COLUMNS),
        history=run.history_array().copy(),
        w0=run.w0.copy(),
        w_final=run.W.copy(),
        neuron_counts=np.asarray(run.counts).copy(),
        polysemantic=int(meas.polysemantic),
        predicted=params.prediction,
        wall_seconds=wall,
        run=run,
        options=_given(train, values),
    )


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class SweepResult(_Result):
    """A sweep over m (``sparsity-gui sweep --no-figure``; ``plot()`` draws its figure).

    ``rows``: a column per field of sweep.csv (``m``, ``seed``, ``polysemantic``,
    ``predicted`` = n^2/(4m), ..., ``seconds`` of wall time), a row per run, as numpy
    arrays. ``m``, ``mean``, ``std``, ``predicted``: polysemantic neurons per value of m
    (mean and sample standard deviation over the seeds) and the paper's prediction.
    ``jobs``: the runs trained side by side here; on a cluster None, and ``scheduler``
    where they ran (str() gives its address or local:N; None: this machine's threads)."""

    spec: SweepSpec
    rows: dict[str, np.ndarray]
    m: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    predicted: np.ndarray
    jobs: int | None
    scheduler: Scheduler | None
    sweep_rows: tuple[SweepRow, ...] = dataclasses.field(repr=False)
    options: dict[str, Any] = dataclasses.field(repr=False)
    command = "sweep"

    def save(self, out: str | Path, *, force: bool = False) -> Path:
        """sweep.csv and sweep.json into ``out``, as `sweep --no-figure --out DIR` with the
        same options. See _Result.save."""
        return self._save(out, force)

    def _write(self, result_dir: ResultDir, command_line: str, **write_options: Any) -> None:
        from sparsity_gui.core.interference.files import write_sweep

        write_sweep(result_dir, self.spec, list(self.sweep_rows), command_line=command_line)

    def _table(self) -> tuple[Sequence[str], dict[str, np.ndarray]]:
        return tuple(self.rows), self.rows

    def plot(self, panel: str = "sweep", ax: Axes | None = None, style: Any = None) -> Figure:
        """Polysemantic neurons against m (the ``sweep`` panel, as `sweep` draws it into
        DIR/figures/): a new ``matplotlib.figure.Figure``, or drawn in place of ``ax``.
        ``style``: "paper" (the default), "talk", a dict of rcParams or a .mplstyle path."""
        from sparsity_gui.figures.scripted import panel_named, plot_panel
        from sparsity_gui.figures.sweep import sweep, sweep_data

        function = panel_named({"sweep": sweep}, panel)
        spec = self.spec
        data = sweep_data(self.sweep_rows, spec.base.n, spec.m_values, len(spec.runs()))
        return plot_panel(function, data, ax, style)

    def _summary(self) -> str:
        means = ", ".join(f"{int(m)}: {mean:.3g}" for m, mean in zip(self.m, self.mean, strict=True))
        return f"n={self.spec.base.n}, {self.spec.seeds} seed(s) per m, mean polysemantic per m {{{means}}}"


def sweep(
    *,
    n: int | None = None,
    m: str | Sequence[int] | None = None,
    seeds: int | None = None,
    seed: int | None = None,
    steps: int | None = None,
    optimizer: str | None = None,
    l1: float | None = None,
    lr: float | None = None,
    sigma: float | None = None,
    no_interference: bool = False,
    weight_decay: float | None = None,
    dtype: str | None = None,
    paper: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
) -> SweepResult:
    """Train the interference model for every m with ``seeds`` seeds each (``seed`` ..
    ``seed + seeds - 1``) and count the polysemantic neurons of each run, against the
    paper's n^2/(4m), as ``sparsity-gui sweep --no-figure`` does.

    ``m``: a list of values, or the CLI's text ("64,128,256" or "start:stop:step", stop
    included). None takes the CLI's default: n=64, m="64,128,256,512,1024", seeds=4,
    seed=0, steps=7500, optimizer="adamw", l1=lr=1e-3, sigma=1; ``paper=True`` the
    paper's settings (n=256, m=256..4096 by 256, 16 seeds: hours of work), which the
    options given override. Units as in train(): lam = l1/4. ``jobs``: runs trained side
    by side, one BLAS thread each (default: as many as fit, one per core up to 8); the
    results do not depend on it. ``scheduler``: train each run as a task on a
    dask.distributed cluster instead (the extra ``pip install 'sparsity-gui[cluster]'``):
    the address of a running scheduler, "tcp://HOST:PORT", or "local:N" to start N worker
    processes on this machine for this call; the rows are the same digit for digit (all
    but ``seconds``)."""
    from sparsity_gui.core.cluster import parse_scheduler
    from sparsity_gui.core.interference.headless import PAPER, SWEEP_DEFAULTS, sweep_settings
    from sparsity_gui.core.interference.sweep import ROW_COLUMNS, run_sweep, summarize

    given = dict(
        n=_whole(n),
        m=list(m) if isinstance(m, (list, tuple, range, np.ndarray)) else m,
        seeds=_whole(seeds),
        seed=_whole(seed),
        steps=_whole(steps),
        optimizer=optimizer,
        l1=_number(l1),
        lr=_number(lr),
        sigma=_number(sigma),
        no_interference=no_interference,
        weight_decay=_number(weight_decay),
        dtype=dtype,
        paper=paper,
        jobs=_whole(jobs),
        scheduler=scheduler,
    )
    if isinstance(given["m"], list):
        given["m"] = [_whole(v) for v in given["m"]]
    settings: dict[str, Any] = {
        "weight_decay": None,
        "jobs": None,
        **SWEEP_DEFAULTS,
        **(PAPER if paper else {}),
    }
    settings.update({k: v for k, v in given.items() if v is not None and k != "paper"})
    settings["scheduler"] = cluster = parse_scheduler("" if scheduler is None else str(scheduler))
    spec, workers = sweep_settings(**settings)
    rows = run_sweep(spec, workers=workers or 1, scheduler=cluster)
    summary = summarize(rows)
    options = _given(sweep, given)
    options["no_figure"] = True  # the files of `sweep --no-figure`
    return SweepResult(
        spec=spec,
        rows={name: np.array([getattr(r, name) for r in rows]) for name in ROW_COLUMNS},
        m=np.asarray(summary.m).astype(np.int64),
        mean=np.asarray(summary.mean).copy(),
        std=np.asarray(summary.std).copy(),
        predicted=np.asarray(summary.predicted).copy(),
        jobs=workers,
        scheduler=cluster,
        sweep_rows=tuple(rows),
        options=options,
    )
