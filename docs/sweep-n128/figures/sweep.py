"""Polysemantic neurons against m: redraws sweep.png from sweep.json (the arrays it was drawn from).

Run `python sweep.py` in this folder (numpy and matplotlib only). Restyle it here:
STYLE holds matplotlib's rcParams, SIZE the size in inches, FORMATS what is written;
sweep() below draws the figure.
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


def per_m(m, y):
    """The swept m, and the mean and sample standard deviation (0 for one run) of y at each."""
    m, y = np.asarray(m, float), np.asarray(y, float)
    ms = np.unique(m)
    mean = np.array([y[m == v].mean() for v in ms])
    std = np.array([y[m == v].std(ddof=1) if np.count_nonzero(m == v) > 1 else 0.0 for v in ms])
    return ms, mean, std


def loglog_slope(ms, mean):
    """Least squares slope of log10(mean) on log10(m) over the m with mean > 0 (NaN with
    fewer than two)."""
    keep = mean > 0
    if np.count_nonzero(keep) < 2:
        return float("nan")
    return float(np.polyfit(np.log10(ms[keep]), np.log10(mean[keep]), 1)[0])


def sweep(fig, data, ax=None):
    """Polysemantic neurons against m: runs, mean ± 1 SD per m, and n²/(4m)."""
    (ax,) = panel_axes(fig, ax)
    log = bool(data["log_axes"])
    n = float(data["n"])
    m, counts = np.asarray(data["m"], float), np.asarray(data["polysemantic"], float)
    swept = np.union1d(np.asarray(data["m_values"], float), m)
    mean_colour = "#0b3d6b"  # the means: darker than the runs' points

    if swept.size:
        lo, hi = (swept[0], swept[-1]) if swept[0] < swept[-1] else (swept[0] / 1.5, swept[0] * 1.5)
        x = np.geomspace(lo, hi, 64)
        ax.plot(x, n * n / (4.0 * x), color="C3", linestyle="--", label="$n^2/(4m)$, slope $-1$", zorder=2)
    shown = counts > 0 if log else np.isfinite(counts)
    zero = int(np.count_nonzero(~shown))
    runs = f"runs ({zero} of {counts.size} at zero: not shown)" if zero else f"runs ({counts.size})"
    ax.plot(m[shown], counts[shown], "o", color="C0", alpha=0.35, markeredgewidth=0, label=runs, zorder=3)

    positive = np.concatenate([counts[counts > 0], n * n / (4.0 * swept)])
    floor = 0.5 * float(positive.min()) if positive.size else 0.5  # where a cut bar ends
    if m.size:
        ms, mean, std = per_m(m, counts)
        slope = loglog_slope(ms, mean)
        slope_text = "too few m to fit a slope" if not np.isfinite(slope) else f"slope ${slope:.2f}$"
        keep = mean > 0 if log else np.isfinite(mean)
        ms, mean, std = ms[keep], mean[keep], std[keep]
        real = mean - std > 0 if log else np.ones(ms.size, bool)
        if log and real.any():  # the axis reaches the lowest real bar
            positive = np.concatenate([positive, (mean - std)[real]])
        bars = dict(color=mean_colour, linewidth=0.8, capsize=2.0, linestyle="none", zorder=4)
        ax.errorbar(ms, mean, yerr=[np.where(real, std, 0.0), std], **bars)
        if log and (~real).any():  # lower bound <= 0: cut at the axis, an open triangle
            cut = ~real
            ax.vlines(ms[cut], floor, mean[cut], color=mean_colour, linewidth=0.8, linestyle=":", zorder=4)
            ax.plot(
                ms[cut],
                np.full(cut.sum(), floor),
                "v",
                color=mean_colour,
                markerfacecolor="white",
                markersize=4,
                zorder=5,
                label="mean − SD ≤ 0: bar cut at the axis",
            )
        ax.plot(
            ms,
            mean,
            "s-",
            color=mean_colour,
            markeredgecolor="white",
            markeredgewidth=0.5,
            markersize=4,
            zorder=6,
            label=f"mean over seeds ± 1 SD ({slope_text})",
        )
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
        if swept.size:
            lo, hi = swept[0] / 1.12, swept[-1] * 1.12
            ax.set_xlim(lo, hi)
            if positive.size:
                ax.set_ylim(min(floor, float(positive.min())) / 1.3, float(positive.max()) * 1.3)
        log_ticks(ax)
    ax.set_xlabel("$m$ (neurons)")
    ax.set_ylabel("polysemantic neurons")
    title = (
        f"$n = {int(n)}$ · {data['optimizer']} · {data['steps']} steps · {int(data['seeds'])} seeds per $m$"
    )
    if m.size < int(data["planned_runs"]):
        why = "cancelled" if data["cancelled"] else "incomplete"
        ax.set_title(
            f"{why}: {m.size} of {int(data['planned_runs'])} runs\n{title}", fontsize="small", color="C3"
        )
    else:
        ax.set_title(title, fontsize="small")
    ax.legend(loc="upper right", fontsize="x-small", handlelength=1.6)


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    with open(here / "sweep.json", encoding="utf-8") as f:
        data = arrays_of(json.load(f))
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=SIZE, layout="constrained")
        sweep(fig, data)
        for fmt in FORMATS:
            fig.savefig(here / f"sweep.{fmt}", dpi=DPI)
