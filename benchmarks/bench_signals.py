"""How long a headless command takes to end after a signal: SIGTERM (or --signal) sent to
each command once its temporary folder exists and it has worked for --settle seconds,
timed from the kill to the process's exit, beside the baseline measured in the same run: a
bare Python process (the same interpreter) asleep in time.sleep, which ends as soon as its
handler runs.

    .venv/bin/python benchmarks/bench_signals.py [--repeat 3] [--signal TERM] [--settle 2]

The commands are runs that would take hours (gradient descent with no sample between,
a long training, a sweep, a scaling grid at m = 3e6), so each figure is the time to stop
mid-work, not the time to finish. Nothing is left behind (checked after each run).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {
    "run (gd)": ["run", "--method", "gd", "--m", "1e6", "--lam", "1e-5", "--eta", "1e-3", "--t-end", "1e4",
                 "--samples", "2"],
    "interference": ["interference", "--n", "256", "--m", "4096", "--steps", "100000000"],
    "sweep": ["sweep", "--n", "64", "--m", "64,128", "--seeds", "1", "--steps", "100000000", "--jobs", "1",
              "--no-figure"],
    "scaling": ["scaling", "--m", "3e6", "--lam", "1e-3", "--seeds", "8", "--jobs", "1", "--no-figure"],
}  # fmt: skip
BASELINE = ["-c", "import signal, sys, time\nsignal.signal(signal.SIGTERM, lambda *a: sys.exit(143))\n"
            "signal.signal(signal.SIGINT, lambda *a: sys.exit(130))\nsignal.signal(signal.SIGHUP, "
            "lambda *a: sys.exit(129))\nopen('started', 'w').close()\ntime.sleep(3600)"]  # fmt: skip


def stop_time(argv: list[str], sig: int, settle: float, folder: Path, ready) -> float:
    proc = subprocess.Popen(
        [sys.executable, *argv],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    try:
        deadline = time.monotonic() + 300
        while not ready(folder):
            if proc.poll() is not None:
                raise SystemExit(f"error: {argv} ended with status {proc.returncode} before the signal")
            if time.monotonic() > deadline:
                raise SystemExit(f"error: {argv} did not start within 300 s")
            time.sleep(0.02)
        time.sleep(settle)  # well inside the work
        if proc.poll() is not None:
            raise SystemExit(f"error: {argv} ended before the signal")
        sent = time.perf_counter()
        os.kill(proc.pid, sig)
        proc.wait(600)
        took = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 128 + sig:
        raise SystemExit(f"error: {argv} ended with status {proc.returncode}, not {128 + sig}")
    left = [p.name for p in folder.iterdir() if p.name != "started"]
    if left:
        raise SystemExit(f"error: {argv} left {left}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="the commands to time, comma-separated (default all)")
    ap.add_argument("--signal", default="TERM", choices=["INT", "TERM", "HUP"])
    ap.add_argument("--settle", type=float, default=2.0, help="seconds of work before the signal")
    args = ap.parse_args()
    sig = getattr(signal, f"SIG{args.signal}")

    def temp_folder_exists(folder: Path) -> bool:
        return any(p.name.startswith(".out.tmp-") for p in folder.iterdir())

    def baseline_started(folder: Path) -> bool:
        return (folder / "started").exists()

    print(f"seconds from SIG{args.signal} to exit (median of {args.repeat}; min, max)")
    cases = [("baseline: python asleep", BASELINE, baseline_started, 0.0)]
    cases += [(name, ["-m", "sparsity_gui", *argv, "--out", "out"], temp_folder_exists, args.settle)
              for name, argv in COMMANDS.items()
              if not args.only or name.split()[0] in args.only.split(",")]  # fmt: skip
    for name, argv, ready, settle in cases:
        times = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as folder:
                times.append(stop_time(argv, sig, settle, Path(folder), ready))
        print(f"  {name:<24} {statistics.median(times):6.3f} s  ({min(times):.3f}, {max(times):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
