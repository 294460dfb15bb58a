"""prepare_qt: every Qt process of the project paints without Qt's fill thread pool."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHILD = (
    "import os; from sparsity_gui.plots.qt_setup import prepare_qt; prepare_qt(); "
    "import pyqtgraph as pg; "
    "print(os.environ.get('QT_NO_GUI_THREADPOOL')); print(pg.getConfigOption('antialias'))"
)


@pytest.mark.parametrize(
    "preset, expected",
    [(None, "1"), ("yes", "yes")],
    ids=["turned-off-before-the-app-exists", "an-environment-that-sets-it-keeps-its-value"],
)
def test_prepare_qt_turns_off_the_fill_thread_pool(preset, expected):
    env = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"}
    if preset is not None:
        env["QT_NO_GUI_THREADPOOL"] = preset
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == [expected, "False"]
