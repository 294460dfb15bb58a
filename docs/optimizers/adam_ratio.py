"""README's "Why Adam ignores the L1 coefficient": how close AdamW's normalized step
|m̂/√v̂| comes to 1 for the weights it shrinks. The same runs as optimizer_figure.py
(n = 32, m = 128, lr = 1e-3, three seeds); at every check step (steps/1000) until the run is
sparse, the median |m̂|/(√v̂ + ε) over the weights that shrank in that step and were more
than 2 lr from zero (the rail share's weights); printed per l1 as the median over the checks,
one value per seed. A value near 1 is the rail: the weight moves lr per step whatever l1 is.

    .venv/bin/python docs/optimizers/adam_ratio.py       (about half a minute)
"""

from __future__ import annotations

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.readouts import check_period
from sparsity_gui.core.interference.run import InterferenceRun

N, M, LR, SEEDS, STEPS = 32, 128, 1e-3, 3, 30_000
L1S = (1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)


def median_ratio(l1: float, seed: int) -> float:
    p = InterferenceParams(n=N, m=M, optimizer="adamw", l1=l1, lr=LR, steps=STEPS, seed=seed)
    run = InterferenceRun(p)
    medians = []
    while run.step < p.steps and run.steps_to_sparse is None:
        before = np.abs(run.W)
        run.advance(check_period(p.steps))
        k = run.step
        # the run's own Adam moments, bias-corrected as its step uses them
        m_hat = run._mom1 / (1.0 - p.beta1**k)
        v_hat = run._mom2 / (1.0 - p.beta2**k)
        shrank = (np.abs(run.W) < before) & (before > 2.0 * LR)
        if shrank.any():
            medians.append(np.median(np.abs(m_hat[shrank]) / (np.sqrt(v_hat[shrank]) + p.eps)))
    return float(np.median(medians))


if __name__ == "__main__":
    for l1 in L1S:
        print(f"l1 = {l1:g}: " + ", ".join(f"{median_ratio(l1, s):.2f}" for s in range(SEEDS)), flush=True)
