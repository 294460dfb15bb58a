"""What l1 and lr schedules cost the interference model's training step: each setting trained
with constant l1 and lr (the baseline) and with l1 and lr given as knots whose values are
the same constants (the schedule's machinery, per-step values through the kernels, with the
dynamics unchanged: a real warm-up changes how sparse W gets and so what a step costs), in
the same run, interleaved, best of several repeats. Usage:
    python benchmarks/bench_schedules.py [--repeats R]
The goal (docs/benchmarks.md): a scheduled step at most 5 % slower than a constant one."""

from __future__ import annotations

import argparse
import time

from sparsity_gui.core.blas import limit_blas_threads
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun

SETTINGS = (
    # (label, params, steps timed): the paper's size under AdamW, the note's GD with its
    # sparse path, and rows alone (no interference: many steps per kernel call)
    ("n=256 m=1024 adamw", InterferenceParams(n=256, m=1024, steps=10**6), 300),
    (
        "n=48 m=128 gd-zero",
        InterferenceParams(n=48, m=128, optimizer="gd-zero", l1=0.2, lr=0.05, steps=10**6),
        3000,
    ),
    (
        "n=64 m=256 gd, no interference",
        InterferenceParams(n=64, m=256, optimizer="gd", l1=0.2, lr=0.05, steps=10**6, interference=False),
        20000,
    ),
)


def scheduled(p: InterferenceParams) -> InterferenceParams:
    return p.with_changes(l1_schedule=((0.0, p.l1), (1e6, p.l1)), lr_schedule=((0.0, p.lr), (1e6, p.lr)))


def timed(params: InterferenceParams, steps: int) -> float:
    run = InterferenceRun(params)
    run.advance(2)  # compile or load the kernels, outside the clock
    started = time.perf_counter()
    done = 0
    while done < steps:
        done += run.advance(min(250, steps - done))
    return (time.perf_counter() - started) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    limit_blas_threads(1)
    print(f"{'setting':34s} {'constant':>12s} {'scheduled':>12s} {'ratio':>7s}")
    for label, params, steps in SETTINGS:
        knotted = scheduled(params)
        best = {"constant": float("inf"), "scheduled": float("inf")}
        for _ in range(args.repeats):  # interleaved: a busy moment hits both
            best["constant"] = min(best["constant"], timed(params, steps))
            best["scheduled"] = min(best["scheduled"], timed(knotted, steps))
        ratio = best["scheduled"] / best["constant"]
        print(
            f"{label:34s} {best['constant'] * 1e6:9.1f} µs {best['scheduled'] * 1e6:9.1f} µs {ratio:7.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
