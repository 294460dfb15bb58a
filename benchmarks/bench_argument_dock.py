"""The argument dock's cost a frame in the note's live window: the snapshots of a real run
recorded (as ``bench_gui.py --replay``), then fed to the dock as the window does while
playing (an update every 15th frame, 4 Hz at 60 fps; ``continue_update`` on the others),
each frame followed by the events that repaint it. Printed: GUI-thread CPU ms of the
median update frame, the worst frame (a shape change sets the whole document) and the
mean over all frames, for the paragraphs spread over frames (``spread``) and all laid out
in the update's frame (``at once``), alternated in one process so that load hits both.

    .venv/bin/python benchmarks/bench_argument_dock.py [--m 1000] [--seconds 6] [--reps 3]

Unset QT_QPA_PLATFORM gives bench_gui.py's 1600x1000 offscreen screen (a wider dock);
``offscreen`` gives Qt's 800x600 one. Run on an older checkout (no ``spread``) it measures
that checkout's update, as "at once".
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time

from bench_gui import recorded_frames  # noqa: E402  # benchmarks/ is on sys.path (the script's folder)
from PySide6 import QtWidgets

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.plots.qt_setup import prepare_qt
from sparsity_gui.ui.note.window import NoteWindow


def replay(app, note, snaps, spread: bool) -> tuple[float, float, float, int]:
    """(median update frame, worst frame, mean frame) in GUI-thread CPU ms, and the updates
    that set the whole document (a change of its shape)."""
    note.update_from(snaps[0])
    app.processEvents()
    renders = note.full_renders
    costs = []
    for k, snap in enumerate(snaps[1:], 1):
        start = time.thread_time()
        if k % 15 == 0:
            if spread:
                note.update_from(snap, spread=True)
            else:
                note.update_from(snap)
        elif spread:
            note.continue_update()
        app.sendPostedEvents()
        app.processEvents()  # the dock's repaint
        costs.append(1000 * (time.thread_time() - start))
    updates = sorted(c for k, c in enumerate(costs, 1) if k % 15 == 0)
    return updates[len(updates) // 2], max(costs), sum(costs) / len(costs), note.full_renders - renders


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    prepare_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    win = NoteWindow(SimParams(m=args.m, lam=1e-3), speed=None)
    win.show()
    win.paint_timer.stop()
    snaps = recorded_frames(win, args.seconds)
    win.set_playing(False)
    app.processEvents()
    note = win.note
    ways = [False, True] if "spread" in inspect.signature(note.update_from).parameters else [False]
    print(
        f"m = {args.m:,}: {len(snaps)} frames, dock {note.width()}x{note.height()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    for _ in range(args.reps):
        for spread in ways:
            update, worst, mean, renders = replay(app, note, snaps, spread)
            print(
                f"  {'spread ' if spread else 'at once'}: update frame {update:5.2f} ms (median), "
                f"worst frame {worst:5.2f} ms, mean {mean:4.2f} ms a frame, {renders} of "
                f"{(len(snaps) - 1) // 15} updates set the whole document"
            )
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
