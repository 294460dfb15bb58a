"""interference.md's "L1, TopK and JumpReLU in one toy": where JumpReLU's thresholds end,
beside the farthest Adam's usual rate takes them (θ0 + lr·steps). The knee grid's largest
coefficient (C = 1; n = 64, m = 16, Adam, 2,000 steps, seeds 0-3, as
`sweep --out docs/mechanisms/knee`) at each of its learning rates: the median final threshold
over the units and, for scale, the median over features of their largest |W_ik| (the |h| a
threshold must stay under for its unit to be kept). Writes thresholds.csv into FOLDER
(default: here) and prints it; tests/core/interference/test_documented_mechanisms.py checks
the docs' numbers against it.

    .venv/bin/python docs/mechanisms/thresholds.py [FOLDER]       (seconds)
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun

N, M, STEPS, C, SEEDS = 64, 16, 2000, 1.0, 4
LRS = (1e-4, 3e-4, 1e-3)


def final_thresholds(lr: float, seed: int) -> tuple[float, float, float]:
    """(θ0 + lr·steps, the median final threshold, the median over features of max_k |W_ik|)."""
    p = InterferenceParams(
        n=N, m=M, optimizer="adam", lr=lr, steps=STEPS, l1=0.0, sparsity="jumprelu", l0=C, seed=seed
    )
    run = InterferenceRun(p)
    while not run.finished:
        run.advance(500)
    theta = np.asarray(run.mechanism.theta, float)
    largest = np.abs(np.asarray(run.W, float)).max(axis=1)
    return p.threshold_init + lr * STEPS, float(np.median(theta)), float(np.median(largest))


def main(folder: Path) -> None:
    rows = []
    for lr in LRS:
        for seed in range(SEEDS):
            reachable, theta, largest = final_thresholds(lr, seed)
            rows.append(
                dict(lr=lr, seed=seed, reachable=reachable, threshold_median=theta, largest_w_median=largest)
            )
    with open(folder / "thresholds.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    for r in rows:
        print(", ".join(f"{k} {v:.4g}" for k, v in r.items()))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
