"""Axis ticks and their labels on the live panels: log axes labelled by the room their
labels need (log_axis_levels), one number format on every axis (2·10⁻⁵ and 50,000, never
2e+06 or (x1e-06)), whole-number axes for ranks, and the ticks of a swept m.

Panel.sync_tick_text (plots/base.py) puts these on a panel's axes."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pyqtgraph as pg

LABEL_PITCH = 1.8  # least distance between the centres of two log-axis labels, in label sizes
TIGHT_PITCH = 1.1  # ... on an axis too short for three labels at LABEL_PITCH
MINOR_PITCH = 2.0  # least px between two unlabelled grid lines (2..9 x 10^k)


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(k: int) -> str:
    return "10" + str(k).translate(SUPERSCRIPT)


def _log_text(x: float, pyqtgraph_text) -> str:
    """Plain numbers where they are short (20, 0.05, 1.4, 3000), else pyqtgraph's 2·10⁻⁵
    (never 3e+03: one number format on every axis)."""
    mantissa = x / 10.0 ** math.floor(math.log10(x))
    if 1 <= x < 1e4 and abs(x - round(x)) < 1e-9 * x:
        return f"{round(x)}"
    if 1e-3 <= x < 1e4 or abs(mantissa - round(mantissa)) > 1e-6:
        return f"{x:.3g}"
    return pyqtgraph_text(x)


def whole_number_strings(tick_strings):
    """The labels of a linear axis of counts (ranks): 50,000 and 2·10⁶, never 2e+06."""

    def strings(values, scale, spacing):
        out = []
        for v in values:
            n = round(v * scale)
            if abs(n) < 10**6:
                out.append(f"{n:,}")
            else:
                k = math.floor(math.log10(abs(n)))
                m = n / 10**k
                out.append(f"{m:g}·{power_of_ten(k)}" if abs(m - round(m, 1)) < 1e-9 else f"{n:.2e}")
        return out

    return strings


def scale_label(axis):
    """An axis title's scale as ×10⁻³ (pyqtgraph's (x0.001) beside (x1e-06) elsewhere)."""
    plain = axis.labelString

    def label() -> str:
        scale = axis.autoSIPrefixScale
        if axis.labelUnits or not axis.autoSIPrefix or scale == 1.0:
            return plain()
        k = round(-math.log10(scale))
        style = ";".join(f"{key}: {value}" for key, value in axis.labelStyle.items())
        return f"<span style='{style}'>{axis.labelText} (×{power_of_ten(k)})</span>"

    return label


def log_tick_strings(axis, tick_strings):
    """The labels of a log axis (the values of the first level of log_tick_values):
    pyqtgraph's 1, 10², 0.01 for decades; plain numbers (20, 50, 1.4) among other values."""

    def strings(values, scale, spacing):
        if not axis.logMode or all(abs(v - round(v)) < 1e-9 for v in values):
            return tick_strings(values, scale, spacing)
        return [
            _log_text(10.0**v, lambda x: tick_strings([math.log10(x)], scale, spacing)[0]) for v in values
        ]

    return strings


def log_axis_levels(
    lo: float, hi: float, size: float, extent: float, minor: bool, inset: float = 0.5
) -> list:
    """Tick levels [(spacing, values)] of a log axis showing 10^lo .. 10^hi on `size` px, for
    labels `extent` px long along the axis. The first level is what gets a label: values at
    least LABEL_PITCH extents apart (TIGHT_PITCH where that leaves fewer than three) and half
    an extent inside the ends (``inset``: pyqtgraph drops a label that sticks out). The second, if
    `minor`, is unlabelled grid lines at 2..9 x 10^k.

    Three decades or more inside: the decades, or every 2nd, 5th, 10th... where they would
    crowd, with no grid line at the others. Fewer: 1, 2 and 5 times a power of ten, or where
    that makes fewer than three labels or crowds them (over a decade or more) 1, 2, 3 and 5,
    or 1 and 3; below a decade with fewer than two of 1, 2 and 5 (1.1 to 1.9, say): 3 to 6
    evenly spaced values of 1, 2 or 5 times a power of ten."""
    best: list = []
    for pitch in (LABEL_PITCH * extent, TIGHT_PITCH * extent):
        levels = _log_levels(lo, hi, size, extent, pitch, minor, inset)
        if not best or len(levels[0][1]) > len(best[0][1]):
            best = levels
        if len(best[0][1]) >= 3:
            break
    return best


def _log_levels(
    lo: float, hi: float, size: float, extent: float, pitch_px: float, minor: bool, inset: float = 0.5
) -> list:
    """log_axis_levels for labels at least `pitch_px` apart."""
    px_per_decade = size / (hi - lo)
    pitch = pitch_px / px_per_decade  # in decades
    a, b = lo + inset * extent / px_per_decade, hi - inset * extent / px_per_decade  # a label fits

    def inside(mantissas, lo=a, hi=b) -> list[float]:
        out = (k + math.log10(m) for k in range(math.floor(lo) - 1, math.ceil(hi) + 1) for m in mantissas)
        return [v for v in out if lo - 1e-9 <= v <= hi + 1e-9]

    def levels(labelled, spacing, unlabelled=()) -> list:
        grid = inside(unlabelled, lo, hi)
        if minor and grid and math.log10(10 / 9) * px_per_decade >= MINOR_PITCH:
            return [(spacing, labelled), (None, grid)]
        return [(spacing, labelled)]

    fewer: list = []  # two labels that fit, if nothing gives three
    if len(inside((1,))) < 3:
        for mantissas, gap in (
            ((1, 2, 5), math.log10(2)),
            ((1, 2, 3, 5), math.log10(1.5)),
            ((1, 3), math.log10(3)),
        ):
            values = inside(mantissas)
            unlabelled = [m for m in range(2, 10) if m not in mantissas]
            if len(values) >= 3 and gap >= pitch:
                return levels(values, gap, unlabelled)
            if hi - lo < 1:
                if len(values) >= 2:
                    return levels(values, gap, unlabelled)
                return [_evenly_spaced(10.0**a, 10.0**b)]
            if len(values) == 2 and gap >= pitch and not fewer:
                fewer = levels(values, gap, unlabelled)
    step = next(s * 10**n for n in range(400) for s in (1, 2, 5) if s * 10**n >= pitch)
    decades = [float(k) for k in range(math.ceil(a - 1e-9), math.floor(b + 1e-9) + 1) if k % step == 0]
    if fewer and len(decades) < 2:
        return fewer
    return levels(decades, float(step), range(2, 10) if step == 1 else ())


def _evenly_spaced(a: float, b: float) -> tuple[float, list[float]]:
    """3 to 6 values of a..b, evenly spaced by 1, 2 or 5 times a power of ten (in log10)."""
    if not 0 < a < b:
        return (1.0, [])
    top = math.floor(math.log10(b - a))
    step = min(
        (m * 10.0**k for k in range(top - 2, top + 1) for m in (1, 2, 5) if (b - a) / (m * 10.0**k) <= 6),
        default=b - a,
    )
    first = math.ceil(a / step - 1e-9) * step
    count = int((b - first) / step + 1e-9) + 1
    return (math.log10(1 + step / a), [math.log10(first + i * step) for i in range(count)])


def log_tick_values(axis, tick_values):
    """A log axis's ticks from log_axis_levels, its labels spaced by their size (pyqtgraph
    labels every 2..9 x 10^k tick, which pile up; over many decades it puts every other
    decade in a second level that may lose its labels; and 1.1 to 1.9 gets no tick)."""

    def values(lo, hi, size):
        if not axis.logMode or hi == lo or size <= 0:
            return tick_values(lo, hi, size)
        metrics = pg.QtGui.QFontMetricsF(axis.style["tickFont"] or pg.QtGui.QFont())
        vertical = axis.orientation in ("left", "right")
        extent = metrics.height() if vertical else metrics.horizontalAdvance("0.005")
        lo, hi = sorted((lo, hi))
        return log_axis_levels(lo, hi, size, extent, axis.style["maxTickLevel"] >= 1)

    return values


def log_ticks(lo: float, hi: float, values: Sequence[float] = ()) -> list[float]:
    """Labelled values for a log axis whose data span [lo, hi]: the given values when there
    are a few (the swept m), else 1-2-5 steps (decades only over more than three decades);
    decades further out, for a zoomed-out view."""
    if 1 <= len(values) <= 8:
        return sorted(float(v) for v in values)
    if not (lo > 0 and hi >= lo and math.isfinite(hi)):
        return []
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    mult = (1.0,) if k1 - k0 > 3 else (1.0, 2.0, 5.0)
    inside = [c * 10.0**k for k in range(k0, k1 + 1) for c in mult if lo <= c * 10.0**k <= hi]
    outside = [10.0**k for k in range(k0 - 6, k1 + 7) if not lo <= 10.0**k <= hi]
    return sorted(inside + outside)


def tick_text(v: float) -> str:
    return f"{v:g}" if 1e-3 <= v < 1e6 else f"{v:.0e}"


def integer_tick_values(axis, tick_values):
    """An axis of whole numbers (ranks) gets ticks at whole numbers only: pyqtgraph's
    fractional levels are dropped, and a range holding fewer than two of its ticks gets
    every whole number in it (up to 10)."""

    def whole(v: float) -> bool:
        x = 10.0**v if axis.logMode else v
        return abs(x - round(x)) < 1e-6 * max(1.0, abs(x))

    def values(lo, hi, size):
        levels = []
        for spacing, vals in tick_values(lo, hi, size):
            if not axis.logMode and spacing < 1.0:
                continue
            kept = [v for v in vals if whole(v)]
            if kept:
                levels.append((spacing, kept))
        if sum(lo <= v <= hi for _s, vals in levels for v in vals) < 2:
            a, b = (10.0**lo, 10.0**hi) if axis.logMode else (lo, hi)
            ks = range(max(math.ceil(a - 1e-9), 1 if axis.logMode else -(10**9)), math.floor(b + 1e-9) + 1)
            if 1 <= len(ks) <= 10:
                levels = [(1.0, [math.log10(k) if axis.logMode else float(k) for k in ks])]
        return levels

    return values


def whole_number_axis(axis: pg.AxisItem) -> None:
    """Mark an axis as counting things (ranks): Panel.sync_tick_text gives it whole ticks."""
    axis.whole_numbers = True
