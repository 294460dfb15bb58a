"""The Threshold crossing panel of the real window marks every fall of a tracked weight
below θ: outside the note's regime (m = 10^4, λ = 10^-2) every tracked weight starts
below θ(0), rises above it and falls back, and a live change of λ moves θ past weights
again. The falls are found here, row by row, from the rows the panel drew."""

from __future__ import annotations

import numpy as np
from note_oracles import theta_falls
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.core.note.metrics import COL, COLUMNS
from sparsity_gui.core.note.params import SimParams

TIMEOUT = 60_000


def test_a_triangle_at_every_fall_below_theta_after_a_live_lam_change(qtbot, make_window):
    win = make_window(SimParams(m=10_000, lam=1e-2))
    threshold = next(p for p in win.panels if type(p).__name__ == "ThresholdPanel")
    threshold.count.setValue(16)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 10.0, timeout=TIMEOUT)
    edit = win.findChild(QtWidgets.QLineEdit, "field_lam")
    edit.setFocus()
    edit.selectAll()
    QTest.keyClicks(edit, "0.02")  # θ doubles: weights above it fall below
    QTest.keyClick(edit, QtCore.Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.snapshot.lam == 0.02 and win.snapshot.t > 40.0, timeout=TIMEOUT)
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.waitUntil(lambda: threshold.last is win.snapshot, timeout=TIMEOUT)
    snap = threshold.last
    h = snap.history
    t, theta = h[:, COL["t"]], h[:, COL["theta"]]
    want, from_below = [], 0
    for col in threshold.shown_tracked(snap):
        y = h[:, len(COLUMNS) + col]
        rows = theta_falls(y, theta)
        want += [(t[i], y[i]) for i in rows]
        from_below += bool(rows) and y[0] < theta[0]
    assert from_below >= 3, "the case: weights that start below θ(0) fall below it later"
    assert any(t0 > 10.0 for t0, _y in want)  # falls after the change of λ too
    x, y = threshold.below_marks.getData()
    got = sorted(zip(np.asarray(x, float).tolist(), np.asarray(y, float).tolist(), strict=True))
    assert got == sorted(want)
