"""README's "Why Adam ignores the L1 coefficient": how close AdamW's normalized step
|m̂/√v̂| comes to 1 for the weights it shrinks. The same runs as optimizer_figure.py
(n = 32, m = 128, lr = 1e-3, three seeds); at every check step (steps/1000) until the run is
sparse (all of them if it never is), the median |m̂|/(√v̂ + ε) over the weights that shrank
in that step and were more than 2 lr from zero before it (the rail share's weights); the
median over the checks, one value per l1 and seed. A value near 1 is the rail: the weight
moves lr per step whatever l1 is. Writes adam_ratio.csv into FOLDER (default: here) and
prints it; docs/interference.md quotes it (tests/core/interference/test_adam_ratio.py).

    .venv/bin/python docs/optimizers/adam_ratio.py [FOLDER]       (about a minute)
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.readouts import check_period
from sparsity_gui.core.interference.run import InterferenceRun

N, M, LR, SEEDS, STEPS = 32, 128, 1e-3, 3, 30_000
L1S = (1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)


def check_ratios(l1: float, seed: int, n: int = N, m: int = M, steps: int = STEPS) -> list[tuple[int, float]]:
    """(step, the median |m̂|/(√v̂ + ε) of the weights shrinking at that step) at each check
    step until the run is sparse (a check at which none shrank is left out)."""
    p = InterferenceParams(n=n, m=m, optimizer="adamw", l1=l1, lr=LR, steps=steps, seed=seed)
    run = InterferenceRun(p)
    period = check_period(p.steps)
    ratios = []
    while run.step < p.steps and run.steps_to_sparse is None:
        run.advance(period - 1 - run.step % period)  # to the step before the check
        before = np.abs(run.W)
        run.advance(1)
        k = run.step
        # the run's own Adam moments, bias-corrected as its step uses them
        m_hat = run._mom1 / (1.0 - p.beta1**k)
        v_hat = run._mom2 / (1.0 - p.beta2**k)
        shrank = (np.abs(run.W) < before) & (before > 2.0 * LR)
        if shrank.any():
            ratios.append((k, float(np.median(np.abs(m_hat[shrank]) / (np.sqrt(v_hat[shrank]) + p.eps)))))
    return ratios


def median_ratio(l1: float, seed: int, n: int = N, m: int = M, steps: int = STEPS) -> float:
    """The median of check_ratios' (NaN if no weight ever shrank)."""
    ratios = [r for _, r in check_ratios(l1, seed, n, m, steps)]
    return float(np.median(ratios)) if ratios else float("nan")


def main(folder: str | None = None) -> None:
    out = Path(folder) if folder else Path(__file__).parent
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "adam_ratio.csv", "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(("l1", "seed", "median_ratio"))
        for l1 in L1S:
            ratios = [median_ratio(l1, s) for s in range(SEEDS)]
            writer.writerows((l1, s, repr(r)) for s, r in enumerate(ratios))
            print(f"l1 = {l1:g}: " + ", ".join(f"{r:.2f}" for r in ratios), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:2])
