"""Benchmark of a sweep over lists of options (the optimizer lab's grid): do a grid's runs
cost what the same single runs cost, and is a 2-worker local Dask cluster within 20 % of
--jobs 2? All in one run, each figure beside its baseline.

Run from the project root (the cluster case needs the extra: pip install -e '.[cluster]'):

    .venv/bin/python benchmarks/bench_grid.py            # 3 l1 x 2 optimizers x 2 seeds, n = 64
    .venv/bin/python benchmarks/bench_grid.py --quick    # 2 x 2 x 1

Cases, on the same grid:
- loop: each run of the grid trained alone, one after another, as `interference` trains it
  (InterferenceRun to its end on this thread, one BLAS thread) — the baseline;
- grid --jobs 1: SweepSpec.run with one thread, as `sweep --jobs 1`;
- grid --jobs 2: two threads (on two cores about twice the runs per second);
- grid local:2: a LocalCluster of two worker processes, as `sweep --scheduler local:2` (the
  call's whole time, starting the workers included, and the time after the first answer).
Every case must give the same rows (all but the wall-clock seconds); the load average is
printed, since the machine may be shared. Nothing is asserted: the exit status is 0 either way.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from dataclasses import asdict

from sparsity_gui.core.blas import limit_blas_threads
from sparsity_gui.core.cluster import parse_scheduler
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec, train_run


def without_seconds(rows) -> list[dict]:
    """The rows as dicts, without the wall-clock seconds, NaN as a string (a NaN that came
    back from a worker process is another float object, and NaN != NaN)."""
    return [
        {
            k: ("nan" if isinstance(v, float) and math.isnan(v) else v)
            for k, v in asdict(r).items()
            if k != "seconds"
        }
        for r in rows
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 l1 x 2 optimizers x 1 seed")
    args = ap.parse_args()
    l1s = (1e-3, 1e-2) if args.quick else (1e-3, 1e-2, 0.1)
    seeds = 1 if args.quick else 2
    # runs of a second or more each: a worker's start (its imports, its compiled kernels) is
    # paid once per worker, as in a real grid
    base = InterferenceParams(n=64, m=256, steps=6000, lr=1e-3)
    spec = SweepSpec(
        base=base, m_values=(256,), seeds=seeds, axes=(("l1", l1s), ("optimizer", ("adamw", "gd-zero")))
    )
    runs = spec.runs()
    machine = platform.processor() or platform.machine()
    print(
        f"grid: n = {base.n}, m = {base.m}, l1 {l1s} x optimizer (adamw, gd-zero) x {seeds} seed(s) = "
        f"{len(runs)} runs of {base.steps} steps"
    )
    print(f"{machine}, {os.cpu_count()} cores, python {platform.python_version()}")
    train_run(runs[0].with_changes(steps=10))  # compile the kernels once, outside every case

    limit_blas_threads(1)
    t0 = time.perf_counter()
    loop_rows = [train_run(p) for p in runs]
    loop = time.perf_counter() - t0
    print(f"{'case':<28}{'seconds':>9}{'runs/s':>9}   against the loop")
    print(f"{'loop of single runs':<28}{loop:>9.2f}{len(runs) / loop:>9.2f}   1.00 (baseline)")

    results = {}
    for jobs in (1, 2):
        t0 = time.perf_counter()
        rows = spec.run(workers=jobs)
        s = time.perf_counter() - t0
        results[jobs] = s
        same = without_seconds(rows) == without_seconds(loop_rows)
        print(
            f"{f'grid --jobs {jobs}':<28}{s:>9.2f}{len(runs) / s:>9.2f}   {loop / s:.2f}x the loop's runs/s"
            f"{'' if same else '   ROWS DIFFER'}"
        )
    try:
        first: list[float] = []

        def on_progress(pr) -> None:
            if pr.workers is not None and not first:
                first.append(time.perf_counter())

        t0 = time.perf_counter()
        rows = spec.run(scheduler=parse_scheduler("local:2"), on_progress=on_progress)
        t1 = time.perf_counter()
        after = t1 - (first[0] if first else t0)
        same = without_seconds(rows) == without_seconds(loop_rows)
        print(
            f"{'grid local:2 (whole call)':<28}{t1 - t0:>9.2f}{len(runs) / (t1 - t0):>9.2f}   "
            f"{(t1 - t0) / results[2]:.2f}x the time of --jobs 2{'' if same else '   ROWS DIFFER'}"
        )
        print(
            f"{'grid local:2 (after start)':<28}{after:>9.2f}{len(runs) / after:>9.2f}   "
            f"{after / results[2]:.2f}x the time of --jobs 2 (goal: at most 1.20)"
        )
    except ImportError:
        print("grid local:2: dask.distributed is not installed (pip install -e '.[cluster]')")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
