"""What pinned runs cost the live window: frames per second and the longest GUI-thread
stall of the note's window (offscreen, 1600x1000) while a run goes on, with 8 pinned runs
on the panels against none (the baseline, measured in the same run, on the same run).

    .venv/bin/python benchmarks/bench_pins.py [--seconds 6] [--m 1000] [--pins 8]

Each pinned run is the history of a run to about one weight (thousands of rows), the
largest a pin gets; the live run restarts from W(0) for each measurement.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from PySide6 import QtWidgets

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.plots.qt_setup import prepare_qt
from sparsity_gui.ui.note.window import NoteWindow

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("SPARSITY_GUI_SETTINGS", os.path.join(os.path.dirname(__file__), ".bench_gui.ini"))

sys.path.insert(0, os.path.dirname(__file__))
from bench_gui import run_with_stall_probe  # noqa: E402


def wait(app, cond, seconds: float = 120.0) -> None:
    end = time.perf_counter() + seconds
    while not cond():
        if time.perf_counter() > end:
            raise SystemExit("error: the run did not get there in time")
        app.processEvents()


def measure(app, win, seconds: float) -> dict:
    win.restart()
    wait(app, lambda: win.snapshot.run_id == win.run_id and win.snapshot.state == "running")
    frames0 = win.frames
    elapsed, stall_ms, p99_ms = run_with_stall_probe(app, seconds)
    return {"fps": (win.frames - frames0) / elapsed, "stall_ms": stall_ms, "p99_ms": p99_ms}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--pins", type=int, default=8)
    args = ap.parse_args()
    prepare_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    # paced at 4x the default speed: a run to one weight records thousands of rows
    win = NoteWindow(SimParams(m=args.m, lam=1e-3), speed=300.0)
    win.resize(1600, 1000)
    win.show()
    wait(app, lambda: win.snapshot is not None and win.snapshot.state == "finished", 300)
    rows = win.snapshot.history.shape[0]
    for _ in range(args.pins):
        win.pin_control.pin()
    win.on_speed_changed(75.0)  # a paced run: frames, not the solver, set the pace
    pinned = measure(app, win, args.seconds)
    win.pin_control.clear()
    bare = measure(app, win, args.seconds)
    win.close()
    print(f"m = {args.m:,}, {args.pins} pinned runs of {rows:,} rows each, {args.seconds:g} s each:")
    print(f"{'':>22}{'fps':>8}{'longest stall ms':>18}{'p99 ms':>9}")
    for name, r in (("no pins (baseline)", bare), (f"{args.pins} pins", pinned)):
        print(f"{name:>22}{r['fps']:>8.1f}{r['stall_ms']:>18.1f}{r['p99_ms']:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
