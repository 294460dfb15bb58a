"""The interference model's figures (the n-encoding model's window): the seven panels
(`weights`, `active`, `polysemantic`, `kept`, `signs`, `sparsity`, `thresholds`) and the
layout of the six the window shows at once, with pinned runs and live changes of l1 and lr
wherever the window shows them.

`run_data` turns a run (its history, W, active features per neuron, pins, changes) into
each panel's data: plain arrays, what the panel's JSON beside its figure holds. The
panel functions draw only from those (numpy and matplotlib, see figures/save.py), so the
script beside each figure is their own source."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from sparsity_gui.core.interference.image import max_abs_pool, neuron_order
from sparsity_gui.core.interference.pins import settings_named
from sparsity_gui.core.interference.thresholds import TRACKED
from sparsity_gui.figures import save
from sparsity_gui.figures.draw import (
    end_at_data,
    finite_xy,
    log_ticks,
    mark_changes,
    panel_axes,
    panel_legend,
    pin_entries,
    pin_line,
    settings_title,
)
from sparsity_gui.figures.scripted import figure_files, panel_size
from sparsity_gui.figures.style import DEFAULT_DPI, DOUBLE_COLUMN, style_name

W_LEVEL = 1.2  # the heatmap's fixed, symmetric colour range, as in the window
IMAGE_PIXELS = 1000  # W pooled to at most this many rows and columns (a 3.5 in figure at 300 dpi)
COUNT_BINS = 2000  # neurons drawn per bar at most (max over the neurons of a bin)


# --- shared by the panels (their source goes into each script: numpy and matplotlib only)
def step_panel_end(ax, data, y_from_zero=True):
    """A step axis from the first to the last recorded step of the run, as the window's
    step axes follow the live run (a pinned run or a compared series longer than it is
    cut at its end, not the run squeezed into a corner); a count axis from zero."""
    end_at_data(ax, np.asarray(data["step"], float))
    ax.locator_params(axis="x", nbins=4)  # step labels of 4-5 digits stay apart in a narrow panel
    if y_from_zero:
        ax.set_ylim(bottom=0.0)


def pin_curves(ax, data, columns, colours, positive=False):
    """Each pinned run's curves of `columns` (names, or callables of the pin) in `colours`;
    a series of snapshots (the pin's "points") as circles, one a snapshot."""
    for pin in data["pins"]:
        for column, colour in zip(columns, colours, strict=True):
            y = column(pin) if callable(column) else pin[column]
            pin_line(
                ax, pin["step"], y, colour, int(pin["number"]), positive, points=pin.get("points", False)
            )


# --- the panels ---------------------------------------------------------------------------
def weights(fig, data, ax=None):
    """W as an image: a row per feature, a column per neuron, blue negative, red
    positive (fixed range ±1.2); pooled to the figure's pixels by the entry of largest
    |w| in each block, so that no weight near ±1 disappears. With data["overlap"], the
    overlaps W(0) W^T instead, features by features."""
    own = ax is not None  # drawn into a given ax
    (ax,) = panel_axes(fig, ax)
    rows, cols = (int(v) for v in data["shape"])
    image = np.asarray(data["image"], float).reshape(rows, cols)
    n, m = int(data["n"]), int(data["m"])
    colours = dict(cmap="RdBu_r", vmin=-data["level"], vmax=data["level"])
    if image.size <= 20_000:  # cells as rectangles: every renderer draws them sharp
        shown = ax.pcolormesh(np.linspace(0, m, cols + 1), np.linspace(0, n, rows + 1), image, **colours)
        ax.set_xlim(0, m)
        ax.set_ylim(n, 0)  # feature 0 at the top, as a matrix is printed
    else:  # pooled to about the figure's pixels: an image
        shown = ax.imshow(image, extent=(0, m, n, 0), aspect="auto", interpolation="nearest", **colours)
    bar = fig.colorbar(shown, ax=ax, fraction=0.05, pad=0.02)
    bar.outline.set_linewidth(0.4)
    if data.get("overlap"):  # W(0) W^T: which features keep their initial direction
        bar.set_label("$W_i(0) \\cdot W_j$")
        ax.set_xlabel("feature $j$ (now)")
        ax.set_ylabel("feature $i$ (at the start)")
    else:
        bar.set_label("$w$")
        ax.set_xlabel("neuron (ordered by feature)" if data["ordered"] else "neuron")
        ax.set_ylabel("feature")
    for side in ("top", "right"):
        ax.spines[side].set_visible(True)
    settings_title(fig, data, own)


def active(fig, data, ax=None):
    """Active features (0.8 ≤ |w| ≤ 1.2) per neuron, polysemantic ones (> 1) in red, and
    below how many neurons have 0, 1, 2, ... of them."""
    own = ax is not None  # drawn into a given ax: its legend on it
    # two x axes of their own (neurons; a count of features): not panel_axes' shared one
    if ax is None:
        grid = fig.add_gridspec(2, 1, height_ratios=(3, 2))
    else:
        fig, spec = ax.figure, ax.get_subplotspec()
        ax.remove()
        grid = spec.subgridspec(2, 1, height_ratios=(3, 2))
    top, below = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
    counts = np.asarray(data["counts"], float)
    per_bin = int(data["neurons_per_bar"])
    edges = np.arange(counts.size + 1, dtype=float) * per_bin
    edges[-1] = min(edges[-1], float(data["m"]))
    top.stairs(counts, edges, fill=True, color="C0", alpha=0.45, linewidth=0, label="active features")
    top.stairs(
        np.where(counts > 1, counts, 0.0),
        edges,
        fill=True,
        color="C3",
        alpha=0.8,
        linewidth=0,
        label="polysemantic (> 1)",
    )
    top.axhline(1.0, color="0.5", linestyle=":", linewidth=0.6)
    top.set_xlim(0.0, edges[-1])
    top.set_ylim(0.0, max(2.0, float(counts.max()) if counts.size else 0.0) * 1.05)
    top.yaxis.get_major_locator().set_params(integer=True)
    top.set_xlabel("neuron" if per_bin == 1 else f"neuron (bars: most of {per_bin} neurons)")
    top.set_ylabel("active features")
    hist = np.asarray(data["histogram"], float)
    k = np.arange(hist.size)
    below.bar(k[k <= 1], hist[k <= 1], width=0.8, color="C0")
    below.bar(k[k > 1], hist[k > 1], width=0.8, color="C3")
    below.set_xticks(k)
    below.set_xlim(-0.6, hist.size - 0.4)
    if data["log_histogram"]:
        below.set_yscale("log")
        below.set_ylim(0.8, max(10.0, float(hist.max()) * 1.5))
        log_ticks(below)
    else:
        below.set_ylim(0.0, max(1.0, float(hist.max())) * 1.05)
        below.yaxis.get_major_locator().set_params(integer=True)
    below.set_xlabel("active features on the neuron")
    below.set_ylabel("neurons")
    handles, labels = top.get_legend_handles_labels()
    panel_legend(fig, top, handles, labels, own_ax=own, settings=data)


def polysemantic(fig, data, ax=None):
    """Neurons with more than one active feature against the paper's n²/(4m) (Lecomte
    et al. 2023), per optimizer step; pinned runs behind, live changes of l1 and lr marked."""
    own = ax is not None  # drawn into a given ax: its legend on it
    (ax,) = panel_axes(fig, ax)
    mark_changes(ax, data["changes"])
    pin_curves(ax, data, ["polysemantic"], ["C3"])
    ax.plot(*finite_xy(data["step"], data["polysemantic"]), color="C3", label="polysemantic neurons")
    ax.plot(*finite_xy(data["step"], data["predicted"]), color="0.35", linestyle="--", label="$n^2/(4m)$")
    step_panel_end(ax, data)
    ax.yaxis.get_major_locator().set_params(integer=True)  # a count
    ax.set_xlabel("step")
    ax.set_ylabel("neurons")
    handles, labels = ax.get_legend_handles_labels()
    pins, names = pin_entries(data["pins"], ["C3"])
    panel_legend(fig, ax, handles + pins, labels + names, own_ax=own, settings=data)


def kept(fig, data, ax=None):
    """The share of features whose largest weight sits on the neuron where their initial
    weight was largest, and the mean over features of sum_k W_ik^4, per optimizer step."""
    own = ax is not None  # drawn into a given ax: its legend on it
    top, below = panel_axes(fig, ax, ratios=(3, 2))
    mark_changes(top, data["changes"])
    mark_changes(below, data["changes"], label=False)
    pin_curves(top, data, ["kept_share"], ["C4"])
    pin_curves(below, data, ["sum_w4"], ["C1"])
    top.plot(*finite_xy(data["step"], data["kept_share"]), color="C4", label="this run")
    below.plot(*finite_xy(data["step"], data["sum_w4"]), color="C1", label="this run")
    for axes in (top, below):
        axes.axhline(1.0, color="0.5", linestyle=":", linewidth=0.6)
    step_panel_end(top, data, y_from_zero=False)
    top.set_ylim(0.0, 1.05)
    below.set_ylim(0.0, 1.05)
    top.set_ylabel("share on\ninitial neuron")
    below.set_ylabel("mean\n$\\sum_k W_{ik}^4$")
    below.set_xlabel("step")
    if len(data["pins"]):  # one curve alone is named by the axis
        handles, labels = top.get_legend_handles_labels()
        pins, names = pin_entries(data["pins"], ["C4", "C1"])
        panel_legend(fig, top, handles + pins, labels + names, own_ax=own, settings=data)
    else:  # no legend to head: the settings as the figure's title
        settings_title(fig, data, own)


def _opposite_share(pin):
    with np.errstate(divide="ignore", invalid="ignore"):
        return pin["opposite_pairs"] / (pin["opposite_pairs"] + pin["same_pairs"])


def signs(fig, data, ax=None):
    """Pairs of features active on the same neuron by the signs of their weights, and
    the share of opposite signs (the paper: colliding features take opposite signs)."""
    own = ax is not None  # drawn into a given ax: its legend on it
    top, below = panel_axes(fig, ax, ratios=(3, 2))
    mark_changes(top, data["changes"])
    mark_changes(below, data["changes"], label=False)
    pin_curves(top, data, ["opposite_pairs", "same_pairs"], ["C2", "C1"])
    pin_curves(below, data, [_opposite_share], ["C2"])
    top.plot(*finite_xy(data["step"], data["opposite_pairs"]), color="C2", label="opposite signs")
    top.plot(*finite_xy(data["step"], data["same_pairs"]), color="C1", linestyle="--", label="same sign")
    below.plot(*finite_xy(data["step"], _opposite_share(data)), color="C2", label="opposite share")
    below.axhline(0.5, color="0.5", linestyle=":", linewidth=0.6)
    step_panel_end(top, data)
    top.yaxis.get_major_locator().set_params(integer=True)  # a count
    below.set_ylim(0.0, 1.05)
    top.set_ylabel("colliding pairs")
    below.set_ylabel("opposite\nshare")
    below.set_xlabel("step")
    handles, labels = top.get_legend_handles_labels()
    pins, names = pin_entries(data["pins"], ["C2", "C1"])
    panel_legend(fig, top, handles + pins, labels + names, own_ax=own, settings=data)


def sparsity(fig, data, ax=None):
    """Nonzero and active weights (about one per feature once settled: the dotted n),
    and the loss and ‖W‖₁, on log axes, per optimizer step."""
    own = ax is not None  # drawn into a given ax: its legend on it
    top, below = panel_axes(fig, ax, ratios=(1, 1))
    mark_changes(top, data["changes"])
    mark_changes(below, data["changes"], label=False)
    pin_curves(top, data, ["nonzero", "active"], ["C0", "C3"], positive=True)
    pin_curves(below, data, ["loss", "norm1"], ["C4", "C1"], positive=True)
    step = data["step"]
    top.plot(*finite_xy(step, data["nonzero"], True), color="C0", label="nonzero weights")
    top.plot(*finite_xy(step, data["active"], True), color="C3", label="active weights")
    if len(step):
        top.plot([step[0], step[-1]], [data["n"]] * 2, color="0.4", linestyle=":", linewidth=0.8, label="$n$")
    below.plot(*finite_xy(step, data["loss"], True), color="C4", label="loss")
    below.plot(*finite_xy(step, data["norm1"], True), color="C1", linestyle="--", label="$\\|W\\|_1$")
    for axes in (top, below):
        axes.set_yscale("log")
    step_panel_end(top, data, y_from_zero=False)
    top.set_ylabel("weights")
    below.set_ylabel("loss, $\\|W\\|_1$")
    below.set_xlabel("step")
    log_ticks(top)
    log_ticks(below)
    handles, labels = top.get_legend_handles_labels()
    more, more_labels = below.get_legend_handles_labels()
    pins, names = pin_entries(data["pins"], ["C0", "C3", "C4", "C1"])
    panel_legend(fig, top, handles + more + pins, labels + more_labels + names, own_ax=own, settings=data)


def threshold_note(data):
    """The threshold's caveat for the legend: the note's formula and what it is exact for,
    TopK's K, or how many of JumpReLU's threshold steps went past the rail."""
    kind = data["sparsity"]
    if kind == "l1":
        return "$\\theta_i = (\\ell_1/4)/(1 - \\|W_i\\|^2)$,\nexact for a row no interference acts on"
    if kind == "topk":
        return f"$K = {int(data['k'])}$: each input keeps\nthe units at or above it"
    moved, past = int(data["moved"]), int(data["past"])
    share = f"{past / moved:.1%}" if moved else "none"
    return f"steps past the rail (a move > lr):\n{past:,} of {moved:,} ({share})"


def thresholds(fig, data, ax=None):
    """The threshold the run's sparsity mechanism applies, per optimizer step, on a log
    axis where the curves span more than a decade (else linear, to read them): the median
    over features (JumpReLU's units, TopK's inputs) with its 10-90 % band and one of them
    tracked; under JumpReLU the rail theta(0) ± Σ lr beside it (Adam's
    usual largest move per step, not a strict bound: the legend says how often a step went
    past it); under l1 the note's theta_i, exact only for a row no interference acts on."""
    from matplotlib.lines import Line2D

    own = ax is not None  # drawn into a given ax: its legend on it
    (ax,) = panel_axes(fig, ax)
    mark_changes(ax, data["changes"])
    y_label, over = {  # (the y label, over what the median is taken)
        "l1": ("note's threshold $\\theta_i$", "features"),
        "jumprelu": ("learned threshold $\\theta_k$", "units"),
        "topk": ("$K$-th largest $|h|$ of an input", "inputs"),
    }[data["sparsity"]]
    step = np.asarray(data["step"], float)
    lo, hi = np.asarray(data["p10"], float), np.asarray(data["p90"], float)
    ok = np.isfinite(step) & np.isfinite(lo) & np.isfinite(hi) & (lo > 0)
    band = ax.fill_between(step[ok], lo[ok], hi[ok], color="C0", alpha=0.25, linewidth=0)
    (median,) = ax.plot(*finite_xy(step, data["median"], True), color="C0", gid="threshold-median")
    tracked = finite_xy(step, data["tracked"], True)
    ax.plot(*tracked, color="C1", linestyle="--", label=data["tracked_name"], gid="threshold-tracked")
    handles, labels = [(band, median)], [f"median over {over}, 10–90 %"]
    if "rail_hi" in data:
        for side in ("rail_hi", "rail_lo"):
            ax.plot(
                *finite_xy(step, data[side], True), color="0.45", linestyle=":", gid=side.replace("_", "-")
            )
        handles.append(ax.lines[-1])
        labels.append("rail $\\theta_k(0) \\pm \\Sigma\\,\\mathrm{lr}$")
    more, more_labels = ax.get_legend_handles_labels()
    names = ("p10", "median", "tracked", "p90", "rail_hi")
    shown = np.concatenate([np.asarray(data[c], float) for c in names if c in data])
    shown = shown[np.isfinite(shown) & (shown > 0)]
    if shown.size and shown.max() > 10 * shown.min():  # over a decade: a log axis, as on screen
        ax.set_yscale("log")
        if "rail_lo" in data:  # the rail's lower side falls to 0: not the axis
            ax.set_ylim(bottom=float(shown.min()) / 1.25)
        log_ticks(ax)
    step_panel_end(ax, data, y_from_zero=False)
    ax.set_xlabel("step")
    ax.set_ylabel(y_label)
    handles = handles[:1] + more + handles[1:] + [Line2D([], [], linestyle="none")]
    labels = labels[:1] + more_labels + labels[1:] + [threshold_note(data)]
    panel_legend(fig, ax, handles, labels, own_ax=own, settings=data)


PANELS = {
    # name: (function, title)
    "weights": (weights, "Weights W"),
    "active": (active, "Active features per neuron"),
    "polysemantic": (polysemantic, "Polysemantic neurons"),
    "kept": (kept, "Features on their initial neuron"),
    "signs": (signs, "Signs of colliding features"),
    "sparsity": (sparsity, "Sparsification"),
    "thresholds": (thresholds, "Thresholds"),
}
PANEL_ORDER = tuple(PANELS)  # the window's order (plots.interference.INTERFERENCE_PANEL_TYPES)
# the layout's six, two rows of three as the window shows them (Thresholds is a tab there)
LAYOUT_ORDER = PANEL_ORDER[:6]
OVERLAP_TITLE = "Overlaps $W(0) \\cdot W^T$"  # the weights panel showing W(0) W^T


def panel_title(key, part):
    """A panel's title for its data: the weights panel names what it draws, W or W(0) W^T."""
    if key == "weights" and part.get("overlap"):
        return OVERLAP_TITLE
    return PANELS[key][1]


def layout(fig, data, ax=None):
    """The six panels as the window shows them, two rows of three: each drawn as its own
    figure would be (legend above it), in a sub-figure under its title; above them the
    run's settings that differ from a default run's."""
    panels = [weights, active, polysemantic, kept, signs, sparsity]
    titles = [
        "Weights $W$",
        "Active features per neuron",
        "Polysemantic neurons",
        "Features on their initial neuron",
        "Signs of colliding features",
        "Sparsification",
    ]
    settings_title(fig, data)  # the run's settings above the six
    cells = fig.subfigures(2, 3, wspace=0.02, hspace=0.02).ravel()
    for cell, panel, title, part in zip(cells, panels, titles, data["panels"], strict=True):
        panel(cell, part)
        if part.get("overlap"):  # the weights panel draws W(0) W^T: say so
            title = "Overlaps $W(0) \\cdot W^T$"
        # on the top axes, under the legend; above the change labels when there are any
        # (two rows of them where close ones alternate: draw.mark_changes)
        pad = 22.0 if len(part.get("changes", ())) else 4.0
        cell.axes[0].set_title(title, loc="left", fontsize="medium", fontweight="bold", pad=pad)


# --- the data each panel draws ---------------------------------------------------------
def weights_data(
    W: np.ndarray, ordered: bool = False, pixels: int = IMAGE_PIXELS, w0: np.ndarray | None = None
) -> dict:
    """The weights panel's image: W (n x m), or with ``w0`` the overlaps W(0) W^T (n x n:
    row i is feature i at the start, column j feature j now), pooled to about ``pixels``."""
    if w0 is not None:
        G = np.asarray(w0, float) @ np.asarray(W, float).T
        fy = max(1, -(-G.shape[0] // pixels))
        image = max_abs_pool(G, fy, fy) if fy > 1 else G
        return {
            "n": int(G.shape[0]),
            "m": int(G.shape[1]),
            "ordered": False,
            "overlap": True,
            "level": max(W_LEVEL, float(np.abs(G).max(initial=0.0))),
            "shape": list(image.shape),
            "image": image.ravel(),
            "pooled": [fy, fy],
        }
    W = np.asarray(W, float)
    shown = W[:, neuron_order(W)] if ordered else W
    fy = max(1, -(-shown.shape[0] // pixels))
    fx = max(1, -(-shown.shape[1] // pixels))
    image = max_abs_pool(shown, fy, fx) if fx > 1 or fy > 1 else shown
    return {
        "n": int(W.shape[0]),
        "m": int(W.shape[1]),
        "ordered": bool(ordered),
        "level": W_LEVEL,
        "shape": list(image.shape),
        "image": image.ravel(),
        "pooled": [fy, fx],
    }


def active_data(counts: np.ndarray, log_histogram: bool = False, bins: int = COUNT_BINS) -> dict:
    counts = np.asarray(counts, dtype=np.int64)
    per_bar = max(1, -(-counts.size // bins))
    shown = counts
    if per_bar > 1:  # the most per bar: a polysemantic neuron always shows
        padded = np.zeros(-(-counts.size // per_bar) * per_bar, dtype=np.int64)
        padded[: counts.size] = counts
        shown = padded.reshape(-1, per_bar).max(axis=1)
    hist = np.bincount(counts, minlength=3) if counts.size else np.zeros(3, dtype=np.int64)
    return {
        "m": int(counts.size),
        "counts": shown.astype(float),
        "neurons_per_bar": per_bar,
        "histogram": hist.astype(float),
        "log_histogram": bool(log_histogram),
    }


HISTORY_PANELS = {
    # the history columns each step panel draws
    "polysemantic": ("polysemantic", "predicted"),
    "kept": ("kept_share", "sum_w4"),
    "signs": ("opposite_pairs", "same_pairs"),
    "sparsity": ("nonzero", "active", "loss", "norm1"),
}


def _columns(rows: np.ndarray, columns: Sequence[str], names: Iterable[str]) -> dict:
    rows = np.asarray(rows, float).reshape(-1, len(columns))
    return {name: rows[:, list(columns).index(name)] for name in ("step", *names)}


def run_data(
    history: np.ndarray,
    columns: Sequence[str],
    W: np.ndarray,
    counts: np.ndarray,
    n: int,
    pins: Sequence = (),
    pin_labels: dict[int, tuple[str, str]] | None = None,
    changes: Sequence[tuple[float, str]] = (),
    ordered: bool = False,
    log_histogram: bool = False,
    w0: np.ndarray | None = None,
    settings: Mapping[str, Any] | None = None,
    *,
    thresholds: Mapping[str, Any],
) -> dict[str, dict]:
    """{panel name: its data}. ``pins``: core.pins.PinnedRuns; ``pin_labels``: number ->
    (short legend label, whole label); ``changes``: (step, text) of each live change;
    ``w0``: the weights panel shows the overlaps W(0) W^T instead of W; ``settings``: the
    run's (core/interference/settings.py: run_settings), kept in every panel's JSON with
    each pinned run's; ``thresholds``: the Thresholds panel's curves, as the window draws
    them (core/interference/thresholds.py: threshold_curves; no pinned runs there)."""
    pin_labels = pin_labels or {}
    out: dict[str, dict] = {
        "weights": weights_data(W, ordered, w0=w0),
        "active": active_data(counts, log_histogram),
    }
    for name, names in HISTORY_PANELS.items():
        part = _columns(history, columns, names)
        part["n"] = int(n)
        part["changes"] = [[float(step), str(text)] for step, text in changes]
        part["pins"] = []
        for pin in pins:
            short, whole = pin_labels.get(pin.number, (f"pin {pin.number}", f"pin {pin.number}"))
            entry = {"number": int(pin.number), "short_label": short, "label": whole}
            entry["settings"] = pin.param_dict
            if pin.marks == "points":  # a series of snapshots, drawn as circles
                entry["points"] = True
            entry.update(_columns(pin.rows, pin.columns, names))
            part["pins"].append(entry)
        out[name] = part
    out["thresholds"] = thresholds_data(thresholds, changes)
    if settings is not None:
        named = settings_named(settings)  # the title: the settings a default run does not have
        for part in out.values():
            part["settings"] = dict(settings)
            part["settings_named"] = named
    return out


def thresholds_data(curves: Mapping[str, Any], changes: Sequence[tuple[float, str]] = ()) -> dict:
    """The Thresholds panel's data: ``curves`` (core/interference/thresholds.py:
    threshold_curves), the tracked one's name and the live changes."""
    part = {name: np.asarray(v, float) if isinstance(v, np.ndarray) else v for name, v in curves.items()}
    part["tracked_name"] = TRACKED[str(curves["sparsity"])]
    part["changes"] = [[float(step), str(text)] for step, text in changes]
    return part


# --- files ---------------------------------------------------------------------------------
# what a script may need besides its panel (save.script_text puts in those it uses)
SCRIPT_FUNCTIONS = (
    step_panel_end,
    pin_curves,
    _opposite_share,
    threshold_note,
    *(f for f, _t in PANELS.values()),
)


def layout_data(data: dict[str, dict]) -> dict:
    """The layout's data: the six panels' in the window's order (the Sparsification cell's,
    not its Thresholds tab), and the title's settings."""
    first = data[LAYOUT_ORDER[0]]
    return {
        "panels": [data[name] for name in LAYOUT_ORDER],
        "settings_named": first.get("settings_named", []),
    }


def layout_size(style) -> tuple[float, float]:
    """The layout's size: a page's text width, two thirds of its height (talk: a slide)."""
    return (DOUBLE_COLUMN, 6.4) if style_name(style) == "paper" else (13.0, 8.0)


def run_figure_files(
    data: dict[str, dict],
    style=None,
    dpi: float = DEFAULT_DPI,
    formats: Iterable[str] = save.FORMATS,
    width: float | None = None,
    with_layout: bool = True,
) -> dict[str, bytes]:
    """Every panel's figure files (PNG, SVG, PDF, JSON, script) and the layout's."""
    formats = tuple(formats)
    out: dict[str, bytes] = {}
    for name in PANEL_ORDER:
        panel, title = PANELS[name]
        out.update(
            figure_files(
                name,
                panel,
                data[name],
                style,
                panel_size(style, width),
                dpi,
                formats,
                title,
                SCRIPT_FUNCTIONS,
            )
        )
    if with_layout:
        whole = layout_data(data)
        title = "The interference window's six panels"
        out.update(
            figure_files(
                "layout", layout, whole, style, layout_size(style), dpi, formats, title, SCRIPT_FUNCTIONS
            )
        )
    return out
