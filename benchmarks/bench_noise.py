"""What noise in the hidden layer costs: 10^5 steps of plain SGD at n = 8, m = 16 (the paper's
noise experiment), with Bernoulli and Gaussian noise (sigma = 0.1), beside the same run
without noise (the baseline), interleaved, best of several repeats. Usage:
    python benchmarks/bench_noise.py [--repeats R] [--steps S]
The goals (docs/benchmarks.md): under 2 s with noise, at most 10 % slower than without."""

from __future__ import annotations

import argparse
import time

from sparsity_gui.core.blas import limit_blas_threads
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sampled import train_sampled


def timed(params: InterferenceParams) -> float:
    """A whole run as the interference command makes it (501 recorded rows)."""
    started = time.perf_counter()
    train_sampled(params, 501, chunk=250)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100_000)
    args = parser.parse_args()
    limit_blas_threads(1)
    base = InterferenceParams(n=8, m=16, optimizer="gd", l1=0.0, lr=0.02, steps=args.steps)
    settings = {
        "no noise (baseline)": base,
        "bernoulli sigma 0.1": base.with_changes(noise="bernoulli", noise_sigma=0.1),
        "gaussian sigma 0.1": base.with_changes(noise="gaussian", noise_sigma=0.1),
    }
    for p in settings.values():  # compile or load the kernels outside the clock
        train_sampled(p.with_changes(steps=10), 2)
    best = dict.fromkeys(settings, float("inf"))
    for _ in range(args.repeats):
        for name, p in settings.items():
            best[name] = min(best[name], timed(p))
    baseline = best["no noise (baseline)"]
    print(f"{args.steps:,} steps at n = 8, m = 16, plain SGD, best of {args.repeats}:")
    for name, seconds in best.items():
        print(f"  {name:22s} {seconds:7.3f} s   {seconds / baseline:6.3f} x the baseline")


if __name__ == "__main__":
    main()
