"""Your training run's snapshots against the theory, for notebooks: ``compare_checkpoints``
is the `checkpoints` command (core/checkpoints/compare.py), its result a table like every other
result's, with ``plot(measure)`` and ``save(dir)``."""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sparsity_gui.api.results import Result, as_flag, as_number, as_whole, cli_argv, given_options
from sparsity_gui.core.files import ResultDir

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from sparsity_gui.core.checkpoints.compare import Comparison


class CheckpointComparison(Result):
    """Every snapshot of a series against the interference model trained from its first
    snapshot (``*_pred``: exact in the steps) and, for one row under plain SGD, the note's
    exact flow (``*_flow``). ``table``: compare.csv's rows in ``columns``' order; ``steps``:
    the snapshots' steps; ``flow_note``: why the flow's columns are empty, if they are.

    The diagnostics that hold for any trainer (core/checkpoints/diagnostics.py), from the snapshots
    alone: ``rail_share`` (per snapshot, the share of weights that moved at Adam's most,
    lr a step, since the one before; NaN at the first), ``saturation_share`` and
    ``saturated`` / ``saturation_verdict`` (the shrinking weights on the rail over the last
    20 % of the steps; ``saturated`` is None but under Adam, AdamW or signSGD), ``dead_share`` and
    ``dead_latent_share`` (SAELens' ``sparsity.safetensors``; NaN without it) per snapshot,
    ``deaths_begin`` and ``latent_deaths_begin`` (a step, or None), and the death forecast
    from the first snapshot: ``death_forecast`` and ``observed_deaths`` (a step per weight,
    NaN: not within the series), ``forecast_kind`` ("flow", "rail" or "") and
    ``forecast_spearman`` (their rank correlation)."""

    command = "checkpoints"

    def __init__(self, comparison: Comparison, path: str, options: dict[str, Any], wall_seconds: float):
        from sparsity_gui.core.checkpoints.compare import COLUMNS, finite_max

        self.comparison = comparison
        self.path = path
        self.options = options
        self.wall_seconds = wall_seconds
        self.columns = COLUMNS
        self.table = comparison.rows
        self.steps = comparison.rows[:, COLUMNS.index("optimizer_step")].astype(np.int64)
        self.flow_note = comparison.flow_note
        # what the curves are, when the series is not the paper's model (an SAE), and how
        # its steps were found
        self.statements = comparison.statements
        self.step_note = comparison.series.step_note
        self.model = comparison.series.model
        self.zero_tol = comparison.zero_tol
        self.max_abs_diff = finite_max(comparison.column("max_abs_diff"))
        self.max_abs_diff_flow = finite_max(comparison.column("max_abs_diff_flow"))
        # the t per step of the flow's columns when it was fitted to the snapshots (None:
        # t = 4 lr (step - step0), or no flow); FITTED, not predicted
        self.fitted_time_per_step = comparison.time_per_step if comparison.time_fitted else None
        diagnostics = comparison.diagnostics
        assert diagnostics is not None
        self.diagnostics = diagnostics
        self.rail_share = diagnostics.column("rail_share")
        self.saturation_share = diagnostics.saturation_share
        self.saturated = diagnostics.saturated
        self.saturation_verdict = diagnostics.verdict
        self.dead_share = diagnostics.column("dead_share")
        self.dead_latent_share = diagnostics.column("dead_latent_share")
        self.deaths_begin = diagnostics.deaths_begin
        self.latent_deaths_begin = diagnostics.latent_deaths_begin
        self.death_forecast = diagnostics.forecast.forecast
        self.observed_deaths = diagnostics.forecast.observed
        self.forecast_kind = diagnostics.forecast.kind
        self.forecast_spearman = diagnostics.forecast.spearman

    @property
    def measures(self) -> tuple[str, ...]:
        """The measures plot() draws: norm1, norm2, nonzero, and theta (a row) or
        polysemantic (the whole matrix)."""
        from sparsity_gui.figures.compare import comparison_measures

        return comparison_measures(self.comparison)

    def column(self, name: str) -> np.ndarray:
        """One column of the table by its name (see ``columns``)."""
        if name not in self.columns:
            raise ValueError(f"unknown column {name!r}; use one of {', '.join(self.columns)}")
        return self.comparison.column(name)

    def command_line(self, out: str | Path, save_options: Mapping[str, Any] | None = None) -> str:
        argv = cli_argv({**self.options, **(save_options or {})})
        return shlex.join(["sparsity-gui", self.command, self.path, *argv, "--out", str(out)])

    def save(
        self,
        out: str | Path,
        *,
        force: bool = False,
        figures: bool = False,
        style: Any = None,
        formats: Any = "png,svg,pdf",
    ) -> Path:
        """compare.csv and run.json into the folder ``out`` (new or empty; ``force``
        replaces a non-empty one), as `checkpoints` writes them, atomically; ``figures``:
        each measure's figure too (with its data and script) in ``style``, in ``formats``
        (as --formats: "png,svg,pdf", the default, or any of them, a comma list or a
        sequence of names)."""
        from sparsity_gui.figures.save import FORMATS, figure_formats

        formats = figure_formats(formats)  # refused before anything is written
        save_options: dict[str, Any] = {"figures": True} if figures else {}
        if style is not None:
            from sparsity_gui.figures.style import style_params

            style_params(style)  # refused before anything is written
            if isinstance(style, (str, os.PathLike)):
                save_options["style"] = str(style)
        if figures and formats != FORMATS:
            save_options["formats"] = formats
        return self._save(out, force, save_options, figures=figures, style=style, formats=formats)

    def _write(self, result_dir: ResultDir, command_line: str, **write_options: Any) -> None:
        """The command's files; ``figures=True`` (``style``, ``formats``) the figures too."""
        from sparsity_gui.core.checkpoints.compare import write_comparison

        figures, style = bool(write_options.get("figures", False)), write_options.get("style")

        write_comparison(result_dir, self.comparison, self.path, command_line, self.wall_seconds)
        if figures:
            from sparsity_gui.figures.compare import comparison_figure_files
            from sparsity_gui.figures.save import FORMATS, write_files

            files = comparison_figure_files(
                self.comparison, style=style, formats=write_options.get("formats", FORMATS)
            )
            write_files(result_dir.path("figures"), files)

    @property
    def diagnostics_figures(self) -> tuple[str, ...]:
        """The diagnostics plot() also draws: rail_share, deaths and (where a model gives
        one) death_forecast."""
        from sparsity_gui.figures.diagnostics import diagnostics_panels

        return tuple(name for name, *_ in diagnostics_panels(self.comparison))

    def plot(self, measure: str = "nonzero", ax: Axes | None = None, style: Any = None) -> Figure:
        """The snapshots of ``measure`` (one of ``measures``) as points over the predicted
        curves, or one of ``diagnostics_figures``, as `checkpoints --figures` draws it;
        into ``ax`` when given."""
        from sparsity_gui.core.errors import InputError
        from sparsity_gui.figures.compare import comparison_data, snapshots_against_theory
        from sparsity_gui.figures.diagnostics import diagnostics_panels
        from sparsity_gui.figures.scripted import plot_panel

        diagnostics = {name: (panel, data) for name, panel, data, _ in diagnostics_panels(self.comparison)}
        if measure in diagnostics:
            return plot_panel(*diagnostics[measure], ax, style)
        if measure not in self.measures:
            names = ", ".join((*self.measures, *diagnostics))
            raise InputError("measure", f"must be one of {names}, got {measure!r}")
        return plot_panel(snapshots_against_theory, comparison_data(self.comparison, measure), ax, style)

    def _table(self) -> tuple[Sequence[str], np.ndarray]:
        return self.columns, self.table

    def _summary(self) -> str:
        flow = "" if self.max_abs_diff_flow is None else f", |W - flow| <= {self.max_abs_diff_flow:.3g}"
        return (
            f"{len(self.steps)} snapshots, steps {self.steps[0]} to {self.steps[-1]}: "
            f"|W - trained model| <= {self.max_abs_diff:.3g}{flow}; {self.saturation_verdict.split(':')[0]}; "
            + ("no weight dies" if self.deaths_begin is None else f"deaths begin at step {self.deaths_begin}")
        )


def compare_checkpoints(
    path: str | os.PathLike[str],
    *,
    l1: float,
    lr: float,
    optimizer: str,
    tensor: str | None = None,
    row: int | None = None,
    latent: int | None = None,
    all_rows: bool = False,
    weight_decay: float | None = None,
    zero_tol: float | None = None,
    fit_time_scale: bool = False,
    sae: str | None = None,
) -> CheckpointComparison:
    """A series of snapshots from your training run (``path``: a folder of files named by
    their step, a SAELens run's checkpoints, a dictionary_learning trainer's folder, or one
    file with a stacked tensor and ``steps``) against the theory, from its first snapshot
    on: `sparsity-gui checkpoints`. ``tensor`` names each file's tensor; ``row`` /
    ``latent`` / ``all_rows`` pick one feature's encoding, an SAE's latent or the whole
    matrix; ``sae`` one SAE of a MultiSAETrainer run. For an SAE, ``statements`` says what
    the curves are (the paper's model from this initialisation: a reference). ``l1``, ``lr``,
    ``optimizer`` (sgd, gd-zero, gd, adam, adamw) and ``weight_decay`` are your run's;
    ``zero_tol`` is when a weight counts as zero (default 2 lr l1; 2 lr under Adam). ``fit_time_scale``
    (one row): the note's flow at t = tau (step - step0) with tau FITTED to the snapshots'
    |W|_1 (``fitted_time_per_step``; under Adam no time maps steps to the flow). Bad input
    raises ValueError in the command's words."""
    from sparsity_gui.core.checkpoints.compare import compare
    from sparsity_gui.core.checks import finite_number
    from sparsity_gui.core.errors import InputError
    from sparsity_gui.core.series import open_series

    def index(name: str, value: Any) -> int | None:
        whole = None if value is None else as_whole(value)
        if whole is not None and (isinstance(whole, bool) or not isinstance(whole, int) or whole < 0):
            raise InputError(name, f"must be a whole number >= 0, got {value!r}")
        return whole

    def number(name: str, value: Any) -> float | None:
        return None if value is None else finite_number(name, as_number(value))

    def required_number(name: str, value: Any) -> float:
        if value is None:
            raise TypeError(f"{name} must be a number, got None")
        return finite_number(name, as_number(value))

    if sae is not None and not isinstance(sae, str):
        raise TypeError(f"sae must be the name of a MultiSAETrainer run's SAE, not {type(sae).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a folder's or a file's path, not {type(path).__name__}")
    if tensor is not None and not isinstance(tensor, str):
        raise TypeError(f"tensor must be a tensor's name (a str), not {type(tensor).__name__}")
    if not isinstance(optimizer, str):
        raise TypeError(
            f"optimizer must be a str (sgd, gd-zero, gd, adam, adamw), not {type(optimizer).__name__}"
        )
    row_index, latent_index = index("row", row), index("latent", latent)
    every_row, fit_scale = as_flag("all_rows", all_rows), as_flag("fit_time_scale", fit_time_scale)
    l1_value, lr_value = required_number("l1", l1), required_number("lr", lr)
    decay, tolerance = number("weight_decay", weight_decay), number("zero_tol", zero_tol)
    values = dict(
        tensor=tensor,
        row=row_index,
        latent=latent_index,
        all_rows=every_row,
        l1=l1_value,
        lr=lr_value,
        optimizer=optimizer,
        weight_decay=decay,
        zero_tol=tolerance,
        fit_time_scale=fit_scale,
        sae=sae,
    )
    shown = str(os.fspath(path))
    series = open_series(shown, tensor, row=row_index, latent=latent_index, all_rows=every_row, sae=sae)
    started = time.perf_counter()
    comparison = compare(
        series,
        l1=l1_value,
        lr=lr_value,
        optimizer=optimizer,
        weight_decay=decay,
        zero_tol=tolerance,
        fit_time_scale=fit_scale,
    )
    options = given_options(compare_checkpoints, values)  # l1, lr, optimizer always: no defaults
    return CheckpointComparison(comparison, shown, options, time.perf_counter() - started)
