"""README's "Schedules" figure: what an L1 warm-up does to the interference model. n = 64
features, m = 256 neurons, trained with AdamW (the paper's optimizer, l1 = 1e-3, lr = 3e-3,
4,000 steps) and with gradient descent under the note's zero rule (gd-zero, l1 = 0.2,
lr = 0.05, 2,000 steps), six seeds each, for l1 warm-ups of 0 to 80 % of the run. Per run:
the share of features whose final largest weight is on their initial largest neuron (kept),
the polysemantic neurons, the colliding pairs by sign, and the first recorded step (of 201,
evenly spaced) at which every feature has an active weight (0.8 ≤ |w| ≤ 1.2; all do in the
end, in every run here): what the warm-up delays. Writes warmup.csv and
warmup.png / warmup.svg into FOLDER (default: this file's folder).

    .venv/bin/python docs/schedules/warmup_figure.py [FOLDER]     (make warmup-figure)
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

N, M, SEEDS = 64, 256, 6
SHARES = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8)  # warm-up length / steps
OPTIMIZERS = {
    "AdamW (l1 = 1e-3, lr = 3e-3, 4,000 steps)": dict(optimizer="adamw", l1=1e-3, lr=3e-3, steps=4000),
    "gd-zero (l1 = 0.2, lr = 0.05, 2,000 steps)": dict(optimizer="gd-zero", l1=0.2, lr=0.05, steps=2000),
}
COLUMNS = (
    "optimizer",
    "l1_warmup",
    "warmup_share",
    "seed",
    "kept_share",
    "polysemantic",
    "steps_to_active",
    "same_pairs",
    "opposite_pairs",
)


def measure() -> list[dict]:
    rows = []
    for label, options in OPTIMIZERS.items():
        for share in SHARES:
            warmup = int(round(share * options["steps"]))
            for seed in range(SEEDS):
                r = api.train(n=N, m=M, seed=seed, samples=201, l1_warmup=warmup or None, **options)
                last = dict(zip(r.columns, r.history[-1], strict=True))
                col = {c: r.history[:, i] for i, c in enumerate(r.columns)}
                done = np.flatnonzero(col["active"] == N)
                rows.append(
                    dict(
                        optimizer=options["optimizer"],
                        l1_warmup=warmup,
                        warmup_share=share,
                        seed=seed,
                        kept_share=last["kept_share"],
                        polysemantic=int(last["polysemantic"]),
                        steps_to_active=int(col["step"][done[0]]) if done.size else -1,
                        same_pairs=int(last["same_pairs"]),
                        opposite_pairs=int(last["opposite_pairs"]),
                    )
                )
            print(label, warmup, flush=True)
    return rows


def draw(rows: list[dict], folder: Path) -> None:
    with plt.rc_context(style_params("paper")):
        fig, axes = plt.subplots(1, 3, figsize=(7.0, 2.4), constrained_layout=True)
        readouts = (
            ("kept_share", "share kept on initial neuron"),
            ("polysemantic", "polysemantic neurons"),
            ("steps_to_active", "steps until every feature is active"),
        )
        for (label, options), color, marker in zip(OPTIMIZERS.items(), ("C0", "C3"), ("o", "s"), strict=True):
            mine = [r for r in rows if r["optimizer"] == options["optimizer"]]
            x = np.array(SHARES) * 100
            for ax, (key, title) in zip(axes, readouts, strict=True):
                values = np.array([[r[key] for r in mine if r["warmup_share"] == s] for s in SHARES])
                med = np.median(values, axis=1)
                ax.fill_between(x, values.min(axis=1), values.max(axis=1), color=color, alpha=0.15, lw=0)
                ax.plot(x, med, color=color, marker=marker, ms=3.5, label=label.split(" (")[0])
                ax.set_title(title)
                ax.set_xlabel("l1 warm-up (% of the run)")
        axes[1].axhline(N * N / (4 * M), color="0.4", ls="--", lw=0.8, label="n²/(4m)")
        axes[0].set_ylim(0, 1)
        for ax in axes[1:]:
            ax.set_ylim(bottom=0)
        axes[1].legend(frameon=False, fontsize="small")
        fig.text(
            0.5,
            -0.04,
            f"n = {N}, m = {M}; median over {SEEDS} seeds, band: min to max",
            ha="center",
            fontsize="small",
        )
        for ext in ("png", "svg"):
            fig.savefig(folder / f"warmup.{ext}", dpi=200, bbox_inches="tight")
        plt.close(fig)


def main(folder: str | None = None) -> None:
    out = Path(folder) if folder else Path(__file__).parent
    out.mkdir(parents=True, exist_ok=True)
    rows = measure()
    with open(out / "warmup.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    draw(rows, out)


if __name__ == "__main__":
    main(*sys.argv[1:2])
