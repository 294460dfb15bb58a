"""Benchmark of the headless `run` command at scale, as a whole process.

Run from the project root:

    .venv/bin/python benchmarks/bench_run.py                 # m = 10^7: default, CSV, npz (about 1.5 minutes)
    .venv/bin/python benchmarks/bench_run.py --m 1000000     # a smaller run
    .venv/bin/python benchmarks/bench_run.py --format csv    # only one format

It runs `sparsity-gui run --m M --lam 1e-3 --out TMP [--format F]` in a child process (first
without --format: the default, auto, which writes .npz above m = 10^6) and
prints its wall time and peak RSS (getrusage(RUSAGE_CHILDREN).ru_maxrss, KiB on Linux, of
that child alone: each run is measured in a fresh helper process), and the size of each file.

Beside them, two baselines measured in this run, in this process:

- "solver alone": ExactSolver from W(0) to one weight left at the same m (draw, sort and
  prefix sums included, numba compilation excluded): the floor of any run, which must at
  least solve;
- "raw format+write": the same numbers as weights.csv and deaths.csv formatted with numpy's
  C formatter (np.savetxt, '%.17g', whole arrays) and written to a file: what writing these
  bytes costs with no streaming, no ordering and no Python per float.

Goals (the issue "Scale", part 1): under 10 s of wall time and under 1.5 GB of peak RSS for
m = 10^7, every double in the files still round-tripping. Nothing is asserted: the exit status
is 0 either way.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_WALL_S = 10.0
GOAL_RSS_GB = 1.5

# measure one child process: run it from a tiny helper so that RUSAGE_CHILDREN is that child's alone
_HELPER = r"""
import resource, subprocess, sys, time, json
t0 = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": rc, "wall": wall, "maxrss_kib": rss}))
"""


def run_child(cmd: list[str]) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", _HELPER, *cmd], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cli_command(m: int, out: Path, fmt: str | None) -> list[str]:
    cmd = [sys.executable, "-m", "sparsity_gui", "run", "--m", str(m), "--lam", "1e-3", "--out", str(out)]
    if fmt is not None:
        cmd += ["--format", fmt]
    return cmd


def solver_alone(m: int) -> float:
    import numpy as np

    from sparsity_gui.core.note.initial import draw_normal
    from sparsity_gui.core.note.solvers import ExactSolver, InitialState

    warm = InitialState.from_weights(draw_normal(1000, 0.9, 0))  # compile outside the timing
    ExactSolver(warm, 1e-3).advance_to(np.inf, stop_nonzero=1)
    t0 = time.perf_counter()
    init = InitialState.from_weights(draw_normal(m, 0.9, 0))
    ExactSolver(init, 1e-3).advance_to(np.inf, stop_nonzero=1)
    return time.perf_counter() - t0


def raw_write(m: int, folder: Path) -> float:
    """The same amount of numbers (3 columns x m rows, twice) through np.savetxt('%.17g')."""
    import numpy as np

    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.9 / np.sqrt(m), m)
    table = np.column_stack([np.arange(m, dtype=np.float64), w, np.abs(w) * 1e3])
    t0 = time.perf_counter()
    for name in ("weights.raw.csv", "deaths.raw.csv"):
        buf = io.StringIO()
        np.savetxt(buf, table, fmt=("%d", "%.17g", "%.17g"), delimiter=",")
        (folder / name).write_text(buf.getvalue())
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, default=10**7)
    ap.add_argument(
        "--format",
        action="append",
        default=None,
        help="default, csv or npz (repeatable; default: all three, or the only one the code knows)",
    )
    ap.add_argument("--no-baselines", action="store_true")
    args = ap.parse_args(argv)

    help_text = subprocess.run(
        [sys.executable, "-m", "sparsity_gui", "run", "--help"], capture_output=True, text=True
    ).stdout
    has_format = "--format" in help_text
    asked = args.format or (["default", "csv", "npz"] if has_format else ["default"])
    fmts: list[str | None] = [None if f == "default" else f for f in asked]

    print(
        f"bench_run: sparsity-gui run --m {args.m} --lam 1e-3, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        tmp = Path(tmp)
        for fmt in fmts:
            out = tmp / f"out-{fmt or 'default'}"
            r = run_child(cli_command(args.m, out, fmt))
            label = fmt or "default (no --format)"
            wall_ok = "PASS" if r["wall"] < GOAL_WALL_S and r["rc"] == 0 else "MISS"
            rss_gb = r["maxrss_kib"] * 1024 / 1e9
            rss_ok = "PASS" if rss_gb < GOAL_RSS_GB and r["rc"] == 0 else "MISS"
            print(f"\n[{label}] exit status {r['rc']}")
            print(f"  wall time      {r['wall']:8.2f} s    goal < {GOAL_WALL_S:g} s     {wall_ok}")
            print(f"  peak RSS       {rss_gb:8.2f} GB   goal < {GOAL_RSS_GB:g} GB    {rss_ok}")
            if out.is_dir():
                for f in sorted(out.iterdir()):
                    print(f"  {f.name:<16}{f.stat().st_size / 1e6:10.1f} MB")
            shutil.rmtree(out, ignore_errors=True)
        if not args.no_baselines:
            print("\nbaselines (in this process):")
            s = solver_alone(args.m)
            print(f"  solver alone (draw, sort, exact solve to one weight)   {s:8.2f} s")
            w = raw_write(args.m, tmp)
            print(f"  raw format+write, np.savetxt '%.17g', 2 x 3 x m values {w:8.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
