"""The layout rules every exported figure keeps, as checks over matplotlib's own artist
extents (after a draw): each returns a list of what breaks the rule (empty: kept), so a
test can assert on it and print every fault at once. Used by the tests of every figure
and usable on a researcher's own figure."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.path import Path
from matplotlib.text import Annotation, Text

CHANGE_LABEL_GID = "lam-change-label"  # gid of a λ-change label (draw.mark_changes)
PIN_GID = "pin"  # gid prefix of a pinned run's curve: "pin3"


def _renderer(fig):
    return fig._get_renderer()


def legends(fig) -> list[Legend]:
    """Every legend: the figure's, its sub-figures' and its axes'."""
    return list(fig.findobj(Legend))


def legend_too_tall(fig, share: float = 0.25) -> list[str]:
    """A legend takes at most `share` of the figure's height."""
    fig.draw_without_rendering()
    r = _renderer(fig)
    height = fig.bbox.height
    return [
        f"legend {lg.get_window_extent(r).height / height:.0%} of the figure's height (> {share:.0%})"
        for lg in legends(fig)
        if lg.get_visible() and lg.get_window_extent(r).height > share * height
    ]


def visible_texts(fig) -> list[Text]:
    """Every visible, non-empty text of the figure: tick labels, axis labels, titles,
    offset texts, annotations, legend texts."""
    fig.draw_without_rendering()
    out: list[Text] = []
    seen: set[int] = set()
    for artist in fig.findobj(Text):
        if id(artist) in seen or not artist.get_visible() or not artist.get_text().strip():
            continue
        if artist.axes is not None and not artist.get_in_layout() and not isinstance(artist, Annotation):
            continue
        seen.add(id(artist))
        out.append(artist)
    # tick labels beyond the view limits are not drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                inside = lo - 1e-12 * abs(hi - lo) <= tick.get_loc() <= hi + 1e-12 * abs(hi - lo)
                for label in (tick.label1, tick.label2):
                    if not inside and label in out:
                        out.remove(label)
    return out


def _owner(text: Text, fig) -> object:
    for lg in legends(fig):
        if text in lg.get_texts() or text is lg.get_title():
            return lg
    return None


def text_overlaps(fig, pad: float = 0.5) -> list[str]:
    """No two texts overlap (by more than `pad` px), and no text outside a legend runs
    into a legend; no text sticks out of the figure."""
    r = _renderer(fig)
    texts = visible_texts(fig)
    boxes = [t.get_window_extent(r) for t in texts]
    faults = []
    fig_box = fig.bbox
    for t, b in zip(texts, boxes, strict=True):
        if (
            b.x0 < fig_box.x0 - pad
            or b.y0 < fig_box.y0 - pad
            or b.x1 > fig_box.x1 + pad
            or b.y1 > fig_box.y1 + pad
        ):
            faults.append(f"{t.get_text()!r} sticks out of the figure")
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            a, b = boxes[i], boxes[j]
            if min(a.x1, b.x1) - max(a.x0, b.x0) > pad and min(a.y1, b.y1) - max(a.y0, b.y0) > pad:
                faults.append(f"{texts[i].get_text()!r} overlaps {texts[j].get_text()!r}")
    for lg in legends(fig):
        lb = lg.get_window_extent(r)
        for t, b in zip(texts, boxes, strict=True):
            if _owner(t, fig) is lg:
                continue
            if min(lb.x1, b.x1) - max(lb.x0, b.x0) > pad and min(lb.y1, b.y1) - max(lb.y0, b.y0) > pad:
                faults.append(f"{t.get_text()!r} runs into a legend")
    return faults


def change_labels_unclear(fig, pad: float = 0.5) -> list[str]:
    """Each λ-change label (gid CHANGE_LABEL_GID) sits clear of its own dashed line and of
    every curve of its sub-plot (no curve passes through its box)."""
    fig.draw_without_rendering()
    r = _renderer(fig)
    faults = []
    for ax in fig.axes:
        labels = [t for t in ax.texts if t.get_gid() == CHANGE_LABEL_GID and t.get_visible()]
        for label in labels:
            box = label.get_window_extent(r).padded(pad)
            x_line = (
                ax.transData.transform((label.xy[0], 1.0))[0]
                if ax.get_xscale() != "log" or label.xy[0] > 0
                else None
            )
            if x_line is not None and box.x0 <= x_line <= box.x1:
                faults.append(f"{label.get_text()!r} is drawn over its own line")
            for line in ax.get_lines():
                if _crosses(ax, line, box):
                    faults.append(f"{label.get_text()!r} is drawn over a curve ({line.get_label()!r})")
    return faults


def _crosses(ax, line: Line2D, box) -> bool:
    """Whether a curve (not a vertical change line) passes through the box, in px."""
    xy = np.asarray(line.get_xydata(), float)
    if len(xy) < 1:
        return False
    ok = np.isfinite(xy).all(axis=1)
    if ax.get_xscale() == "log":
        ok &= xy[:, 0] > 0
    if ax.get_yscale() == "log":
        ok &= xy[:, 1] > 0
    if ok.any() and np.ptp(xy[ok, 0]) == 0 and len(xy) == 2:
        return False  # axvline: its own test
    px = ax.transData.transform(np.where(ok[:, None], xy, 0.0))
    # each finite run of points is one piece of the curve (NaN breaks it)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(int), [0]])))
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        piece = px[start:stop]
        if len(piece) == 1:
            if box.contains(*piece[0]):
                return True
        elif Path(piece).intersects_bbox(box, filled=False):
            return True
    return False


def _look(line: Line2D) -> tuple:
    colour = tuple(round(v, 3) for v in to_rgba(line.get_color(), line.get_alpha()))
    offset, dashes = line._unscaled_dash_pattern
    return colour, tuple(round(d, 3) for d in dashes) if dashes else None


def _legend_lines(fig) -> list[Line2D]:
    out: list[Line2D] = []
    for lg in legends(fig):
        for handle in lg.legend_handles:
            if isinstance(handle, Line2D):
                out.append(handle)
        # tuple handles are drawn as child artists of the legend's handle boxes
        out.extend(a for a in lg.findobj(Line2D) if a not in out)
    return out


def pins_unlike_legend(fig) -> list[str]:
    """Every pinned curve (gid "pin<n>") has a legend sample of the same colour and dash."""
    looks = {_look(line) for line in _legend_lines(fig)}
    faults = []
    for ax in fig.axes:
        for line in ax.get_lines():
            gid = line.get_gid() or ""
            if gid.startswith(PIN_GID) and _look(line) not in looks:
                faults.append(
                    f"{gid} ({line.get_color()}, dashes {_look(line)[1]}) has no legend entry like it"
                )
    return faults


def axes_past_data(ax, lo: float, hi: float, share: float = 0.05, axis: str = "x") -> list[str]:
    """The axis ends at the data [lo, hi]: each end within `share` of the span (of log10
    values on a log axis)."""
    scale = ax.get_xscale() if axis == "x" else ax.get_yscale()
    a, b = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    f = math.log10 if scale == "log" else float
    a, b, lo, hi = f(a), f(b), f(lo), f(hi)
    span = hi - lo
    if span <= 0:
        return []
    faults = []
    if a < lo - share * span or a > lo + share * span:
        faults.append(f"{axis} axis starts at {a:.4g}, the data at {lo:.4g}")
    if b > hi + share * span or b < hi - share * span:
        faults.append(f"{axis} axis ends at {b:.4g}, the data at {hi:.4g}")
    return faults


def log_axes_unlabelled(fig, least: int = 3) -> list[str]:
    """Every log axis shows at least `least` labelled ticks."""
    fig.draw_without_rendering()
    faults = []
    for i, ax in enumerate(fig.axes):
        for name, axis, scale in (("x", ax.xaxis, ax.get_xscale()), ("y", ax.yaxis, ax.get_yscale())):
            if scale != "log":
                continue
            if name == "x" and not any(t.label1.get_visible() for t in axis.get_major_ticks()):
                continue  # a shared x axis labelled on the sub-plot below
            lo, hi = sorted(axis.get_view_interval())
            labelled = 0
            for ticks in (axis.get_major_ticks(), axis.get_minor_ticks()):
                for tick in ticks:
                    if (
                        lo * (1 - 1e-9) <= tick.get_loc() <= hi * (1 + 1e-9)
                        and tick.label1.get_visible()
                        and tick.label1.get_text().strip()
                    ):
                        labelled += 1
            if labelled < least:
                faults.append(f"axes {i}: log {name} axis has {labelled} labelled ticks (< {least})")
    return faults


def layout_faults(fig, dpi: float | None = None) -> list[str]:
    """Every rule that needs no knowledge of the data: legend height, texts, λ-change
    labels, pinned curves' legend entries, log axes' labels; at `dpi` (the exported
    PNG's) when given."""
    if dpi is not None:
        fig.set_dpi(dpi)
    return [
        *legend_too_tall(fig),
        *text_overlaps(fig),
        *change_labels_unclear(fig),
        *pins_unlike_legend(fig),
        *log_axes_unlabelled(fig),
    ]
