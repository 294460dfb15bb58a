"""The six live plots of the interference window (the n-encoding model).

Each panel is a `base.LivePanel` (titled, legend, managed ranges; its figure is exported by
figures/interference/figures.py) that creates its plot items once and, per frame, only calls
setData / setImage with arrays taken from an `InterferenceSnapshot`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from sparsity_gui.core.interference.image import max_abs_pool, neuron_order
from sparsity_gui.core.interference.kernels import ACTIVE_HI, ACTIVE_LO
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.interference.schedules import schedule_marks
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS as SETTINGS
from sparsity_gui.core.interference.thresholds import TRACKED, snapshot_threshold_curves, threshold_note
from sparsity_gui.plots.base import BLUE, DASH, DOT, GREEN, GREY, ORANGE, PURPLE, RED, LivePanel, pen
from sparsity_gui.plots.curves import set_curve
from sparsity_gui.plots.legend import tight_text
from sparsity_gui.plots.pins import PinCurve, PinnablePanel

H = {name: i for i, name in enumerate(HISTORY_COLUMNS)}
W_LEVELS = (-1.2, 1.2)  # the heatmap's fixed, symmetric colour range
# blue - white - red (ColorBrewer's RdBu ends): zero is white, so dead weights vanish
DIVERGING = pg.ColorMap(
    pos=[0.0, 0.25, 0.5, 0.75, 1.0], color=["#2166ac", "#67a9cf", "#ffffff", "#ef8a62", "#b2182b"]
)
STEP_TIP = (
    "x axis: optimizer steps. For gradient descent the note's time is t = 4·Σ lr, the lr of "
    "each step summed (4·lr·steps while lr is constant; λ = l1/4); Adam's steps have no such "
    "time."
)


def _colored(*parts: tuple[str, str]) -> str:
    """An axis label naming curves in their colours: 'nonzero · active'."""
    return " · ".join(f'<span style="color:{color}">{text}</span>' for text, color in parts)


def _near(a, b) -> bool:
    return bool(np.allclose(a, b, rtol=1e-6, atol=1e-9))


def _by_step(name: str):
    """A pinned run's column ``name`` against its optimizer steps."""
    return lambda pin: (pin.column("step"), pin.column(name))


class InterferencePanel(PinnablePanel, LivePanel):
    """A Panel for InterferenceSnapshots: the vertical markers show where l1 or lr was
    changed live during the run (the note's panels mark changes of lam); the step panels
    draw pinned runs too (plots.pins)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.fixed_y: dict = {}  # plot -> (lo, hi): a y range that never moves (shares)
        # plot -> (smallest top, headroom): a count axis from 0 (never negative), with room
        # above the data for the legend
        self.counts_y: dict = {}

    def _range_for(self, plot, axis: int, bounds, current, force: bool):
        """Panel's rule, except that shares have a fixed y range and counts a y axis from
        zero (never negative) with room above the data for the legend."""
        if axis == 1 and plot in self.fixed_y:
            want = self.fixed_y[plot]
            return None if _near(current, want) else want
        if axis == 1 and plot in self.counts_y:
            least, room = self.counts_y[plot]
            lo, hi = bounds if bounds is not None else (None, None)
            ok = lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi)
            top = max(least, hi if ok else 0.0)
            clo, chi = current
            if not (force or chi < top or room * top < 0.5 * chi or clo >= 0):
                return None
            want = (-0.04 * top, room * top)
            if _near(current, want):
                return None
            # whole numbers: ticks at 0, 1, 2, ... while they fit
            plot.getAxis("left").setTickSpacing(*((1, 1) if top <= 8 else (None, None)))
            return want
        return super()._range_for(plot, axis, bounds, current, force)

    def _range_top(self, plot, axis: int, hi: float, span: float, pad: float) -> float:
        if axis == 0 and plot in self.time_plots:
            # room ahead for the growing run, but not past its last step
            return min(hi + 0.3 * span, max(hi, self._x_cap) + pad)
        return hi + pad

    _x_cap = float("inf")  # the run's last step: the step axes never reach past it

    def update_from(self, snap, ranges: bool = True) -> bool:
        self._x_cap = float(snap.params.steps)
        return super().update_from(snap, ranges)

    def change_markers(self, snap) -> list[tuple[float, str]]:
        """Where a schedule of l1 or lr turned, and where l1 or lr was changed live, from the
        run's own log of its live changes (so a reopened session shows them too): the
        turns of the schedules the run started with, each until a live change of its
        quantity ended it, then the live changes, at the steps they were made."""
        start = snap.initial_params or snap.params
        ended: dict[str, int] = {}  # l1 or lr: the step a live change ended its schedule at
        live = []
        for change in snap.changes:
            if change.step > snap.step:
                continue
            values = change.value_dict
            named = [name for name in ("l1", "lr") if name in values]
            for name in named:
                ended.setdefault(name, change.step)
            if named:
                shown = ", ".join(SETTINGS[name].text(values[name]) for name in named)  # as the table
                live.append((float(change.step), shown))
        turns = [
            (x, label)
            for x, label in schedule_marks(start)
            if x <= min(snap.step, ended.get(label.split()[0], snap.step))
        ]
        return turns + live

    def add_step_plot(self, row: int, title: str | None, y_label: str, **kw) -> pg.PlotItem:
        plot = self.add_plot(row, title, "step", y_label, time_axis=True, **kw)
        plot.getAxis("bottom").setToolTip(STEP_TIP)
        return plot


class WeightsPanel(InterferencePanel):
    title = "Weights W"
    claim = (
        "W as an image: a row per feature, a column per neuron, blue negative, red positive "
        "(fixed range ±1.2). Training leaves each feature one weight near ±1; with "
        "'order neurons by feature' the survivors line up on a diagonal, and features sharing "
        "a neuron (polysemantic) show as rows stacked in one column."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "W: features × neurons", "neuron", "feature", legend=False)
        p.showGrid(x=False, y=False)
        p.vb.invertY(True)  # feature 0 at the top, as a matrix is printed
        self.cmap = DIVERGING
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(self.cmap)
        self.image.setLevels(W_LEVELS)
        p.addItem(self.image)
        self.colorbar = pg.ColorBarItem(
            values=W_LEVELS, colorMap=self.cmap, interactive=False, label="w", width=14, colorMapMenu=False
        )
        self.colorbar.setImageItem(self.image, insert_in=p)
        self.plot = p
        self.order = self.add_toggle(
            "order neurons by feature",
            "Columns grouped by the feature whose largest weight sits there (feature 0's neuron "
            "first, ...), then the neurons no feature uses: the settled W becomes diagonal.",
        )
        self.overlap = self.add_toggle(
            "W(0)·Wᵀ",
            "The overlaps W_i(0)·W_j, features by features: a diagonal when every feature keeps "
            "its initial direction (the paper's correlation figure); off the diagonal, a feature "
            "that took another's place.",
        )
        self.shown: np.ndarray | None = None  # W, columns reordered if asked
        self.columns: np.ndarray | None = None  # neuron index of each column of `shown`
        self.pool = (1, 1)  # rows, columns per image pixel (max-|w| pooling, see max_abs_pool)
        self._shape = None
        self._rect = None

    def apply_toggles(self) -> None:
        overlap = self.overlap.isChecked()
        self.order.setEnabled(not overlap)
        ordered = self.order.isChecked()
        title, bottom, left = (
            ("W(0)·Wᵀ: features × features", "feature j (now)", "feature i (at the start)")
            if overlap
            else ("W: features × neurons", "neuron (ordered by feature)" if ordered else "neuron", "feature")
        )
        if self.plot.titleLabel.text != title:
            self.plot.setTitle(title, size=self.plot.titleLabel.opts.get("size", "11pt"))
            self.fit_titles()
        self.plot.setLabel("bottom", bottom)
        self.plot.setLabel("left", left)

    def draw(self, snap) -> None:
        W = snap.W
        if self.overlap.isChecked() and snap.w0.shape == W.shape:
            self.columns = np.arange(W.shape[0])
            shown = snap.w0 @ W.T
        elif self.order.isChecked():
            self.columns = neuron_order(W)
            shown = W[:, self.columns]
        else:
            self.columns = np.arange(W.shape[1])
            shown = W
        self.shown = shown
        # at most one image pixel per screen pixel, pooled so that no ±1 weight disappears
        vb = self.plot.vb
        ratio = self.devicePixelRatioF()
        fx = max(1, -(-shown.shape[1] // max(int(vb.width() * ratio), 1)))
        fy = max(1, -(-shown.shape[0] // max(int(vb.height() * ratio), 1)))
        self.pool = (fy, fx)
        image = max_abs_pool(shown, fy, fx) if fx > 1 or fy > 1 else shown
        levels = W_LEVELS
        if self.overlap.isChecked():  # symmetric, wide enough for the largest overlap
            top = max(W_LEVELS[1], float(np.abs(image).max(initial=0.0)))
            levels = (-top, top)
        if levels != tuple(self.colorbar.levels()):
            self.colorbar.setLevels(levels)
        self.image.setImage(image, autoLevels=False, levels=levels)
        rect = (image.shape[1] * fx, image.shape[0] * fy)
        if rect != self._rect:  # pooled pixels keep neuron / feature units on the axes
            self._rect = rect
            self.image.setRect(0, 0, rect[0], rect[1])

    def _manage_ranges(self) -> bool:
        """The image fills the view exactly; only a new shape (or 'A') re-frames it."""
        force = self._force_range
        self._force_range = False
        shape = None if self.shown is None else self.shown.shape
        if self.plot in self._user_zoomed or shape is None or (shape == self._shape and not force):
            return False
        self._shape = shape
        self.plot.vb.setRange(xRange=(0, shape[1]), yRange=(0, shape[0]), padding=0)
        return True


class ActivePanel(InterferencePanel):
    title = "Active features per neuron"
    claim = (
        f"Per neuron, the number of features with an active weight ({ACTIVE_LO} ≤ |w| ≤ "
        f"{ACTIVE_HI}). A neuron with more than one is polysemantic (red). Below: how many "
        "neurons have 0, 1, 2, ... active features."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "Active features per neuron", "neuron", "active features")
        self.all = p.plot(
            stepMode="center",
            pen=pen(BLUE),
            fillLevel=0,
            brush=pg.mkBrush(31, 119, 180, 90),
            name="active features",
        )
        self.poly = p.plot(
            stepMode="center",
            pen=pen(RED),
            fillLevel=0,
            brush=pg.mkBrush(214, 39, 40, 150),
            name="polysemantic (> 1)",
        )
        one = pg.InfiniteLine(pos=1.0, angle=0, pen=pen(GREY, DOT))
        p.addItem(one, ignoreBounds=True)
        self.counts_y[p] = (2.0, 1.9)  # room for the legend above the bars
        self.plot = p
        q = self.add_plot(1, None, "active features on the neuron", "neurons", legend=False)
        q.getAxis("bottom").setTickSpacing(1, 1)
        self.counts_y[q] = (1.0, 1.12)
        self.hist = pg.BarGraphItem(x=[0], height=[0], width=0.8, brush=pg.mkBrush(BLUE), pen=pen(BLUE))
        q.addItem(self.hist)
        self.hist_plot = q
        self.log_hist = self.add_toggle("log histogram", "Logarithmic count axis for the histogram")
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 2)
        self.histogram = np.zeros(1, dtype=np.int64)
        self._hist_key = None

    def apply_toggles(self) -> None:
        self._hist_key = None

    def draw(self, snap) -> None:
        counts = np.asarray(snap.counts)
        edges = np.arange(counts.size + 1, dtype=float) - 0.5
        c = counts.astype(float)
        self.all.setData(edges, c, skipFiniteCheck=True)
        self.poly.setData(edges, np.where(counts > 1, c, 0.0), skipFiniteCheck=True)
        hist = np.bincount(counts, minlength=3) if counts.size else np.zeros(3, dtype=np.int64)
        self.histogram = hist
        key = (tuple(hist.tolist()), self.log_hist.isChecked())
        if key != self._hist_key:  # bar items are slow to rebuild: only on change
            self._hist_key = key
            heights = hist.astype(float)
            if self.log_hist.isChecked():
                heights = np.log10(np.maximum(heights, 1.0))
                self.hist_plot.setLabel("left", "log₁₀ neurons")
            else:
                self.hist_plot.setLabel("left", "neurons")
            colors = [pg.mkBrush(RED) if k > 1 else pg.mkBrush(BLUE) for k in range(hist.size)]
            self.hist.setOpts(x=np.arange(hist.size), height=heights, brushes=colors)


class PolysemanticPanel(InterferencePanel):
    title = "Polysemantic neurons"
    claim = (
        "The number of neurons with more than one active feature, against the paper's estimate "
        "n²/(4m) for random collisions (Lecomte et al. 2023). " + STEP_TIP
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_step_plot(0, "Polysemantic neurons vs n²/(4m)", "neurons")
        self.count = p.plot(pen=pen(RED), name="polysemantic neurons")
        self.predicted = p.plot(pen=pen(GREY, DASH), name="prediction n²/(4m)")
        self.counts_y[p] = (1.0, 1.4)
        self.plot = p

    def pin_curves(self) -> list[PinCurve]:
        return [PinCurve(self.plot, RED, _by_step("polysemantic"))]

    def draw(self, snap) -> None:
        h = snap.history
        s = h[:, H["step"]]
        set_curve(self.count, s, h[:, H["polysemantic"]])
        set_curve(self.predicted, s, h[:, H["predicted"]])


class KeptPanel(InterferencePanel):
    title = "Features on their initial neuron"
    claim = (
        "The share of features whose largest weight sits on the neuron where their initial "
        "weight was largest: the paper finds most features end where they started, so which "
        "features collide is decided by W(0). Below, the mean over features of Σₖ W⁴ᵢₖ: 1 when "
        "each feature has one weight of size 1, 3/(m+2) for rows pointing anywhere (the "
        "paper's measure under noise). " + STEP_TIP
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        # one curve per plot, named by the title and axis: no legend to hide them
        p = self.add_step_plot(
            0, "Share of features on their initial largest neuron", "share on initial neuron", legend=False
        )
        self.kept = p.plot(pen=pen(PURPLE))
        one = pg.InfiniteLine(pos=1.0, angle=0, pen=pen(GREY, DOT))
        p.addItem(one, ignoreBounds=True)
        self.fixed_y[p] = (0.0, 1.05)
        self.plot = p
        q = self.add_step_plot(1, None, "mean Σₖ W⁴ᵢₖ", legend=False)
        q.setXLink(p)
        self.w4 = q.plot(pen=pen(ORANGE))
        q.addItem(pg.InfiniteLine(pos=1.0, angle=0, pen=pen(GREY, DOT)), ignoreBounds=True)
        self.fixed_y[q] = (0.0, 1.05)
        self.w4_plot = q
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 2)

    def pin_curves(self) -> list[PinCurve]:
        return [
            PinCurve(self.plot, PURPLE, _by_step("kept_share")),
            PinCurve(self.w4_plot, ORANGE, _by_step("sum_w4")),
        ]

    def draw(self, snap) -> None:
        h = snap.history
        set_curve(self.kept, h[:, H["step"]], h[:, H["kept_share"]])
        set_curve(self.w4, h[:, H["step"]], h[:, H["sum_w4"]])


class SignsPanel(InterferencePanel):
    title = "Signs of colliding features"
    claim = (
        "Pairs of features active on the same neuron, by the signs of their two weights. "
        "The paper predicts colliding features take opposite signs (so ReLU(W_i·W_j) = 0 "
        "and they stop interfering). " + STEP_TIP
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_step_plot(0, "Colliding pairs by sign", "pairs")
        self.opposite = p.plot(pen=pen(GREEN), name="opposite signs")
        self.same = p.plot(pen=pen(ORANGE, DASH), name="same sign")
        self.counts_y[p] = (1.0, 1.12)
        self.plot = p
        q = self.add_step_plot(1, None, "opposite share", legend=False)
        q.setXLink(p)
        self.share = q.plot(pen=pen(GREEN))
        half = pg.InfiniteLine(pos=0.5, angle=0, pen=pen(GREY, DOT))
        q.addItem(half, ignoreBounds=True)
        self.fixed_y[q] = (0.0, 1.05)
        self.share_plot = q
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 2)

    def pin_curves(self) -> list[PinCurve]:
        def share(pin):
            opp, same = pin.column("opposite_pairs"), pin.column("same_pairs")
            return pin.column("step"), opp / (opp + same)

        return [
            PinCurve(self.plot, GREEN, _by_step("opposite_pairs")),
            PinCurve(self.plot, ORANGE, _by_step("same_pairs")),
            PinCurve(self.share_plot, GREEN, share),
        ]

    def draw(self, snap) -> None:
        h = snap.history
        s = h[:, H["step"]]
        opp = h[:, H["opposite_pairs"]]
        same = h[:, H["same_pairs"]]
        set_curve(self.opposite, s, opp)
        set_curve(self.same, s, same)
        with np.errstate(divide="ignore", invalid="ignore"):
            set_curve(self.share, s, opp / (opp + same))  # NaN (not drawn) with no pairs


class SparsityPanel(InterferencePanel):
    title = "Sparsification"
    claim = (
        "How sparse W gets: nonzero and active weights (the settled state has about one per "
        "feature: the dotted line at n), and the network's loss and ‖W‖₁, on log axes. "
        "Adam never sets a weight exactly to zero. " + STEP_TIP
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        # two small plots: the axis labels, in the curves' colours, name the curves (a
        # legend would cover them whichever corner it took)
        p = self.add_step_plot(
            0, "Nonzero weights and loss", _colored(("nonzero", BLUE), ("active", RED)), legend=False
        )
        p.setLogMode(y=True)
        self.nonzero = p.plot(pen=pen(BLUE), name="nonzero weights")
        self.active = p.plot(pen=pen(RED), name="active weights")
        self.n_line = p.plot(pen=pen(GREY, DOT), name="n")  # one weight per feature
        self.plot = p
        q = self.add_step_plot(1, None, _colored(("loss", PURPLE), ("‖W‖₁", ORANGE)), legend=False)
        q.setLogMode(y=True)
        q.setXLink(p)
        self.loss = q.plot(pen=pen(PURPLE), name="loss")
        self.norm1 = q.plot(pen=pen(ORANGE, DASH), name="‖W‖₁")
        self.loss_plot = q
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)

    def pin_curves(self) -> list[PinCurve]:
        def log():
            return True

        return [
            PinCurve(self.plot, BLUE, _by_step("nonzero"), log),
            PinCurve(self.plot, RED, _by_step("active"), log),
            PinCurve(self.loss_plot, PURPLE, _by_step("loss"), log),
            PinCurve(self.loss_plot, ORANGE, _by_step("norm1"), log),
        ]

    def draw(self, snap) -> None:
        h = snap.history
        s = h[:, H["step"]]
        set_curve(self.nonzero, s, h[:, H["nonzero"]], positive=True)
        set_curve(self.active, s, h[:, H["active"]], positive=True)
        if s.size:
            self.n_line.setData(
                np.array([s[0], s[-1]]), np.full(2, float(snap.params.n)), skipFiniteCheck=True
            )
        set_curve(self.loss, s, h[:, H["loss"]], positive=True)
        set_curve(self.norm1, s, h[:, H["norm1"]], positive=True)


THRESHOLD_TITLES = {
    "l1": ("Note's θᵢ = λ/(1 − ‖Wᵢ‖²)", "θᵢ (|w| units)"),
    "jumprelu": ("JumpReLU's learned θₖ, its rail", "θₖ (|h| units)"),
    "topk": ("TopK: K-th largest |h| per input", "K-th largest |h|"),
}


class ThresholdsPanel(InterferencePanel):
    title = "Thresholds"
    claim = (
        "The threshold the sparsity mechanism applies, as the median and 10–90 % band over "
        "features (units, inputs) with one tracked. Under l1 the note's θᵢ = (l1/4)/(1 − ‖Wᵢ‖²): a "
        "weight of row i below it shrinks, exact for a row no interference acts on (rows with "
        "‖Wᵢ‖ ≥ 1 have none and are left out). Under JumpReLU the learned θₖ with the rail "
        "θₖ(0) ± Σ lr (Adam's usual largest move per step, not a strict bound: the line below "
        "counts the steps past it). Under TopK the K-th largest |h| of each input, the threshold "
        "TopK applies implicitly. " + STEP_TIP
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_step_plot(0, THRESHOLD_TITLES["l1"][0], THRESHOLD_TITLES["l1"][1])
        p.setLogMode(y=True)
        self.lo, self.hi = pg.PlotDataItem(pen=pg.mkPen(None)), pg.PlotDataItem(pen=pg.mkPen(None))
        c = pg.mkColor(BLUE)
        self.band = pg.FillBetweenItem(self.lo, self.hi, brush=pg.mkBrush(c.red(), c.green(), c.blue(), 60))
        for item in (self.lo, self.hi, self.band):
            p.addItem(item)
        self.median = p.plot(pen=pen(BLUE), name="median, 10–90 %")
        self.tracked = p.plot(pen=pen(ORANGE, DASH), name=TRACKED["l1"])
        self.rail_hi = p.plot(pen=pen(GREY, DOT), name="rail θ(0) ± Σ lr")
        self.rail_lo = p.plot(pen=pen(GREY, DOT))
        self.plot = p
        self.note = self.graphics.addLabel("", row=1, col=0, size="8pt")
        self._shown: str | None = None

    def _show_mechanism(self, snap) -> None:
        kind = snap.params.sparsity
        if kind == self._shown:
            return
        self._shown = kind
        title, y_label = THRESHOLD_TITLES[kind]
        self.plot.setTitle(title)
        tight_text(self.plot.titleLabel.item)
        self.plot.setLabel("left", y_label)
        legend = self.plot.legend
        if legend is not None:
            legend.removeItem(self.tracked)
            legend.addItem(self.tracked, TRACKED[kind])
            legend.removeItem(self.rail_hi)
            if kind == "jumprelu":
                legend.addItem(self.rail_hi, "rail θ(0) ± Σ lr")
        for item in (self.rail_hi, self.rail_lo):
            item.setVisible(kind == "jumprelu")

    def curve_data(self, snap) -> dict:
        """What draw puts on the plot (core/interference/thresholds.py, which the panel's
        figure draws too): x, median, 10 % and 90 % edges, the tracked one, and under
        JumpReLU the rail's two sides."""
        return snapshot_threshold_curves(snap)

    def draw(self, snap) -> None:
        self._show_mechanism(snap)
        data = self.curve_data(snap)
        s = data["step"]
        set_curve(self.median, s, data["median"], positive=True)
        set_curve(self.lo, s, data["p10"], positive=True)
        set_curve(self.hi, s, data["p90"], positive=True)
        set_curve(self.tracked, s, data["tracked"], positive=True)
        if "rail_hi" in data:
            set_curve(self.rail_hi, s, data["rail_hi"], positive=True)
            set_curve(self.rail_lo, s, data["rail_lo"], positive=True)
        text = threshold_note(data)
        if text != self.note.text:
            self.note.setText(text, size="8pt")


INTERFERENCE_PANEL_TYPES = (
    WeightsPanel,
    ActivePanel,
    PolysemanticPanel,
    KeptPanel,
    SignsPanel,
    SparsityPanel,
    ThresholdsPanel,
)
