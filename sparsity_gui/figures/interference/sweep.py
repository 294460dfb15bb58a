"""The sweep's figure: polysemantic neurons against m, as in Lecomte et al. (2023).

Each run a faint point; the mean over seeds per m a square, joined by a line, with ±1
sample standard deviation bars (on log axes a lower bound at or below zero cannot be
drawn: its bar is cut at the axis and ends in an open triangle); the paper's n²/(4m) a
dashed line over the swept m, with the fitted log-log slope of the means beside its −1 in
the legend. A sweep cut short says so in the title. The runs are sweep.csv's columns, the
means, SDs and slope core's summary per m (core/interference/sweep.summarize, which the
live panel draws too); the JSON beside the figure holds both; `sweep_figure_files` writes
its files."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sparsity_gui.core.interference.axes import rows_settings
from sparsity_gui.core.interference.sweep import summarize
from sparsity_gui.figures.draw import least_legend_size, log_ticks, panel_axes
from sparsity_gui.figures.interference.grid import fixed_lines
from sparsity_gui.figures.scripted import panels_files, planned_values, row_columns

NAME = "sweep"


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
        ms, mean, std = (np.asarray(data[k], float) for k in ("cell_m", "cell_mean", "cell_std"))
        slope = float(data["slope"])
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
    said = [str(s) for s in data["settings"] if not str(s).startswith("n = ")]
    title = fixed_lines(ax, " · ".join([f"$n = {int(n)}$", *said, f"{int(data['seeds'])} seeds per $m$"]))
    if m.size < int(data["planned_runs"]):
        why = "cancelled" if data["cancelled"] else "incomplete"
        ax.set_title(
            f"{why}: {m.size} of {int(data['planned_runs'])} runs\n{title}", fontsize="small", color="C3"
        )
    else:
        ax.set_title(title, fontsize="small")
    ax.legend(loc="upper right", fontsize=least_legend_size(), handlelength=1.6)


def sweep_data(
    rows: Sequence,
    n: int | None = None,
    m_values: Sequence[int] = (),
    planned_runs: int | None = None,
    cancelled: bool = False,
    log_axes: bool = True,
) -> dict:
    """The figure's data from SweepRows: sweep.csv's columns that it draws, the plan, and
    per m the mean and SD over seeds and their log-log slope (summarize: sweep.json's)."""
    rows = list(rows)
    summary = summarize(rows)
    if n is None:
        n = rows[0].n if rows else 0

    return {
        "n": int(n),
        **row_columns(rows, ("m", "seed", "polysemantic")),
        "m_values": planned_values(m_values, rows, "m"),
        "planned_runs": int(planned_runs if planned_runs is not None else len(rows)),
        "cancelled": bool(cancelled),
        "log_axes": bool(log_axes),
        "settings": rows_settings(rows),  # as the settings table names them
        "seeds": len({r.seed for r in rows}),
        "cell_m": summary.m,
        "cell_mean": summary.mean,
        "cell_std": summary.std,
        "slope": summary.slope,
    }


def sweep_figure_files(spec, rows: Sequence, cancelled: bool = False, **how) -> dict[str, bytes]:
    """{sweep.png, .svg, .pdf, .json, .py: bytes} of a sweep (``spec``: its SweepSpec, or
    None for the rows alone). Rows fewer than the spec's runs are marked as incomplete
    (``cancelled``: as cancelled). ``how``: the style, dpi, formats and width of
    scripted.panels_files."""
    if spec is not None:
        data = sweep_data(rows, spec.base.n, spec.m_values, len(spec.runs()), cancelled)
    else:
        data = sweep_data(rows)
    return panels_files([(NAME, sweep, data, "Polysemantic neurons against m")], (fixed_lines,), **how)
