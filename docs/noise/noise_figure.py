"""README's noise figure: the paper's noise experiment, measured with this tool. n = 8
features, m = 16 neurons, plain SGD (the `gd` optimizer) at lr = 0.02, l1 = 0, 10^5 steps,
five seeds per setting, noise in the hidden layer: Bernoulli (+-sigma) with sigma = 0.07, 0.1,
0.15 and Gaussian with sigma = 0.1. Left: the mean over features of sum_k W_ik^4 against the
steps (median over the seeds, band from the lowest to the highest), the paper's values at
10^5 steps as marks, and 3/(m+2), what rotation-invariant (Gaussian) noise gives a unit row;
middle and right: W(0) W(T)^T (features by features) averaged over the seeds, for Bernoulli
and Gaussian noise at sigma = 0.1: which features keep their initial direction. Writes
noise.csv (every recorded row), noise.png and noise.svg into FOLDER (default: here).

    .venv/bin/python docs/noise/noise_figure.py [FOLDER]     (make noise-figure)
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sparsity_gui import api  # noqa: E402
from sparsity_gui.figures.style import style_params  # noqa: E402

N, M, LR, STEPS, SEEDS, SAMPLES = 8, 16, 0.02, 100_000, 5, 201
SETTINGS = (("bernoulli", 0.07), ("bernoulli", 0.1), ("bernoulli", 0.15), ("gaussian", 0.1))
PAPER = {
    ("bernoulli", 0.07): (0.32, 0.32),
    ("bernoulli", 0.1): (0.8, 0.8),
    ("bernoulli", 0.15): (0.8, 0.8),
    ("gaussian", 0.1): (0.16, 0.18),
}
COLORS = {
    ("bernoulli", 0.07): "C1",
    ("bernoulli", 0.1): "C3",
    ("bernoulli", 0.15): "C4",
    ("gaussian", 0.1): "C0",
}


def measure():
    curves, corr, finals = {}, {}, []
    for kind, sigma in SETTINGS:
        runs = []
        mats = []
        for seed in range(SEEDS):
            r = api.train(
                n=N,
                m=M,
                seed=seed,
                steps=STEPS,
                optimizer="gd",
                l1=0.0,
                lr=LR,
                noise=kind,
                noise_sigma=sigma,
                samples=SAMPLES,
            )
            col = {c: r.history[:, i] for i, c in enumerate(r.columns)}
            runs.append(col)
            mats.append(r.w0 @ r.w_final.T)
            finals.append(
                dict(
                    noise=kind,
                    sigma=sigma,
                    seed=seed,
                    sum_w4=col["sum_w4"][-1],
                    polysemantic=int(col["polysemantic"][-1]),
                    active=int(col["active"][-1]),
                )
            )
        curves[(kind, sigma)] = runs
        corr[(kind, sigma)] = np.mean(mats, axis=0)
    return curves, corr, finals


def draw(curves, corr, folder: Path) -> None:
    with plt.rc_context(style_params("paper")):
        fig = plt.figure(figsize=(7.0, 2.6), constrained_layout=True)
        grid = fig.add_gridspec(1, 3, width_ratios=[1.6, 1, 1])
        ax = fig.add_subplot(grid[0])
        for key, runs in curves.items():
            steps = runs[0]["step"]
            values = np.array([r["sum_w4"] for r in runs])
            color = COLORS[key]
            ax.fill_between(steps, values.min(axis=0), values.max(axis=0), color=color, alpha=0.18, lw=0)
            ax.plot(steps, np.median(values, axis=0), color=color, label=f"{key[0]} σ = {key[1]:g}")
            lo, hi = PAPER[key]
            ax.plot(
                [STEPS * 1.03] * 2,
                [lo, hi] if hi > lo else [lo - 0.004, lo + 0.004],
                color=color,
                lw=3,
                solid_capstyle="butt",
                clip_on=False,
            )
        ax.axhline(3 / (M + 2), color="0.4", ls=":", lw=0.8, label="3/(m+2)")
        ax.plot([], [], color="0.3", lw=3, label="the paper's, at 10⁵ steps")
        ax.set_xlim(0, STEPS)
        ax.set_ylim(0, 1)
        ax.set_xlabel("step")
        ax.set_title("mean over features of Σ$_k$ W$_{ik}^4$")
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        ax.legend(frameon=False, fontsize="x-small", loc="center right")
        vmax = max(float(np.abs(c).max()) for c in corr.values())
        for k, key in enumerate((("bernoulli", 0.1), ("gaussian", 0.1))):
            axc = fig.add_subplot(grid[k + 1])
            image = axc.imshow(corr[key], cmap="RdBu_r", vmin=-vmax, vmax=vmax)
            axc.set_title(f"W(0)·W(T)ᵀ, {key[0]} σ = {key[1]:g}", fontsize="small")
            axc.set_xlabel("feature j (at T)")
            axc.set_ylabel("feature i (at 0)")
            axc.set_xticks(range(0, N, 2))
            axc.set_yticks(range(0, N, 2))
        fig.colorbar(image, ax=fig.axes[-1], shrink=0.8)
        fig.text(
            0.5,
            -0.05,
            f"n = {N}, m = {M}, SGD lr = {LR:g}, l1 = 0; {SEEDS} seeds: median and min–max band; "
            "W(0)·W(T)ᵀ averaged over the seeds",
            ha="center",
            fontsize="x-small",
        )
        for ext in ("png", "svg"):
            fig.savefig(folder / f"noise.{ext}", dpi=200, bbox_inches="tight")
        plt.close(fig)


def main(folder: str | None = None) -> None:
    out = Path(folder) if folder else Path(__file__).parent
    out.mkdir(parents=True, exist_ok=True)
    curves, corr, finals = measure()
    with open(out / "noise.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["noise", "sigma", "seed", "step", "sum_w4", "polysemantic", "active"])
        for (kind, sigma), runs in curves.items():
            for seed, col in enumerate(runs):
                for i in range(col["step"].size):
                    writer.writerow(
                        [
                            kind,
                            sigma,
                            seed,
                            int(col["step"][i]),
                            repr(float(col["sum_w4"][i])),
                            int(col["polysemantic"][i]),
                            int(col["active"][i]),
                        ]
                    )
    draw(curves, corr, out)
    for row in finals:
        print(row)


if __name__ == "__main__":
    main(*sys.argv[1:2])
