"""The axis ranges of a live panel, apart from its drawing: `ManagedRanges` (mixed into
plots/base.Panel) moves a range only when the data leave it, and `RunPace` measures how
fast a live run's time goes, so that a growing time axis keeps room ahead.

pyqtgraph's auto-range moves the axes a little on every frame, and re-laying out the tick
text of every axis is what makes a frame slow (20 fps against 58 at m = 10^3, measured with
benchmarks/bench_gui.py). Instead a range only changes when the data leave it (or fill less
than half of it), with a margin. A user's zoom is left alone until the 'A' button asks for
auto-range again."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg


def _bounds_with(bounds, extras):
    """childrenBounds() widened to hold the extra values per axis."""
    out = []
    for axis in (0, 1):
        b = bounds[axis]
        vals = [v for v in extras[axis] if math.isfinite(v)]
        if b is not None and (b[0] is None or b[1] is None):
            b = None
        if vals:
            lo, hi = min(vals), max(vals)
            b = (lo, hi) if b is None else (min(b[0], lo), max(b[1], hi))
        out.append(b)
    return out


def settled_y_bounds(plot: pg.PlotItem, t0: float, items: list | None = None) -> tuple[float, float] | None:
    """The y extent (view coordinates) of what the plot's data items (or those of
    ``items``) draw at x >= t0, or None when nothing is drawn there yet. An item's own
    ``settled_from`` cuts only the top: the ratio under a ramp of λ from 0 is huge while λ
    is low (ramp_settled_t), but its dip below balance there is what the panel is for."""
    lo, hi = math.inf, -math.inf
    for item in plot.listDataItems():
        if not item.isVisible() or (items is not None and item not in items):
            continue
        x, y = item.getData()
        if x is None or y is None or len(x) == 0:
            continue
        keep = (x >= t0) & np.isfinite(y)
        top = keep & (x >= getattr(item, "settled_from", t0))
        if top.any():
            lo, hi = min(lo, float(y[keep].min())), max(hi, float(y[top].max()))
    return (lo, hi) if lo <= hi else None


ROOM_AHEAD = 0.25  # of the data's span: room left past the side the data left a range by


def nice_ceiling(x: float) -> float:
    """The smallest of 1, 2 and 5 x 10^k that is >= x (> 0)."""
    k = math.floor(math.log10(x))
    for step in (1.0, 2.0, 5.0, 10.0):
        top = step * 10.0**k
        if top >= x * (1.0 - 1e-12):
            return top
    return 10.0 ** (k + 1)


LOOK_AHEAD_S = 1.0  # a growing time axis holds at least this many wall seconds of the run


class RunPace:
    """How fast a live run's t goes: simulated time per wall second over its last half
    second of frames (0 until its frames span a tenth of a second: two frames a few ms
    apart, around a jump of t, gave a pace that squeezed the run into the left of every
    time panel)."""

    WINDOW_S = 0.5
    LEAST_S = 0.1

    def __init__(self) -> None:
        self._samples: list[tuple[float, float]] = []  # (wall s, t), oldest first

    def reset(self) -> None:
        self._samples.clear()

    def add(self, wall: float, t: float) -> None:
        if not math.isfinite(t):
            return
        samples = self._samples
        if samples and (t < samples[-1][1] or wall <= samples[-1][0]):
            samples.clear()  # t went back (a restart) or the clock did not move
        samples.append((wall, t))
        while len(samples) > 2 and wall - samples[1][0] >= self.WINDOW_S:
            samples.pop(0)

    @property
    def per_second(self) -> float:
        if len(self._samples) < 2:
            return 0.0
        (w0, t0), (w1, t1) = self._samples[0], self._samples[-1]
        return (t1 - t0) / (w1 - w0) if w1 - w0 >= self.LEAST_S else 0.0


class ManagedRanges:
    """The range policy of a Panel: it reads the panel's ``plots``, ``time_plots``,
    ``_user_zoomed``, ``_force_range``, ``_settled`` and ``settled_after``."""

    # pyqtgraph's auto-range moves the axes a little on every frame, and re-laying out
    # the tick text of every axis is what makes a frame slow (20 fps against 58 at
    # m = 10^3, measured with benchmarks/bench_gui.py). Instead a range only changes when
    # the data leave it (or fill less than half of it), with a margin. A user's zoom is
    # left alone until the 'A' button asks for auto-range again.
    def reset_ranges(self) -> None:
        self._user_zoomed.clear()
        self._force_range = True

    @property
    def range_due(self) -> bool:
        """The next frame must check the ranges, whoever's turn it is: a new run, a toggle,
        the 'A' button, or data that have left the view (data_left_view)."""
        return self._force_range or self.data_left_view()

    def data_left_view(self) -> bool:
        """Whether what was drawn last lies outside a view (cheap: a panel knows its
        extremes); panels whose data grow fast (the largest weights) say so."""
        return False

    def _auto_requested(self, plot: pg.PlotItem) -> None:
        """The 'A' button (or the context menu) asked for auto-range: take it back."""
        if any(plot.vb.state["autoRange"]):
            self._user_zoomed.discard(plot)
            plot.vb.disableAutoRange()
            self._force_range = True

    def _manage_ranges(self) -> bool:
        force = self._force_range
        self._force_range = False
        changed = False
        for plot in self.plots:
            if plot in self._user_zoomed:
                continue
            vb = plot.vb
            items = self.range_items(plot)
            bounds = vb.childrenBounds(items=items)
            if plot in self.settled_after:
                settled = settled_y_bounds(plot, self.settled_after[plot], items)
                bounds = [bounds[0], settled or bounds[1]]
            bounds = _bounds_with(bounds, self.range_extras(plot))
            current = vb.viewRange()
            target = {}
            for axis, key in ((0, "xRange"), (1, "yRange")):
                if axis == 0 and vb.linkedView(vb.XAxis) is not None:
                    continue  # the linked master decides the shared time axis
                want = self._range_for(plot, axis, bounds[axis], current[axis], force)
                if want is not None:
                    target[key] = want
            if target:
                vb.setRange(padding=0, **target)
                changed = True
        return changed

    def range_items(self, plot: pg.PlotItem) -> list | None:
        """The items whose data set the plot's ranges (None: all that have bounds)."""
        return None

    def range_extras(self, plot: pg.PlotItem) -> tuple[list[float], list[float]]:
        """Values (in view coordinates: log10 on a log axis) that the x and y ranges must
        hold besides the data, e.g. a horizontal line that is not a data item."""
        return [], []

    def _range_for(self, plot: pg.PlotItem, axis: int, bounds, current, force: bool):
        """Where one axis should move (lo, hi), or None to leave it: only when the data
        leave the range or fill less than half of it (or when forced), with a margin."""
        lo, hi = bounds if bounds is not None else (None, None)
        if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
            return None
        clo, chi = current
        span = hi - lo
        if span <= 0 and axis == 0 and plot in self.time_plots:
            lo, hi = lo, lo + 1.0  # one instant (t = 0): time runs forward from it
            span = hi - lo
        elif span <= 0:
            span = abs(hi) if hi != 0 else 1.0
            lo, hi = lo - 0.5 * span, hi + 0.5 * span
            span = hi - lo
        below, above = lo < clo, hi > chi
        room = self._label_room(plot, axis, span)
        pad = max(0.06 * span, room)
        if self._steps_ahead(plot, axis):
            # a linear time axis: while the run goes on its top moves in 1-2-5 steps (a few
            # re-layouts a decade); once it stops, the axis ends where the run does (a run
            # finished at t = 500 had filled half of an axis stepped to 1000)
            top = hi + pad if self._settled else self._range_top(plot, axis, hi, span, pad)
            # while it runs the top only grows (the pace ahead varies: 100, 200, 100)
            if not (force or below or above or (self._settled and top < chi)):
                return None
            return lo - pad, top
        if not (force or below or above or span < 0.5 * (chi - clo)):
            return None
        # data that left the range keep going that way (a decay, a rising θ): room ahead
        # on that side, so that the axis is re-laid out every few seconds, not every turn
        ahead = max(pad, ROOM_AHEAD * span)
        bottom = lo - (ahead if below and not force else pad)
        top = self._range_top(plot, axis, hi, span, ahead if above and not force else pad)
        if room > 0:
            # a decade just inside an end has its label cut by the edge, and pyqtgraph
            # drops it (m' from 8 to 1000 shown from 10^0.8: no 10^1, in 1 of 5 runs)
            if 0 < math.ceil(bottom) - bottom < room:
                bottom = math.ceil(bottom) - room
            if 0 < top - math.floor(top) < room:
                top = math.floor(top) + room
        return bottom, top

    def _steps_ahead(self, plot: pg.PlotItem, axis: int) -> bool:
        """Whether this axis is a linear time axis (its top moves in 1-2-5 steps)."""
        return axis == 0 and plot in self.time_plots and not plot.getAxis("bottom").logMode

    @staticmethod
    def _label_room(plot: pg.PlotItem, axis: int, span: float) -> float:
        """On a vertical log axis, the margin (view units) past the data that holds half a
        tick label: pyqtgraph drops a label that sticks out of a gridded axis, and the
        decade at the data's top or bottom went unlabelled (m' from 7 to 1000: one label)."""
        item = plot.getAxis("left")
        if axis != 1 or not item.logMode:
            return 0.0
        label = pg.QtGui.QFontMetricsF(item.style["tickFont"] or pg.QtGui.QFont()).height()
        px = plot.vb.height()
        if px <= 2 * label:
            return 0.0
        return 0.6 * label * span / (px - 1.2 * label)

    # simulated time per wall second of the run drawn (LivePanel measures it)
    pace_per_second = 0.0

    def _range_top(self, plot: pg.PlotItem, axis: int, hi: float, span: float, pad: float) -> float:
        # a growing time axis gets room ahead, to the next 1, 2 or 5 x 10^k: it (and with it
        # every linked panel's axis) is re-laid out three times a decade of t, not per frame;
        # and room for the next second of the run at least: a step re-lays out every time
        # axis in one frame (a 40-60 ms frame), and in a run's first second the steps 1, 2,
        # 5, 10, 20, 50 came a few frames apart
        if self._steps_ahead(plot, axis) and hi + pad > 0:
            return nice_ceiling(max(hi + pad, hi + LOOK_AHEAD_S * self.pace_per_second))
        return hi + pad
