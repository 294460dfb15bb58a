"""The instant of a live change of λ is in every file and frame, on both sides: the exported
time series, a reopened session's history (and the triangles the Threshold crossing panel
draws from it) and a movie frame's data hold the row just before the change and the row at
it. θ = λ/(1 − ‖W‖²) jumps there by λ_after/λ_before while ‖W‖² holds (the state is
continuous: checked here from the rows' own ‖W‖², not from the code's θ)."""

from __future__ import annotations

import numpy as np
from helpers import read_number_csv
from note_oracles import theta_falls
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.core.note.metrics import COL, COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.session import load_session
from sparsity_gui.figures.note.movie import note_frames

TIMEOUT = 60_000
LAM0, LAM1 = 1e-2, 3e-2


def _at_change(t: np.ndarray, t_change: float) -> np.ndarray:
    return np.flatnonzero(t == t_change)


def _check_rows(rows: np.ndarray, t_change: float) -> None:
    """Two rows at the change: λ before and after, the same ‖W‖², θ of each λ."""
    at = _at_change(rows[:, COL["t"]], t_change)
    assert at.size == 2 and at[1] == at[0] + 1, rows[:, COL["t"]]
    before, after = rows[at[0]], rows[at[1]]
    assert before[COL["lam"]] == LAM0 and after[COL["lam"]] == LAM1
    assert before[COL["norm2_sq"]] == after[COL["norm2_sq"]]
    s = 1.0 - before[COL["norm2_sq"]]
    np.testing.assert_allclose([before[COL["theta"]], after[COL["theta"]]], [LAM0 / s, LAM1 / s], rtol=1e-12)


def test_a_lam_change_is_sampled_on_both_sides_in_files_sessions_and_frames(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=2000, lam=LAM0, seed=3))
    threshold = next(p for p in win.panels if type(p).__name__ == "ThresholdPanel")
    threshold.count.setValue(16)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 5.0, timeout=TIMEOUT)
    edit = win.findChild(QtWidgets.QLineEdit, "field_lam")
    edit.setFocus()
    edit.selectAll()
    QTest.keyClicks(edit, str(LAM1))
    QTest.keyClick(edit, QtCore.Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.snapshot.lam == LAM1 and win.snapshot.t > 20.0, timeout=TIMEOUT)
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    (change,) = [c for c in win.runner.sim.changes if c.name == "lam"]
    t_change = change.t

    # the exported time series
    assert win.exports.export_data("timeseries", tmp_path / "ts.csv"), win.last_error
    header, values = read_number_csv(tmp_path / "ts.csv")
    assert header == list(COLUMNS)
    _check_rows(values, t_change)

    # the session, reopened: its history has both rows, and the triangles at the change
    session = tmp_path / "s.json"
    assert win.files.save_session(session), win.last_error
    assert win.files.open_session(session), win.last_error
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: threshold.last is win.snapshot, timeout=TIMEOUT)
    h = win.snapshot.history
    _check_rows(h, t_change)
    at = _at_change(h[:, COL["t"]], t_change)
    theta = h[:, COL["theta"]]
    falls_at_change = []
    for col in threshold.shown_tracked(win.snapshot):
        y = h[:, len(COLUMNS) + col]
        falls_at_change += [i for i in theta_falls(y, theta) if i == at[1]]
    assert falls_at_change, "the case: θ's jump sends tracked weights below it"
    x, _y = threshold.below_marks.getData()
    assert np.count_nonzero(np.asarray(x, float) == t_change) == len(falls_at_change)

    # a movie frame after the change draws from rows holding both sides of it
    script = load_session(session).script
    (frame,) = note_frames(script, "threshold_crossing", np.array([script.t]))
    t, frame_theta = np.asarray(frame.data["t"], float), np.asarray(frame.data["theta"], float)
    at = _at_change(t, t_change)
    assert at.size == 2
    np.testing.assert_allclose(frame_theta[at[1]] / frame_theta[at[0]], LAM1 / LAM0, rtol=1e-12)
