"""README's "Why Adam ignores the L1 coefficient": the steps until a run is sparse (every
feature's second-largest |w| below a tenth of its largest) against l1, for AdamW and signSGD
(lr = 1e-3) and for gd-zero and ISTA (lr = 0.05), n = 32, m = 128, three seeds, 30,000 steps at
most; with the rail share (AdamW's shrinking weights moving at the learning rate) and the
shrinkage of the survivors against the exact fixed point. Writes optimizers.csv (a run
never sparse within the steps has an empty steps_to_sparse, as sweep.csv), optimizers.png
and optimizers.svg into FOLDER (default: here).

    .venv/bin/python docs/optimizers/optimizer_figure.py [FOLDER]     (make optimizer-figure)
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from sparsity_gui.core.interference.axes import NEVER_SPARSE  # noqa: E402
from sparsity_gui.core.interference.params import InterferenceParams  # noqa: E402
from sparsity_gui.core.interference.sweep import train_run  # noqa: E402
from sparsity_gui.figures.style import style_params  # noqa: E402

N, M, SEEDS, STEPS = 32, 128, 3, 30_000
L1S = (1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)
OPTIMIZERS = {"adamw": 1e-3, "signsgd": 1e-3, "gd-zero": 0.05, "ista": 0.05}  # name: lr
STYLE = {"adamw": ("C3", "o"), "signsgd": ("C4", "D"), "gd-zero": ("C0", "s"), "ista": ("C2", "^")}
COLUMNS = (
    "optimizer",
    "lr",
    "l1",
    "seed",
    "steps_to_sparse",
    "rail_share",
    "shrinkage_ratio",
    "polysemantic",
)


def measure() -> list[dict]:
    rows = []
    for name, lr in OPTIMIZERS.items():
        for l1 in L1S:
            for seed in range(SEEDS):
                p = InterferenceParams(n=N, m=M, optimizer=name, l1=l1, lr=lr, steps=STEPS, seed=seed)
                try:
                    r = train_run(p)
                except ValueError:  # a diverged run (too large a step): left out, said so
                    print(f"{name} l1={l1:g} seed {seed}: diverged", flush=True)
                    continue
                rows.append(
                    dict(
                        optimizer=name,
                        lr=lr,
                        l1=l1,
                        seed=seed,
                        steps_to_sparse=None if r.steps_to_sparse == NEVER_SPARSE else r.steps_to_sparse,
                        rail_share=r.rail_share,
                        shrinkage_ratio=r.shrinkage_ratio,
                        polysemantic=r.polysemantic,
                    )
                )
            print(name, l1, [x["steps_to_sparse"] for x in rows[-SEEDS:]], flush=True)
    return rows


def draw(rows: list[dict], folder: Path) -> None:
    with plt.rc_context(style_params("paper")):
        fig, axes = plt.subplots(1, 3, figsize=(7.0, 2.5), constrained_layout=True)
        for name, lr in OPTIMIZERS.items():
            color, marker = STYLE[name]
            mine = [r for r in rows if r["optimizer"] == name]
            for ax, key in zip(axes, ("steps_to_sparse", "rail_share", "shrinkage_ratio"), strict=True):
                xs, meds = [], []
                for l1 in L1S:
                    vals = np.array([r[key] for r in mine if r["l1"] == l1], float)
                    vals = vals[np.isfinite(vals)]  # None (never sparse) is nan here
                    if key == "steps_to_sparse":
                        vals = vals[vals > 0]  # the axis is logarithmic
                    if vals.size:
                        xs.append(l1)
                        meds.append(np.median(vals))
                ax.plot(xs, meds, color=color, marker=marker, ms=3.5, label=f"{name} (lr = {lr:g})")
        axes[0].set_yscale("log")
        axes[0].set_title("steps until sparse")
        axes[1].set_title("rail share (sparsifying)")
        axes[1].set_ylim(0, 1)
        axes[1].axhline(0.5, color="0.5", ls=":", lw=0.8)
        axes[2].set_title(r"survivors: $\|W_i\|^2 / w^{*2}$")
        for ax in axes:
            ax.set_xscale("log")
            ax.set_xlabel("l1")
        axes[0].legend(frameon=False, fontsize="x-small")
        fig.text(
            0.5,
            -0.04,
            f"n = {N}, m = {M}, median over {SEEDS} seeds, at most {STEPS:,} steps",
            ha="center",
            fontsize="x-small",
        )
        for ext in ("png", "svg"):
            fig.savefig(folder / f"optimizers.{ext}", dpi=200, bbox_inches="tight")
        plt.close(fig)


def main(folder: str | None = None) -> None:
    out = Path(folder) if folder else Path(__file__).parent
    out.mkdir(parents=True, exist_ok=True)
    rows = measure()
    write_csv(rows, out / "optimizers.csv")
    draw(rows, out)


def write_csv(rows: list[dict], path: Path) -> None:
    """The rows as optimizers.csv: a None (never sparse) as an empty cell."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main(*sys.argv[1:2])
