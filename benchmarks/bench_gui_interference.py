"""GUI benchmark of the interference window: optimizer steps per second, frames per second
and the longest GUI-thread stall while a run of n = 256, m = 1024 trains with all six
panels drawn (offscreen). Goal: 100 steps/s or more.

    .venv/bin/python benchmarks/bench_gui_interference.py [--seconds 8] [--n 256 --m 1024]

Beside each figure it prints two baselines measured in the same run:
  * headless: the same run advanced in a plain loop with no window (the ceiling);
  * default BLAS: the same window with OpenBLAS's own thread pool (one thread per core)
    instead of the app's one thread, the choice core/blas.py explains.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from bench_gui import run_with_stall_probe  # benchmarks/ is on sys.path (the script's folder)
from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.blas import limit_blas_threads
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun
from sparsity_gui.ui.interference.window import InterferenceWindow

# read when the QApplication and the window are made, not when Qt is imported
if "QT_QPA_PLATFORM" not in os.environ:
    # Qt's offscreen screen is 800x600 unless configured, and the window fits itself to its
    # screen: a 1600x1000 one, as on a desktop, so that the window is 1500x900
    _screen = os.path.join(tempfile.gettempdir(), "sparsity-gui-bench-screen.json")
    with open(_screen, "w", encoding="utf-8") as _f:
        _f.write('{"screens": [{"name": "bench", "x": 0, "y": 0, "width": 1600, "height": 1000}]}')
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={_screen}"
os.environ.setdefault("SPARSITY_GUI_SETTINGS", os.path.join(os.path.dirname(__file__), ".bench_gui.ini"))

GOAL = 100.0


def in_window(app, params: InterferenceParams, seconds: float, blas_threads: int) -> dict:
    win = InterferenceWindow(params, blas_threads=blas_threads)
    win.resize(1500, 900)
    win.show()
    start = time.perf_counter()
    while (
        win.snapshot is None or win.snapshot.state != "running" or win.snapshot.step < 20
    ) and time.perf_counter() - start < 60:
        app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 5)
    frames0, step0 = win.frames, win.worker.run.step
    elapsed, stall_ms, p99_ms = run_with_stall_probe(app, seconds)
    steps = win.worker.run.step - step0
    result = {
        "sps": steps / elapsed,
        "fps": (win.frames - frames0) / elapsed,
        "stall_ms": stall_ms,
        "p99_ms": p99_ms,
        "finished": win.worker.run.finished,
    }
    win.close()
    win.deleteLater()
    app.processEvents()
    return result


def headless(params: InterferenceParams, seconds: float) -> float:
    limit_blas_threads(1)
    run = InterferenceRun(params)
    run.advance(5)
    t0 = time.perf_counter()
    steps = 0
    while time.perf_counter() - t0 < seconds and not run.finished:
        steps += run.advance(10)
    return steps / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--optimizers", default="adamw,gd-zero")
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    from sparsity_gui.plots import qtmessages
    from sparsity_gui.plots.qt_setup import prepare_qt

    qtmessages.install()  # as the app does: drops the offscreen platform's known chatter
    prepare_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    cores = os.cpu_count() or 1
    # the first window of a process pays one-off costs (fonts, kernels, first paints)
    in_window(app, InterferenceParams(n=16, m=32, steps=10**6), 1.0, 1)
    print(
        f"Interference window benchmark, {os.environ['QT_QPA_PLATFORM']} platform, {cores} cores, "
        f"{args.seconds:g} s per case, window 1500x900, six panels at up to 60 Hz, "
        f"n = {args.n}, m = {args.m}; load average {os.getloadavg()[0]:.2f} at start"
    )
    print(
        f"{'optimizer':>9} | {'steps/s':>8} {'fps':>5} {'stall ms':>9} {'p99 ms':>7} | "
        f"{'headless steps/s':>16} | {'default BLAS steps/s':>20} {'fps':>5}"
    )
    verdicts = []
    for opt in args.optimizers.split(","):
        params = InterferenceParams(
            n=args.n,
            m=args.m,
            optimizer=opt,
            steps=10**7,
            lr=1e-3 if opt.startswith("adam") else 0.01,
            l1=1e-3 if opt.startswith("adam") else 0.01,
        )
        ours = in_window(app, params, args.seconds, 1)
        if args.no_baseline:
            head, base = float("nan"), None
        else:
            head = headless(params, min(args.seconds, 4.0))
            base = in_window(app, params, args.seconds, cores)
        b = f"{base['sps']:20.0f} {base['fps']:5.0f}" if base else f"{'-':>20} {'-':>5}"
        print(
            f"{opt:>9} | {ours['sps']:8.0f} {ours['fps']:5.0f} {ours['stall_ms']:9.1f} "
            f"{ours['p99_ms']:7.1f} | {head:16.0f} | {b}"
        )
        verdicts.append(
            f"{opt}: {ours['sps']:.0f} steps/s in the window (goal >= {GOAL:.0f}): "
            f"{'PASS' if ours['sps'] >= GOAL else 'MISS'}"
        )
    print()
    for v in verdicts:
        print(v)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
