"""The guide's screenshots of pinned runs and of the phase plane, made by driving the
note's window as a user would (`make screenshot-pins`, under xvfb-run):

    python docs/screenshots.py pinned resources/screenshots/pinned.png
    python docs/screenshots.py phase-plane resources/screenshots/phase-plane.png

pinned: runs with λ = 1e-3 and 2e-3 (m = 10^4) to t = 400, each pinned, then λ = 4e-3
live. phase-plane: λ = 1e-3 to t = 250, then λ = 3e-3 live to t = 500: the path leaves the
old balance curve and settles onto the new one. Each run goes until its t_end, so the
picture does not depend on the machine's speed.
"""

from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("pinned", "phase-plane"))
    parser.add_argument("out")
    parser.add_argument("--size", default="1600x1000", help="window size, WxH (default 1600x1000)")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))

    from PySide6 import QtWidgets

    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.plots import qtmessages
    from sparsity_gui.plots.qt_setup import prepare_qt

    qtmessages.install()
    prepare_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    from sparsity_gui.ui.windows import ModelWindows

    def wait(cond, seconds: float = 300.0) -> None:
        end = time.monotonic() + seconds
        while not cond():
            if time.monotonic() > end:
                raise SystemExit(f"error: timed out making {args.out}")
            app.processEvents()
            time.sleep(0.01)

    def run_to_end(win) -> None:
        wait(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id)
        wait(lambda: win.snapshot.run_id == win.run_id and win.snapshot.state == "finished")

    def settle(win) -> None:
        for _ in range(40):  # a few frames: ranges and legends laid out
            app.processEvents()
            time.sleep(0.02)

    if args.kind == "pinned":
        params = SimParams(m=10_000, lam=1e-3, t_end=400.0)
        win = ModelWindows().open("note", params, speed=400.0)
        win.resize(width, height)
        run_to_end(win)
        win.pin_control.pin()
        for lam in (2e-3, 4e-3):
            win.on_params_changed({"lam": lam})
            win.restart()
            run_to_end(win)
            if lam < 4e-3:
                win.pin_control.pin()
    else:
        params = SimParams(m=10_000, lam=1e-3, t_end=250.0)
        win = ModelWindows().open("note", params, speed=250.0)
        win.resize(width, height)
        win.panel_tabs.setCurrentIndex(1)
        run_to_end(win)
        # the finished run goes on to a later t_end under the new λ: the change is at t = 250
        # (t_end first: the runner resumes a finished run on a change after it)
        win.on_params_changed({"t_end": 500.0})
        wait(lambda: win.snapshot.params.t_end == 500.0)
        win.on_params_changed({"lam": 3e-3})
        win.controls.show_params(win.params)  # as if typed into the fields
        wait(lambda: win.snapshot.t > 250.0)
        run_to_end(win)
    settle(win)
    win.grab().save(args.out, "PNG")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
