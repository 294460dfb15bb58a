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


class _Drawn:
    """A figure just drawn, and what the checks ask of that draw more than once, each
    worked out once: the renderer, the legends, the visible texts and their boxes, which
    legend owns which text, the legends' boxes. Valid until the figure changes or is drawn
    again."""

    def __init__(self, fig):
        fig.draw_without_rendering()
        self.fig = fig
        self.renderer = _renderer(fig)
        self.legends = legends(fig)
        self._texts: list[Text] | None = None
        self._boxes: list[tuple[float, float, float, float]] | None = None
        self._owners: dict[int, Legend] | None = None
        self._legend_boxes: list | None = None

    def texts(self) -> list[Text]:
        if self._texts is None:
            self._texts = _visible_texts(self.fig)
        return self._texts

    def boxes(self) -> list[tuple[float, float, float, float]]:
        """Each visible text's window extent, (x0, y0, x1, y1) in px."""
        if self._boxes is None:
            r = self.renderer
            self._boxes = [_corners(t.get_window_extent(r)) for t in self.texts()]
        return self._boxes

    def owners(self) -> dict[int, Legend]:
        """id of a legend's text (an entry's or the title) -> the first legend (in
        `legends` order) it belongs to."""
        if self._owners is None:
            owners: dict[int, Legend] = {}
            for lg in self.legends:
                for t in lg.get_texts():
                    owners.setdefault(id(t), lg)
                owners.setdefault(id(lg.get_title()), lg)
            self._owners = owners
        return self._owners

    def legend_boxes(self) -> list:
        """Each legend's window extent, in `legends` order."""
        if self._legend_boxes is None:
            self._legend_boxes = [lg.get_window_extent(self.renderer) for lg in self.legends]
        return self._legend_boxes


def _corners(box) -> tuple[float, float, float, float]:
    return float(box.x0), float(box.y0), float(box.x1), float(box.y1)


def legend_too_tall(fig, share: float = 0.25) -> list[str]:
    """A legend takes at most `share` of the figure's height."""
    return _legend_too_tall(_Drawn(fig), share)


def _legend_too_tall(drawn: _Drawn, share: float = 0.25) -> list[str]:
    # only the visible legends are measured (measuring one places its entries)
    height = drawn.fig.bbox.height
    tall = (lg.get_window_extent(drawn.renderer).height for lg in drawn.legends if lg.get_visible())
    return [
        f"legend {h / height:.0%} of the figure's height (> {share:.0%})" for h in tall if h > share * height
    ]


def visible_texts(fig) -> list[Text]:
    """Every visible, non-empty text of the figure: tick labels, axis labels, titles,
    offset texts, annotations, legend texts."""
    fig.draw_without_rendering()
    return _visible_texts(fig)


def _visible_texts(fig) -> list[Text]:
    """visible_texts of a figure just drawn."""
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
    hidden: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                inside = lo - 1e-12 * abs(hi - lo) <= tick.get_loc() <= hi + 1e-12 * abs(hi - lo)
                for label in (tick.label1, tick.label2):
                    if not inside and id(label) in seen:
                        hidden.add(id(label))
    return [t for t in out if id(t) not in hidden] if hidden else out


def text_overlaps(fig, pad: float = 0.5) -> list[str]:
    """No two texts overlap (by more than `pad` px), and no text outside a legend runs
    into a legend; no text sticks out of the figure."""
    return _text_overlaps(_Drawn(fig), pad)


def _text_overlaps(drawn: _Drawn, pad: float = 0.5) -> list[str]:
    texts, boxes = drawn.texts(), drawn.boxes()
    faults = []
    fx0, fy0, fx1, fy1 = _corners(drawn.fig.bbox)
    for t, (x0, y0, x1, y1) in zip(texts, boxes, strict=True):
        if x0 < fx0 - pad or y0 < fy0 - pad or x1 > fx1 + pad or y1 > fy1 + pad:
            faults.append(f"{t.get_text()!r} sticks out of the figure")
    for i, (ax0, ay0, ax1, ay1) in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            bx0, by0, bx1, by1 = boxes[j]
            if min(ax1, bx1) - max(ax0, bx0) > pad and min(ay1, by1) - max(ay0, by0) > pad:
                faults.append(f"{texts[i].get_text()!r} overlaps {texts[j].get_text()!r}")
    owners = drawn.owners()
    for lg, legend_box in zip(drawn.legends, drawn.legend_boxes(), strict=True):
        lx0, ly0, lx1, ly1 = _corners(legend_box)
        for t, (x0, y0, x1, y1) in zip(texts, boxes, strict=True):
            if owners.get(id(t)) is lg:
                continue
            if min(lx1, x1) - max(lx0, x0) > pad and min(ly1, y1) - max(ly0, y0) > pad:
                faults.append(f"{t.get_text()!r} runs into a legend")
    return faults


def change_labels_unclear(fig, pad: float = 0.5) -> list[str]:
    """Each λ-change label (gid CHANGE_LABEL_GID) sits clear of its own dashed line and of
    every curve of its sub-plot (no curve passes through its box)."""
    return _change_labels_unclear(_Drawn(fig), pad)


def _change_labels_unclear(drawn: _Drawn, pad: float = 0.5) -> list[str]:
    fig, r = drawn.fig, drawn.renderer
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


def _legend_lines(legend_list: list[Legend]) -> list[Line2D]:
    out: list[Line2D] = []
    for lg in legend_list:
        for handle in lg.legend_handles:
            if isinstance(handle, Line2D):
                out.append(handle)
        # tuple handles are drawn as child artists of the legend's handle boxes
        out.extend(a for a in lg.findobj(Line2D) if a not in out)
    return out


def pins_unlike_legend(fig) -> list[str]:
    """Every pinned curve (gid "pin<n>") has a legend sample of the same colour and dash."""
    return _pins_unlike_legend(fig, legends(fig))


def _pins_unlike_legend(fig, legend_list: list[Legend]) -> list[str]:
    looks = {_look(line) for line in _legend_lines(legend_list)}
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
    return _log_axes_unlabelled(fig, least)


def _log_axes_unlabelled(fig, least: int = 3) -> list[str]:
    """log_axes_unlabelled of a figure just drawn."""
    faults = []
    for i, ax in enumerate(fig.axes):
        for name, axis, scale in (("x", ax.xaxis, ax.get_xscale()), ("y", ax.yaxis, ax.get_yscale())):
            if scale != "log":
                continue
            if name == "x" and not any(
                t.label1.get_visible() or t.label2.get_visible() for t in axis.get_major_ticks()
            ):
                continue  # a shared x axis labelled on the sub-plot below
            lo, hi = sorted(axis.get_view_interval())
            labelled = 0
            for ticks in (axis.get_major_ticks(), axis.get_minor_ticks()):
                for tick in ticks:
                    # label2: the other side's (a colour bar's labels are on its right)
                    shown = any(
                        label.get_visible() and label.get_text().strip()
                        for label in (tick.label1, tick.label2)
                    )
                    if lo * (1 - 1e-9) <= tick.get_loc() <= hi * (1 + 1e-9) and shown:
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
    # one draw for all the checks (each alone draws the figure first): drawn again, a
    # constrained layout converges further, by hundredths of a pixel at most
    drawn = _Drawn(fig)
    return [
        *_legend_too_tall(drawn),
        *_text_overlaps(drawn),
        *_change_labels_unclear(drawn),
        *_pins_unlike_legend(fig, drawn.legends),
        *_log_axes_unlabelled(fig),
    ]
