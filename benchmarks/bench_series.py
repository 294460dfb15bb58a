"""Benchmark of a long series of snapshots read through core/series.py (the `checkpoints`
command's reader), against reading the same bytes once with `cat FILES > /dev/null`.

Run from the project root:

    .venv/bin/python benchmarks/bench_series.py                 # 1,000 x 256 x 4096 float32 (4 GB)
    .venv/bin/python benchmarks/bench_series.py --snapshots 50  # a smaller series (200 MB)
    make bench-series

It writes a series of SNAPSHOTS snapshots of a ROWS x COLS float32 matrix as .npy files
(step_000000.npy, ...; or --format safetensors) in a temporary folder on --dir's disk
(default: the system's temporary folder; the series is scaled down, and says so, when that
disk is short), then times, in this one run:

1. ``cat FILES > /dev/null``: the bytes read once (the baseline);
2. the series opened and every snapshot read as the command reads it (open_series, then
   Series.read(i) for each i: the float32 matrix as stored, checked finite), in a child process whose peak
   resident memory (VmHWM) is its own;
3. the same, each snapshot also measured as compare.csv measures it (|W|_1, |W|^2, the
   weights above the tolerance, the polysemantic neurons).

Each timing is taken cold (the files' pages dropped from the page cache first, by
posix_fadvise DONTNEED after a sync: the disk's speed) and warm (the files read once
before: memory's speed). The issue's goals: peak memory under 1 GB, time within 2x of
reading the bytes once. The written series is deleted at the end (unless --keep).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GB = 1e9
MARGIN = 2 * GB  # left free on the disk beside the series


def peak_rss_bytes() -> int:
    """This process's peak resident memory (VmHWM), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def write_series(folder: Path, snapshots: int, rows: int, cols: int, fmt: str) -> list[Path]:
    """SNAPSHOTS matrices, each a different float32 matrix (a base drawn once, scaled by
    the step), one file each."""
    rng = np.random.default_rng(0)
    base = (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float32)
    files = []
    for k in range(snapshots):
        W = base * np.float32(1.0 - 0.5 * k / max(snapshots, 1))
        if fmt == "npy":
            path = folder / f"step_{k * 10:07d}.npy"
            np.save(path, W)
        else:
            from safetensors.numpy import save_file

            path = folder / f"step_{k * 10:07d}.safetensors"
            save_file({"W": W}, str(path))
        files.append(path)
    return files


def drop_cache(files: list[Path]) -> bool:
    """Drop the files' pages from the page cache (after a sync); False where the system
    has no posix_fadvise."""
    if not hasattr(os, "posix_fadvise"):
        return False
    os.sync()
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return True


def time_cat(folder: Path, pattern: str) -> float:
    start = time.perf_counter()
    subprocess.run(f"cat {pattern} > /dev/null", shell=True, check=True, cwd=folder)
    return time.perf_counter() - start


def time_reader(folder: Path, measure: bool) -> dict:
    """The series read in a child process (its peak memory is the reading's alone)."""
    argv = [sys.executable, __file__, "--child", str(folder)] + (["--measure"] if measure else [])
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def child(folder: Path, measure: bool) -> None:
    """Open the series and read every snapshot (as `checkpoints` does); print JSON."""
    from sparsity_gui.core.checkpoints.compare import _measures, default_zero_tol
    from sparsity_gui.core.series import open_series

    if measure:  # numba's kernel compiled (or loaded from its cache) before the clock starts
        _measures(np.eye(2, 3), 0.01, 1e-4, True)
    before = rss_bytes()
    start = time.perf_counter()
    series = open_series(folder, all_rows=True)
    opened = time.perf_counter() - start
    total = 0.0
    tol = default_zero_tol(1e-3, 1e-3)
    for i in range(len(series.snapshots)):
        w = series.read(i)
        if measure:
            total += _measures(w, 2.5e-4, tol, True)[0]
        else:
            total += float(w[0, 0])
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "seconds": seconds,
                "open_seconds": opened,
                "snapshots": len(series.snapshots),
                "rss_before": before,
                "peak_rss": peak_rss_bytes(),
                "check": total,
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshots", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--format", choices=("npy", "safetensors"), default="npy")
    ap.add_argument("--dir", default=None, help="where the temporary series is written")
    ap.add_argument("--keep", action="store_true", help="keep the written series (its path is printed)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(Path(args.child), args.measure)
        return

    snapshot_bytes = args.rows * args.cols * 4
    parent = Path(args.dir or tempfile.gettempdir())
    free = shutil.disk_usage(parent).free
    snapshots = args.snapshots
    if snapshots * snapshot_bytes > free - MARGIN:
        snapshots = max(2, int((free - MARGIN) // snapshot_bytes))
        print(
            f"the disk of {parent} has {free / GB:.1f} GB free: the series is scaled down from "
            f"{args.snapshots} to {snapshots} snapshots"
        )
    total = snapshots * snapshot_bytes
    print(
        f"series: {snapshots} snapshots of {args.rows} x {args.cols} float32 ({total / GB:.2f} GB) "
        f"as .{args.format} files in {parent}"
    )
    folder = Path(tempfile.mkdtemp(prefix="bench-series-", dir=parent))
    try:
        start = time.perf_counter()
        files = write_series(folder, snapshots, args.rows, args.cols, args.format)
        print(f"written in {time.perf_counter() - start:.1f} s")
        pattern = f"step_*.{args.format}"
        results = {}
        for state in ("cold", "warm"):
            for what in ("cat", "read", "read+measure"):
                if state == "cold":
                    if not drop_cache(files):
                        print("no posix_fadvise here: cold timings skipped")
                        break
                else:
                    time_cat(folder, pattern)  # every page in the cache
                if what == "cat":
                    results[(state, what)] = {"seconds": time_cat(folder, pattern)}
                else:
                    results[(state, what)] = time_reader(folder, measure=what == "read+measure")
        print()
        print(
            f"{'':6} {'what':34} {'seconds':>8} {'GB/s':>6} {'x cat':>6} {'peak RSS':>9} {'(at start)':>10}"
        )
        for (state, what), r in results.items():
            base = results[(state, "cat")]["seconds"]
            name = {
                "cat": "cat FILES > /dev/null",
                "read": "open_series + Series.read each",
                "read+measure": "the same + compare.csv's measures",
            }[what]
            rss = f"{r['peak_rss'] / 2**20:7.0f} MB" if "peak_rss" in r else ""
            start_rss = f"{r['rss_before'] / 2**20:7.0f} MB" if "rss_before" in r else ""
            print(
                f"{state:6} {name:34} {r['seconds']:8.2f} {total / GB / r['seconds']:6.2f} "
                f"{r['seconds'] / base:6.2f} {rss:>9} {start_rss:>10}"
            )
        peak = max(r.get("peak_rss", 0) for r in results.values())
        worst = max(
            results[(s, w)]["seconds"] / results[(s, "cat")]["seconds"] for (s, w) in results if w == "read"
        )
        print()
        print(
            f"goals: peak memory {peak / 2**20:.0f} MB (under 1 GB: {'yes' if peak < GB else 'NO'}); "
            f"reading {worst:.2f}x cat's time at worst (within 2x: {'yes' if worst <= 2 else 'NO'})"
        )
        print("load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
            print(f"deleted {folder}")


if __name__ == "__main__":
    main()
