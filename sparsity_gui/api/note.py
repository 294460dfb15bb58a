"""The note's model in the Python API (sparsity_gui.api): ``simulate`` and ``scaling``."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sparsity_gui.api.results import (
    Result,
    api_call,
    as_number,
    as_path,
    as_whole,
    given_options,
    layout_takes_no_ax,
    movie_width_inches,
    same_value,
)
from sparsity_gui.core.files import ResultDir

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from sparsity_gui.core.cluster import Scheduler
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.core.note.sampled import SampledRun
    from sparsity_gui.core.note.scaling import ScalingGrid, ScalingRow


Schedule = Sequence[tuple[float, Mapping[str, "float | str"]]]


# --- the note's model -----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class SimulationResult(Result):
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
    whether theta rose throughout (measured on the run) and its largest fall, whether the
    sufficient condition (1 - |W|^2)|W|^2 >= lam |W|_1 held, and the values at each live
    change of lam)."""

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
        return api_call("simulate", self.options, out, save_options, ": W(0) is the w0 of the weights file")

    def save(
        self, out: str | Path, *, force: bool = False, format: str = "auto", no_weights: bool = False
    ) -> Path:
        """timeseries.csv, weights.csv (unless ``no_weights``), deaths.csv and run.json
        into ``out`` (``format="npz"``: weights.npz and deaths.npz; "auto", the default:
        CSV up to m = 10^6, .npz above), as `run --out DIR` with the same options. See
        Result.save."""
        from sparsity_gui.core.note.headless import check_format

        check_format(format)
        given = {"format": format, "no_weights": no_weights}
        save_options = {
            k: v for k, v in given.items() if not same_value(v, {"format": "auto", "no_weights": False}[k])
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

    def plot(self, panel: str = "layout", ax: Axes | None = None, style: Any = None) -> Figure:
        """One of the window's panels, drawn by matplotlib as `run --figures` draws it:
        ``panel`` is weights_sorted, threshold_crossing, norm_balance, l1_decay,
        relative_variance, sparsity_force, phase_plane or layout (the default: all six of
        the grid).
        Without ``ax``: a new Figure at a journal's column width in ``style`` ("paper",
        the default, "talk" or a .mplstyle file). With ``ax``: drawn into it (a panel of
        two sub-plots splits its place), in the current rcParams; its Figure is returned."""
        from sparsity_gui.core.errors import InputError
        from sparsity_gui.figures.note.figures import fit_constants, note_figure, panel_data, run_snapshot
        from sparsity_gui.figures.note.panels import PANELS

        names = [*PANELS, "layout"]
        if panel not in names:
            raise InputError("panel", f"must be one of {', '.join(names)}, got {panel!r}")
        data = panel_data(run_snapshot(self.run), fit=fit_constants(self.run))
        if ax is None:
            return note_figure(panel, data, style=style)
        if panel == "layout":
            raise layout_takes_no_ax()
        from sparsity_gui.figures.scripted import check_axes

        check_axes(ax)
        PANELS[panel](ax.figure, data[panel], ax=ax)
        return ax.get_figure(root=True)  # type: ignore[return-value]  # a sub-plot's is a Figure

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
        from sparsity_gui.figures.note.movie import write_note_movie

        require_encoder()
        movie_width_inches(width)  # "single" or "double", as the interference result's movie()
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
    lam: float | None = None,
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
    lam_schedule: str | Sequence[tuple[float, float]] | None = None,
    lam_warmup: float | None = None,
) -> SimulationResult:
    """Run the note's model, W' = (1 - |W|^2) W - lam sign(W), from W(0) ~ normal(0,
    sigma/sqrt(m)) drawn with ``seed`` (or the weights in the file ``w0``: .npy, .npz,
    .safetensors, a PyTorch state_dict if torch is installed, or text; its tensor or array
    ``w0_tensor`` and row ``w0_row`` of a matrix), as ``sparsity-gui run`` does. ``w0``
    may also be a numpy array (a vector, or a matrix with ``w0_row``), checked as a file's
    array is; m is its length, and save() records this call (W(0) is the weights file's
    w0 column).

    ``lam``: the L1 strength, 0 to 1 (the interference model's l1 = 4 lam; default 1e-3).
    ``lam_schedule``: λ(t) piecewise linear through knots, ``[(0, 0), (200, 1e-3)]`` or the
    CLI's text "0:0,200:1e-3" (constant before the first knot and after the last, which
    sets lam); ``lam_warmup=T``: λ from 0 up to ``lam`` over [0, T]. ``method``:
    "exact" (the flow, solved exactly) or "gd" (gradient descent with step ``eta`` in the
    note's time: t = eta * step). ``t_end``: the end, in the note's time (default: when one
    weight is left, plus 10 %). ``samples``: rows of the time series, at t = i t_end/(K-1).

    ``schedule``: live changes of lam, eta or method during the run, as the window's
    sessions record them: ``[(t, {"lam": 2e-3}), (t2, {"method": "gd", "eta": 0.1})]``,
    times in order from 0 to ``t_end`` (which a schedule needs). A change at a sample's
    time comes before that sample. The CLI has no such option: save() then records this
    call instead of a command line. A live change of lam ends a ``lam_schedule``: λ stays
    at the new value from then on, as a change in the window does."""
    from sparsity_gui.core.knots import given_knots, knots_text
    from sparsity_gui.core.note.files import death_columns
    from sparsity_gui.core.note.headless import run_settings, scheduled_run
    from sparsity_gui.core.note.metrics import COLUMNS
    from sparsity_gui.core.note.sampled import simulate_samples
    from sparsity_gui.core.note.settings import NOTE_SETTINGS

    if not isinstance(schedule, (list, tuple)):
        raise TypeError(
            f"schedule must be a list of (t, {{name: value}}) pairs, not {type(schedule).__name__}"
        )
    values = dict(
        m=as_whole(m),
        lam=as_number(lam),
        sigma=as_number(sigma),
        seed=as_whole(seed),
        w0=w0 if w0 is None or isinstance(w0, np.ndarray) else as_path(w0),
        w0_row=None if w0_row is None else as_whole(w0_row),
        w0_tensor=w0_tensor,
        method=method,
        eta=as_number(eta),
        t_end=None if t_end is None else as_number(t_end),
        samples=as_whole(samples),
        lam_schedule=(
            None
            if lam_schedule is None
            else knots_text(given_knots(NOTE_SETTINGS.check("lam_schedule", lam_schedule), "lam_schedule"))
        ),
        lam_warmup=None if lam_warmup is None else as_number(lam_warmup),
    )
    if values["lam"] is None:
        del values["lam"]  # (None: 1e-3, or the λ a schedule ends at)
    params, weights = run_settings(**{"lam": None, **values}, scheduled=bool(schedule))
    if schedule:
        run = scheduled_run(params, weights, schedule, values["samples"])
    else:
        run = simulate_samples(params, weights, values["samples"])
    options = given_options(simulate, values)
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
class ScalingResult(Result):
    """The note's constants across m and lam (``sparsity-gui scaling --no-figure``;
    ``plot()`` draws its figures).

    ``rows``: a column per field of scaling.csv, a row per run in its order (m, then lam,
    then seed), as numpy arrays: ``t_one`` (when one weight is left, in the note's time),
    ``lam_t_one`` = lam t_one, ``fitted_c`` (m' >= 2), ``fitted_c_bulk`` (m' >= 10),
    ``fit_max_rel_dev``, ``rel_var_mean``/``_min``/``_max``, ``balance_ratio``, ``w_last``,
    ``w_last_root`` (the stable root of (1 - w^2) w = lam), ``lam_norm1_0``, ``norm2_w0``,
    ``balance_possible`` (lam |W(0)|_1 <= 1/4), ``theta_rises`` (theta never fell on the run),
    ``theta_rise_condition`` ((1 - |W(0)|^2)|W(0)|^2 >= lam |W(0)|_1, sufficient for it),
    ``theta_fall`` (theta's largest relative fall, 0 if none) and ``theta_fall_t``, ``sigma``,
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
        with the same options (no figures: ``plot()`` draws them). See Result.save."""
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
        from sparsity_gui.figures.note.scaling import FIGURES, scaling_data, scaling_panel
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
    from sparsity_gui.core.checks import check_list_kind
    from sparsity_gui.core.note.headless import scaling_order
    from sparsity_gui.core.note.scaling import ROW_COLUMNS, SUMMARY_COLUMNS, summarize

    def as_list(name: str, values: Any, item: Callable[[Any], Any]) -> Any:
        check_list_kind(name, values)
        if isinstance(values, (list, tuple, range, np.ndarray)):
            return [item(v) for v in values]
        return values

    values = dict(
        m=as_list("m", m, as_whole),
        lam=as_list("lam", lam, as_number),
        seeds=as_whole(seeds),
        seed=as_whole(seed),
        sigma=as_number(sigma),
        jobs=None if jobs is None else as_whole(jobs),
        scheduler=scheduler,
    )
    order = scaling_order(values)  # the grid's front door, as the CLI's and the window's
    grid, workers, cluster = order.plan, order.jobs, order.scheduler
    rows = grid.run(workers=workers or 1, scheduler=cluster)
    cells = summarize(rows)
    options = given_options(scaling, values)
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
