"""Redraws the figure beside this script from the JSON file of the same name.

Run `python <this file>` (numpy and matplotlib only): it reads <name>.json beside it
and writes <name>.png. Restyle it here: STYLE holds matplotlib's rcParams, SIZE the
size in inches, FORMATS what is written; knee_panel() below draws the figure.
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
TITLE = 'Final L0 and threshold rail share against C'  # in each file's metadata (PDF Title, SVG title)
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


def panel_legend(fig, ax, handles, labels, own_ax=False):
    """The panel's one legend, in as many columns as its width holds (about 1.7 in
    each): above the plots on the figure, or on `ax` when drawing into a given one. In a
    panel of a larger figure (a SubFigure: the layout's grid) the legend is compact (6 pt,
    tight rows, short samples, pinned runs' names cut to 20 characters) so that the data
    keep the panel's room."""
    import re

    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties
    from matplotlib.legend_handler import HandlerTuple

    compact = fig is not fig.figure
    # columns as wide as the longest entry (handle and text, estimated), as many as fit
    size = FontProperties(size=rcParams["legend.fontsize"]).get_size_in_points()
    if compact:
        size = max(6.0, 0.86 * size)
    handle = 1.5 if compact else rcParams["legend.handlelength"]

    if compact:  # plain labels (pinned runs' names) cut to what two columns hold
        labels = [
            label[:19].rstrip(" ,") + "…" if "$" not in label and len(label) > 20 else label
            for label in labels
        ]

    def shown(label):  # mathtext as the characters it shows: \\lambda is one
        return re.sub(r"[$^_{}]", "", re.sub(r"\\[A-Za-z]+", "x", label))

    chars = max((len(line) for label in labels for line in shown(label).split("\n")), default=1)
    entry = ((0.5 if compact else 0.56) * chars + handle + 2.0) * size
    width = fig.bbox.width * 72.0 / fig.dpi
    options = {
        "ncols": max(1, min(int(0.95 * width // entry), len(labels))),
        "handler_map": {tuple: HandlerTuple(ndivide=None, pad=0.3)},
        "columnspacing": 0.8 if compact else 1.0,
        "handletextpad": 0.4 if compact else 0.5,
        "borderaxespad": 0.2,
    }
    if compact:
        options.update(fontsize=size, handlelength=handle, labelspacing=0.2, borderpad=0.1)
    if own_ax:
        return ax.legend(handles, labels, loc="best", **options)
    if fig is fig.figure:  # a figure of its own: as tall as a legend of a quarter needs
        lines = sum(label.count("\n") + 1 for label in labels)  # a label may run over lines
        rows = -(-lines // options["ncols"])
        need = (rows * (1.0 + rcParams["legend.labelspacing"]) * size + 2 * size) / 72.0
        w, h = fig.get_size_inches()
        if need > 0.24 * h:
            fig.set_size_inches(w, need / 0.24)
    return fig.legend(handles, labels, loc="outside upper center", **options)


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
            knee_panel(fig, data)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            sys.exit(f"error: {source.name!r} is not this figure's data ({type(exc).__name__}: {exc})")
        for fmt in FORMATS:
            fig.savefig(script.with_suffix(f".{fmt}"), dpi=DPI, metadata=save_metadata(fmt, TITLE))
