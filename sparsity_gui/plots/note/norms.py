"""The note's panels of W's norms over time: the norm balance, the L1 decay against the
note's law, the relative variance within its bounds, and the phase plane of (‖W‖², ‖W‖₁)."""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.note.metrics import COL
from sparsity_gui.core.note.runner import Snapshot
from sparsity_gui.core.note.schedule import Knots, lam_at, lam_varied
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.points import ramp_settled_t
from sparsity_gui.core.text import sci
from sparsity_gui.plots.axes import plot_parts
from sparsity_gui.plots.base import (
    BLUE,
    DASH,
    DOT,
    GREEN,
    GREY,
    ORANGE,
    PINK,
    PURPLE,
    RED,
    STACKED_AXIS_WIDTH,
    pen,
    transient_band,
)
from sparsity_gui.plots.curves import add_curve, set_broken_curve, set_curve
from sparsity_gui.plots.note.panel import NotePanel
from sparsity_gui.plots.pins import PinCurve

TRANSIENT_T = 1.0  # the balance panel's ranges are set by the rows after this t
LABEL_HZ = 4  # how often a legend number that changes every frame (the fitted c) is redrawn
LAM = NOTE_SETTINGS["lam"]  # the legends write λ as the settings table does
LAM_STRIP_HEIGHT = 80  # px at most of the balance panel's λ(t) strip, its time axis included


def _positive_t(t: np.ndarray, y: np.ndarray, log_t: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rows with t > 0 when a log time axis will show them."""
    if log_t:
        keep = t > 0
        return t[keep], y[keep]
    return t, y


class BalancePanel(NotePanel):
    title = "Norm balance"
    claim = (
        "Feature benefit (1-‖W‖²)‖W‖² and regularization λ‖W‖₁ push ‖W‖² up and down; "
        "where a balance is possible (λ‖W‖₁ ≤ 1/4, as (1-‖W‖²)‖W‖² ≤ 1/4) they balance after "
        "a short transient (ratio → 1 from above, R − 1 ≈ s·RV/(2‖W‖²): the balance lags the "
        "decay of ‖W‖₁)."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "Pushes on ‖W‖²", "t", "push", time_axis=True)
        self.feature = add_curve(p, pen=pen(BLUE), name="benefit (1−‖W‖²)‖W‖²")
        self.reg = add_curve(p, pen=pen(ORANGE, DASH), name="regularization λ‖W‖₁")
        self.plot = p
        q = self.add_plot(1, None, "t", "ratio", time_axis=True, legend=False)
        self.lam_strip, self.lam_curve = self._lam_strip(q)
        self.stack(p, q)
        self.ratio = add_curve(q, pen=pen(PURPLE))
        p.legend.addItem(self.ratio, "benefit / regularization")
        one = pg.InfiniteLine(pos=1.0, angle=0, pen=pen(GREY, DOT))
        q.addItem(one, ignoreBounds=True)
        self.ratio_plot = q
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 2)
        self.log_y = self.add_toggle("log y", "Logarithmic push axis")
        # the t ≈ 0 spike (a ratio up to 200) would set the y ranges and flatten the
        # balance (ratio → 1) and its dips after a λ change: the ranges come from t >= 1,
        # the transient is marked
        for plot in (p, q):
            self.settled_after[plot] = TRANSIENT_T
            transient_band(plot, TRANSIENT_T, "◂ transient, t < 1" if plot is p else "")

    def _lam_strip(self, above: pg.PlotItem) -> tuple[pg.PlotItem, pg.PlotDataItem]:
        """A thin plot of λ(t) on ``above``'s time axis, put under it only while the run has
        a schedule (out of the layout, not merely hidden: a hidden plot kept its height).
        Not one of self.plots: its y range is the schedule's (0 to the largest λ), set here."""
        strip = pg.PlotItem(**plot_parts())
        strip.setLabel("left", "λ")
        strip.setLabel("bottom", "t")
        left = strip.getAxis("left")
        left.setWidth(STACKED_AXIS_WIDTH)
        left.enableAutoSIPrefix(False)  # (its two ticks are written out)
        strip.showGrid(x=True, y=False, alpha=0.25)
        strip.setXLink(above)
        strip.vb.disableAutoRange()
        strip.setMouseEnabled(x=True, y=False)
        strip.hideButtons()
        strip.setMaximumHeight(LAM_STRIP_HEIGHT)
        strip.hide()
        curve = add_curve(strip, pen=pen(GREEN))
        self._lam_key: tuple = ()  # what the strip shows: (knots, λ's live changes, t)
        self._lam_top = math.nan  # the largest λ shown (the top tick)
        return strip, curve

    def _show_lam_strip(self, shown: bool) -> None:
        """The strip in row 2, the legend under it in row 3, the ratio's time labels under
        the strip, the legend's entry λ(t); or all as they were (row 2 the legend's)."""
        if shown == self.lam_strip.isVisible():
            return
        layout, legend = self.graphics.ci.layout, self.plot.legend
        layout.removeItem(legend)
        if shown:
            layout.addItem(self.lam_strip, 2, 0)
            layout.addItem(legend, 3, 0)
        else:
            layout.removeItem(self.lam_strip)
            layout.addItem(legend, 2, 0)
            self._lam_key, self._lam_top = (), math.nan
        self.lam_strip.setVisible(shown)
        layout.setAlignment(legend, QtCore.Qt.AlignmentFlag.AlignHCenter)
        layout.setRowStretchFactor(2, 1 if shown else 0)
        if shown:  # (a row 3 named when hidden would add its spacing: 2 px)
            layout.setRowStretchFactor(3, 0)
        axis = self.ratio_plot.getAxis("bottom")
        axis.setStyle(showValues=not shown)
        axis.showLabel(not shown)
        axis.setHeight(4 if shown else None)
        if shown:
            legend.addItem(self.lam_curve, "λ(t)")
        else:
            legend.removeItem(self.lam_curve)

    def _draw_lam(self, snap: Snapshot) -> None:
        """λ(t) of a run with a schedule, from t = 0 to now: the knots' polyline until a
        live change of λ ends it, then steps at each change."""
        start = snap.initial_params
        knots = start.lam_schedule if start is not None else ()
        self._show_lam_strip(bool(knots))
        if not knots:
            return
        changes = tuple((c.t, float(c.value)) for c in snap.changes if c.name == "lam")
        key = (knots, changes, snap.t)
        if key == self._lam_key:
            return
        self._lam_key = key
        x, y = lam_path(knots, changes, snap.t)
        set_curve(self.lam_curve, x, y)
        top = max(max(y), max(v for _t, v in knots))
        if top > 0 and top != self._lam_top:
            self._lam_top = top
            self.lam_strip.setYRange(0.0, top * 1.15, padding=0)
            self.lam_strip.getAxis("left").setTicks([[(0.0, "0"), (top, sci(top, 1))]])

    def pin_curves(self) -> list[PinCurve]:
        log_y = self.log_y.isChecked
        return [
            PinCurve(self.plot, BLUE, lambda p: (p.column("t"), p.column("feature_push")), log_y),
            PinCurve(self.plot, ORANGE, lambda p: (p.column("t"), p.column("reg_push")), log_y),
            PinCurve(
                self.ratio_plot,
                PURPLE,
                lambda p: (p.column("t"), p.column("feature_push") / p.column("reg_push")),
                settled=lambda p: ramp_settled_t(p.column("t"), p.column("lam")),
            ),
        ]

    def apply_toggles(self) -> None:
        self.plot.setLogMode(y=self.log_y.isChecked())

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        t = h[:, COL["t"]]
        f = h[:, COL["feature_push"]]
        r = h[:, COL["reg_push"]]
        log_y = self.log_y.isChecked()
        set_curve(self.feature, t, f, positive=log_y)
        lam = h[:, COL["lam"]]  # both jump where λ is changed: broken there
        set_broken_curve(self.reg, t, r, lam, positive=log_y)
        with np.errstate(divide="ignore", invalid="ignore"):
            set_broken_curve(self.ratio, t, f / r, lam)
        self.ratio.settled_from = ramp_settled_t(t, lam)  # its range: once a ramp of λ is up
        self._draw_lam(snap)


def lam_path(
    knots: Knots, changes: tuple[tuple[float, float], ...], t: float
) -> tuple[np.ndarray, np.ndarray]:
    """λ over [0, t] as a polyline: through the schedule's knots until the first of the
    live changes (t_c, λ) of λ, which ends it, then a step at each change."""
    end = min(t, changes[0][0]) if changes else t
    # the knots passed give their own λ (lam_at at each: O(knots²) a frame, up to 10⁶)
    inside = [(k, v) for k, v in knots if 0.0 < k < end]
    xs = [0.0, *(k for k, _v in inside), end]
    ys = [lam_at(knots, 0.0), *(v for _k, v in inside), lam_at(knots, end)]
    for i, (t_c, value) in enumerate(changes):
        if t_c > t:
            break
        t_next = changes[i + 1][0] if i + 1 < len(changes) else math.inf
        xs += [t_c, min(t_next, t)]
        ys += [value, value]
    return np.array(xs), np.array(ys)


class DecayPanel(NotePanel):
    title = "L1 decay"
    claim = (
        "In the note's regime (λ‖W(0)‖₁ ≤ 1/4, θ never falling), ‖W‖₁ ≈ 1/(w(0) + c·λt): the typical "
        "nonzero weight w = 1/‖W‖₁ grows about linearly in λt, but its slope λ·RV/‖W‖² at balance "
        "drifts (about 0.2λ to 2λ while m′ ≥ 10), so c = Θ(1) is an average; the legend gives c over m′ ≥ 2, "
        "the bulk c over m′ ≥ 10 and the law's largest relative deviation."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "‖W‖₁(t) and the note's law", "t", "‖W‖₁", time_axis=True)
        self.measured = add_curve(p, pen=pen(BLUE), name="‖W‖₁")
        # the law with the bulk c (m′ ≥ 10: the constant to quote) in the note's regime, and
        # with c (m′ ≥ 2), dotted, each named; with only c, the first curve draws c's
        self.law = add_curve(p, pen=pen(RED, DASH), name="1/(w(0) + c·λt)")
        self.law_c = add_curve(p, pen=pen(GREY, DOT))
        self._law_c_named = False
        self.plot = p
        self.show_w = self.add_toggle(
            "show w = 1/‖W‖₁",
            "Plot w = 1/‖W‖₁ instead: about straight in the note's regime (at balance its slope "
            "λ·RV/‖W‖² drifts, about 0.2λ to 2λ while m′ ≥ 10), not a straight line",
        )
        self.log_x = self.add_toggle("log t", "Logarithmic time axis")
        self.log_y = self.add_toggle("log y", "Logarithmic value axis", checked=True)
        self._names: tuple[str, str, str] = ("", "", "")
        self._names_due = 0.0
        self.apply_toggles()

    def pin_curves(self) -> list[PinCurve]:
        def xy(p):
            l1 = p.column("norm1")
            return _positive_t(
                p.column("t"), 1.0 / l1 if self.show_w.isChecked() else l1, self.log_x.isChecked()
            )

        return [PinCurve(self.plot, BLUE, xy, lambda: self.log_x.isChecked() or self.log_y.isChecked())]

    def apply_toggles(self) -> None:
        self.plot.setLogMode(x=self.log_x.isChecked(), y=self.log_y.isChecked())
        self.plot.setLabel("left", "w = 1/‖W‖₁" if self.show_w.isChecked() else "‖W‖₁")

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        t = h[:, COL["t"]]
        l1 = h[:, COL["norm1"]]
        lam_t = h[:, COL["lam_t"]]
        w0 = h[0, COL["w"]] if h.shape[0] else math.nan
        drawn = law_constants(snap.fit, snap.regime)
        show_w = self.show_w.isChecked()
        positive = self.log_x.isChecked() or self.log_y.isChecked()
        if self.log_x.isChecked():
            keep = t > 0
            t, l1, lam_t = t[keep], l1[keep], lam_t[keep]
        with np.errstate(divide="ignore", invalid="ignore"):
            set_curve(self.measured, t, 1.0 / l1 if show_w else l1, positive=positive)
            for curve, c in zip((self.law, self.law_c), (*drawn, math.nan, math.nan), strict=False):
                fit_w = w0 + (c if math.isfinite(c) else math.nan) * lam_t
                set_curve(curve, t, fit_w if show_w else 1.0 / fit_w, positive=positive)
        name_m = "w" if show_w else "‖W‖₁"  # the y axis says w = 1/‖W‖₁: room for the law
        varied = lam_varied(t, lam_t)
        name_l, law_tip = decay_law_label(snap.fit, snap.regime, show_w, varied)
        name_c = ""
        if len(drawn) == 2:
            name_l, name_c = bulk_law_labels(snap.fit, show_w, varied)
        # text layout is slow, and re-flows the legend row: only on change, and the fitted
        # c (new every frame early in a run) at most LABEL_HZ times a second while running
        now = time.perf_counter()
        due = now >= self._names_due or snap.state != "running" or name_m != self._names[0]
        if (name_m, name_l, name_c) != self._names and due:
            self._names_due = now + 1.0 / LABEL_HZ
            self._names = (name_m, name_l, name_c)
            self.plot.legend.set_label(self.measured, name_m)
            self.plot.legend.set_label(self.law, name_l)
            self.plot.legend.getLabel(self.law).setToolTip(law_tip)
            if name_c and not self._law_c_named:
                self._law_c_named = True
                self.plot.legend.addItem(self.law_c, name_c)
            elif name_c:
                self.plot.legend.set_label(self.law_c, name_c)
            elif self._law_c_named:
                self._law_c_named = False
                self.plot.legend.removeItem(self.law_c)
            if name_c:
                self.plot.legend.getLabel(self.law_c).setToolTip(law_tip)


def law_constants(fit, regime) -> tuple[float, ...]:
    """The constants the L1 panel draws its law with: (bulk c, c) in the note's regime when
    the bulk c is a number ≥ 0 (the constant to quote, docs/guide.md's "What the numbers mean"),
    else (c,) alone."""
    from sparsity_gui.core.note.metrics import regime_holds

    inside = regime is None or regime_holds(regime)
    if inside and math.isfinite(fit.c_bulk) and fit.c_bulk >= 0:
        return (fit.c_bulk, fit.c)
    return (fit.c,)


def law_text(show_w: bool, varied: bool = False) -> str:
    """The decay law's name: with Λ(t) = ∫λ when λ changed during the run, else λt."""
    big = "c·Λ(t)" if varied else "c·λt"
    return f"w(0) + {big}" if show_w else f"1/(w(0) + {big})"


def bulk_law_labels(fit, show_w: bool, varied: bool = False) -> tuple[str, str]:
    """The legend's names of the law with the bulk c and of the law with c, dotted."""
    law = law_text(show_w, varied)
    c = f"c = {fit.c:.3f}" if math.isfinite(fit.c) else "c = —"
    pct = fit.max_rel_dev * 100
    off = f", off ≤ {pct:.3g} %" if math.isfinite(pct) else ""
    fell = "; c &lt; 0: w fell" if fit.c < 0 else ""
    return f"{law}, bulk c = {fit.c_bulk:.3f}", f"with {c}{off}{fell}"


def decay_law_label(fit, regime, show_w: bool, varied: bool = False) -> tuple[str, str]:
    """The L1 panel's legend entry for the law and its tooltip. The entry gives c, the bulk
    c, the law's largest deviation and what is wrong with them (no c, a negative c, outside
    the note's regime) in at most two lines of a 1366x768 panel: a third line took the data
    area below 60 % of the panel. The tooltip says the same in words, with the reasons."""
    from sparsity_gui.core.note.metrics import NO_C_DIVERGED, NO_C_ZERO_LAM, regime_holds

    law = law_text(show_w, varied)
    if NO_C_DIVERGED in fit.flags:
        text = f"{law}: no c (gradient descent diverged)"
        return text, text
    if NO_C_ZERO_LAM in fit.flags:
        text = f"{law}: no c (λ = 0, nothing decays)"
        return text, text
    if not math.isfinite(fit.c):
        return f"{law}, c = —", f"{law}: nothing to fit yet"

    def num(x: float) -> str:
        return f"{x:.3f}" if math.isfinite(x) else "—"

    c, bulk = f"c = {num(fit.c)}", f"bulk c = {num(fit.c_bulk)}"
    pct = fit.max_rel_dev * 100
    dev = f"{pct:.3g} %" if pct < 100 else f"{pct:.0f} %" if math.isfinite(pct) else ""
    off = f"off ≤ {dev}" if dev else ""
    negative = fit.c < 0 or fit.c_bulk < 0
    outside = regime is not None and not regime_holds(regime)
    if negative and outside:
        short = f"{c if fit.c < 0 else bulk} &lt; 0, w fell; outside the note's regime"
    elif negative:
        short = f"{c}, {bulk}; c &lt; 0: w fell"
    elif outside:  # the drawn curve's c and how well it fits, not the bulk c
        short = ", ".join(x for x in (c, off, "outside the note's regime") if x)
    else:
        short = ", ".join(x for x in (c, bulk, off) if x)

    full = f"{law}: {c} (rows with m′ ≥ 2), {bulk} (m′ ≥ 10)"
    if dev:
        full += f"; the law is off ‖W‖₁ by up to {dev}"
    if negative:
        full += "<br>c &lt; 0: w = 1/‖W‖₁ fell, the law does not describe this run"
    if outside:
        if not regime["balance_possible"]:
            why = f"λ‖W(0)‖₁ = {regime['lam_l1_w0']:.3g} &gt; 1/4, no balance"
        elif regime["norm2_w0"] >= 1.0:
            why = f"‖W(0)‖² = {regime['norm2_w0']:.3g} ≥ 1"
        elif regime.get("theta_fall") is not None:
            fall = regime["theta_fall"]
            why = (
                f"θ fell by {100 * fall['fall']:.3g} % from t = {fall['t_from']:.3g} to "
                f"{fall['t_to']:.3g}: (1−‖W‖²)‖W‖² &lt; λ‖W‖₁"
            )
        else:
            why = "λ was lowered or the balance lost after a change of λ"
        full += f"<br>outside the note's regime ({why}): c is a fit, not the note's Θ(1)"
    return f"{law}: {short}", full


class RelVarPanel(NotePanel):
    title = "Relative variance"
    claim = (
        "The relative variance of the nonzero weights lies between the bounds computed from "
        "W(0) (red, exact); for W(0) of i.i.d. normals these are Θ(1) w.h.p. in m', close to "
        "the idealized bounds (pink) until m' is small."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "Relative variance Var[X]/E[X]²", "t", "relative variance", time_axis=True)
        # the run blue between red bounds, the idealized bounds pink and dashed: colours a
        # colour-blind reader tells apart, as in the exported figure; the run is drawn on top
        self.rv = add_curve(p, pen=pen(BLUE), name="run")
        self.rv.setZValue(10)
        self.lo = add_curve(p, pen=pen(RED), name="bounds from W(0)")
        self.hi = add_curve(p, pen=pen(RED))
        self.ilo = add_curve(p, pen=pen(PINK, DASH), name="idealized bounds")
        self.ihi = add_curve(p, pen=pen(PINK, DASH))
        self.plot = p
        self.log_x = self.add_toggle("log t", "Logarithmic time axis")

    def pin_curves(self) -> list[PinCurve]:
        def xy(p):
            return _positive_t(p.column("t"), p.column("rel_var"), self.log_x.isChecked())

        return [PinCurve(self.plot, BLUE, xy)]

    def apply_toggles(self) -> None:
        self.plot.setLogMode(x=self.log_x.isChecked())

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        t = h[:, COL["t"]]
        if self.log_x.isChecked():
            keep = t > 0
            h, t = h[keep], t[keep]
        set_curve(self.rv, t, h[:, COL["rel_var"]])
        set_curve(self.lo, t, h[:, COL["rel_var_lo"]])
        set_curve(self.hi, t, h[:, COL["rel_var_hi"]])
        set_curve(self.ilo, t, h[:, COL["rel_var_ideal_lo"]])
        set_curve(self.ihi, t, h[:, COL["rel_var_ideal_hi"]])


def balance_curve(lam: float, points: int = 1200) -> tuple[np.ndarray, np.ndarray]:
    """The balance (1-‖W‖²)‖W‖² = λ‖W‖₁ as (‖W‖², ‖W‖₁) over 0 < ‖W‖² < 1: dense near
    both ends (log-spaced), where a run's path meets it (near 1, as W gets sparse) or a
    log axis stretches it."""
    edge = np.geomspace(1e-12, 0.5, points)
    x = np.unique(np.concatenate([edge, 1.0 - edge, np.linspace(0.0, 1.0, points)[1:-1]]))
    return x, (1.0 - x) * x / lam if lam > 0 else np.full_like(x, np.inf)


class PhasePlanePanel(NotePanel):
    title = "Phase plane"
    claim = (
        "The run as a path in (‖W‖², ‖W‖₁) with the balance curve (1-‖W‖²)‖W‖² = λ‖W‖₁ of the "
        "current λ: where the curve exists (λ‖W‖₁ ≤ 1/4) the path falls onto it within a short "
        "transient and then slides along it as ‖W‖₁ decays (the note's dynamic balance, as "
        "geometry); above 1/4 ‖W‖² first collapses. A live change of λ moves the curve, and the "
        "path settles onto the new one where it can."
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        p = self.add_plot(0, "Path in (‖W‖², ‖W‖₁), balance curve", "‖W‖²", "‖W‖₁")
        self.path = add_curve(p, pen=pen(BLUE), name="run: (‖W‖², ‖W‖₁)(t)")
        # the curve spans 0 < ‖W‖² < 1; the view follows the path, not the whole curve
        self.curve = pg.PlotDataItem(pen=pen(PURPLE, DASH))
        p.addItem(self.curve, ignoreBounds=True)
        p.legend.addItem(self.curve, "balance (1−‖W‖²)‖W‖² = λ‖W‖₁")
        # the curve of λ before its last live change, faded: the path is seen leaving it
        self.earlier_curve = pg.PlotDataItem(pen=pen("#c5b0d5", DOT))
        p.addItem(self.earlier_curve, ignoreBounds=True)
        self._earlier_named = False
        # set only when λ or an axis changes, and dashed (Qt's slow stroking): painted once
        # into a pixmap that the path's frames reuse until the view moves (issue 50)
        for item in (self.curve, self.earlier_curve):
            item.curve.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.start = pg.ScatterPlotItem(symbol="o", size=8, pen=pen(BLUE), brush=None)
        self.now = pg.ScatterPlotItem(symbol="o", size=8, pen=None, brush=pg.mkBrush(RED))
        p.addItem(self.start)
        p.addItem(self.now)
        p.legend.addItem(self.start, "W(0)")
        p.legend.addItem(self.now, "now")
        self.plot = p
        self.log_y = self.add_toggle("log ‖W‖₁", "Logarithmic ‖W‖₁ axis", checked=True)
        self.gap_x = self.add_toggle(
            "x = 1−‖W‖² (log)",
            "Plot 1−‖W‖² on a log axis instead of ‖W‖²: the sparse end, where ‖W‖² → 1, is "
            "spread out, and the balance is the line ‖W‖₁ ≈ (1−‖W‖²)/λ",
        )
        self.curve_lam = math.nan  # the λ the curve was drawn for
        self._curve_key: tuple = ()
        self.apply_toggles()

    def apply_toggles(self) -> None:
        gap = self.gap_x.isChecked()
        self.plot.setLogMode(x=gap, y=self.log_y.isChecked())
        self.plot.setLabel("bottom", "1 − ‖W‖²" if gap else "‖W‖²")
        self._curve_key = ()

    def path_xy(self, norm2_sq: np.ndarray, norm1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What is drawn of a path: x is ‖W‖² (or 1−‖W‖² > 0 on the log axis)."""
        if self.gap_x.isChecked():
            x = 1.0 - norm2_sq
            keep = x > 0
            return x[keep], norm1[keep]
        return norm2_sq, norm1

    def pin_curves(self) -> list[PinCurve]:
        return [
            PinCurve(
                self.plot,
                BLUE,
                lambda p: self.path_xy(p.column("norm2_sq"), p.column("norm1")),
                self.log_y.isChecked,
            )
        ]

    def draw(self, snap: Snapshot) -> None:
        h = snap.history
        x, y = self.path_xy(h[:, COL["norm2_sq"]], h[:, COL["norm1"]])
        log_y = self.log_y.isChecked()
        set_curve(self.path, x, y, positive=log_y)
        ends = [(self.start, x[:1], y[:1]), (self.now, x[-1:], y[-1:])]
        for item, ex, ey in ends:
            ok = ex.size and np.isfinite(ex).all() and np.isfinite(ey).all() and (not log_y or (ey > 0).all())
            ey = np.log10(ey) if ok and log_y else ey
            ex = np.log10(ex) if ok and self.gap_x.isChecked() else ex
            item.setData(ex if ok else [], ey if ok else [])
        lams = [c.lam for c in snap.lam_changes]
        earlier = lams[-2] if len(lams) > 1 else math.nan
        key = (snap.lam, earlier, self.gap_x.isChecked(), log_y)
        if key != self._curve_key:  # only when λ or an axis changed
            self._curve_key = key
            self.curve_lam = snap.lam
            for item, lam in ((self.curve, snap.lam), (self.earlier_curve, earlier)):
                if not math.isfinite(lam):
                    item.setData([], [])
                    continue
                # (1−x)x is symmetric in x <-> 1−x: the same points serve the 1−‖W‖² axis
                bx, by = balance_curve(lam)
                set_curve(item, bx, by, positive=log_y)
            if math.isfinite(earlier):
                text = f"balance before the last change, {LAM.text(earlier)}"
                if not self._earlier_named:
                    self._earlier_named = True
                    self.plot.legend.addItem(self.earlier_curve, text)
                else:
                    self.plot.legend.set_label(self.earlier_curve, text)
            elif self._earlier_named:
                self._earlier_named = False
                self.plot.legend.removeItem(self.earlier_curve)
            self.plot.legend.set_label(self.curve, f"balance (1−‖W‖²)‖W‖² = λ‖W‖₁, {LAM.text(snap.lam)}")


# The window's grid (two rows of three); the phase plane shares the norm balance's cell,
# as a second tab
