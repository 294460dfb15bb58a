"""Benchmark of a sweep on a dask cluster: `local:2` (two worker processes) against `local:1`,
beside this machine's threads (--jobs 1 and 2) as the baseline, all in one run.

Run from the project root (needs the extra: pip install -e '.[cluster]'):

    .venv/bin/python benchmarks/bench_cluster.py            # 12 runs, n = 64 (a few minutes)
    .venv/bin/python benchmarks/bench_cluster.py --quick    # 6 runs

Each case is `SweepSpec.run` on the same SweepSpec, as `sparsity-gui sweep` runs it: with
`--scheduler local:N` (a LocalCluster of N worker processes, one thread each, started and
stopped by the call) and with `--jobs J` (J threads of this process). For the cluster it prints
the whole call (starting the workers included) and the part after the cluster answered (the
runs, and each worker's first import of the package and its compiled kernels), and the
speedup of 2 workers over 1 for both; and for every case the runs' own training time
summed (`seconds` of sweep.csv), which shows how much the machine's other work slowed the
runs. It checks that every case gives the same rows (all but the wall-clock seconds) and
prints the load average, since the machine may be shared. Nothing is asserted: the exit
status is 0 either way.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import asdict

from sparsity_gui.core.cluster import Scheduler
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec


def timed(spec: SweepSpec, **how) -> tuple[float, float, list]:
    """(seconds of the whole call, seconds from the cluster's first answer, rows)."""
    first: list[float] = []

    def on_progress(pr) -> None:
        if pr.workers is not None and not first:
            first.append(time.perf_counter())

    t0 = time.perf_counter()
    rows = spec.run(on_progress=on_progress, **how)
    t1 = time.perf_counter()
    return t1 - t0, t1 - (first[0] if first else t0), rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="6 runs instead of 12")
    args = ap.parse_args()
    seeds = 2 if args.quick else 4
    base = InterferenceParams(n=64, m=128, steps=3000, optimizer="adamw", l1=1e-3, lr=1e-3)
    spec = SweepSpec(base=base, m_values=(128, 256, 512), seeds=seeds)
    print(
        f"sweep: n = {base.n}, m = {spec.m_values}, {seeds} seeds ({len(spec.runs())} runs), "
        f"{base.steps} steps, {base.optimizer}"
    )
    machine = platform.processor() or platform.machine()
    print(f"{machine}, {os.cpu_count()} cores, python {platform.python_version()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    SweepSpec(base=base.with_changes(steps=10), m_values=(128,), seeds=1).run()  # compile here

    cases = {}
    for name, how in (
        ("local:1", dict(scheduler=Scheduler(local_workers=1))),
        ("local:2", dict(scheduler=Scheduler(local_workers=2))),
        ("--jobs 1", dict(workers=1)),
        ("--jobs 2", dict(workers=2)),
    ):
        cases[name] = timed(spec, **how)
        total, runs, rows = cases[name]
        print(
            f"  {name:<9} {total:7.2f} s in all, {runs:7.2f} s after the cluster answered, "
            f"{sum(r.seconds for r in rows):7.2f} s of training summed over the runs",
            flush=True,
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    def key(rows):
        return [{k: v for k, v in asdict(r).items() if k != "seconds"} for r in rows]

    same = all(key(c[2]) == key(cases["--jobs 1"][2]) for c in cases.values())
    print(f"rows identical in every case (all but seconds): {'yes' if same else 'NO'}")
    print()
    print(f"{'':<28}{'local:1':>10}{'local:2':>10}{'speedup':>10}")
    for label, k in (("whole call (workers start)", 0), ("after the cluster answered", 1)):
        one, two = cases["local:1"][k], cases["local:2"][k]
        print(f"{label:<28}{one:>9.2f}s{two:>9.2f}s{one / two:>9.2f}x")
    one, two = cases["--jobs 1"][0], cases["--jobs 2"][0]
    print(f"{'baseline: --jobs 1 / 2':<28}{one:>9.2f}s{two:>9.2f}s{one / two:>9.2f}x")


if __name__ == "__main__":
    main()
