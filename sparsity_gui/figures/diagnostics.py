"""The figures of a series' diagnostics (core/checkpoints/diagnostics.py), beside `checkpoints`' own:
the rail share per pair of snapshots with the saturation verdict's window and threshold,
the deaths over training (weights, SAELens latents, the forecast's), and the death
forecast against each weight's observed death (a calibration plot with its rank
correlation). Drawn from compare.csv's and deaths.csv's columns (the JSON beside each
figure holds them)."""

from __future__ import annotations

import math

import numpy as np

from sparsity_gui.figures.draw import least_legend_size, panel_axes


def rail_share_panel(fig, data, ax=None):
    """Per pair of snapshots (drawn over the pair): the share of all weights and of the
    shrinking ones that moved within the band of lr a step; the verdict's window shaded."""
    (ax,) = panel_axes(fig, ax)
    step = np.asarray(data["step"], float)
    if data["judged"]:
        ax.axvspan(data["window_from"], step[-1], color="0.9", zorder=0, label="last 20 % of the steps")
        ax.axhline(data["threshold"], color="C3", linestyle=":", linewidth=1, label="saturated from here")
    ax.step(step, data["rail_share"], where="pre", color="0.45", label="all weights")
    ax.step(step, data["rail_share_shrinking"], where="pre", color="C0", label="shrinking weights")
    ax.set_ylim(-0.03, 1.03)
    ax.margins(x=0.02)
    ax.set_xlabel("step")
    ax.set_ylabel(rf"share with $|\Delta w|$ within {data['band']:.0%} of lr$\cdot\Delta$steps")
    ax.set_title(data["title"], fontsize="small")
    ax.legend(fontsize=least_legend_size(), handlelength=1.8)


def deaths_panel(fig, data, ax=None):
    """Per snapshot: the share of weights within the zero tolerance, the forecast's, and
    SAELens latents that never fire; where deaths begin."""
    (ax,) = panel_axes(fig, ax)
    step = np.asarray(data["step"], float)
    forecast = np.asarray(data["dead_share_forecast"], float)
    latents = np.asarray(data["dead_latent_share"], float)
    ax.plot(step, data["dead_share"], "o-", color="black", markersize=3, label="weights (snapshots)")
    if data["forecast_kind"]:
        ax.plot(step, forecast, color="C3", linestyle="--", label=f"weights ({data['forecast_label']})")
    if np.isfinite(latents).any():
        ax.plot(step, latents, "s-", color="C2", markersize=3, label="latents never firing")
    if data["deaths_begin"] is not None and np.isfinite(data["deaths_begin"]):
        ax.axvline(data["deaths_begin"], color="0.5", linestyle=":", linewidth=1, label="deaths begin")
    ax.set_ylim(-0.03, 1.03)
    ax.margins(x=0.02)
    ax.set_xlabel("step")
    ax.set_ylabel("share dead")
    ax.set_title(data["title"], fontsize="small")
    ax.legend(fontsize=least_legend_size(), handlelength=1.8)


def death_forecast_panel(fig, data, ax=None):
    """Each weight's forecast death step against its observed one (a bar from the snapshot
    before); a death outside the series at the axes' far edge (an open triangle). The
    script that redraws a panel has numpy and matplotlib only: no math here."""
    (ax,) = panel_axes(fig, ax)
    first, last = float(data["first_step"]), float(data["last_step"])
    forecast = np.asarray(data["forecast"], float)
    observed = np.asarray(data["observed"], float)
    after = np.asarray(data["observed_after"], float)
    edge = last + 0.06 * (last - first)
    ax.plot([first, last], [first, last], color="0.6", linewidth=1, label="forecast = observed")
    both = np.isfinite(forecast) & np.isfinite(observed)
    ax.vlines(forecast[both], after[both], observed[both], color="C0", alpha=0.35, linewidth=1)
    ax.plot(
        forecast[both], observed[both], "o", color="C0", markersize=3, label=f"died in both ({both.sum()})"
    )
    alive_first = np.asarray(data["alive_first"], float) > 0
    only_f = np.isfinite(forecast) & ~np.isfinite(observed) & alive_first
    if only_f.any():
        ax.plot(forecast[only_f], np.full(only_f.sum(), edge), "^", color="C3", markerfacecolor="none",
                markersize=4, alpha=0.5, label=f"forecast, alive at the end ({only_f.sum()})")  # fmt: skip
    only_o = ~np.isfinite(forecast) & np.isfinite(observed)
    if only_o.any():
        ax.plot(np.full(only_o.sum(), edge), observed[only_o], ">", color="C1", markerfacecolor="none",
                markersize=4, label=f"died, not forecast in the series ({only_o.sum()})")  # fmt: skip
    ax.set_xlim(first - 0.02 * (last - first), edge + 0.03 * (last - first))
    ax.set_ylim(first - 0.02 * (last - first), edge + 0.03 * (last - first))
    ax.set_xlabel(f"forecast death step ({data['forecast_label']})")
    ax.set_ylabel("observed death step")
    rho = data["spearman"]
    rho_text = "n/a" if rho is None or not np.isfinite(rho) else f"{rho:.3f}"
    ax.set_title(f"{data['title']} · Spearman $\\rho$ = {rho_text}", fontsize="small")
    # below the diagonal: empty under a rail bound (the earliest death), and where the
    # deaths outside the series (the top edge) never are
    ax.legend(fontsize=least_legend_size(), handlelength=1.5, loc="lower right")


def _title(result) -> str:
    series = result.series
    what = "the matrix" if series.pick == "matrix" else f"{series.pick} {series.index}"
    return f"{what} · {result.optimizer}, lr = {result.lr:g}"


FORECAST_LABELS = {"flow": "the note's flow", "rail": r"rail bound $|w|/$lr", "": "none"}


def rail_data(result) -> dict:
    from sparsity_gui.core.checkpoints.diagnostics import RAIL_BAND, RAIL_OPTIMIZERS, SATURATION_SHARE

    d = result.diagnostics
    share = d.saturation_share
    k = "no weight shrank" if math.isnan(share) else f"K = {share:.0%}"
    verdict = (
        ("saturated" if d.saturated else "not saturated") + f" ({k})"
        if d.saturated is not None
        else "no rail under " + result.optimizer
    )
    return {
        "step": d.steps,
        "rail_share": d.column("rail_share"),
        "rail_share_shrinking": d.column("rail_share_shrinking"),
        "band": RAIL_BAND,
        "threshold": SATURATION_SHARE,
        "window_from": d.saturation_from,
        "judged": result.optimizer in RAIL_OPTIMIZERS,
        "title": f"{_title(result)} · {verdict}",
    }


def deaths_data(result) -> dict:
    d = result.diagnostics
    return {
        "step": d.steps,
        "dead_share": d.column("dead_share"),
        "dead_share_forecast": d.column("dead_share_forecast"),
        "dead_latent_share": d.column("dead_latent_share"),
        "deaths_begin": d.deaths_begin,
        "forecast_kind": d.forecast.kind,
        "forecast_label": FORECAST_LABELS[d.forecast.kind],
        "title": f"{_title(result)} · zero when |w| <= {result.zero_tol:.3g}",
    }


def forecast_data(result) -> dict:
    d = result.diagnostics
    f = d.forecast
    return {
        "first_step": int(d.steps[0]),
        "last_step": int(d.steps[-1]),
        "forecast": f.forecast,
        "observed": f.observed,
        "observed_after": f.observed_after,
        "alive_first": f.alive_first,
        "forecast_label": FORECAST_LABELS[f.kind],
        "spearman": f.spearman,
        "title": _title(result),
    }


def diagnostics_panels(result) -> list[tuple[str, object, dict, str]]:
    """(name, panel, data, title) of each diagnostics figure of a Comparison (the death
    forecast's only where a model gives one)."""
    panels = [
        ("rail_share", rail_share_panel, rail_data(result), "rail share per pair of snapshots"),
        ("deaths", deaths_panel, deaths_data(result), "deaths over training"),
    ]
    if result.diagnostics.forecast.kind:
        panels.append(
            ("death_forecast", death_forecast_panel, forecast_data(result), "death forecast against observed")
        )
    return panels
