"""The figures of `checkpoints`: a training run's snapshots as points over the curves the
theory predicts from its first snapshot, one figure per measure (|W|_1, |W|^2, the weights
above the zero tolerance, theta for a row or the polysemantic neurons for a matrix), with
the step on the x axis. The trained model's curve is solid; the note's flow (one row under
plain SGD, t = 4 lr (step - step0)) dashed. Drawn from compare.csv's and the curve's
columns (the JSON beside each figure holds them)."""

from __future__ import annotations

import numpy as np

from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.figures.draw import least_legend_size, panel_axes
from sparsity_gui.figures.scripted import panels_files

LABELS = {
    "norm1": r"$\|W\|_1$",
    "norm2": r"$\|W\|^2$ (mean over rows)",
    "nonzero": r"weights with $|w| >$ tolerance",
    "theta": r"$\theta = \lambda/(1-\|W\|^2)$",
    "polysemantic": "polysemantic neurons",
}

TITLES = {
    "norm1": "L1 norm",
    "norm2": "squared norm",
    "nonzero": "weights above the zero tolerance",
    "theta": "threshold theta",
    "polysemantic": "polysemantic neurons",
}


def snapshots_against_theory(fig, data, ax=None):
    """One measure: the snapshots (points), the trained model and the note's flow (curves)."""
    (ax,) = panel_axes(fig, ax)
    ax.plot(
        data["curve_step"],
        data["pred"],
        color="C0",
        label=data.get("pred_label", f"trained from step {int(data['first_step'])}"),
    )
    flow = np.asarray(data["flow"], float)
    if np.isfinite(flow).any():
        label = data.get("flow_label", r"note's flow, $t = 4\,lr\,$step")
        ax.plot(data["curve_step"], flow, color="C3", linestyle="--", label=label)
    ax.plot(
        data["step"],
        data["measured"],
        "o",
        color="black",
        markerfacecolor="none",
        markersize=4,
        label=f"snapshots ({len(data['step'])}) of {data['label']}",
        zorder=5,
    )
    ax.margins(x=0.03)  # the first and last snapshots' circles whole
    ax.set_xlabel(data.get("xlabel", "step"))
    ax.set_ylabel(data["ylabel"])
    ax.set_title(data["title"], fontsize="small")
    ax.legend(fontsize=least_legend_size(), handlelength=1.8)


def comparison_data(result, measure: str) -> dict:
    """One measure's figure data from a core.checkpoints.compare.Comparison."""
    from sparsity_gui.core.checkpoints.compare import COLUMNS, CURVE_COLUMNS

    def curve(name):
        return result.curve[:, CURVE_COLUMNS.index(name)]

    series = result.series
    from sparsity_gui.core.checkpoints.compare import _latent_word

    what = "the matrix" if series.pick == "matrix" else _latent_word(series)
    reference = bool(result.statements)  # not the paper's model: the curves are a reference
    first = int(series.steps[0])
    # the reference's mechanism (core/checkpoints/reference.py): the SAE's own TopK or JumpReLU
    mech = result.reference
    mechanism = f" with {mech.short}" if mech.sparsity != "l1" else ""
    setting = f"reference {mech.short}" if mech.sparsity != "l1" else f"l1 = {result.l1:g}"
    ylabel = LABELS[measure]
    if measure == "nonzero":  # the tolerance and why, as run.json says it
        ylabel = rf"weights with $|w| > {result.zero_tol:.3g}$"
    return {
        "measure": measure,
        "ylabel": ylabel,
        "xlabel": "optimizer step",
        "pred_label": (
            f"the paper's model{mechanism} from step {first} (a reference)"
            if reference
            else f"trained from step {first}"
        ),
        "zero_tolerance": result.zero_tol_note,
        "what_the_curves_are": list(result.statements),
        "label": series.label,
        "first_step": int(series.steps[0]),
        "step": result.rows[:, COLUMNS.index("optimizer_step")],
        "measured": result.rows[:, COLUMNS.index(measure)],
        "curve_step": curve("step"),
        "pred": curve(f"{measure}_pred"),
        "flow": curve(f"{measure}_flow"),
        "title": f"{what} · {result.optimizer}, {INTERFERENCE_SETTINGS['lr'].text(result.lr)}, {setting}",
        "flow_label": (
            rf"note's flow, FITTED $t = {result.time_per_step:.3g}\,$step"
            if result.time_fitted
            else r"note's flow, $t = 4\,lr\,$step"
        ),
    }


def comparison_measures(result) -> tuple[str, ...]:
    last = "polysemantic" if result.series.pick == "matrix" else "theta"
    return ("norm1", "norm2", "nonzero", last)


def comparison_figure_files(result, **how) -> dict[str, bytes]:
    """{<measure>.png, .svg, .pdf, .json, .py: bytes} for each measure of ``result``, and
    for its diagnostics (figures/diagnostics.py: rail_share, deaths, death_forecast)."""
    panels = [
        (
            measure,
            snapshots_against_theory,
            comparison_data(result, measure),
            f"{LABELS[measure]} against step",
        )
        for measure in comparison_measures(result)
    ]
    if result.diagnostics is not None:  # the rail, the deaths, the death forecast
        from sparsity_gui.figures.diagnostics import diagnostics_panels

        panels += diagnostics_panels(result)
    return panels_files(panels, (), **how)
