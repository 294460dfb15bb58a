"""$\|W\|^2$ (mean over rows) against step: redraws norm2.png from norm2.json (the arrays it was drawn from).

Run `python norm2.py` in this folder (numpy and matplotlib only). Restyle it here:
STYLE holds matplotlib's rcParams, SIZE the size in inches, FORMATS what is written;
snapshots_against_theory() below draws the figure.
"""

import json
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
TITLE = '$\\|W\\|^2$ (mean over rows) against step'  # in each file's metadata (PDF Title, SVG title)
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


def save_metadata(fmt, title=""):
    """savefig's metadata: the figure's title (PDF Title, SVG title, PNG Title) and, in
    SVG and PDF, no date (the same figure gives the same bytes)."""
    metadata = {"Title": title} if title else {}
    if fmt == "svg":
        metadata["Date"] = None
    elif fmt == "pdf":
        metadata["CreationDate"] = None
    return metadata


def snapshots_against_theory(fig, data, ax=None):
    """One measure: the snapshots (points), the trained model and the note's flow (curves)."""
    (ax,) = panel_axes(fig, ax)
    ax.plot(
        data["curve_step"], data["pred"], color="C0", label=f"trained from step {int(data['first_step'])}"
    )
    flow = np.asarray(data["flow"], float)
    if np.isfinite(flow).any():
        ax.plot(data["curve_step"], flow, color="C3", linestyle="--", label=r"note's flow, $t = 4\,lr\,$step")
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
    ax.set_xlabel("step")
    ax.set_ylabel(data["ylabel"])
    ax.set_title(data["title"], fontsize="small")
    ax.legend(fontsize=least_legend_size(), handlelength=1.8)


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    with open(here / "norm2.json", encoding="utf-8") as f:
        data = arrays_of(json.load(f))
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=SIZE, layout="constrained")
        snapshots_against_theory(fig, data)
        for fmt in FORMATS:
            fig.savefig(here / f"norm2.{fmt}", dpi=DPI, metadata=save_metadata(fmt, TITLE))
