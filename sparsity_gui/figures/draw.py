"""Drawing helpers every panel shares. Each depends only on numpy, matplotlib and its
arguments: the script beside a figure carries the source of those it uses (save.py)."""

from __future__ import annotations

import numpy as np


def finite_xy(x, y, positive=False):
    """Rows where x and y are finite (and y > 0 for a log axis)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    if positive:
        keep &= y > 0
    return x[keep], y[keep]


def broken_xy(x, y, steps, positive=False):
    """A curve broken (a NaN put in) where `steps` (λ) changes from one row to the next,
    so a value that jumps there is not joined by a steep segment."""
    x, y, steps = (np.asarray(a, float) for a in (x, y, steps))
    keep = np.isfinite(x) & np.isfinite(y)
    if positive:
        keep &= y > 0
    x, y, steps = x[keep], y[keep], steps[keep]
    cuts = np.flatnonzero(steps[1:] != steps[:-1]) + 1
    return np.insert(x, cuts, np.nan), np.insert(y, cuts, np.nan)


def panel_axes(fig, spec, ratios=(1,)):
    """The panel's sub-plots stacked in `spec` (a SubplotSpec, or the whole figure when
    None), sharing their x axis; only the lowest one labels it."""
    rows = len(ratios)
    grid = (
        fig.add_gridspec(rows, 1, height_ratios=ratios)
        if spec is None
        else spec.subgridspec(rows, 1, height_ratios=ratios)
    )
    axes = [fig.add_subplot(grid[0])]
    for i in range(1, rows):
        axes.append(fig.add_subplot(grid[i], sharex=axes[0]))
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    return axes


def end_at_data(ax, x):
    """The x axis from the first to the last finite x (a time axis ends at the data)."""
    x = np.asarray(x, float)
    x = x[np.isfinite(x) & ((x > 0) if ax.get_xscale() == "log" else True)]
    if x.size and x.max() > x.min():
        ax.set_xlim(x.min(), x.max())


def mark_changes(ax, changes, label=True):
    """A thin dashed line at each [t, text] of a live change of λ and, with `label`, its
    text above the plot just right of the line (clear of the line and the curves); labels
    that would overlap are put on a second row."""
    texts = []
    for t, text in changes:
        ax.axvline(t, color="0.55", linestyle=(0, (2.5, 2.0)), linewidth=0.6, zorder=0.8)
        if label:
            texts.append(
                ax.annotate(
                    text,
                    xy=(t, 1.0),
                    xycoords=ax.get_xaxis_transform(),
                    xytext=(2.0, 1.5),
                    textcoords="offset points",
                    ha="left",
                    va="bottom",
                    fontsize="x-small",
                    color="0.3",
                    gid="lam-change-label",
                )
            )
    return texts


def pin_dashes(number):
    """A pinned run's dash pattern (in line widths), one per pin number."""
    dashes = (
        (6, 3),
        (1.5, 2.5),
        (8, 3, 1.5, 3),
        (3, 3),
        (12, 4),
        (8, 3, 1.5, 3, 1.5, 3),
        (1.5, 5),
        (14, 3, 4, 3),
    )
    return (0, dashes[(number - 1) % len(dashes)])


def pin_line(ax, x, y, colour, number, positive=False):
    """A pinned run's curve: the live curve's colour, faded, thinner, the pin's dashes."""
    x, y = finite_xy(x, y, positive)
    (line,) = ax.plot(
        x,
        y,
        color=colour,
        alpha=0.6,
        linewidth=0.8,
        linestyle=pin_dashes(number),
        zorder=1,
        gid=f"pin{number}",
    )
    return line


def pin_entries(pins, colours):
    """Legend handles and labels of the pinned runs: per pin, a sample of each of its
    curves' colours in its dashes (one entry, however many sub-plots it is drawn in)."""
    from matplotlib.lines import Line2D

    handles, labels = [], []
    for pin in pins:
        samples = tuple(
            Line2D([], [], color=c, alpha=0.6, linewidth=0.8, linestyle=pin_dashes(pin["number"]))
            for c in colours
        )
        handles.append(samples if len(samples) > 1 else samples[0])
        labels.append(pin["short_label"])
    return handles, labels


def panel_legend(fig, ax, handles, labels, spec, columns):
    """The panel's one legend: above the plots, in columns (on the figure when the panel
    fills it, else on `ax`)."""
    from matplotlib.legend_handler import HandlerTuple

    options = {
        "ncols": max(1, min(columns, len(labels))),
        "handler_map": {tuple: HandlerTuple(ndivide=None, pad=0.3)},
        "columnspacing": 1.0,
        "handletextpad": 0.5,
        "borderaxespad": 0.2,
    }
    if spec is None:
        return fig.legend(handles, labels, loc="outside upper center", **options)
    return ax.legend(handles, labels, loc="best", **options)
