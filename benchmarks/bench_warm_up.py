"""What a first launch waits for: each model's numba kernels compiled into an empty cache
(core/warm_up.py's KernelSet.warm_up, in a fresh process, as `make run`'s precompile step and
a first window do), beside the baseline measured in the same run: the same kernels loaded
from that cache by the next process, as every later launch does.

    .venv/bin/python benchmarks/bench_warm_up.py [--repeat 2]

Each repeat uses a new empty NUMBA_CACHE_DIR (a temporary folder, removed after), so the
machine's own cache is neither used nor changed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CODE = (
    "from sparsity_gui.core.note.runner import NOTE_KERNELS\n"
    "from sparsity_gui.core.interference.worker import INTERFERENCE_KERNELS\n"
    "for kernels in (NOTE_KERNELS, INTERFERENCE_KERNELS):\n"
    "    print(kernels.name, kernels.warm_up())\n"
)


def warm_up_seconds(cache: str) -> dict[str, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True)
    return {name: float(seconds) for name, seconds in (line.split() for line in out.stdout.splitlines())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    compiled: dict[str, list[float]] = {}
    loaded: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            for name, seconds in warm_up_seconds(cache).items():
                compiled.setdefault(name, []).append(seconds)
            for name, seconds in warm_up_seconds(cache).items():
                loaded.setdefault(name, []).append(seconds)
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, {args.repeat} repeats (median)")
    print(f"{'kernels':<14}{'compiled (first launch)':>26}{'loaded (baseline)':>20}")
    for name in compiled:
        first, later = statistics.median(compiled[name]), statistics.median(loaded[name])
        print(f"{name:<14}{first:>24.1f} s{later:>18.2f} s")


if __name__ == "__main__":
    main()
