"""The note model's seven panels as matplotlib drawing functions. Each draws from plain
arrays and a small dict (the arrays timeseries.csv, tracked.csv, weights and pin_<n>.csv
hold; figures/note/figures.py gathers them) and depends only on numpy, matplotlib and the helpers
of figures/draw.py: the script beside each exported figure is the function's own source.

Every function is `panel(fig, d, ax=None)`: it fills `fig` (a Figure or SubFigure), or
draws into `ax` when given (a two-part panel splits ax's place)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sparsity_gui.figures.draw import (
    broken_xy,
    colours,
    end_at_data,
    falls_below,
    finite_xy,
    lam_varied,
    log_ticks,
    mark_changes,
    panel_axes,
    panel_legend,
    pin_entries,
    pin_line,
    ramp_settled_t,
    regime_entries,
    scaled_ticks,
)


def weights_sorted(fig, d, ax=None):
    """|W_k| of every weight in the order of |W_k(0)|, against the threshold θ and the
    balance prediction 1/‖W‖₁."""
    c = colours()
    view = d["view"]
    (a,) = panel_axes(fig, ax)
    rank, w, theta = d["rank"], d["abs_w"], d["theta"]
    alive = w > 0
    above = alive & (w >= theta) if np.isfinite(theta) else np.zeros_like(alive)
    below = alive & ~above
    if above.any() and below.any():  # the two colours meet at the crossing
        above = above.copy()
        above[int(np.argmax(below))] = True
    for keep, colour, label in (
        (above, c["blue"], r"growing ($|W_k| > \theta$)"),
        (below, c["orange"], r"shrinking ($|W_k| < \theta$)"),
    ):
        marker = "o" if keep.sum() == 1 else None  # the last weight alive: a dot
        a.plot(rank[keep], w[keep], color=colour, marker=marker, label=label)
    if np.isfinite(theta) and (theta > 0 or not view["log_y"]):
        a.axhline(theta, color=c["red"], linewidth=0.8, label=r"$\theta = \lambda/(1-\|W\|^2)$")
    if np.isfinite(d["balance"]):
        a.axhline(
            d["balance"], color=c["purple"], linestyle="--", linewidth=0.8, label=r"balance $1/\|W\|_1$"
        )
    a.set_xscale("log" if view["log_x"] else "linear")
    a.set_yscale("log" if view["log_y"] else "linear")
    # the ranks still alive, as the live panel's range follows the drawn weights (at m = 10^4
    # with 8 left, ranks 1..8, not 1..10^4 with the survivors on the spine)
    shown = rank[alive] if alive.any() else rank
    lo, hi = (float(shown.min()), float(shown.max())) if shown.size else (1.0, 1.0)
    if view["log_x"]:
        pad = (hi / lo) ** 0.04 if hi > lo else 2.0
        a.set_xlim(lo / pad, hi * pad)
    else:
        from matplotlib.ticker import MaxNLocator

        pad = 0.04 * (hi - lo) if hi > lo else 1.0
        a.set_xlim(lo - pad, hi + pad)
        a.xaxis.set_major_locator(MaxNLocator(integer=True))  # ranks are whole (the live axis's too)
    a.set_xlabel(r"rank $k$ (by $|W_k(0)|$)")
    a.set_ylabel(r"$|W_k|$")
    log_ticks(a)
    handles, labels = a.get_legend_handles_labels()
    flag_handles, flag_labels = regime_entries(fig, d)
    panel_legend(fig, a, handles + flag_handles, labels + flag_labels, own_ax=ax is not None, settings=d)


def threshold_crossing(fig, d, ax=None):
    """Tracked weights |W_k|(t) against θ(t), a triangle at each fall below θ (every one:
    outside the note's regime a weight may rise above θ and fall back), a cross at each
    death; below, the number m′ of nonzero weights."""
    import matplotlib

    c = colours()
    view = d["view"]
    top, bottom = panel_axes(fig, ax, (2, 1))
    t, log_y = d["t"], view["log_y"]
    # m′: DejaVu's prime drawn up to the italic m (mathtext's own, $m'$, is a glyph of
    # Computer Modern's cmsy10: an SVG names that font, which viewers lack, and shows m0)
    m_prime = r"$m\hspace{-0.06}′$"
    top.plot(*broken_xy(t, d["theta"], d["lam"], log_y), color="k", linestyle="--", label=r"$\theta(t)$")
    shades = matplotlib.colormaps["viridis"]
    tracked = d["tracked"]
    below_x, below_y, dead_x, dead_y = [], [], [], []
    for i, weight in enumerate(tracked):
        colour = shades(0.8 * i / max(len(tracked) - 1, 1))  # dark: the largest initial weight
        y = weight["w"]
        top.plot(*finite_xy(t, y, log_y), color=colour)
        falls = falls_below(y, d["theta"])
        below_x.extend(t[falls])
        below_y.extend(y[falls])
        if np.isfinite(weight["t_death"]):
            alive = np.flatnonzero(y > 0)
            dead_x.append(weight["t_death"])
            dead_y.append(y[alive[-1]] if log_y and alive.size else 0.0)
    top.plot(below_x, below_y, "v", color="k", fillstyle="none", markersize=4, label=r"falls below $\theta$")
    top.plot(dead_x, dead_y, "x", color="k", markersize=4, label="dies")
    bottom.plot(*finite_xy(t, d["nonzero"], True), color=c["green"], drawstyle="steps-post", label=m_prime)
    for pin in d["pins"]:
        pin_line(top, pin["t"], pin["theta"], "k", pin["number"], log_y, points=pin.get("points", False))
        pin_line(
            bottom, pin["t"], pin["nonzero"], c["green"], pin["number"], True, points=pin.get("points", False)
        )
    top.set_yscale("log" if log_y else "linear")
    bottom.set_yscale("log")
    end_at_data(bottom, t)
    mark_changes(top, d["changes"])
    mark_changes(bottom, d["changes"], label=False)
    top.set_ylabel(r"$|W_k|$")
    bottom.set_ylabel(m_prime)
    bottom.set_xlabel("$t$")
    for sub in (top, bottom):
        log_ticks(sub)
    handles, labels = top.get_legend_handles_labels()
    if tracked:
        from matplotlib.lines import Line2D

        ends = (Line2D([], [], color=shades(0.0)), Line2D([], [], color=shades(0.8)))
        handles.append(ends)
        labels.append(rf"$|W_k|$, rank {tracked[0]['rank']}…{tracked[-1]['rank']}")
    pin_handles, pin_labels = pin_entries(d["pins"], ["k", c["green"]])
    panel_legend(fig, top, handles + pin_handles, labels + pin_labels, own_ax=ax is not None, settings=d)


def norm_balance(fig, d, ax=None):
    """The two pushes on ‖W‖² and their ratio, which goes to 1 after a short transient
    (shaded, t < 1) and dips after each change of λ."""
    from matplotlib.patches import Patch

    c = colours()
    view = d["view"]
    strip = d.get("lam_strip", False)  # λ(t) under the ratio, as the live panel shows it
    axes = panel_axes(fig, ax, (3, 2, 1) if strip else (3, 2))
    top, bottom = axes[0], axes[1]
    t, lam, log_y = d["t"], d["lam"], view["log_y"]
    feature, reg = d["feature_push"], d["reg_push"]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = feature / reg
    top.plot(*finite_xy(t, feature, log_y), color=c["blue"], label=r"benefit $(1-\|W\|^2)\|W\|^2$")
    top.plot(
        *broken_xy(t, reg, lam, log_y),
        color=c["orange"],
        linestyle="--",
        label=r"regularization $\lambda\|W\|_1$",
    )
    (ratio_line,) = bottom.plot(*broken_xy(t, ratio, lam), color=c["purple"], label="ratio")
    bottom.axhline(1.0, color=c["grey"], linestyle=":", linewidth=0.8)
    for pin in d["pins"]:
        pin_line(
            top,
            pin["t"],
            pin["feature_push"],
            c["blue"],
            pin["number"],
            log_y,
            points=pin.get("points", False),
        )
        pin_line(
            top, pin["t"], pin["reg_push"], c["orange"], pin["number"], log_y, points=pin.get("points", False)
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            pin_line(
                bottom,
                pin["t"],
                pin["feature_push"] / pin["reg_push"],
                c["purple"],
                pin["number"],
                points=pin.get("points", False),
            )
    # both ranges from t >= 1, as the live panel's: the start (a spike of the pushes, a ratio
    # far from 1) would flatten the rest; the pinned runs' rows count too. The ratio's top
    # counts from where each run's λ is up (ramp_settled_t: a warm-up's ratio is huge while
    # λ is low), its bottom from t >= 1 (the dip below balance under the ramp stays in view)
    t0 = 1.0 if (t >= 1.0).any() else -np.inf
    runs = [(t, feature, reg, lam)] + [
        (p["t"], p["feature_push"], p["reg_push"], p.get("lam", np.ones_like(p["t"]))) for p in d["pins"]
    ]
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.concatenate([(f / r)[x >= t0] for x, f, r, _strength in runs])
        high = np.concatenate(
            [(f / r)[x >= max(t0, ramp_settled_t(x, strength))] for x, f, r, strength in runs]
        )
    low, high = low[np.isfinite(low)], high[np.isfinite(high)]
    if high.size:
        lo, hi = min(low.min(), 1.0), max(high.max(), 1.0)
        pad = 0.06 * (hi - lo) if hi > lo else 0.05
        bottom.set_ylim(lo - pad, hi + pad)
    pushes = np.concatenate([np.r_[f[x >= t0], r[x >= t0]] for x, f, r, _strength in runs])
    pushes = pushes[np.isfinite(pushes) & ((pushes > 0) if log_y else True)]
    if pushes.size:
        lo, hi = float(pushes.min()), float(pushes.max())
        if log_y:
            pad = (hi / lo) ** 0.06 if hi > lo else 1.2
            top.set_ylim(lo / pad, hi * pad)
        else:
            pad = 0.06 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1e-300)
            top.set_ylim(lo - pad, hi + pad)
    band = bottom.axvspan(t[0], min(1.0, t[-1]), color="0.92", zorder=0, linewidth=0) if t.size else None
    top.axvspan(t[0], min(1.0, t[-1]), color="0.92", zorder=0, linewidth=0) if t.size else None
    top.set_yscale("log" if log_y else "linear")
    end_at_data(bottom, t)
    mark_changes(top, d["changes"])
    mark_changes(bottom, d["changes"], label=False)
    top.set_ylabel("push")
    bottom.set_ylabel("ratio")
    if strip:
        lam_axis = axes[2]
        (lam_line,) = lam_axis.plot(t, lam, color=c["green"], label=r"$\lambda(t)$")
        lam_axis.set_ylim(0.0, 1.08 * max(float(np.nanmax(lam)) if lam.size else 0.0, 1e-300))
        lam_axis.set_ylabel(r"$\lambda$")
        lam_axis.set_xlabel("$t$")
    else:
        bottom.set_xlabel("$t$")
    for sub in (top, bottom):
        log_ticks(sub)
    handles, labels = top.get_legend_handles_labels()
    if fig is fig.figure:  # in a layout's cell the sub-plot's own label names the ratio
        handles.append(ratio_line)
        labels.append("benefit / regularization")
    if band is not None:
        handles.append(Patch(color="0.92"))
        labels.append("transient ($t < 1$)")
    if strip:
        handles.append(lam_line)
        labels.append(r"$\lambda(t)$")
    pin_handles, pin_labels = pin_entries(d["pins"], [c["blue"], c["orange"], c["purple"]])
    flag_handles, flag_labels = regime_entries(fig, d)
    handles, labels = handles + pin_handles + flag_handles, labels + pin_labels + flag_labels
    panel_legend(fig, top, handles, labels, own_ax=ax is not None, settings=d)


def l1_decay(fig, d, ax=None):
    """‖W‖₁(t) against the note's law 1/(w(0) + c·λt) (or w = 1/‖W‖₁, a line): drawn with
    the bulk c (m′ ≥ 10, the constant to quote) in the note's regime, and with c (m′ ≥ 2),
    each labelled; outside the regime only c's, saying so."""
    c = colours()
    view = d["view"]
    (a,) = panel_axes(fig, ax)
    t, l1, lam_t = d["t"], d["norm1"], d["lam_t"]
    fit = d["fit"]
    regime = d.get("regime") or {"holds": True}
    keep = t > 0 if view["log_x"] else np.ones(t.shape, bool)
    positive = view["log_x"] or view["log_y"]
    name = r"$w = 1/\|W\|_1$" if view["show_w"] else r"$\|W\|_1$"
    big = r"c\Lambda(t)" if lam_varied(t, lam_t) else r"c\lambda t"  # Λ = ∫λ when λ changed
    law_name = f"$w(0) + {big}$" if view["show_w"] else f"$1/(w(0) + {big})$"

    def law(constant):
        law_w = d["w"][0] + constant * lam_t if t.size else t
        with np.errstate(divide="ignore", invalid="ignore"):
            return law_w if view["show_w"] else 1.0 / law_w

    with np.errstate(divide="ignore", invalid="ignore"):
        measured = 1.0 / l1 if view["show_w"] else l1
    a.plot(*finite_xy(t[keep], measured[keep], positive), color=c["blue"], label=name)
    fitted, bulk = fit["c"], fit.get("c_bulk", np.nan)
    off = f", off ≤ {100 * fit['max_rel_dev']:.3g} %" if np.isfinite(fit.get("max_rel_dev", np.nan)) else ""
    c_text = f"$c$ = {fitted:.3f} ($m$′ ≥ 2)" if np.isfinite(fitted) else "no $c$"
    if fitted < 0:
        c_text += ", $c$ < 0: $w$ fell"
    if regime["holds"] and np.isfinite(bulk) and bulk >= 0:  # the constant to quote, and c's
        a.plot(
            *finite_xy(t[keep], law(bulk)[keep], positive),
            color=c["red"],
            linestyle="--",
            label=f"{law_name}, bulk $c$ = {bulk:.3f} ($m$′ ≥ 10)",
        )
        a.plot(
            *finite_xy(t[keep], law(fitted)[keep], positive),
            color=c["grey"],
            linestyle=":",
            label=f"the same, {c_text}{off}",
        )
    else:
        # in a layout's narrow cell, the law over its constant
        label = f"{law_name}, {c_text}{off}" if fig is fig.figure else f"{law_name},\n{c_text}"
        if not regime["holds"] and fig is fig.figure:  # a layout says it once, above its cells
            label = f"{law_name}, {c_text}\n{off[2:]}{', ' if off else ''}outside the note's regime"
            label += f":\n{regime['reason']}"
        a.plot(*finite_xy(t[keep], law(fitted)[keep], positive), color=c["red"], linestyle="--", label=label)
    for pin in d["pins"]:
        with np.errstate(divide="ignore"):
            y = 1.0 / pin["norm1"] if view["show_w"] else pin["norm1"]
        pin_keep = pin["t"] > 0 if view["log_x"] else np.ones(pin["t"].shape, bool)
        pin_line(
            a,
            pin["t"][pin_keep],
            y[pin_keep],
            c["blue"],
            pin["number"],
            positive,
            points=pin.get("points", False),
        )
    a.set_xscale("log" if view["log_x"] else "linear")
    a.set_yscale("log" if view["log_y"] else "linear")
    end_at_data(a, t[keep])
    mark_changes(a, d["changes"])
    a.set_xlabel("$t$")
    a.set_ylabel(name)
    log_ticks(a)
    handles, labels = a.get_legend_handles_labels()
    pin_handles, pin_labels = pin_entries(d["pins"], [c["blue"]])
    panel_legend(fig, a, handles + pin_handles, labels + pin_labels, own_ax=ax is not None, settings=d)


def relative_variance(fig, d, ax=None):
    """Var[X]/E[X]² of the nonzero weights between the bounds from W(0) and the
    idealized bounds."""
    c = colours()
    view = d["view"]
    (a,) = panel_axes(fig, ax)
    t = d["t"]
    keep = t > 0 if view["log_x"] else np.ones(t.shape, bool)
    t = t[keep]
    # the run blue, the bounds vermillion and reddish purple (dashed): Okabe & Ito's colours
    # a colour-blind reader tells apart (the pinned runs share the run's colour, faded)
    a.plot(*finite_xy(t, d["rel_var_lo"][keep]), color=c["red"], label="bounds from $W(0)$")
    a.plot(*finite_xy(t, d["rel_var_hi"][keep]), color=c["red"])
    a.plot(
        *finite_xy(t, d["rel_var_ideal_lo"][keep]),
        color=c["purple"],
        linestyle="--",
        label="idealized bounds",
    )
    a.plot(*finite_xy(t, d["rel_var_ideal_hi"][keep]), color=c["purple"], linestyle="--")
    a.plot(*finite_xy(t, d["rel_var"][keep]), color=c["blue"], zorder=3, label="run")
    for pin in d["pins"]:
        pin_keep = pin["t"] > 0 if view["log_x"] else np.ones(pin["t"].shape, bool)
        pin_line(
            a,
            pin["t"][pin_keep],
            pin["rel_var"][pin_keep],
            c["blue"],
            pin["number"],
            points=pin.get("points", False),
        )
    a.set_xscale("log" if view["log_x"] else "linear")
    end_at_data(a, t)
    mark_changes(a, d["changes"])
    a.set_xlabel("$t$")
    a.set_ylabel(r"$\mathrm{Var}[X]/\mathrm{E}[X]^2$")
    log_ticks(a)
    handles, labels = a.get_legend_handles_labels()
    pin_handles, pin_labels = pin_entries(d["pins"], [c["blue"]])
    flag_handles, flag_labels = regime_entries(fig, d)
    handles, labels = handles + pin_handles + flag_handles, labels + pin_labels + flag_labels
    panel_legend(fig, a, handles, labels, own_ax=ax is not None, settings=d)


def sparsity_force(fig, d, ax=None):
    """d|W_k|/dt = (1-‖W‖²)(|W_k| - θ): every nonzero weight on one line crossing zero
    at θ (the note's equation (1))."""
    c = colours()
    (a,) = panel_axes(fig, ax)
    w = d["abs_w"][d["abs_w"] > 0]
    s, lam, theta = d["s"], d["lam"], d["theta"]
    force = s * w - lam
    top = float(w.max()) if w.size else 1.0
    xs = np.array([0.0, 1.02 * top])
    a.plot(xs, s * xs - lam, color=c["grey"], linewidth=0.8, label=r"$(1-\|W\|^2)(|W_k| - \theta)$")
    grow = force > 0
    a.scatter(w[grow], force[grow], s=4, color=c["blue"], linewidths=0, label="growing weights")
    a.scatter(w[~grow], force[~grow], s=4, color=c["orange"], linewidths=0, label="shrinking weights")
    a.axhline(0.0, color=c["grey"], linestyle=":", linewidth=0.6)
    if np.isfinite(theta):
        a.axvline(theta, color=c["red"], linestyle="--", linewidth=0.8, label=r"$\theta$ (zero crossing)")
    a.set_xlim(xs[0], xs[1])
    a.set_xlabel(r"$|W_k|$")
    a.set_ylabel(r"$d|W_k|/dt$")
    scaled_ticks(a, "y")
    panel_legend(fig, a, *a.get_legend_handles_labels(), own_ax=ax is not None, settings=d)


def phase_plane(fig, d, ax=None):
    """The run as a path in (‖W‖², ‖W‖₁) with the balance curve (1-‖W‖²)‖W‖² = λ‖W‖₁ of
    the current λ (and of the λ before its last change, faded)."""
    c = colours()
    view = d["view"]
    (a,) = panel_axes(fig, ax)
    gap, log_y = view["gap_x"], view["log_y"]

    def path(norm2_sq, norm1):
        x = 1.0 - norm2_sq if gap else norm2_sq
        keep = (x > 0) if gap else np.ones(x.shape, bool)
        return finite_xy(x[keep], norm1[keep], log_y)

    x, y = path(d["norm2_sq"], d["norm1"])
    a.plot(x, y, color=c["blue"], label=r"run: $(\|W\|^2, \|W\|_1)(t)$")
    # the curve is symmetric in x <-> 1 - x: the same points serve the 1 - ‖W‖² axis
    edge = np.geomspace(1e-12, 0.5, 1200)
    bx = np.unique(np.concatenate([edge, 1.0 - edge, np.linspace(0.0, 1.0, 1200)[1:-1]]))
    for lam, style, label in (
        (d["lam_now"], dict(color=c["purple"], linestyle="--"), rf"balance, $\lambda$ = {d['lam_now_text']}"),
        (
            d["lam_before"],
            dict(color="#d9a8c8", linestyle=":"),
            rf"before the last change, $\lambda$ = {d['lam_before_text']}",
        ),
    ):
        if np.isfinite(lam) and lam > 0:
            a.plot(
                *finite_xy(bx, (1.0 - bx) * bx / lam, log_y),
                linewidth=0.8,
                label=label,
                scalex=False,
                scaley=False,
                **style,
            )
    xs, ys = [x], [y]
    for pin in d["pins"]:
        px, py = path(pin["norm2_sq"], pin["norm1"])
        pin_line(a, px, py, c["blue"], pin["number"], log_y, points=pin.get("points", False))
        xs.append(px)
        ys.append(py)
    if x.size:
        a.plot(x[:1], y[:1], "o", color=c["blue"], fillstyle="none", label="$W(0)$")
        a.plot(x[-1:], y[-1:], "o", color=c["red"], label="end")
    a.set_xscale("log" if gap else "linear")
    a.set_yscale("log" if log_y else "linear")
    # the view holds the path, the pinned runs and both end marks whole, not the whole
    # balance curve: 5 % of the span (of log10 on a log axis) beyond the furthest point
    for values, log, set_lim in ((xs, gap, a.set_xlim), (ys, log_y, a.set_ylim)):
        v = np.concatenate(values)
        v = v[np.isfinite(v) & ((v > 0) if log else True)]
        if v.size:
            lo, hi = (np.log10(v.min()), np.log10(v.max())) if log else (v.min(), v.max())
            pad = 0.05 * (hi - lo) if hi > lo else (0.05 if log else 0.05 * max(abs(hi), 1e-12))
            lo, hi = lo - pad, hi + pad
            set_lim(*((10.0**lo, 10.0**hi) if log else (lo, hi)))
    a.set_xlabel(r"$1 - \|W\|^2$" if gap else r"$\|W\|^2$")
    a.set_ylabel(r"$\|W\|_1$")
    log_ticks(a)
    handles, labels = a.get_legend_handles_labels()
    pin_handles, pin_labels = pin_entries(d["pins"], [c["blue"]])
    panel_legend(fig, a, handles + pin_handles, labels + pin_labels, own_ax=ax is not None, settings=d)


PANELS: dict[str, Callable[..., None]] = {  # typed: the API calls them
    "weights_sorted": weights_sorted,
    "threshold_crossing": threshold_crossing,
    "norm_balance": norm_balance,
    "l1_decay": l1_decay,
    "relative_variance": relative_variance,
    "sparsity_force": sparsity_force,
    "phase_plane": phase_plane,
}
