"""What building a window costs: ModelWindows.open for each model (its panels, plots,
docks and tabs, shown, not yet running), CPU and wall seconds, beside the baseline built in
the same run: the same window with pyqtgraph's own view box, whose right-click menu is built
with every plot (plots/axes.PlotViewBox builds it at the first right click).

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_window_build.py [--repeat 5]

Builds alternate (baseline, ours) so that a load change on the machine falls on both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import pyqtgraph as pg
from PySide6 import QtWidgets

from sparsity_gui.plots import axes
from sparsity_gui.plots.qt_setup import prepare_qt

LAZY_VIEW = axes.PlotViewBox


def build_seconds(model: str, lazy: bool) -> tuple[float, float]:
    """CPU and wall seconds of opening one ``model`` window (shown, events handled), closed
    after."""
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.ui.windows import ModelWindows

    axes.PlotViewBox = LAZY_VIEW if lazy else pg.ViewBox
    app = QtWidgets.QApplication.instance()
    cpu, wall = time.process_time(), time.perf_counter()
    if model == "note":
        win = ModelWindows().open("note", SimParams(m=200, lam=1e-2), playing=False)
    else:
        win = ModelWindows().open("interference", playing=False)
    win.show()
    app.processEvents()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    win.close()
    win.deleteLater()
    app.processEvents()
    axes.PlotViewBox = LAZY_VIEW
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-window-")
    os.environ["SPARSITY_GUI_SETTINGS"] = os.path.join(folder, "settings.ini")
    os.environ["SPARSITY_GUI_CONFIG_DIR"] = os.path.join(folder, "config")
    _app = QtWidgets.QApplication([])
    prepare_qt()
    for model in ("note", "interference"):  # once each, untimed: imports, numba's cache
        build_seconds(model, lazy=True)
    load = os.getloadavg()[0]
    print(f"load average {load:.1f}, {os.cpu_count()} cores, {args.repeat} builds each (median)")
    baseline, ours = "menus built with the plots (baseline)", "menus at the first right click"
    print(f"{'window':<14}{baseline:>40}{ours:>34}")
    for model in ("note", "interference"):
        times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for _ in range(args.repeat):
            for lazy in (False, True):
                times[lazy].append(build_seconds(model, lazy))
        cells = []
        for lazy in (False, True):
            cpu = statistics.median(t[0] for t in times[lazy])
            wall = statistics.median(t[1] for t in times[lazy])
            cells.append(f"{cpu:.2f} s CPU, {wall:.2f} s wall")
        print(f"{model:<14}{cells[0]:>40}{cells[1]:>34}")


if __name__ == "__main__":
    main()
