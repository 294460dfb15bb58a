"""Time to one weight left: redraws lam_t_one.png from lam_t_one.json (the arrays it was drawn from).

Run `python lam_t_one.py` in this folder (numpy and matplotlib only). Restyle it here:
STYLE holds matplotlib's rcParams, SIZE the size in inches, FORMATS what is written;
scaling_panel() below draws the figure.
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


def log_ticks(ax):
    """Labelled ticks on each log axis of `ax`, chosen when drawn, for the axis's final
    length: decades where it spans several, else 1-2-5 or more multiples, as many as fit
    (at least three); plain numbers where short (0.02, 500), 10^k beyond; no minor labels."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties
    from matplotlib.ticker import FuncFormatter, Locator, NullFormatter

    font = FontProperties(size=rcParams["ytick.labelsize"]).get_size_in_points()

    def text(v, _pos=None):
        if 1e-3 <= abs(v) < 1e4:
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
            axis.set_major_formatter(FuncFormatter(text))
            axis.set_minor_formatter(NullFormatter())


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
    start = np.asarray(data["lam_norm1_0"], float)
    lams = np.asarray(data["lam_values"], float)
    viridis = colormaps["viridis"]
    drawn = y[np.isfinite(y) & ((y > 0) if log_y else True)]
    floor = 0.5 * float(drawn.min()) if drawn.size else 1.0  # where a bar reaching 0 ends
    handles, labels, hollow = [], [], False
    for i, value in enumerate(lams):
        colour = viridis(0.85 * (i / (lams.size - 1) if lams.size > 1 else 0.0))
        shift = 10.0 ** ((i - (lams.size - 1) / 2.0) * data["dodge_decades"])
        mine = (lam == value) & np.isfinite(y) & ((y > 0) if log_y else True)
        ax.plot(m[mine] * shift, y[mine], "o", color=colour, alpha=0.3, markeredgewidth=0, markersize=2.5)
        cells = np.unique(m[mine])
        mean = np.array([y[mine & (m == v)].mean() for v in cells])
        std = np.array(
            [y[mine & (m == v)].std(ddof=1) if np.count_nonzero(mine & (m == v)) > 1 else 0.0 for v in cells]
        )
        regime = np.array(
            [np.nanmean(start[(lam == value) & (m == v)]) <= data["balance_limit"] for v in cells], dtype=bool
        )
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
    swept = np.asarray(data["m_values"], float)
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
            handles, labels, loc="best", fontsize="x-small", handlelength=1.6, ncols=1 + (len(labels) > 4)
        )


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    with open(here / "lam_t_one.json", encoding="utf-8") as f:
        data = arrays_of(json.load(f))
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=SIZE, layout="constrained")
        scaling_panel(fig, data)
        for fmt in FORMATS:
            fig.savefig(here / f"lam_t_one.{fmt}", dpi=DPI)
