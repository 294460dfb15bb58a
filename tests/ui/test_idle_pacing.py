"""An idle window (its run paused or finished) wakes 10 times a second, not 60, and a
command brings it back to 60 at once: both windows, driven with the real Space key."""

from __future__ import annotations

from PySide6 import QtCore
from PySide6.QtTest import QTest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.window import IDLE_PAINT_HZ, PAINT_HZ

TIMEOUT = 30_000
LIVE_MS, IDLE_MS = int(1000 / PAINT_HZ), int(1000 / IDLE_PAINT_HZ)


def _paces_with_the_run(qtbot, win) -> None:
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "running", timeout=TIMEOUT)
    assert win.paint_timer.interval() == LIVE_MS
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)  # pause
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.waitUntil(lambda: win.paint_timer.interval() == IDLE_MS, timeout=TIMEOUT)
    assert win.paint_timer.isActive()
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)  # play: at once, before any new snapshot
    assert win.paint_timer.interval() == LIVE_MS
    qtbot.waitUntil(lambda: win.snapshot.state == "running", timeout=TIMEOUT)


def test_the_note_window_paces_its_painting(qtbot, make_window):
    win = make_window(SimParams(m=2000, lam=1e-4), speed=1.0)
    _paces_with_the_run(qtbot, win)
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: win.paint_timer.interval() == IDLE_MS, timeout=TIMEOUT)
    QTest.keyClick(win, QtCore.Qt.Key.Key_R, QtCore.Qt.KeyboardModifier.ControlModifier)  # a new run
    assert win.paint_timer.interval() == LIVE_MS


def test_the_interference_window_paces_its_painting(qtbot, make_iwindow):
    win = make_iwindow(InterferenceParams(n=8, m=16, steps=10**7, lr=1e-3))
    _paces_with_the_run(qtbot, win)
    finished = make_iwindow(InterferenceParams(n=4, m=8, steps=50, lr=1e-3))
    qtbot.waitUntil(
        lambda: finished.snapshot is not None and finished.snapshot.state == "finished", timeout=TIMEOUT
    )
    qtbot.waitUntil(lambda: finished.paint_timer.interval() == IDLE_MS, timeout=TIMEOUT)
