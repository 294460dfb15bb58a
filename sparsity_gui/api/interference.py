"""The interference model in the Python API (sparsity_gui.api): ``train`` and ``sweep``."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sparsity_gui.api.results import (
    Result,
    api_call,
    as_flag,
    as_number,
    as_path,
    as_whole,
    given_options,
    layout_takes_no_ax,
    movie_width_inches,
)
from sparsity_gui.core.files import ResultDir

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from sparsity_gui.core.cluster import Scheduler
    from sparsity_gui.core.interference.params import InterferenceParams
    from sparsity_gui.core.interference.run import InterferenceRun
    from sparsity_gui.core.interference.sweep import SweepRow, SweepSpec


# --- the interference model -----------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class TrainingResult(Result):
    """One training run of the interference model (``sparsity-gui interference``).

    ``history``: a row per recorded step, columns ``columns`` (history.csv's: ``step``, ``t`` in the
    note's time = 4 lr per step, NaN for Adam, ``polysemantic``, ..., and for JumpReLU ``l0``, its
    coefficient in force). ``w0``, ``w_final``: W (n x m: features by neurons) at the start and the
    end. ``neuron_counts``: active features per neuron at the end (|w| from 0.8 to 1.2).
    With ``w0`` given, ``params.seed`` and ``params.sigma`` are unused (the defaults; they
    drew nothing) and ``save()``'s run.json leaves them out, as the CLI's with --w0.
    ``readouts``: run.json's (``steps_to_sparse``, None if never; ``rail_share``, the mean
    over the checks up to and including ``steps_to_sparse``, all of them if never;
    ``saturation``, the l1-saturated line or None; ``shrinkage`` against the fixed point;
    each with its definition)."""

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
    readouts: dict[str, Any] = dataclasses.field(repr=False, default_factory=dict)
    command = "interference"

    def command_line(self, out: str | Path, save_options: Mapping[str, Any] | None = None) -> str:
        if not isinstance(self.options.get("w0"), np.ndarray):
            return super().command_line(out, save_options)
        return api_call(
            "train", self.options, out, save_options, ", saved as w0.npy"
        )  # no CLI option takes an array

    def save(self, out: str | Path, *, force: bool = False) -> Path:
        """history.csv, w0.npy, w_final.npy, neuron_counts.csv and run.json into ``out``,
        as `interference --out DIR` with the same options. See Result.save."""
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
        width: str = "single",
        dpi: float = 150,
        format: str | None = None,
    ) -> Path:
        """A movie of the run, as `interference --movie PANEL` writes it: frame k is the
        figure of ``panel`` (a panel name of plot(), or "layout") at the last step at or
        before its time, the run trained again from W(0) to stop there, a stamp below.
        ``seconds`` x ``fps`` frames, evenly or log-spaced (``spacing``) over the steps;
        MP4 (H.264, yuv420p) or GIF by the path's suffix or ``format``; ``width``: "single"
        (a journal's column, the style's size) or "double" (the text width), as in the
        note's movie(). Written atomically. Needs the [movie] extra (PyAV): without it,
        MovieExtraMissing, an ImportError naming it. Returns the path."""
        from sparsity_gui.figures.interference.movie import write_interference_movie
        from sparsity_gui.figures.movie import movie_format, movie_settings, require_encoder

        require_encoder()
        inches = movie_width_inches(width)
        settings = movie_settings(seconds, fps, spacing, movie_format(path, format), dpi)
        samples = int(self.options.get("samples", 501))
        write_interference_movie(
            path, self.params, self.w0, panel, settings, samples, style=style, width=inches
        )
        return Path(path)

    def plot(self, panel: str = "layout", ax: Axes | None = None, style: Any = None) -> Figure:
        """One of the interference window's panels, drawn by matplotlib as `interference
        --figures` draws it: ``weights``, ``active``, ``polysemantic``, ``kept``, ``signs``,
        ``sparsity``, ``thresholds`` (the threshold the run's sparsity mechanism applies) or
        ``layout`` (the six the window shows at once; not into an ``ax``). Returns a new
        ``matplotlib.figure.Figure``, or draws in place of ``ax`` and returns its figure.
        ``style``: "paper" (the default), "talk", a dict of rcParams or a .mplstyle path."""
        from sparsity_gui.core.interference.settings import run_settings
        from sparsity_gui.core.interference.thresholds import run_threshold_curves
        from sparsity_gui.figures.interference.figures import (
            PANELS,
            layout,
            layout_data,
            layout_size,
            run_data,
        )
        from sparsity_gui.figures.scripted import panel_named, plot_panel

        settings = run_settings(self.params, self.run.w0_source)  # the title: those not at default
        data = run_data(
            self.history,
            self.columns,
            self.w_final,
            self.neuron_counts,
            self.params.n,
            settings=settings,
            thresholds=run_threshold_curves(self.run),
        )
        if panel == "layout":
            if ax is not None:
                raise layout_takes_no_ax()
            return plot_panel(layout, layout_data(data), None, style, layout_size(style))
        function, _title = panel_named({**PANELS, "layout": (layout, "")}, panel)
        return plot_panel(function, data[panel], ax, style)

    def _summary(self) -> str:
        p = self.params
        return (
            f"n={p.n} m={p.m} {p.optimizer}, {p.steps} steps: {self.polysemantic} polysemantic "
            f"neuron(s), predicted n^2/(4m)={self.predicted:.4g}"
        )


def table_options(function: str, more: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords ``more`` of ``function`` beyond its own: options of the settings table that
    a grid varies (axes.AXES) and that it has no keyword of its own for; any other name is
    refused as Python refuses an unexpected keyword."""
    from sparsity_gui.core.interference.axes import AXES

    for name in more:
        if name not in AXES:
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
    return dict(more)


def training_numbers(seed: Any, steps: Any, optimizer: Any, l1: Any, lr: Any, sigma: Any) -> dict[str, Any]:
    """The training settings train() and sweep() share, checked as the whole numbers and
    numbers they are (None stays None: the CLI's default)."""
    return dict(
        seed=as_whole(seed),
        steps=as_whole(steps),
        optimizer=optimizer,
        l1=as_number(l1),
        lr=as_number(lr),
        sigma=as_number(sigma),
    )


def schedule_options(
    l1_warmup: Any, l1_schedule: Any, lr_warmup: Any, lr_decay: Any, lr_decay_steps: Any, lr_schedule: Any
) -> dict[str, Any]:
    """The schedule options train() and sweep() share, as the CLI's: knots as their text
    (checked here, so that save() writes the option that reads back as them)."""
    from sparsity_gui.core.interference.headless import knots_option

    return dict(
        l1_warmup=as_whole(l1_warmup),
        l1_schedule=knots_option("l1_schedule", l1_schedule),
        lr_warmup=as_whole(lr_warmup),
        lr_decay=lr_decay,
        lr_decay_steps=as_whole(lr_decay_steps),
        lr_schedule=knots_option("lr_schedule", lr_schedule),
    )


def train(
    *,
    n: int | None = None,
    m: int | None = None,
    seed: int | None = None,
    steps: int = 7500,
    optimizer: str = "adamw",
    l1: float | None = None,
    lr: float | None = None,
    sigma: float | None = None,
    w0: str | os.PathLike[str] | np.ndarray | None = None,
    w0_tensor: str | None = None,
    no_interference: bool = False,
    weight_decay: float | None = None,
    dtype: str = "float64",
    samples: int = 501,
    l1_warmup: int | None = None,
    l1_schedule: str | Sequence[tuple[float, float]] | None = None,
    lr_warmup: int | None = None,
    lr_decay: str | None = None,
    lr_decay_steps: int | None = None,
    lr_schedule: str | Sequence[tuple[float, float]] | None = None,
    noise: str | None = None,
    noise_sigma: float | None = None,
    sparsity: str | None = None,
    k: int | None = None,
    l0: float | None = None,
    bandwidth: float | None = None,
    threshold_init: float | None = None,
    threshold_param: str | None = None,
    l0_warmup: int | None = None,
    l0_schedule: str | Sequence[tuple[float, float]] | None = None,
    beta1: float | None = None,
    beta2: float | None = None,
    eps: float | None = None,
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
    the note's zero rule), "gd", "ista" (proximal gradient: soft-thresholding by lr l1) or
    "signsgd" (W - lr sign(gradient)). ``weight_decay``: None for torch's (0.01 for adamw,
    0 for adam). ``no_interference``: every feature trains alone. ``dtype``: "float64" or
    "float32" (the paper's precision: W, the products and the optimizer's state in float32;
    counts agree with float64's in distribution, not run by run). ``samples``: rows of the
    history, at steps round(i steps/(K-1)). ``l1`` and ``lr``: None for 1e-3, or the value
    a schedule ends at.

    Schedules over steps (step k = 1 .. steps uses the value at k), as the CLI's options:
    ``l1_warmup=T`` (l1 * min(1, k/T)), ``l1_schedule`` (knots, "0:0,1000:1e-3" or
    [(0, 0), (1000, 1e-3)], piecewise linear: sets l1), ``lr_warmup=T`` (lr * min(1, k/T)),
    ``lr_decay="linear"|"cosine"`` with ``lr_decay_steps=D`` (to 0 over the last D steps),
    ``lr_schedule`` (knots: sets lr). For Adam and AdamW an lr schedule scales the whole step, as
    torch's LambdaLR. The history's ``l1``, ``lr`` (and JumpReLU's ``l0``) columns show them.

    ``noise="bernoulli"|"gaussian"`` with ``noise_sigma=S``: one vector xi per step added to
    the hidden layer of the whole batch, y = ReLU((x W + xi) W^T), +-S with equal odds or
    N(0, S^2), from a stream the seed fixes (l1 = 0 is allowed). The history's ``sum_w4``
    column is the mean over features of sum_k W_ik^4. ``sparsity``: the hidden layer's
    mechanism on h = W^T x (W_i for feature i), as the CLI's --sparsity: "l1" (the L1 penalty,
    default), "topk" with ``k`` (the k units of largest |h| per input kept with their sign;
    no penalty, so l1 is 0 and refused), "jumprelu" (h H(|h| - theta) with a threshold per
    unit trained by the same optimizer, straight through the rectangle kernel of width
    ``bandwidth``, from ``threshold_init``, stored as ``threshold_param`` "plain" or "log";
    the penalty ``l0`` times the units kept, scheduled as l1 by ``l0_warmup`` or
    ``l0_schedule``; l1 is 0 unless given); noise enters h before the mechanism. Readouts:
    ``readouts["sparsity"]``, ``run.sparsity_history`` (docs/theory.md §9).

    ``beta1``, ``beta2``, ``eps``: Adam's constants (None: torch's 0.9, 0.999, 1e-8), as the
    CLI's --beta1, --beta2, --eps; only with optimizer "adam" or "adamw" (the others have none).
    Like the CLI this caps OpenBLAS at one thread here (faster, and the CLI's very numbers)."""
    from sparsity_gui.core.interference.files import run_history
    from sparsity_gui.core.interference.headless import (
        INTERFERENCE_DEFAULTS,
        knots_option,
        training_settings,
        training_w0,
        values_from_schedules,
    )
    from sparsity_gui.core.interference.headless import train as train_run
    from sparsity_gui.core.interference.readouts import run_readouts

    values = dict(
        n=as_whole(n),
        m=as_whole(m),
        **training_numbers(seed, steps, optimizer, l1, lr, sigma),
        w0=w0 if w0 is None or isinstance(w0, np.ndarray) else as_path(w0),
        w0_tensor=w0_tensor,
        no_interference=as_flag("no_interference", no_interference),
        weight_decay=None if weight_decay is None else as_number(weight_decay),
        dtype=dtype,
        samples=as_whole(samples),
        **schedule_options(l1_warmup, l1_schedule, lr_warmup, lr_decay, lr_decay_steps, lr_schedule),
        noise=noise,
        noise_sigma=as_number(noise_sigma),
        sparsity=sparsity,
        k=as_whole(k),
        l0=as_number(l0),
        bandwidth=as_number(bandwidth),
        threshold_init=as_number(threshold_init),
        threshold_param=threshold_param,
        l0_warmup=as_whole(l0_warmup),
        l0_schedule=knots_option("l0_schedule", l0_schedule),  # as the CLI's text, as l1's
        beta1=as_number(beta1),
        beta2=as_number(beta2),
        eps=as_number(eps),
    )
    given = {name: v for name, v in values.items() if name not in ("w0", "w0_tensor")}
    values_from_schedules(given)
    matrix, source = training_w0(
        values["w0"], w0_tensor, n=given["n"], m=given["m"], seed=given["seed"], sigma=given["sigma"]
    )
    if matrix is not None:
        given["n"], given["m"] = matrix.shape
    for name in ("n", "m", "seed", "sigma", "l1", "lr"):  # None: the CLI's default (or the matrix's shape)
        if given[name] is None:
            given[name] = INTERFERENCE_DEFAULTS[name]
    params = training_settings(**given)
    started = time.perf_counter()
    run = train_run(params, values["samples"], w0=matrix, w0_source=source)
    wall = time.perf_counter() - started
    meas = run.measure(with_loss=False)
    columns, history = run_history(run)
    return TrainingResult(
        params=params,
        columns=columns,
        history=history,
        w0=run.w0.copy(),
        w_final=run.W.copy(),
        neuron_counts=np.asarray(run.counts).copy(),
        polysemantic=int(meas.polysemantic),
        predicted=params.prediction,
        wall_seconds=wall,
        run=run,
        options=given_options(train, values),
        readouts=run_readouts(run),
    )


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class SweepResult(Result):
    """A sweep over m (``sparsity-gui sweep --no-figure``; ``plot()`` draws its figure).

    ``rows``: a column per field of sweep.csv (``m``, ``seed``, ``polysemantic``,
    ``predicted`` = n^2/(4m), ..., ``seconds`` of wall time), a row per run, as numpy
    arrays (``steps_to_sparse`` as floats, NaN for a run that never became sparse, whose
    cell in sweep.csv is empty). ``m``, ``mean``, ``std``, ``predicted``: polysemantic neurons per value of m
    (mean and sample standard deviation over the seeds) and the paper's prediction.
    ``jobs``: the runs trained side by side here; on a cluster None, and ``scheduler``
    where they ran (str() gives its address or local:N; None: this machine's threads).
    ``varied``: the options with several values; ``groups``: per cell of the grid (its
    ``params``) the runs and each readout's median, p10, p90, mean and std over the seeds
    (sweep.json's groups). ``overlap`` (``sweep(overlap=True)``): per cell, in the order of
    ``groups``, the mean over its seeds of W(0) W(T)^T, an array cells x n x n."""

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
    groups: list[dict[str, Any]] = dataclasses.field(repr=False, default_factory=list)
    overlap: np.ndarray | None = dataclasses.field(repr=False, default=None)
    command = "sweep"

    def save(self, out: str | Path, *, force: bool = False) -> Path:
        """sweep.csv and sweep.json into ``out``, as `sweep --no-figure --out DIR` with the
        same options. See Result.save."""
        return self._save(out, force)

    def _write(self, result_dir: ResultDir, command_line: str, **write_options: Any) -> None:
        from sparsity_gui.core.interference.files import write_sweep

        write_sweep(
            result_dir, self.spec, list(self.sweep_rows), command_line=command_line, scheduler=self.scheduler
        )

    def _table(self) -> tuple[Sequence[str], dict[str, np.ndarray]]:
        return tuple(self.rows), self.rows

    @property
    def varied(self) -> tuple[str, ...]:
        return self.spec.varied

    def plot(
        self,
        panel: str | None = None,
        ax: Axes | None = None,
        style: Any = None,
        readout: str = "polysemantic",
    ) -> Figure:
        """A figure of the sweep, as `sweep` draws it into DIR/figures/: ``"sweep"``,
        polysemantic neurons against m (a sweep over m alone); ``"curves"``, ``readout``
        (a column of ``rows``: "steps_to_sparse", "rail_share", ...) against the first
        varied option, the median over seeds with a 10-90 % band, a curve per value of the
        others; ``"heatmap"``, its median over the two varied options (None: the first of
        these the sweep draws); ``"knee"``, a JumpReLU grid over ``l0``: the final L0 per
        input and the threshold rail share against C, the knee where C stops mattering
        marked. A new ``matplotlib.figure.Figure``, or drawn in place of ``ax``. ``style``:
        "paper" (the default), "talk", a dict of rcParams or a .mplstyle path."""
        from sparsity_gui.figures.interference.grid import (
            PANELS,
            grid_data,
            grid_panels,
            overlap,
            overlap_data,
        )
        from sparsity_gui.figures.interference.knee import knee_data, knee_drawn, knee_panel
        from sparsity_gui.figures.interference.sweep import sweep, sweep_data
        from sparsity_gui.figures.scripted import panel_named, plot_panel

        spec = self.spec
        drawn = grid_panels(spec)
        if panel is None:
            panel = drawn[0] if drawn else "sweep"
        function = panel_named({"sweep": sweep, **PANELS, "overlap": overlap, "knee": knee_panel}, panel)
        if panel == "knee":
            if not knee_drawn(spec):
                from sparsity_gui.core.errors import InputError

                raise InputError(
                    "panel", "the knee needs sparsity='jumprelu' and a list of l0 (two values or more)"
                )
            data = knee_data(self.sweep_rows, spec)
        elif panel == "overlap":
            if not spec.overlap:
                from sparsity_gui.core.errors import InputError

                raise InputError("panel", "the overlap needs sweep(overlap=True)")
            data = overlap_data(spec, self.sweep_rows)
        elif panel == "sweep":
            data = sweep_data(self.sweep_rows, spec.base.n, spec.m_values, len(spec.runs()))
        elif panel not in drawn:
            from sparsity_gui.core.errors import InputError

            need = "two varied options" if panel == "heatmap" else "an option other than m varied"
            raise InputError(
                "panel", f"the {panel} needs {need}; this sweep varies {', '.join(spec.varied) or 'nothing'}"
            )
        else:
            data = grid_data(self.sweep_rows, spec, readout)
        return plot_panel(function, data, ax, style)

    def _summary(self) -> str:
        spec = self.spec
        if set(spec.varied) <= {"m"}:
            means = ", ".join(f"{int(m)}: {mean:.3g}" for m, mean in zip(self.m, self.mean, strict=True))
            return f"n={spec.base.n}, {spec.seeds} seed(s) per m, mean polysemantic per m {{{means}}}"
        over = " x ".join(f"{a} ({len(spec.values_of(a))})" for a in spec.varied)
        return (
            f"n={spec.base.n}, a grid over {over}, {spec.seeds} seed(s) per cell, {len(self.sweep_rows)} runs"
        )


def sweep(
    *,
    n: int | None = None,
    m: str | Sequence[int] | None = None,
    seeds: int | None = None,
    seed: int | None = None,
    steps: int | Sequence[int] | None = None,
    optimizer: str | Sequence[str] | None = None,
    l1: float | Sequence[float] | None = None,
    lr: float | Sequence[float] | None = None,
    sigma: float | Sequence[float] | None = None,
    no_interference: bool = False,
    weight_decay: float | Sequence[float] | None = None,
    dtype: str | Sequence[str] | None = None,
    paper: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    l1_warmup: int | Sequence[int] | None = None,
    l1_schedule: str | Sequence[tuple[float, float]] | Sequence[Any] | None = None,
    lr_warmup: int | Sequence[int] | None = None,
    lr_decay: str | Sequence[str] | None = None,
    lr_decay_steps: int | Sequence[int] | None = None,
    lr_schedule: str | Sequence[tuple[float, float]] | Sequence[Any] | None = None,
    noise: str | Sequence[str] | None = None,
    noise_sigma: float | Sequence[float] | None = None,
    overlap: bool = False,
    **more: Any,
) -> SweepResult:
    """Train the interference model for every combination of the options given as lists
    (``m``, ``l1``, ``lr``, ``optimizer``, ``weight_decay``, ``sigma``, ``steps``, ``dtype``,
    the schedule and noise options) with ``seeds`` seeds each (``seed`` .. ``seed + seeds -
    1``) and count the polysemantic neurons of each run, against the paper's n^2/(4m), as
    ``sparsity-gui sweep --no-figure`` does.

    ``m``: a list of values, or the CLI's text ("64,128,256" or "start:stop:step", stop
    included); every other option takes one value or a list (``l1=[1e-3, 1e-2]``,
    ``optimizer=["adamw", "gd-zero"]``; a list of l1 or lr schedules, each a list of
    (step, value) pairs or the option's text, sets each run's l1 or lr to its last value).
    None takes the CLI's default: n=64, m="64,128,256,512,1024", seeds=4, seed=0,
    steps=7500, optimizer="adamw", l1=lr=1e-3, sigma=1; ``paper=True`` the paper's
    settings (n=256, m=256..4096 by 256, 16 seeds: hours of work), which the options given
    override. Units as in train(): lam = l1/4. ``jobs``: runs trained side by side, one
    BLAS thread each (default: as many as fit, one per core up to 8); the results do not
    depend on it. ``scheduler``: train each run as a task on a dask.distributed cluster
    instead (the extra ``pip install 'sparsity-gui[cluster]'``): the address of a running
    scheduler, "tcp://HOST:PORT", or "local:N" to start N worker processes on this machine
    for this call; the rows are the same digit for digit (all but ``seconds``).
    ``overlap=True``: each run keeps W(0) W(T)^T, and the result's ``overlap`` holds their
    mean per cell (as `sweep --overlap`'s overlap.npy; ``plot("overlap")`` draws it).
    ``more``: any other option of the settings table that a sweep varies (its
    ``Setting.axis``), by its name, one value or a list, as the `sweep` command takes it."""
    from sparsity_gui.core.checks import check_list_kind
    from sparsity_gui.core.interference.axes import listed, readout_values
    from sparsity_gui.core.interference.headless import SCHEDULE_OPTIONS, sweep_order
    from sparsity_gui.core.interference.sweep import ROW_COLUMNS, cell_overlaps, cell_summaries, summarize

    paper, overlap = as_flag("paper", paper), as_flag("overlap", overlap)
    lists_given = dict(
        steps=steps,
        optimizer=optimizer,
        l1=l1,
        lr=lr,
        sigma=sigma,
        weight_decay=weight_decay,
        dtype=dtype,
        l1_warmup=l1_warmup,
        l1_schedule=l1_schedule,
        lr_warmup=lr_warmup,
        lr_decay=lr_decay,
        lr_decay_steps=lr_decay_steps,
        lr_schedule=lr_schedule,
        noise=noise,
        noise_sigma=noise_sigma,
        **table_options("sweep", more),
    )
    text = {name: listed(name, value) for name, value in lists_given.items()}
    check_list_kind("m", m)
    one = {name: value for name, value in lists_given.items() if text[name] is value}
    given = dict(
        n=as_whole(n),
        m=list(m) if isinstance(m, (list, tuple, range, np.ndarray)) else m,
        seeds=as_whole(seeds),
        **training_numbers(
            seed, one.get("steps"), one.get("optimizer"), one.get("l1"), one.get("lr"), one.get("sigma")
        ),
        no_interference=as_flag("no_interference", no_interference),
        weight_decay=as_number(one.get("weight_decay")),
        dtype=one.get("dtype"),
        paper=paper,
        jobs=as_whole(jobs),
        scheduler=scheduler,
        overlap=overlap,
        **schedule_options(*(one.get(k) for k in SCHEDULE_OPTIONS)),
        noise=one.get("noise"),
        noise_sigma=as_number(one.get("noise_sigma")),
        **{name: one.get(name) for name in more},  # converted by the door, as the CLI's text
    )
    given.update({name: value for name, value in text.items() if name not in one})
    if isinstance(given["m"], list):
        given["m"] = [as_whole(v) for v in given["m"]]
    # as the CLI's text, before the lists are taken out
    options = {**given_options(sweep, given), **{k: given[k] for k in more if given[k] is not None}}
    order = sweep_order(given)  # the sweep's front door, as the CLI's and the window's
    spec, workers, cluster = order.plan, order.jobs, order.scheduler
    rows = spec.run(workers=workers or 1, scheduler=cluster)
    summary = summarize(rows)
    options["no_figure"] = True  # the files of `sweep --no-figure`
    return SweepResult(
        spec=spec,
        rows={
            # a run never sparse: NaN, as sweep.csv's empty cell reads (run.json's null)
            name: readout_values(rows, name)
            if name == "steps_to_sparse"
            else np.array([getattr(r, name) for r in rows])
            for name in ROW_COLUMNS
        },
        m=np.asarray(summary.m).astype(np.int64),
        mean=np.asarray(summary.mean).copy(),
        std=np.asarray(summary.std).copy(),
        predicted=np.asarray(summary.predicted).copy(),
        jobs=workers,
        scheduler=cluster,
        sweep_rows=tuple(rows),
        options=options,
        groups=cell_summaries(spec, rows),
        overlap=cell_overlaps(spec, rows)[1] if spec.overlap else None,
    )
