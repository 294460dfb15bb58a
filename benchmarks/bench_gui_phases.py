"""Where a frame of the note's live window goes: the GUI thread's CPU a frame split by phase
and by panel, over frames of a real run replayed with the worker paused (as
``bench_gui.py --replay``), and the CPU of one step of the shared time axis (every time
panel's axis laid out and painted again in one frame: the longest frames of a live run).

    .venv/bin/python benchmarks/bench_gui_phases.py [--m 1000] [--pins 0] [--seconds 3]
        [--reps 3] [--steps 20]

CPU is ``time.thread_time()`` of the GUI thread, summed per phase by wrappers around a
few functions and divided by the frames replayed (the phases nest: "views, all" holds the
items' paints, "paint_panels, all" holds the panels' updates). "Qt's own" is the views'
paint events less the items' Python paints: Qt's traversal of the scene, the Python
callbacks it makes (bounding rects), the cached pixmaps it blits. CPU time is steadier
than wall time on a shared machine but is still inflated by load (the load average is
printed).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

import pyqtgraph as pg
from bench_gui import recorded_frames  # noqa: E402  # benchmarks/ is on sys.path (the script's folder)
from PySide6 import QtWidgets

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.plots import base, ranges
from sparsity_gui.plots.curves import CurveBundle, Dots, Symbols
from sparsity_gui.plots.qt_setup import prepare_qt
from sparsity_gui.ui.note.window import NoteWindow

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("SPARSITY_GUI_SETTINGS", os.path.join(os.path.dirname(__file__), ".bench_gui.ini"))

# the items whose paint is timed, by the name printed
ITEM_PAINTS = {
    "axes": pg.AxisItem,
    "curves": pg.PlotCurveItem,
    "lines": pg.InfiniteLine,
    "transient band": pg.LinearRegionItem,
    "tracked weights": CurveBundle,
    "dots": Dots,
    "symbols": Symbols,
}


class PhaseClock:
    """CPU seconds of the GUI thread spent in wrapped callables, and their calls, by name."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, owner, attr: str, name: str) -> None:
        inner = getattr(owner, attr)
        spent, calls = self.spent, self.calls

        def timed(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            start = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.thread_time() - start

        setattr(owner, attr, timed)


def instrument_classes(clock: PhaseClock) -> None:
    """Before any window is built: Qt looks a Python override up once per item."""
    for name, cls in ITEM_PAINTS.items():
        clock.wrap(cls, "paint", f"paint: {name}")
    clock.wrap(ranges.ManagedRanges, "_manage_ranges", "update: ranges")
    clock.wrap(base.LivePanel, "_mark_changes", "update: change markers")


def instrument(clock: PhaseClock, win) -> None:
    for panel in win.panels:
        label = type(panel).__name__
        clock.wrap(panel, "draw", f"update: draw (setData), {label}")
        clock.wrap(panel.graphics, "paintEvent", f"paint: view, {label}")
    clock.wrap(win.note, "update_from", "slot: argument dock")
    clock.wrap(win, "_update_status", "slot: status bar")
    clock.wrap(win, "paint_panels", "slot: paint_panels, all")


def replay(app, win, snaps: list) -> float:
    """The frames painted one after the other as a new run; GUI CPU ms a frame."""
    win.run_id += 1
    frames = iter([dataclasses.replace(s, run_id=win.run_id) for s in snaps])
    win.runner.take_latest = lambda: next(frames, None)
    start = time.thread_time()
    for _ in snaps:
        win.paint_latest()
        app.sendPostedEvents()
        app.processEvents()
    return 1000 * (time.thread_time() - start) / len(snaps)


def view_paints(clock: PhaseClock) -> int:
    """The panels' views' paint events counted so far (load does not change them)."""
    return sum(n for k, n in clock.calls.items() if k.startswith("paint: view,"))


def time_axis_steps(app, win, steps: int) -> float:
    """GUI CPU ms of one step of the shared time axis (its top doubled and back), paused."""
    master = next(p for p in win.panels if p.time_plots).time_plots[0]
    lo, hi = master.vb.viewRange()[0]
    start = time.thread_time()
    for k in range(steps):
        master.vb.setXRange(lo, hi * (2.0 if k % 2 == 0 else 1.0), padding=0)
        app.sendPostedEvents()
        app.processEvents()
    return 1000 * (time.thread_time() - start) / steps


def print_phases(clock: PhaseClock, frames: int) -> None:
    spent = {k: 1000 * v / frames for k, v in clock.spent.items()}
    items = sum(v for k, v in spent.items() if k.removeprefix("paint: ") in ITEM_PAINTS)
    views = sum(v for k, v in spent.items() if k.startswith("paint: view,"))
    spent["paint: Qt's own (views less items)"] = views - items
    spent["paint: views, all"] = views
    for key in sorted(spent):
        print(f"  {key:<46} {spent[key]:6.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--pins", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    prepare_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    clock = PhaseClock()
    instrument_classes(clock)
    win = NoteWindow(SimParams(m=args.m, lam=1e-3), speed=None)
    win.show()
    win.paint_timer.stop()
    snaps = recorded_frames(win, args.seconds)
    win.set_playing(False)
    if args.pins:
        win.snapshot = dataclasses.replace(snaps[-1], run_id=win.run_id)
        for _ in range(args.pins):
            win.pin_control.pin()
    app.processEvents()
    instrument(clock, win)
    replay(app, win, snaps)  # warm-up, not counted
    clock.spent.clear()
    clock.calls.clear()
    totals = [replay(app, win, snaps) for _ in range(args.reps)]
    size = win.size()
    print(
        f"m = {args.m:,}, {args.pins} pins: {len(snaps)} frames of {args.seconds:g} s replayed "
        f"{args.reps} times ({snaps[-1].history.shape[0]} history rows at the end), window "
        f"{size.width()}x{size.height()}, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"  GUI CPU ms a frame, each replay: {' '.join(f'{t:.2f}' for t in totals)}")
    print_phases(clock, len(snaps) * args.reps)
    print(f"  the views' paint events a frame: {view_paints(clock) / (len(snaps) * args.reps):.2f}")
    before = view_paints(clock)
    step = time_axis_steps(app, win, args.steps)
    print(
        f"  one step of the shared time axis, paused: {step:.2f} ms GUI CPU (mean of {args.steps}), "
        f"{(view_paints(clock) - before) / args.steps:.1f} view paint events"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
