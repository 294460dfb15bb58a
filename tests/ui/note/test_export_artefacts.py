"""Export artefacts of the note window, with real windows, real runs and real files:
legends clear of the data in the live window at 1600 x 1000 and 1366 x 768; θ (which jumps
with λ) is not joined across a λ change, and the exported tracked curves are tracked.csv's
columns; tracked.csv holds the panel's tracked weights only; the rank axis has
whole-number ticks; θ lies in the sorted panel's y range at t = 0."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import read_number_csv
from legend_checks import check_legends_clear_of_data
from PySide6 import QtWidgets

from sparsity_gui.core.note.metrics import COL, COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.runner import snapshot_of
from sparsity_gui.core.note.sampled import replay_script
from sparsity_gui.core.note.session import load_session
from sparsity_gui.core.note.simulation import Simulation
from sparsity_gui.figures.note.figures import note_figure, panel_data, run_snapshot
from sparsity_gui.plots.qt_setup import prepare_qt

TIMEOUT = 20_000


def run_with_a_lam_change(qtbot, win, before=1.5, after=3.0):
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > before, timeout=TIMEOUT)
    win.on_params_changed({"lam": 2 * win.params.lam})
    qtbot.waitUntil(lambda: win.snapshot.params == win.params and win.snapshot.t > after, timeout=TIMEOUT)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(50)


@pytest.mark.parametrize("size", [(1600, 1000), (1366, 768)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_live_legends_do_not_cover_data(qtbot, make_window, size):
    win = make_window(SimParams(m=300, lam=1e-2, seed=2), speed=20.0)
    win.resize(*size)
    run_with_a_lam_change(qtbot, win)
    for panel in win.panels:
        panel.update_from(win.snapshot)
    checked = sum(check_legends_clear_of_data(panel) for panel in win.panels)
    assert checked == 7  # seven panels with legends (a stacked pair shares one, under both)


def test_theta_is_broken_at_a_lam_change_and_tracked_curves_are_the_csv(qtbot, make_window, tmp_path):
    """θ = λ/(1-‖W‖²) jumps when λ is changed: a segment joining the samples on either
    side draws a spike that is in no data file. The exported figure's θ has a gap there,
    and its tracked curves are tracked.csv's columns, value for value."""
    win = make_window(SimParams(m=300, lam=1e-2, seed=4), speed=20.0)
    run_with_a_lam_change(qtbot, win)
    # what Export all draws its figures from: the session's replay, and tracked.csv
    assert win.files.save_session(tmp_path / "session.json"), win.last_error
    assert win.exports.export_data("tracked", tmp_path / "tracked.csv"), win.last_error
    run = replay_script(load_session(tmp_path / "session.json").script)
    header, tracked = read_number_csv(tmp_path / "tracked.csv")
    lam = run.rows[:, COL["lam"]]
    cut = int(np.flatnonzero(lam[1:] != lam[:-1])[0]) + 1  # the first row after the change
    data = panel_data(run_snapshot(run), win.exports.views())
    fig = note_figure("threshold_crossing", data)
    top = fig.axes[0]
    theta = top.get_lines()[0]
    x, y = theta.get_xdata(), theta.get_ydata()
    t = run.rows[:, COL["t"]]
    gaps = np.flatnonzero(~np.isfinite(y))
    assert len(gaps) == 1 and x[gaps[0] - 1] == t[cut - 1] and x[gaps[0] + 1] == t[cut]
    np.testing.assert_array_equal(np.delete(y, gaps), run.rows[:, COL["theta"]])
    # the tracked curves drawn are tracked.csv's columns (which have no jump)
    shown = data["threshold_crossing"]["tracked"]
    assert len(header) == 1 + len(shown) == 1 + win.panels[1].count.value()
    curves = top.get_lines()[1 : 1 + len(shown)]
    for curve, column in zip(curves, tracked[:, 1:].T, strict=True):
        np.testing.assert_array_equal(curve.get_xdata(), tracked[:, 0])
        np.testing.assert_array_equal(curve.get_ydata(), column)
    steps = np.abs(np.diff(tracked[:, 1:], axis=0))
    assert steps[cut - 1].max() <= 2 * np.median(steps.max(axis=1)) + 1e-12, "no jump at the change"
    # the balance panel's regularization push and ratio jump with λ too: broken there
    balance = win.panels[2]
    for curve in (balance.reg, balance.ratio):
        _, cy = curve.getData()
        assert np.count_nonzero(~np.isfinite(cy)) == 1


def test_tracked_csv_holds_the_panels_tracked_weights(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=500, lam=1e-2, seed=6), speed=20.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 2, timeout=TIMEOUT)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    panel = win.panels[1]
    for count in (8, 3):
        panel.count.setValue(count)
        path = tmp_path / f"tracked{count}.csv"
        assert win.exports.export_data("tracked", path), win.last_error
        header, table = read_number_csv(path)
        recorded = len(win.snapshot.tracked_ranks)
        assert recorded > count and len(header) == 1 + count
        # the columns: the weights the panel draws, by input index, with the replayed values
        run = replay_script(win.current_script()[0])
        shown = panel.shown_tracked(win.snapshot)
        assert len(shown) == count and shown[0] == 0 and shown[-1] == recorded - 1
        sim = run.sim
        assert header[1:] == [f"w{int(k)}" for k in sim.init.order[sim.tracked[shown]]]
        np.testing.assert_array_equal(table[:, 1:], run.rows[:, len(COLUMNS) + shown])
        # and the panel draws the same weights: the columns' initial values are its curves' first values
        first = [panel.tracked.getData(k)[1][0] for k in range(count)]
        np.testing.assert_allclose(first, table[0, 1:], rtol=1e-12)


def _script(params, t):
    from sparsity_gui.core.note.changes import RunScript

    return RunScript(params, Simulation(params, None).init.w0, (), t=t, samples=101)


def tick_values(plot, name="bottom"):
    axis = plot.getAxis(name)
    lo, hi = axis.range
    return [v for _spacing, vals in axis.tickValues(lo, hi, 400) for v in vals if lo <= v <= hi]


def test_rank_axis_has_whole_number_ticks_and_theta_is_in_range_at_t0(qtbot):

    from sparsity_gui.plots.note import SortedWeightsPanel

    prepare_qt()
    # W(0) near the unit sphere: θ = λ/(1-‖W‖²) lies far above every weight at t = 0
    params = SimParams(m=200, lam=0.05, sigma=0.95, seed=3)
    sim = Simulation(params, None)
    snap = snapshot_of(sim, params, run_id=1, seq=1, state="paused")
    assert math.isfinite(snap.theta) and snap.theta > 2 * snap.sorted_abs.max()
    panel = SortedWeightsPanel()
    qtbot.addWidget(panel)
    panel.resize(520, 430)
    panel.show()
    panel.update_from(snap)
    QtWidgets.QApplication.processEvents()
    lo, hi = panel.plot.vb.viewRange()[1]
    assert lo < snap.theta < hi and lo < 1.0 / snap.norm1 < hi
    assert lo < snap.sorted_abs.max()
    # one weight left (a run to its end): a rank axis around 1 ticks at 1 only
    run = replay_script(_script(SimParams(m=300, lam=2e-2, seed=1), t=400.0))
    end = run_snapshot(run)
    assert end.nonzero == 1
    for log_rank in (False, True):
        panel.log_x.setChecked(log_rank)
        panel.update_from(end)
        QtWidgets.QApplication.processEvents()
        ticks = tick_values(panel.plot)
        ranks = [10**v if log_rank else v for v in ticks]
        assert ranks and all(abs(r - round(r)) < 1e-9 for r in ranks), ranks
    # many weights: whole numbers too, on linear and log axes
    panel.update_from(snap)
    for log_rank in (False, True):
        panel.log_x.setChecked(log_rank)
        QtWidgets.QApplication.processEvents()
        ranks = [10**v if log_rank else v for v in tick_values(panel.plot)]
        assert len(ranks) >= 2 and all(abs(r - round(r)) < 1e-6 * max(1, r) for r in ranks), ranks
