"""A sweep's figures when it varies more than m (core/interference/axes.py): a readout
(polysemantic neurons, steps to sparsity, rail share, ...) against the first varied option,
one curve per value of the others, each the median over seeds with a band from the 10th
to the 90th percentile (the paper's "all curves" figure); and, with two varied options, a
heatmap of the readout's median over seeds, one cell per pair. What they draw is core's
cell model (core/interference/cells.py), which the live panels draw too: the JSON beside
each figure holds its cells' statistics and texts; `grid_figure_files` writes them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sparsity_gui.core.interference.axes import (
    AXIS_LABELS,
    DEFAULT_READOUT,
    READOUTS,
    value_text,
)
from sparsity_gui.core.interference.cells import (
    BAND,
    CURVES,
    HEATMAP,
    GridLayout,
    fixed_text,
    grid_cells,
    grid_figures,
)
from sparsity_gui.figures.draw import least_legend_size, log_ticks, panel_axes, panel_legend
from sparsity_gui.figures.scripted import panels_files


def axis_positions(ax, data):
    """Where the x values sit: the numbers themselves (log where data says so), or 0, 1, ...
    with the values as tick labels (an optimizer, a schedule)."""
    labels = list(data["x_labels"])
    if data["x_numeric"]:  # every planned value in view, with or without runs yet
        pos = np.asarray(data["x_values"], float)
        lo, hi = float(pos.min()), float(pos.max())
        if data["x_log"]:
            ax.set_xscale("log")
            ax.set_xlim(lo / 1.25, hi * 1.25)
        else:
            room = 0.04 * (hi - lo) or 0.05 * abs(lo) or 0.5
            ax.set_xlim(lo - room, hi + room)
        return pos
    pos = np.arange(len(labels), dtype=float)
    ax.set_xlim(-0.5, len(labels) - 0.5)
    long = max((len(s) for s in labels), default=0) > 10
    ax.set_xticks(pos, labels, rotation=25 if long else 0, ha="right" if long else "center")
    return pos


def fixed_lines(ax, fixed: str) -> str:
    """The settings every run shares (' · ' between two) in as many lines as the axes'
    width holds at the title's size, a line break only between two settings."""
    from matplotlib.font_manager import FontProperties

    root = ax.figure.figure  # a layout's panel is a SubFigure of the figure
    inches = ax.get_position().width * root.get_figwidth()
    most = max(24, int(inches * 72.0 / (0.55 * FontProperties(size="small").get_size_in_points())))
    lines, line = [], ""
    for part in fixed.split(" · "):
        if line and len(line) + 3 + len(part.replace("$", "")) > most:
            lines.append(line)
            line = part
        else:
            line = f"{line} · {part}" if line else part
    return "\n".join([*lines, line])


def title_of(ax, data, note=""):
    """The settings every run shares (and ``note`` on a line of its own); a grid cut short
    says so, in red."""
    title = fixed_lines(ax, str(data["fixed"])) + (f"\n{note}" if note else "")
    runs, planned = int(data["runs"]), int(data["planned_runs"])
    if runs < planned:
        why = "cancelled" if data["cancelled"] else "incomplete"
        ax.set_title(f"{why}: {runs} of {planned} runs\n{title}", fontsize="small", color="C3")
    else:
        ax.set_title(title, fontsize="small")


def cell_table(data, name):
    """A per-cell column of the data as (series, x): the JSON holds it row by row."""
    return np.asarray(data[name], float).reshape(len(data["series"]), len(data["x_labels"]))


def curves(fig, data, ax=None):
    """The readout against the first varied option: per value of the others a curve of the
    median over seeds, its 10-90 % band shaded; the paper's n²/(4m) dashed for the
    polysemantic count."""
    from matplotlib.patches import Patch

    own = ax is not None  # drawn into a given ax: its legend on it
    (ax,) = panel_axes(fig, ax)
    series = list(data["series"])
    median, p10, p90 = (cell_table(data, k) for k in ("median", "p10", "p90"))
    predicted = cell_table(data, "predicted") if np.asarray(data["predicted"]).size else None
    pos = axis_positions(ax, data)
    handles, labels = [], []
    for s, label in enumerate(series):
        med, lo, hi = median[s], p10[s], p90[s]
        colour = f"C{s % 10}"
        ok = np.isfinite(med)
        if data["x_numeric"]:  # a curve over numbers, its band shaded
            ax.fill_between(pos[ok], lo[ok], hi[ok], color=colour, alpha=0.18, linewidth=0, zorder=2)
            (line,) = ax.plot(pos[ok], med[ok], "o-", color=colour, markersize=3, linewidth=1.2, zorder=3)
        else:  # values without an order between them: no line joins them, the band a bar,
            # the series side by side at each value (the first and last 0.3 apart)
            at = pos[ok] + 0.15 * (2 * s - (len(series) - 1)) / max(1, len(series) - 1)
            ax.vlines(at, lo[ok], hi[ok], color=colour, alpha=0.45, linewidth=4, zorder=2)
            (line,) = ax.plot(at, med[ok], "o", color=colour, markersize=4, zorder=3)
        handles.append(line)
        labels.append(label or "median")
        if predicted is not None:
            ax.plot(pos, predicted[s], "--", color=colour, linewidth=0.9, zorder=2)
    if predicted is not None:
        handles.append(ax.plot([], [], "--", color="0.3", linewidth=0.9)[0])
        labels.append("$n^2/(4m)$")
    handles.append(Patch(color="0.5", alpha=0.3 if data["x_numeric"] else 0.45, linewidth=0))
    labels.append(str(data["band"]))
    if data["without_value"]:
        handles.append(Patch(color="none"))
        labels.append(f"{int(data['without_value'])} of {int(data['runs'])} runs {data['missing']}")
    if data["value_log"]:
        ax.set_yscale("log")
    if data["x_log"] or data["value_log"]:
        log_ticks(ax)
    ax.set_xlabel(str(data["x_label"]))
    ax.set_ylabel(str(data["value_label"]))
    title_of(ax, data)
    panel_legend(fig, ax, handles, labels, own_ax=own)


def heatmap(fig, data, ax=None):
    """The readout's median over seeds for every pair of the two varied options, its text
    written in each cell; a cell whose runs have no value (never sparse) hatched, one
    without a run left blank."""
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    (ax,) = panel_axes(fig, ax)
    nx, ny = len(data["x_labels"]), len(data["s_labels"])
    grid = cell_table(data, "median")
    finite = grid[np.isfinite(grid)]
    log = bool(data["value_log"]) and finite.size and finite.min() > 0
    norm = LogNorm(finite.min(), finite.max()) if log and finite.max() > finite.min() else None
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis", norm=norm, interpolation="nearest")
    x_labels = list(data["x_labels"])
    long = max((len(s) for s in x_labels), default=0) > 10
    ax.set_xticks(np.arange(nx), x_labels, rotation=25 if long else 0, ha="right" if long else "center")
    ax.set_yticks(np.arange(ny), list(data["s_labels"]))
    ax.tick_params(length=0)
    for k, text in enumerate(data["cell_texts"]):  # the text in each cell, dark on light colours
        j, i = divmod(k, nx)
        if text:
            r, g, b, _ = image.cmap(image.norm(grid[j, i]))
            ink = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
            ax.text(i, j, text, ha="center", va="center", color=ink, fontsize=least_legend_size())
    ran = cell_table(data, "cell_runs") > 0
    for j, i in zip(*np.nonzero(ran & ~np.isfinite(grid)), strict=True):
        ax.add_patch(
            Rectangle((i - 0.5, j - 0.5), 1, 1, facecolor="0.92", edgecolor="0.6", hatch="///", linewidth=0)
        )
    bar = fig.colorbar(image, ax=ax, fraction=0.06, pad=0.03)
    bar.set_label(f"median {data['value_label']}")
    if norm is not None:
        log_ticks(bar.ax)
    ax.set_xlabel(str(data["x_label"]))
    ax.set_ylabel(str(data["s_label"]))
    notes = [f"hatched: {data['missing']}"] if (ran & ~np.isfinite(grid)).any() else []
    if not ran.all() and ran.any():
        notes.append("blank: no run finished")
    title_of(ax, data, " · ".join(notes))


def overlap(fig, data, ax=None):
    """W(0) W(T)^T averaged over each cell's seeds, a panel per cell (the first
    data["shown"] of them), features by features, blue negative and red positive on one
    scale: a feature that kept its initial direction is a red diagonal cell; the paper's
    correlation figure."""
    k, n = len(data["cells"]), int(data["n"])
    rows = -(-k // 4)
    cols = -(-k // rows)  # balanced: 5 or 6 cells in two rows of three
    if ax is None:  # a figure of its own: as tall as square panels of its width need
        w, _ = fig.get_size_inches()
        fig.set_size_inches(w, rows * 0.82 * w / (cols + 0.35) + 0.75)
    images = np.asarray(data["images"], float).reshape(k, -1)
    side = int(round(images.shape[1] ** 0.5))
    images = images.reshape(k, side, side)
    if ax is not None:
        fig, spec = ax.figure, ax.get_subplotspec()
        ax.remove()
        grid = spec.subgridspec(rows, cols)
    else:
        grid = fig.add_gridspec(rows, cols)
    level = float(data["level"])
    shown = None
    axes = []
    for i in range(k):
        a = fig.add_subplot(grid[i // cols, i % cols])
        axes.append(a)
        edges = np.linspace(0, n, side + 1)
        shown = a.pcolormesh(edges, edges, images[i], cmap="RdBu_r", vmin=-level, vmax=level)
        a.set_xlim(0, n)
        a.set_ylim(n, 0)  # feature 0 at the top, as a matrix is printed
        a.set_aspect("equal")
        a.set_title(f"{data['cells'][i]} ({int(data['runs'][i])})", fontsize="small")
        a.tick_params(labelsize=least_legend_size())
        if i % cols:
            a.tick_params(labelleft=False)
        else:
            a.set_ylabel("feature $i$ at the start", fontsize="small")
        if i // cols == rows - 1 or i + cols >= k:
            a.set_xlabel("feature $j$ at the end", fontsize="small")
        else:
            a.tick_params(labelbottom=False)
    bar = fig.colorbar(shown, ax=axes, fraction=0.05, pad=0.03)
    bar.set_label("$W_i(0) \\cdot W_j(T)$, mean over seeds")
    bar.outline.set_linewidth(0.4)
    more = f"; the first {k} of {k + int(data['more'])} cells" if data["more"] else ""
    fig.suptitle(f"{data['names']} (runs){more}", fontsize="small")


SCRIPT_FUNCTIONS = (cell_table, axis_positions, fixed_lines, title_of)
OVERLAP_SHOWN = 8  # cells drawn in the overlap figure; overlap.npy holds them all
OVERLAP_PIXELS = 128  # a larger n is pooled to this many cells a side, by largest |value|


def overlap_data(spec, rows: Sequence) -> dict:
    """The overlap figure's data: each cell's mean W(0) W(T)^T (sweep.cell_overlaps), the
    first OVERLAP_SHOWN cells that have runs, pooled to OVERLAP_PIXELS a side."""
    from sparsity_gui.core.interference.image import max_abs_pool
    from sparsity_gui.core.interference.sweep import cell_overlaps

    params, mean, count = cell_overlaps(spec, rows)
    have = [i for i, c in enumerate(count) if c > 0]
    shown = have[:OVERLAP_SHOWN]
    n = spec.base.n
    f = max(1, -(-n // OVERLAP_PIXELS))
    images = [max_abs_pool(mean[i], f, f) if f > 1 else mean[i] for i in shown]
    finite = [float(np.nanmax(np.abs(im))) for im in images if np.isfinite(im).any()]
    cells = [", ".join(value_text(a, v) for a, v in params[i].items()) for i in shown]
    return {
        "n": n,
        "names": ", ".join(a.replace("_", " ") for a in spec.varied) or "all runs",
        "cells": [c or "all" for c in cells],
        "runs": [count[i] for i in shown],
        "images": np.array(images).ravel() if images else np.array([]),
        "level": max(1.0, *finite) if finite else 1.0,
        "more": len(have) - len(shown),
    }


def overlap_figure_files(spec, rows: Sequence, **how) -> dict[str, bytes]:
    """{overlap.png, .svg, .pdf, .json, .py: bytes} of a sweep with overlap=True whose rows
    kept it (none when no row did: a resumed sweep's earlier runs)."""
    data = overlap_data(spec, rows)
    if not data["cells"]:
        return {}
    if how.get("width") is None and len(data["cells"]) > 2:
        how["width"] = 7.0  # more than two cells: the text width
    return panels_files([("overlap", overlap, data, "W(0) W(T)^T, mean over seeds")], (), **how)


# --- the figures' data --------------------------------------------------------------------
def grid_data(rows: Sequence, spec, readout: str = DEFAULT_READOUT, cancelled: bool = False) -> dict:
    """The curves' and the heatmap's data from SweepRows and their SweepSpec: the cell
    model's (core/interference/cells.py) layout, the first varied option on x and the
    others' combinations as the series (the heatmap's y: the second, when there are two),
    and per cell, row by row, its runs, its readout's median and 10/90 % quantiles over
    seeds and the text written in it."""
    layout = GridLayout.of(spec)
    cells = grid_cells(layout, rows, readout)
    x_axis, others = layout.x_axis, layout.others
    numeric = layout.x_numeric
    polysemantic = cells.readout == "polysemantic"
    return {
        "readout": cells.readout,
        "value_label": READOUTS[cells.readout],
        "x_label": AXIS_LABELS[x_axis],
        "x_name": x_axis,
        # the x axis: numbers where the option is one (log when they span a decade or
        # more), else its values as tick labels
        "x_labels": layout.x_labels(),
        "x_values": np.array([float(v) if numeric else np.nan for v in layout.x_values], float),
        "x_numeric": numeric,
        "x_log": layout.x_log,
        "s_label": AXIS_LABELS[others[0]] if len(others) == 1 else "",
        "s_labels": layout.y_labels(),  # the heatmap's y ticks: the values alone
        "series": layout.series_labels(),  # named in full in the legend
        "cell_runs": cells.runs.astype(float),
        "median": cells.median,
        "p10": cells.p10,
        "p90": cells.p90,
        "cell_texts": [t for row in cells.texts() for t in row],
        "predicted": np.where(cells.runs > 0, layout.predicted, np.nan) if polysemantic else np.array([]),
        "value_log": cells.value_log,
        "without_value": cells.without_value,
        "band": BAND,
        "missing": cells.missing,
        "fixed": fixed_text(spec, math=True),
        "runs": cells.rows,
        "planned_runs": layout.planned_runs,
        "cancelled": bool(cancelled),
    }


# the figures a sweep of ``spec`` draws here: core's rule, which the live tab follows too
grid_panels = grid_figures
PANELS = {CURVES: curves, HEATMAP: heatmap}
TITLES = {CURVES: "Readout against the first varied option", HEATMAP: "Readout over the two varied options"}


def grid_figure_files(spec, rows: Sequence, readout: str = DEFAULT_READOUT, cancelled: bool = False, **how):
    """{curves.png, ..., heatmap.py: bytes} of a sweep (grid_panels says which); ``how``:
    the style, dpi, formats and width of scripted.panels_files."""
    data = grid_data(rows, spec, readout, cancelled)
    panels = [(name, PANELS[name], data, TITLES[name]) for name in grid_panels(spec)]
    return panels_files(panels, SCRIPT_FUNCTIONS, **how)


def sweep_figures(
    spec, rows: Sequence, readout: str = DEFAULT_READOUT, cancelled: bool = False, extras: bool = True, **how
) -> dict[str, bytes]:
    """Every figure `sweep --out` draws for ``rows`` of ``spec``, and the Sweep tab's Save
    and Export all with it: a grid's heatmap or curves of ``readout`` (more than m varied),
    else the count against m; with ``extras``, the overlaps W(0) W(T)^T (overlap=True) and
    the knee of a JumpReLU grid over l0 (knee.knee_drawn). ``how``: the style, dpi, formats
    and width of scripted.panels_files."""
    from sparsity_gui.figures.interference.knee import knee_drawn, knee_figure_files
    from sparsity_gui.figures.interference.sweep import sweep_figure_files

    if grid_panels(spec):
        files = grid_figure_files(spec, rows, readout, cancelled=cancelled, **how)
    else:
        files = sweep_figure_files(spec, rows, cancelled=cancelled, **how)
    if extras and spec.overlap:
        files.update(overlap_figure_files(spec, rows, **how))
    if extras and knee_drawn(spec):
        files.update(knee_figure_files(spec, rows, cancelled=cancelled, **how))
    return files
