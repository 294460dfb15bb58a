"""A JumpReLU sweep's knee figure (issue 51): the final L0 per input and the threshold rail
share against the L0 coefficient C, one curve per value of the other varied options (the
learning rate), each the median over seeds with its 10-90 % band; the knee where C stops
mattering (core/interference/knee.py, its definition in the JSON's "knee_definition")
marked on each curve, and each curve named with the threshold Adam can reach,
θ0 + Σ lr. The medians and bands are core's cell model (core/interference/cells.py),
which the grid's other figures draw too; `knee_figure_files` writes the files."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sparsity_gui.core.interference.axes import row_value
from sparsity_gui.core.interference.cells import BAND, GridLayout, fixed_text, grid_cells
from sparsity_gui.core.interference.knee import KNEE_DEFINITION, KNEE_TOLERANCE, knee
from sparsity_gui.core.interference.schedules import lr_sum
from sparsity_gui.figures.draw import log_ticks, panel_axes, panel_legend
from sparsity_gui.figures.interference.grid import fixed_lines, title_of
from sparsity_gui.figures.scripted import panels_files

NAME = "knee"
L0_READOUT, RAIL_READOUT = "l0_per_input", "threshold_rail_share"


def knee_drawn(spec) -> bool:
    """Whether a sweep of ``spec`` draws the knee figure: a JumpReLU grid whose first
    varied option (its figures' x axis) is the L0 coefficient, over two values or more."""
    varied = spec.varied
    return bool(varied) and varied[0] == "l0" and len(spec.values_of("l0")) > 1


def knee_panel(fig, data, ax=None):
    """Final L0 per input (top) and threshold rail share (bottom) against C, per series a
    median curve with its 10-90 % band; each series' knee an open circle on both its
    curves."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    own = ax is not None
    top, bottom = panel_axes(fig, ax, ratios=(3, 2))
    c = np.asarray(data["c"], float)
    shape = (len(data["series"]), c.size)
    handles, labels = [], []
    for s, label in enumerate(data["series"]):
        colour = f"C{s % 10}"
        k = data["knees"][s]
        k = None if k is None or not np.isfinite(k) else float(k)
        for a, name in ((top, "l0"), (bottom, "rail")):
            med, lo, hi = (
                np.asarray(data[f"{name}_{q}"], float).reshape(shape)[s] for q in ("median", "p10", "p90")
            )
            ok = np.isfinite(med)
            a.fill_between(c[ok], lo[ok], hi[ok], color=colour, alpha=0.18, linewidth=0, zorder=2)
            line = a.plot(c[ok], med[ok], "o-", color=colour, markersize=3, linewidth=1.2, zorder=3)[0]
            if k is not None:  # an open circle on each curve at its knee (knees may share a C)
                at = int(np.argmin(np.abs(c - k)))
                a.plot([k], [med[at]], "o", markersize=7, markerfacecolor="none", color=colour, zorder=4)
            if name == "l0":
                handles.append(line)
        where = f"knee at $C = {k:g}$" if k is not None else "no knee in the grid"
        reach = float(data["reachable"][s])
        labels.append(f"{label}: {where}; $\\theta_0 + \\Sigma\\,\\mathrm{{lr}} = {reach:.3g}$")
    handles.append(
        Line2D([], [], color="0.3", marker="o", markersize=7, markerfacecolor="none", linestyle="none")
    )
    labels.append(f"knee: L0 changes < {float(data['tolerance']):.0%} per decade of $C$ after it")
    handles.append(Patch(color="0.5", alpha=0.3, linewidth=0))
    labels.append(str(data["band"]))
    for a in (top, bottom):
        a.set_xscale("log")
        a.set_xlim(c.min() / 1.4, c.max() * 1.4)
    log_ticks(bottom)
    top.set_ylim(0, float(data["m"]) * 1.04)
    top.set_ylabel("final L0 per input\n(units kept)")
    bottom.set_ylim(0, max(0.05, float(np.nanmax(np.asarray(data["rail_p90"], float), initial=0.0)) * 1.15))
    bottom.set_ylabel("threshold\nrail share")
    bottom.set_xlabel("JumpReLU's L0 coefficient $C$")
    title_of(top, data)
    panel_legend(fig, top, handles, labels, own_ax=own)


def knee_data(rows: Sequence, spec, cancelled: bool = False) -> dict:
    """The knee figure's data from SweepRows and their SweepSpec (knee_drawn): C, and per
    series (the other varied options' combinations) the cell model's median, 10 % and 90 %
    of the final L0 per input and of the threshold rail share, row by row; its knee (None:
    none in the grid) and θ0 + Σ lr."""
    layout = GridLayout.of(spec)
    l0_cells, rail_cells = (grid_cells(layout, rows, r) for r in (L0_READOUT, RAIL_READOUT))
    runs = {}  # each series' run (its first C): the threshold Adam can reach over it
    for cell in spec.cells():
        p = spec.run_of(cell, spec.base.seed)
        runs.setdefault(tuple(row_value(p, a) for a in layout.others), p)
    reachable = [
        float(runs[combo].threshold_init + lr_sum(runs[combo], 0, runs[combo].steps))
        for combo in layout.combos
    ]
    c = [float(v) for v in layout.x_values]
    return {
        "c": np.array(c, float),
        "series": layout.series_labels(),
        "m": spec.base.m,
        "l0_median": l0_cells.median,
        "l0_p10": l0_cells.p10,
        "l0_p90": l0_cells.p90,
        "rail_median": rail_cells.median,
        "rail_p10": rail_cells.p10,
        "rail_p90": rail_cells.p90,
        "cell_runs": l0_cells.runs.astype(float),
        "knees": [knee(c, med) for med in l0_cells.median],
        "tolerance": KNEE_TOLERANCE,
        "knee_definition": KNEE_DEFINITION,
        "reachable": reachable,
        "reachable_definition": "θ0 + Σ lr over the steps: where Adam's usual rate takes a threshold",
        "band": BAND,
        "fixed": fixed_text(spec, math=True),
        "runs": l0_cells.rows,
        "planned_runs": layout.planned_runs,
        "cancelled": bool(cancelled),
    }


def knee_figure_files(spec, rows: Sequence, cancelled: bool = False, **how) -> dict[str, bytes]:
    """{knee.png, .svg, .pdf, .json, .py: bytes} of a JumpReLU sweep over C (knee_drawn);
    rows fewer than the plan's are marked as incomplete (``cancelled``: as cancelled).
    ``how``: the style, dpi, formats and width of scripted.panels_files."""
    data = knee_data(rows, spec, cancelled)
    title = "Final L0 and threshold rail share against C"
    return panels_files([(NAME, knee_panel, data, title)], (fixed_lines, title_of), **how)
