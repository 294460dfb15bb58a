"""The scaling figures of the note's model: λ·T (time to one weight left), the fitted
decay constant c and the relative-variance plateau, each against m on a log axis, one
curve per λ (viridis, dark to green). Each run a faint point; the mean over seeds a dot
on the curve with ±1 sample standard deviation bars, filled where the run starts in the
note's regime (λ‖W(0)‖₁ ≤ 1/4: a balance of the two pushes exists) and hollow where it
does not. The curves of neighbouring λ are set apart by a few hundredths of a decade so
that their bars do not hide each other. The runs are scaling.csv's columns, the means and
bars core's cell model of the grid (core/note/scaling.scaling_cells, which the live panels
draw too); the JSON beside each figure holds both; `scaling_figure_files` writes the three."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from sparsity_gui.core.note.metrics import BALANCE_LIMIT  # the note's regime: lam ||W(0)||_1 <= 1/4
from sparsity_gui.core.note.scaling import scaling_cells
from sparsity_gui.figures.draw import least_legend_size, log_ticks, panel_axes
from sparsity_gui.figures.scripted import panels_files, row_columns

DODGE_DECADES = 0.025  # horizontal offset between the curves of neighbouring lam
RV_HALF_NORMAL = math.pi / 2.0 - 1.0  # Var/E^2 of a half-normal: the RV of W(0) for large m

FIGURES = {
    # file name: (scaling.csv column, y label, log y, title)
    "lam_t_one": ("lam_t_one", "$\\lambda T$ ($T$: one weight left)", True, "Time to one weight left"),
    # the bulk c (m' >= 10): the constant docs/guide.md says to quote (fitted_c, m' >= 2, is
    # mostly the last few survivors'); the file keeps its name, fitted_c.*
    "fitted_c": (
        "fitted_c_bulk",
        "bulk $c$ ($m$′ ≥ 10) in $w = w(0) + c\\,\\lambda t$",
        True,
        "Fitted decay constant (bulk, m′ ≥ 10)",
    ),
    "rel_var": (
        "rel_var_mean",
        "$\\mathrm{Var}[X]/E[X]^2$, mean while $m' \\geq 2$",
        False,
        "Relative variance",
    ),
}


def lam_text(lam):
    """λ as people write it: 10⁻³ or 2×10⁻³ in mathtext, else the shortest %g."""
    import math

    k = math.floor(math.log10(lam) + 1e-12)
    head = lam / 10.0**k
    if abs(head - round(head)) < 1e-9 and abs(k) >= 2:
        return f"$10^{{{k}}}$" if round(head) == 1 else f"${round(head)}\\times10^{{{k}}}$"
    return f"{lam:g}"


def scaling_panel(fig, data, ax=None):
    """One scaling.csv column against m, a curve per λ: runs, mean ± 1 SD per (m, λ)."""
    from matplotlib import colormaps
    from matplotlib.lines import Line2D

    (ax,) = panel_axes(fig, ax)
    log_y = bool(data["log_y"])
    m, lam, y = (np.asarray(data[k], float) for k in ("m", "lam", "value"))
    lams, swept = np.asarray(data["lam_values"], float), np.asarray(data["m_values"], float)
    # per cell, lam by lam: the mean and SD over seeds, in the note's regime or not
    cell_columns = ("cell_mean", "cell_std", "cell_regime")
    means, stds, regimes = (np.asarray(data[k], float).reshape(lams.size, swept.size) for k in cell_columns)
    viridis = colormaps["viridis"]
    drawn = y[np.isfinite(y) & ((y > 0) if log_y else True)]
    floor = 0.5 * float(drawn.min()) if drawn.size else 1.0  # where a bar reaching 0 ends
    handles, labels, hollow = [], [], False
    for i, value in enumerate(lams):
        colour = viridis(0.85 * (i / (lams.size - 1) if lams.size > 1 else 0.0))
        shift = 10.0 ** ((i - (lams.size - 1) / 2.0) * data["dodge_decades"])
        mine = (lam == value) & np.isfinite(y) & ((y > 0) if log_y else True)
        ax.plot(m[mine] * shift, y[mine], "o", color=colour, alpha=0.3, markeredgewidth=0, markersize=2.5)
        keep = np.isfinite(means[i]) & ((means[i] > 0) if log_y else True)
        cells, mean, std, regime = swept[keep], means[i][keep], stds[i][keep], regimes[i][keep] > 0.5
        if not cells.size:
            continue
        low = mean - std
        if log_y:  # a bar reaching zero or below ends at the floor
            low = np.where(low > 0, low, np.minimum(floor, mean))
        ax.errorbar(
            cells * shift,
            mean,
            yerr=[mean - low, std],
            color=colour,
            linewidth=0.7,
            capsize=1.5,
            linestyle="none",
            zorder=3,
        )
        ax.plot(cells * shift, mean, "-", color=colour, linewidth=0.9, zorder=4)
        ax.plot(cells[regime] * shift, mean[regime], "o", color=colour, markersize=3.5, zorder=5)
        ax.plot(
            cells[~regime] * shift,
            mean[~regime],
            "o",
            color=colour,
            markerfacecolor="white",
            markersize=3.5,
            zorder=5,
        )
        hollow |= bool((~regime).any())
        handles.append(Line2D([], [], color=colour, marker="o", markersize=3.5, linewidth=0.9))
        labels.append(f"$\\lambda$ = {lam_text(value)}")
    if hollow:
        handles.append(
            Line2D([], [], color="0.3", marker="o", markerfacecolor="white", linestyle="none", markersize=3.5)
        )
        labels.append("$\\lambda\\|W(0)\\|_1 > 1/4$")
    reference = data["reference"]
    if reference is not None and np.isfinite(reference):
        ax.axhline(reference, color="0.45", linestyle="--", linewidth=0.7, zorder=1)
        handles.append(Line2D([], [], color="0.45", linestyle="--", linewidth=0.7))
        labels.append(data["reference_label"])
    ax.set_xscale("log")
    if swept.size:
        pad = 10.0 ** (0.5 if swept[0] == swept[-1] else 0.08)
        ax.set_xlim(swept[0] / pad, swept[-1] * pad)
    if log_y:
        ax.set_yscale("log")
        if drawn.size:
            ax.set_ylim(min(floor, float(drawn.min())) / 1.3, float(drawn.max()) * 1.4)
    log_ticks(ax)
    ax.set_xlabel("$m$ (weights)")
    ax.set_ylabel(data["y_label"])
    if labels:
        ax.legend(
            handles,
            labels,
            loc="best",
            fontsize=least_legend_size(),
            handlelength=1.6,
            ncols=1 + (len(labels) > 4),
        )


SCRIPT_FUNCTIONS = (lam_text,)


def scaling_data(
    rows: Sequence, figure: str, m_values: Sequence[int] = (), lam_values: Sequence[float] = ()
) -> dict:
    """One figure's data from ScalingRows: m, λ, the figure's column and λ‖W(0)‖₁ per run
    (scaling.csv's columns), the grid's plan, and per cell (λ by λ, m across) the cell
    model's mean and SD over seeds and whether it is in the note's regime (1, filled)."""
    column, y_label, log_y, _title = FIGURES[figure]
    rows = list(rows)
    cells = scaling_cells(rows, column, m_values, lam_values)
    return {
        **row_columns(rows, ("m", "lam", "seed", "lam_norm1_0")),
        "value": np.array([getattr(r, column) for r in rows], float),
        "column": column,
        "m_values": np.array(cells.m_values, float),
        "lam_values": np.array(cells.lam_values, float),
        "cell_mean": cells.table.mean,
        "cell_std": cells.table.std,
        "cell_regime": cells.regime.astype(float),
        "y_label": y_label,
        "log_y": log_y,
        "balance_limit": BALANCE_LIMIT,
        "dodge_decades": DODGE_DECADES,
        "reference": RV_HALF_NORMAL if figure == "rel_var" else None,
        "reference_label": "$\\pi/2 - 1$ (half-normal $W(0)$)" if figure == "rel_var" else "",
    }


def scaling_figure_files(grid, rows: Sequence, **how) -> dict[str, bytes]:
    """{lam_t_one, fitted_c, rel_var}.{png, svg, pdf, json, py}: bytes (``grid``: the
    ScalingGrid whose plan fixes the axes, or None for the rows alone; ``how``: the
    style, dpi, formats and width of scripted.panels_files)."""
    m_values = grid.m_values if grid is not None else ()
    lam_values = grid.lam_values if grid is not None else ()
    panels = [
        (name, scaling_panel, scaling_data(rows, name, m_values, lam_values), title)
        for name, (_column, _label, _log, title) in FIGURES.items()
    ]
    return panels_files(panels, SCRIPT_FUNCTIONS, **how)
