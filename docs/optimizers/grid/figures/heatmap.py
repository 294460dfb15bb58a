"""Redraws the figure beside this script from the JSON file of the same name.

Run `python <this file>` (numpy and matplotlib only): it reads <name>.json beside it
and writes <name>.png. Restyle it here: STYLE holds matplotlib's rcParams, SIZE the
size in inches, FORMATS what is written; heatmap() below draws the figure.
"""

import json
import sys
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

STYLE = {
    'pdf.fonttype': 42,
    'ps.fonttype': 42,
    'svg.fonttype': 'none',
    'font.family': 'DejaVu Sans',
    'mathtext.fontset': 'dejavusans',
    'axes.prop_cycle': "cycler('color', ['#0072B2', '#E69F00', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#F0E442', '#000000'])",
    'axes.spines.top': False,
    'axes.spines.right': False,
    'axes.formatter.use_mathtext': False,
    'axes.formatter.useoffset': False,
    'axes.formatter.limits': (-4, 5),
    'axes.autolimit_mode': 'data',
    'axes.xmargin': 0.0,
    'axes.ymargin': 0.04,
    'legend.frameon': False,
    'legend.handlelength': 2.2,
    'savefig.facecolor': 'white',
    'figure.facecolor': 'white',
    'svg.hashsalt': 'sparsity-gui',
    'path.simplify': True,
    'font.size': 8.0,
    'axes.titlesize': 8.0,
    'axes.labelsize': 8.0,
    'xtick.labelsize': 7.0,
    'ytick.labelsize': 7.0,
    'legend.fontsize': 7.0,
    'figure.titlesize': 9.0,
    'lines.linewidth': 1.0,
    'axes.linewidth': 0.6,
    'xtick.major.width': 0.6,
    'ytick.major.width': 0.6,
    'xtick.minor.width': 0.4,
    'ytick.minor.width': 0.4,
    'xtick.major.size': 3.0,
    'ytick.major.size': 3.0,
    'xtick.minor.size': 1.6,
    'ytick.minor.size': 1.6,
    'lines.markersize': 3.5,
    'figure.dpi': 72.0,
}
SIZE = (3.5, 2.6)  # inches
DPI = 300
TITLE = 'Readout over the two varied options'  # in each file's metadata (PDF Title, SVG title)
FORMATS = ("png",)  # add "svg", "pdf" for the vector versions


def arrays_of(obj):
    """The JSON's lists of numbers (null: NaN) as float arrays, a lone null as NaN;
    everything else as is."""
    if obj is None:
        return float("nan")
    if isinstance(obj, dict):
        return {key: arrays_of(value) for key, value in obj.items()}
    if isinstance(obj, list):
        if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in obj):
            return np.array([np.nan if v is None else v for v in obj], dtype=float)
        return [arrays_of(v) for v in obj]
    return obj


def panel_axes(fig, ax=None, ratios=(1,)):
    """The panel's sub-plots, stacked, sharing their x axis (only the lowest labels it):
    filling `fig` (a Figure or SubFigure), or in the place of `ax` when one is given."""
    rows = len(ratios)
    if ax is not None and rows == 1:
        return [ax]
    if ax is not None:
        fig, spec = ax.figure, ax.get_subplotspec()
        ax.remove()
        grid = spec.subgridspec(rows, 1, height_ratios=ratios)
    else:
        grid = fig.add_gridspec(rows, 1, height_ratios=ratios)
    axes = [fig.add_subplot(grid[0])]
    for i in range(1, rows):
        axes.append(fig.add_subplot(grid[i], sharex=axes[0]))
    for a in axes[:-1]:
        a.tick_params(labelbottom=False)
    return axes


def least_legend_size():
    """A small legend's text size in points: x-small of the style's font (5.6 pt of the
    paper style's 8 pt), but never under 6 pt, a journal's least."""
    from matplotlib.font_manager import FontProperties

    return max(6.0, FontProperties(size="x-small").get_size_in_points())


def log_ticks(ax):
    """Labelled ticks on each log axis of `ax`, chosen when drawn, for the axis's final
    length: decades where it spans several, else 1-2-5 or more multiples, as many as fit
    (at least three); one form on each axis: plain numbers where every label is short (0.02,
    500), else 10^k on every one (never 100 beside 10^4); no minor labels."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties
    from matplotlib.ticker import Formatter, Locator, NullFormatter

    font = FontProperties(size=rcParams["ytick.labelsize"]).get_size_in_points()

    class OneFormFormatter(Formatter):
        plain = True

        def set_locs(self, locs):
            super().set_locs(locs)
            lo, hi = sorted(self.axis.get_view_interval())
            shown = [v for v in locs if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]
            self.plain = all(1e-3 <= abs(v) < 1e4 for v in shown)

        def __call__(self, v, pos=None):
            if self.plain:
                return f"{v:g}"
            mantissa, exponent = f"{v:.0e}".split("e")
            power = f"10^{{{int(exponent)}}}"
            return f"${power}$" if mantissa == "1" else rf"${mantissa}\times{power}$"

    class FittingLogLocator(Locator):
        def __init__(self, vertical):
            self.vertical = vertical

        def __call__(self):
            return self.tick_values(*self.axis.get_view_interval())

        def tick_values(self, vmin, vmax):
            lo, hi = sorted((vmin, vmax))
            if not 0 < lo < hi:
                return []
            box = self.axis.axes.bbox
            length = (box.height if self.vertical else box.width) * 72.0 / self.axis.axes.figure.dpi
            most = max(3, int(length // ((2.0 if self.vertical else 4.5) * font)))
            k = np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
            # the coarsest multiples that give three ticks, thinned to what fits
            for subs in ((1,), (1, 3), (1, 2, 5), (1, 2, 3, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
                ticks = [s * 10.0**e for e in k for s in subs if lo <= s * 10.0**e <= hi]
                if len(ticks) >= 3:
                    break
            step = 1
            while len(ticks[::step]) > most and len(ticks[:: step + 1]) >= 3:
                step += 1
            ticks = ticks[::step]
            if len(ticks) < 3:  # less than a factor 3 or so: three round values inside
                ticks = [float(f"{v:.2g}") for v in np.geomspace(lo, hi, 5)[1:-1]]
            return ticks

    for axis, scale, vertical in ((ax.xaxis, ax.get_xscale(), False), (ax.yaxis, ax.get_yscale(), True)):
        if scale == "log":
            axis.set_major_locator(FittingLogLocator(vertical))
            axis.set_major_formatter(OneFormFormatter())
            axis.set_minor_formatter(NullFormatter())


def save_metadata(fmt, title=""):
    """savefig's metadata: the figure's title (PDF Title, SVG title, PNG Title) and, in
    SVG and PDF, no date (the same figure gives the same bytes)."""
    metadata = {"Title": title} if title else {}
    if fmt == "svg":
        metadata["Date"] = None
    elif fmt == "pdf":
        metadata["CreationDate"] = None
    return metadata


def cell_table(data, name):
    """A per-cell column of the data as (series, x): the JSON holds it row by row."""
    return np.asarray(data[name], float).reshape(len(data["series"]), len(data["x_labels"]))


def title_of(ax, data, note=""):
    """The settings every run shares (and ``note`` on a line of its own); a grid cut short
    says so, in red."""
    title = str(data["fixed"]) + (f"\n{note}" if note else "")
    runs, planned = int(data["runs"]), int(data["planned_runs"])
    if runs < planned:
        why = "cancelled" if data["cancelled"] else "incomplete"
        ax.set_title(f"{why}: {runs} of {planned} runs\n{title}", fontsize="small", color="C3")
    else:
        ax.set_title(title, fontsize="small")


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


if __name__ == "__main__":
    script = Path(__file__).resolve()
    source = script.with_suffix(".json")
    try:
        with open(source, encoding="utf-8") as f:
            data = arrays_of(json.load(f))
    except (OSError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        sys.exit(f"error: cannot read {source.name!r}: {exc}")
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=SIZE, layout="constrained")
        try:
            heatmap(fig, data)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            sys.exit(f"error: {source.name!r} is not this figure's data ({type(exc).__name__}: {exc})")
        for fmt in FORMATS:
            fig.savefig(script.with_suffix(f".{fmt}"), dpi=DPI, metadata=save_metadata(fmt, TITLE))
