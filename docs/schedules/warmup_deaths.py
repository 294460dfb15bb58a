"""docs/commands.md's "What a warm-up changes": when 1 % of the weights are dead, when half
are, and when one is left, for `run --m 1e4 --lam 1e-2` (seed 0) without a warm-up and with
`--lam-warmup 50`, from the solver's exact death times (`deaths.csv`'s `t_death`; sampled
rows only bound them from above), and which weight survives. Prints the sentence's numbers
(tests/core/note/test_docs_death_instants.py checks the page prints these).

    .venv/bin/python docs/schedules/warmup_deaths.py        (a second or two)
"""

from __future__ import annotations

import numpy as np

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import death_count_time, simulate_samples
from sparsity_gui.core.note.schedule import warmup_knots

M, LAM, SEED, WARMUP = 10_000, 1e-2, 0, 50.0


def instants(warmup: float | None) -> dict:
    """{"1 %", "half", "one left": the time, "survivor": its index} of one run."""
    knots = warmup_knots(warmup, LAM) if warmup else ()
    run = simulate_samples(SimParams(m=M, lam=LAM, seed=SEED, lam_schedule=knots), None, 11)
    sim = run.sim
    alive = [int(k) for k in np.flatnonzero(~np.isfinite(sim.solver.death_t))]
    return {
        "1 %": death_count_time(sim, M // 100),
        "half": death_count_time(sim, M // 2),
        "one left": death_count_time(sim, M - 1),
        "survivor": alive,
    }


def sentence_numbers() -> tuple[dict, dict]:
    return instants(None), instants(WARMUP)


if __name__ == "__main__":
    plain, warm = sentence_numbers()
    for name, d in (("no warm-up", plain), (f"--lam-warmup {WARMUP:g}", warm)):
        print(
            f"{name}: 1 % dead at t = {d['1 %']:.4g}, half at {d['half']:.4g}, "
            f"one left at {d['one left']:.4g}; survivor {d['survivor']}"
        )
    print(
        f"the warm-up delays the 1 % point {warm['1 %'] / plain['1 %']:.3g}x, "
        f"half {warm['half'] / plain['half']:.3g}x"
    )
