"""The note model's figures: the arrays each panel draws, gathered from a run (the same
arrays timeseries.csv, tracked.csv, the weights file and pin_<n>.csv hold), the panels
(figures/note/panels.py) and the whole layout drawn from them, and `write_note_figures`
for `run --figures` and the window's *Export all*."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sparsity_gui.core.note.changes import merged_changes
from sparsity_gui.core.note.metrics import COL, COLUMNS, regime_failures, regime_holds
from sparsity_gui.core.note.pins import settings_named
from sparsity_gui.core.note.runner import Snapshot, snapshot_of
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.note.simulation import shown_tracked

if TYPE_CHECKING:
    from matplotlib.figure import Figure

from sparsity_gui.figures.draw import settings_title
from sparsity_gui.figures.note.panels import (  # by name: note_layout finds them so, here and in its script
    PANELS,
    l1_decay,  # noqa: F401
    norm_balance,  # noqa: F401
    relative_variance,  # noqa: F401
    sparsity_force,  # noqa: F401
    threshold_crossing,  # noqa: F401
    weights_sorted,  # noqa: F401
)
from sparsity_gui.figures.save import FORMATS, PanelFunction, figure_files, figure_of, write_files
from sparsity_gui.figures.style import DEFAULT_DPI, DOUBLE_COLUMN, WIDTHS, style_name, style_params

TITLES = {
    "weights_sorted": "Weights, sorted",
    "threshold_crossing": "Threshold crossing",
    "norm_balance": "Norm balance",
    "l1_decay": "L1 decay",
    "relative_variance": "Relative variance",
    "sparsity_force": "Sparsity force",
    "phase_plane": "Phase plane",
}
GRID = (
    "weights_sorted",
    "threshold_crossing",
    "norm_balance",
    "l1_decay",
    "relative_variance",
    "sparsity_force",
)
# each panel's view as the window opens it (the toggles a window passes override these)
DEFAULT_VIEWS: dict[str, dict] = {
    "weights_sorted": {"log_x": False, "log_y": False},
    "threshold_crossing": {"log_y": False, "tracked": 8},
    "norm_balance": {"log_y": False},
    "l1_decay": {"show_w": False, "log_x": False, "log_y": True},
    "relative_variance": {"log_x": False},
    "sparsity_force": {},
    "phase_plane": {"log_y": True, "gap_x": False},
}
# what each panel reads of a pinned run's rows
PIN_COLUMNS = {
    "threshold_crossing": ("t", "theta", "nonzero"),
    "norm_balance": ("t", "feature_push", "reg_push", "lam"),
    "l1_decay": ("t", "norm1"),
    "relative_variance": ("t", "rel_var"),
    "phase_plane": ("norm2_sq", "norm1"),
}
LAM = NOTE_SETTINGS["lam"]  # λ as the screen, the titles and the pins write it
MAX_ROWS = 4000  # a time series drawn: longer ones are thinned (never 10^6 points in an SVG)
PIN_LABEL_CHARS = 34  # a pinned run's legend name; pins.json keeps it whole
HEIGHTS = {"single": 2.9, "double": 3.3}  # in, per width
LAYOUT_SIZE = (DOUBLE_COLUMN, 6.4)


def thinned_rows(rows: np.ndarray, lam: np.ndarray, most: int = MAX_ROWS) -> np.ndarray:
    """Indices of the rows drawn: all of them up to `most`, else evenly spaced ones plus
    both rows around every change of λ (where curves are broken) and the last."""
    n = rows.shape[0]
    if n <= most:
        return np.arange(n)
    cuts = np.flatnonzero(lam[1:] != lam[:-1])
    keep = np.concatenate([np.linspace(0, n - 1, most).astype(np.int64), cuts, cuts + 1, [n - 1]])
    return np.unique(keep)


def short_label(label: str, most: int = PIN_LABEL_CHARS) -> str:
    return label if len(label) <= most else label[: most - 1].rstrip(" ,") + "…"


def fit_constants(run) -> dict:
    """The decay law's constants the run carries (run.json's fitted_c, fitted_c_bulk and
    fit_max_rel_dev): c, and the bulk fit's c and the fit's largest relative deviation
    where they exist."""
    fit = getattr(run, "fit", None)
    if fit is None:  # a run without the fit's record: c only
        return {"c": float(run.fitted_c)}
    return fit_entry(fit)


def fit_entry(fit) -> dict:
    """A DecayFit as the L1 figure's data: c, and c_bulk and max_rel_dev where finite."""
    out = {"c": float(fit.c)}
    for name, value in (("c_bulk", fit.c_bulk), ("max_rel_dev", fit.max_rel_dev)):
        if math.isfinite(value):
            out[name] = float(value)
    return out


def regime_data(regime: Mapping | None) -> dict:
    """The note's premise as a figure carries it (in its JSON, so its script keeps it):
    run.json's regime, whether it holds, and why not: the reasons the argument dock gives,
    in brief (metrics.regime_failures), so a false regime always has one."""
    if regime is None:
        return {"holds": True, "reason": ""}
    return {**regime, "holds": regime_holds(regime), "reason": "; ".join(regime_failures(regime, short=True))}


def run_snapshot(run) -> Snapshot:
    """What the panels draw of a sampled run: its rows and its final state."""
    return snapshot_of(
        run.sim, run.sim.params, run_id=1, seq=1, state="finished", history=run.rows, fit=run.fit
    )


def panel_data(
    snap: Snapshot,
    views: Mapping[str, Mapping] | None = None,
    pins: Iterable = (),
    pin_labels: Mapping[int, str] | None = None,
    fit: Mapping | None = None,
) -> dict[str, dict]:
    """{panel name: the arrays and settings it is drawn from}: the recorded rows (those
    of timeseries.csv, thinned above MAX_ROWS), the tracked weights (tracked.csv), |W| in
    the order of |W(0)| (the weights file, at the ranks the live panel draws), the pinned
    runs' rows (pin_<n>.csv) with their settings and the live changes of λ; every panel
    keeps the run's settings (core/note/settings.py)."""
    views = {name: {**DEFAULT_VIEWS[name], **dict((views or {}).get(name, {}))} for name in PANELS}
    h = snap.history
    lam_all = h[:, COL["lam"]]
    rows = thinned_rows(h, lam_all)
    h = h[rows]
    col = {name: h[:, i] for i, name in enumerate(COLUMNS)}
    t = col["t"]
    span = float(t[-1] - t[0]) if t.size else 0.0
    # a change's label as the screen's marker and the title write λ (its table row)
    changes = [[c.t, LAM.text(c.lam)] for c in merged_changes(snap.lam_changes[1:], span)]
    pin_labels = dict(pin_labels or {})
    pins = list(pins)

    def pin_rows(name: str) -> list[dict]:
        out = []
        for pin in pins:
            pin_lam = pin.column("lam")
            keep = thinned_rows(pin.rows, pin_lam)
            label = pin_labels.get(pin.number, f"pin {pin.number}")
            entry = {
                "number": pin.number,
                "short_label": short_label(label),
                "label": label,
                "settings": pin.param_dict,
            }
            if pin.marks == "points":  # a series of snapshots, drawn as circles
                entry["points"] = True
            entry.update({c: pin.column(c)[keep] for c in PIN_COLUMNS[name]})
            out.append(entry)
        return out

    shown = shown_tracked(len(snap.tracked_ranks), int(views["threshold_crossing"]["tracked"]))
    tracked = [
        {
            "rank": int(snap.tracked_ranks[i]) + 1,
            "w": h[:, len(COLUMNS) + i],
            "t_death": float(snap.tracked_death_t[i]),
        }
        for i in shown
    ]
    lams = [c.lam for c in snap.lam_changes]
    weights = {
        "rank": snap.ranks.astype(float) + 1.0,
        "abs_w": snap.sorted_abs,
        "theta": snap.theta,
        "balance": 1.0 / snap.norm1 if snap.norm1 > 0 else math.nan,
    }
    data = {
        "weights_sorted": weights,
        "threshold_crossing": {
            **{k: col[k] for k in ("t", "theta", "lam", "nonzero")},
            "tracked": tracked,
            "pins": pin_rows("threshold_crossing"),
        },
        "norm_balance": {
            **{k: col[k] for k in ("t", "lam", "feature_push", "reg_push")},
            # the λ(t) strip under the ratio, as the screen draws it: a run with a schedule
            "lam_strip": bool(snap.initial_params is not None and snap.initial_params.lam_schedule),
            "pins": pin_rows("norm_balance"),
        },
        "l1_decay": {
            **{k: col[k] for k in ("t", "norm1", "lam_t", "w")},
            "fit": dict(fit or fit_entry(snap.fit)),
            "pins": pin_rows("l1_decay"),
        },
        "relative_variance": {
            **{
                k: col[k]
                for k in ("t", "rel_var", "rel_var_lo", "rel_var_hi", "rel_var_ideal_lo", "rel_var_ideal_hi")
            },
            "pins": pin_rows("relative_variance"),
        },
        "sparsity_force": {"abs_w": snap.sorted_abs, "s": snap.s, "lam": snap.lam, "theta": snap.theta},
        "phase_plane": {
            **{k: col[k] for k in ("norm2_sq", "norm1")},
            "lam_now": snap.lam,
            "lam_now_text": LAM.fmt(snap.lam),
            "lam_before": lams[-2] if len(lams) > 1 else math.nan,
            "lam_before_text": LAM.fmt(lams[-2]) if len(lams) > 1 else "",
            "pins": pin_rows("phase_plane"),
        },
    }
    regime = regime_data(snap.regime)
    settings = NOTE_SETTINGS.values(snap.params)  # what every panel was drawn from
    named = settings_named(settings)  # the title: the settings a default run does not have
    for name, d in data.items():
        d["view"] = views[name]
        d["regime"] = regime
        d["settings"] = settings
        d["settings_named"] = named
        if name in PIN_COLUMNS and name != "phase_plane":
            d["changes"] = changes
    return data


def note_layout(fig, d):
    """The window's grid of six panels, two rows of three, each with its own legend; above
    them the run's settings that differ from a default run's and, outside the note's
    regime, the argument dock's line: its premise fails."""
    regime = d.get("regime") or {"holds": True}
    caveat = "" if regime["holds"] else "The note's premise does not hold here: " + regime["reason"]
    settings_title(fig, d, caveat=caveat)  # the run's settings above, then the caveat
    cells = fig.subfigures(2, 3, wspace=0.02, hspace=0.02)
    for cell, name in zip(cells.flat, d["panels"], strict=True):
        globals()[name](cell, d[name])  # the panel functions by name (the script defines them)


def panel_size(style, width: str = "single") -> tuple[float, float]:
    """A panel figure's size in inches: a journal's column (or text width), or half a
    16:9 slide in the talk style."""
    if style_name(style) == "talk":
        return (6.4, 4.2)
    return (WIDTHS[width], HEIGHTS[width])


def note_drawing(name: str, data: dict, style=None, width: str = "single"):
    """What draws one panel (or "layout"): (function, its data, rcParams, size in inches)."""
    params = style_params(style)
    if name == "layout":
        return note_layout, layout_data(data), params, LAYOUT_SIZE
    return PANELS[name], data[name], params, panel_size(style, width)


def note_figure(name: str, data: dict, style=None, width: str = "single") -> Figure:
    """One panel (or "layout") as a Figure, in a style at a width."""
    return figure_of(*note_drawing(name, data, style, width))


def layout_data(data: dict) -> dict:
    first = data[GRID[0]]
    return {
        "panels": list(GRID),
        "regime": first["regime"],
        "settings_named": first.get("settings_named", []),
        **{name: data[name] for name in GRID},
    }


def note_figure_files(
    data: dict,
    style=None,
    width: str = "single",
    dpi: float = DEFAULT_DPI,
    formats: Iterable[str] = FORMATS,
    names: Iterable[str] | None = None,
    layout: bool = True,
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, bytes]:
    """{file name: bytes} of every panel (and the layout): PNG, SVG, PDF, JSON and script
    each. `cancelled` is asked between figures (a cancelled export returns what it has;
    the caller writes nothing); `progress(done, total)` is told after each."""
    params = style_params(style)
    names = list(PANELS if names is None else names)
    jobs: list[tuple[str, PanelFunction, dict, tuple[float, float]]] = [
        (n, PANELS[n], data[n], panel_size(style, width)) for n in names
    ]
    if layout:
        jobs.append(("layout", note_layout, layout_data(data), LAYOUT_SIZE))
    out: dict[str, bytes] = {}
    for i, (name, fn, d, size) in enumerate(jobs):
        if cancelled():
            break
        extra = [PANELS[n] for n in GRID] if name == "layout" else []
        out.update(figure_files(name, fn, d, params, size, dpi, formats, TITLES.get(name, "Layout"), extra))
        if progress is not None:
            progress(i + 1, len(jobs))
    return out


def write_note_figures(
    run, folder: str | Path, style=None, dpi: float = DEFAULT_DPI, formats: Iterable[str] = FORMATS
) -> list[Path]:
    """`run --figures`: each panel in `formats` (PNG, SVG and PDF) with its JSON and
    script, and the layout, into `folder`. No Qt."""
    data = panel_data(run_snapshot(run), fit=fit_constants(run))
    return write_files(folder, note_figure_files(data, style, dpi=dpi, formats=formats))
