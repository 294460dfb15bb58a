"""Weights and deaths as .npz from the window, as `run --format npz` writes them: Export data
takes a .npz name for either table (its dialog offers NumPy arrays, first when the run has more
weights than CSV suits), and Export all writes .npz above the CSV limit. The arrays hold the
same numbers, bit for bit, as the CSV export of the same run."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

import sparsity_gui.core.note.headless as headless
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import replay_script
from sparsity_gui.core.note.session import load_session

TIMEOUT = 30_000
M = 400
pytestmark = pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing the keyboard")


def _bits(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).view(np.uint64)


def _csv_columns(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [[r[j] for r in rows[1:]] for j in range(len(rows[0]))]


@pytest.fixture
def paused_window(qtbot, make_window):
    win = make_window(SimParams(m=M, lam=4e-2, seed=2), speed=50.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and 0 < win.snapshot.nonzero < M - 50, timeout=TIMEOUT)
    win.set_playing(False)
    # paused, or already finished at one weight left: either way the run stands still
    qtbot.waitUntil(lambda: win.snapshot.state in ("paused", "finished"), timeout=TIMEOUT)
    return win


def test_export_data_as_npz_holds_the_numbers_of_the_csv(paused_window, tmp_path):
    win = paused_window
    for kind, cols in (("weights", ("k", "w0", "w_final")), ("deaths", ("k", "u", "t_death"))):
        assert win.exports.export_data(kind, tmp_path / f"{kind}.csv"), win.last_error
        assert win.exports.export_data(kind, tmp_path / f"{kind}.npz"), win.last_error
        header, columns = _csv_columns(tmp_path / f"{kind}.csv")
        assert tuple(header) == cols
        with np.load(tmp_path / f"{kind}.npz") as z:
            assert sorted(z.files) == sorted(cols)
            assert z["k"].dtype == np.int64 and z["k"].tolist() == [int(x) for x in columns[0]]
            for j, name in enumerate(cols[1:], start=1):
                assert z[name].dtype == np.float64
                assert np.array_equal(_bits(z[name]), _bits([float(x) for x in columns[j]])), name
    with np.load(tmp_path / "weights.npz") as z:
        assert np.count_nonzero(z["w_final"]) == win.snapshot.nonzero
    with np.load(tmp_path / "deaths.npz") as z:
        assert z["k"].size == M - win.snapshot.nonzero and np.all(np.diff(z["t_death"]) >= 0)
    # a table only written as CSV refuses an .npz name, and the run stays as it was
    before = (win.snapshot.run_id, win.snapshot.state, win.snapshot.t)
    assert not win.exports.export_data("timeseries", tmp_path / "ts.npz")
    assert win.last_error == "timeseries.csv is written as CSV only, not .npz"
    assert not (tmp_path / "ts.npz").exists()
    assert (win.snapshot.run_id, win.snapshot.state, win.snapshot.t) == before


def test_above_the_csv_limit_export_all_and_the_dialog_take_npz(qtbot, paused_window, tmp_path, monkeypatch):
    """The limit lowered below this run's m (10^6 by default: a real run that large makes the
    export slow, and the code path is the same). Export all writes .npz; the real save
    dialog, driven by key events, proposes weights.npz under the NumPy filter, and the name
    typed is written as .npz."""
    win = paused_window
    monkeypatch.setattr(headless, "CSV_MAX_WEIGHTS", M - 1)
    out = tmp_path / "all"
    assert win.exports.export_all(out, formats="png"), win.last_error  # (the data are the point)
    names = {p.name for p in out.iterdir()}
    assert {"weights.npz", "deaths.npz", "timeseries.csv", "session.json"} <= names
    assert not names & {"weights.csv", "deaths.csv"}
    run = replay_script(load_session(out / "session.json").script)  # the core's own replay
    with np.load(out / "weights.npz") as z:
        assert np.array_equal(_bits(z["w0"]), _bits(run.sim.init.w0))
        assert np.array_equal(_bits(z["w_final"]), _bits(run.sim.solver.weights()))
    with np.load(out / "deaths.npz") as z:
        dead = np.flatnonzero(np.isfinite(run.sim.solver.death_times()))
        assert sorted(z["k"].tolist()) == dead.tolist()
        assert np.array_equal(_bits(z["u"]), _bits(np.abs(run.sim.init.w0)[z["k"]]))

    seen: dict = {}
    typed = {"name": "w.npz"}

    def drive() -> None:
        dialog = QtWidgets.QApplication.activeModalWidget()
        if not isinstance(dialog, QtWidgets.QFileDialog):
            QtCore.QTimer.singleShot(50, drive)
            return
        seen["filter"] = dialog.selectedNameFilter()
        line = dialog.findChild(QtWidgets.QLineEdit, "fileNameEdit")
        seen["name"] = line.text()
        dialog.setDirectory(str(tmp_path))
        line.setFocus()
        line.selectAll()
        qtbot.keyClicks(line, typed["name"])
        qtbot.keyClick(line, QtCore.Qt.Key.Key_Return)

    QtCore.QTimer.singleShot(0, drive)
    win.exports.export_data_dialog("weights")
    assert seen == {"filter": "NumPy arrays (*.npz)", "name": "weights.npz"}
    qtbot.waitUntil(lambda: win.exports.job is None, timeout=60_000)  # written beside the GUI
    with np.load(tmp_path / "w.npz") as z:
        assert z["w0"].size == M
    # a bare name typed under the NumPy filter is written as arrays, with their extension
    typed["name"] = "bare"
    QtCore.QTimer.singleShot(0, drive)
    win.exports.export_data_dialog("deaths")
    qtbot.waitUntil(lambda: win.exports.job is None, timeout=60_000)
    with np.load(tmp_path / "bare.npz") as z:
        assert sorted(z.files) == ["k", "t_death", "u"]
    assert not (tmp_path / "bare").exists()
