"""Drawing helpers every panel shares. Each depends only on numpy, matplotlib and its
arguments: the script beside a figure carries the source of those it uses (save.py),
with those of core's that it names in CARRIED (numpy only, shared with the live panels)."""

from __future__ import annotations

import numpy as np

from sparsity_gui.core.note.metrics import falls_below
from sparsity_gui.core.note.schedule import lam_varied
from sparsity_gui.core.pins import pin_dashes
from sparsity_gui.core.points import broken_xy, finite_xy, ramp_settled_t

CARRIED = (
    finite_xy,
    broken_xy,
    falls_below,
    lam_varied,
    ramp_settled_t,
    pin_dashes,
)  # core's functions a script carries too


def colours():
    """The panels' colours: Okabe & Ito's colour-blind-safe set (style.OKABE_ITO)."""
    return {
        "blue": "#0072B2",
        "orange": "#E69F00",
        "green": "#009E73",
        "red": "#D55E00",
        "purple": "#CC79A7",
        "sky": "#56B4E9",
        "grey": "#7f7f7f",
        "black": "#000000",
    }


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


def end_at_data(ax, x):
    """The x axis from the first to the last finite x (a time axis ends at the data); a
    single instant (a movie's first frame, at t = 0) gets a little room around it, not the
    pinned runs' span, which the next frame would drop."""
    x = np.asarray(x, float)
    x = x[np.isfinite(x) & ((x > 0) if ax.get_xscale() == "log" else True)]
    if x.size and x.max() > x.min():
        ax.set_xlim(x.min(), x.max())
    elif x.size:
        room = 0.05 * abs(float(x[0])) or 0.05
        ax.set_xlim(float(x[0]) - room, float(x[0]) + room)


def mark_changes(ax, changes, label=True):
    """A thin dashed line at each [t, text] of a live change of λ and, with `label`, its
    text above the plot just right of the line (clear of the line and the curves); a
    label that would run into the one before it (less than a space between them, at the
    axes' final size) is put on the other of two rows."""
    from matplotlib import rcParams
    from matplotlib.text import Annotation
    from matplotlib.transforms import IdentityTransform

    class ChangeLabel(Annotation):
        previous = None
        row = 0

        def place(self):
            self.xyann, self.row = (2.0, 1.5), 0
            if self.previous is not None and self.previous.get_visible():
                mine = Annotation.get_window_extent(self)
                theirs = self.previous.get_window_extent()
                space = 0.4 * self.get_fontsize() * self.figure.dpi / 72.0
                if mine.x0 < theirs.x1 + space:
                    self.row = 1 - self.previous.row
                    self.xyann = (2.0, 1.5 + self.row * 1.3 * self.get_fontsize())

        def get_window_extent(self, renderer=None):
            self.place()
            return super().get_window_extent(renderer)

        def draw(self, renderer):
            self.place()
            super().draw(renderer)

    texts = []
    for t, text in changes:
        ax.axvline(t, color="0.55", linestyle=(0, (2.5, 2.0)), linewidth=0.6, zorder=0.8)
        if label:
            note = ChangeLabel(
                text,
                xy=(t, 1.0),
                xycoords=ax.get_xaxis_transform(),
                xytext=(2.0, 1.5),
                textcoords="offset points",
                ha="left",
                va="bottom",
                fontsize=rcParams["xtick.labelsize"],  # a journal's least: 6-7 pt
                color="0.3",
                gid="lam-change-label",
            )
            note.previous = texts[-1] if texts else None
            note.set_transform(IdentityTransform())  # as Axes.annotate adds one
            note.set_clip_on(False)
            ax.add_artist(note)
            texts.append(note)
    return texts


def least_legend_size():
    """A small legend's text size in points: x-small of the style's font (5.6 pt of the
    paper style's 8 pt), but never under 6 pt, a journal's least."""
    from matplotlib.font_manager import FontProperties

    return max(6.0, FontProperties(size="x-small").get_size_in_points())


def pin_line(ax, x, y, colour, number, positive=False, points=False):
    """A pinned run's curve: the live curve's colour, faded, thinner, the pin's dashes; a
    series of snapshots (``points``) as hollow circles in the colour, over the live curve."""
    x, y = finite_xy(x, y, positive)
    if points:
        (line,) = ax.plot(
            x,
            y,
            linestyle="none",
            marker="o",
            markersize=3.5,
            markerfacecolor="none",
            markeredgecolor=colour,
            markeredgewidth=0.8,
            zorder=4,
            gid=f"pin{number}",
        )
        return line
    (line,) = ax.plot(
        x,
        y,
        color=colour,
        alpha=0.6,
        linewidth=0.8,
        linestyle=(0, pin_dashes(number)),
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
        if pin.get("points"):  # a series of snapshots: its circles
            samples = tuple(
                Line2D([], [], linestyle="none", marker="o", markersize=3.5, markerfacecolor="none",
                       markeredgecolor=c, markeredgewidth=0.8)
                for c in colours
            )  # fmt: skip
        else:
            samples = tuple(
                Line2D([], [], color=c, alpha=0.6, linewidth=0.8, linestyle=(0, pin_dashes(pin["number"])))
                for c in colours
            )
        handles.append(samples if len(samples) > 1 else samples[0])
        labels.append(pin["short_label"])
    return handles, labels


def regime_entries(fig, d):
    """The legend's line saying the run is outside the note's regime, and why (nothing in
    it, or in a layout's cell: the layout says it once above its panels)."""
    from matplotlib.lines import Line2D

    regime = d.get("regime") or {"holds": True}
    if regime["holds"] or fig is not fig.figure:
        return [], []
    # a reason a line: a single-column panel is narrower than two of them side by side
    text = "outside the note's regime:\n" + regime["reason"].replace("; ", ";\n")
    return [Line2D([], [], linestyle="none")], [text]


def settings_lines(fig, d, caveat=""):
    """The run's settings that differ from a default run's, as pinned runs are named
    (d["settings_named"]: core's settings tables), as many to a line as the figure's width
    holds, a line break only between two settings; then ``caveat``, a line of its own.
    "" for none."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    size = FontProperties(size=rcParams["legend.fontsize"]).get_size_in_points()
    most = max(16, int(0.92 * fig.get_figwidth() * 72.0 / (0.6 * size)))  # characters a line holds
    lines, line = [], ""
    for part in list(d.get("settings_named", [])):  # (none: [] read back as an empty array)
        if line and len(line) + 2 + len(part) > most:
            lines.append(line + ",")
            line = part
        else:
            line = f"{line}, {part}" if line else part
    lines += [text for text in (line, caveat) if text]
    return "\n".join(lines).replace("$", r"\$")  # a file's name may hold a $: text, not mathtext


def settings_title(fig, d, own_ax=False, caveat=""):
    """settings_lines as the title of a figure of its own (not a layout's cell, nor a panel
    drawn into a given axes) that has no legend above its plots: a layout, an image (a
    panel's legend takes them as its title: panel_legend)."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    if own_ax or fig is not fig.figure:
        return
    text = settings_lines(fig, d, caveat)
    if text:
        fig.suptitle(text, fontsize=FontProperties(size=rcParams["legend.fontsize"]).get_size_in_points())


def panel_legend(fig, ax, handles, labels, own_ax=False, settings=None):
    """The panel's one legend, in as many columns as its width holds (about 1.7 in
    each): above the plots on the figure, or on `ax` when drawing into a given one. In a
    panel of a larger figure (a SubFigure: the layout's grid) the legend is compact (6 pt,
    tight rows, short samples, pinned runs' names cut to 20 characters) so that the data
    keep the panel's room. Above the plots of a figure of its own, the legend's title is
    the run's settings (settings_lines of the panel's data ``settings``)."""
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
        title = settings_lines(fig, settings) if settings is not None else ""
        if title:
            options.update(title=title, title_fontsize=size)
        lines = sum(label.count("\n") + 1 for label in labels)  # a label may run over lines
        rows = -(-lines // options["ncols"]) + (title.count("\n") + 1 if title else 0)
        need = (rows * (1.0 + rcParams["legend.labelspacing"]) * size + 2 * size) / 72.0
        w, h = fig.get_size_inches()
        if need > 0.24 * h:
            fig.set_size_inches(w, need / 0.24)
    return fig.legend(handles, labels, loc="outside upper center", **options)


def scaled_ticks(ax, which="y"):
    """A linear axis of small (or large) numbers as the screen shows it: tick labels in
    units of 10^k, k a multiple of 3 (the screen's SI scale: labels from 1 to 999), and
    the axis label ending in (×10^k); none for numbers between 0.1 and 10^4."""
    import math

    from matplotlib.ticker import FuncFormatter

    axis = ax.yaxis if which == "y" else ax.xaxis
    big = max(abs(v) for v in axis.get_view_interval())
    if not math.isfinite(big) or big == 0 or 0.1 <= big < 1e4:
        return
    k = 3 * math.floor(math.log10(big) / 3)
    axis.set_major_formatter(
        FuncFormatter(lambda v, _pos=None: f"{round(v / 10.0**k, 6) + 0.0:g}".replace("-", "\u2212"))
    )
    axis.set_label_text(axis.get_label_text() + rf" ($\times10^{{{k}}}$)")


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
