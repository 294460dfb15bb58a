"""How every Qt process of the project is set up before its QApplication exists: the app,
the benchmarks, the screenshots and the tests paint the same way. (Qt's messages are
`qtmessages`'s: the tests keep pytest-qt's handler.)"""

from __future__ import annotations

import os


def prepare_qt() -> None:
    """Qt's raster engine hands every fill of 96 or more scanlines (a tall axis, a plot's
    cached pixmap) to a thread pool and waits for it. On a 2-core machine whose worker
    thread runs the simulation, waking the pool cost more than the fills: a third of the
    GUI thread's time in a profile, and stalls of 200-300 ms (docs/benchmarks.md). Qt reads
    the switch once, at the first such fill, so this must run before anything paints. An
    environment that sets the variable already is left as it is."""
    import pyqtgraph as pg

    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")
    pg.setConfigOptions(background="w", foreground="k", antialias=False)
