"""The note window's memory over a long session with pinned runs and live λ changes, beside
the same window without pins (the baseline, in the same process, measured first).

    .venv/bin/python benchmarks/bench_pins_memory.py [--minutes 10] [--m 1000] [--pins 8]

Each phase runs the live window (offscreen, 1600x1000) for the given minutes, changing λ
every 2 s (which renames every pin, re-flowing its legend rows) and restarting the run when
it ends, and prints the resident memory (VmRSS) each minute and its growth per minute.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("SPARSITY_GUI_SETTINGS", os.path.join(os.path.dirname(__file__), ".bench_gui.ini"))

from PySide6 import QtWidgets  # noqa: E402

from sparsity_gui.core.note.params import SimParams  # noqa: E402
from sparsity_gui.plots.qt_setup import prepare_qt  # noqa: E402
from sparsity_gui.ui.note.window import NoteWindow  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from bench_pins import wait  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def session(app, win, minutes: float) -> list[float]:
    """RSS at the start and after each minute, with a live λ change every 2 s."""
    lams = (1e-3, 2e-3, 3e-3)
    win.restart()
    samples = [rss_mb()]
    start = next_change = time.perf_counter()
    k = 0
    while (now := time.perf_counter()) - start < minutes * 60:
        app.processEvents()
        time.sleep(0.002)
        if now >= next_change:
            k += 1
            next_change += 2.0
            win.on_params_changed({"lam": lams[k % 3]})
            if win.snapshot is not None and win.snapshot.state == "finished":
                win.restart()
        if now - start >= 60 * len(samples):
            samples.append(rss_mb())
    samples.append(rss_mb())  # at the end
    return samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--pins", type=int, default=8)
    args = ap.parse_args()
    prepare_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    win = NoteWindow(SimParams(m=args.m, lam=1e-3), speed=300.0)
    win.resize(1600, 1000)
    win.show()
    wait(app, lambda: win.snapshot is not None and win.snapshot.state == "finished")
    win.on_speed_changed(75.0)
    session(app, win, min(1.0, args.minutes))  # warm-up: caches, fonts, numba
    bare = session(app, win, args.minutes)
    for _ in range(args.pins):
        win.pin_control.pin()
    pinned = session(app, win, args.minutes)
    win.close()
    print(f"m = {args.m:,}, λ changed every 2 s, {args.minutes:g} min each; VmRSS in MB per minute:")
    for name, samples in (("no pins (baseline)", bare), (f"{args.pins} pins", pinned)):
        growth = (samples[-1] - samples[1]) / max(len(samples) - 2, 1) if len(samples) > 2 else float("nan")
        shown = " ".join(f"{v:.0f}" for v in samples)
        print(f"{name:>20}: {shown}   growth after the first minute {growth:+.2f} MB/min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
