"""What a user sees in the note's live window, measured on the real window with real key
and mouse events: data areas that keep most of each panel at 1366x768, legend entries
that do not overlap and whose samples are drawn in their curves' pens (pinned runs too),
status fields after a reset, the Norm balance ranges after the transient, and the Help
viewer's and shortcut list's keys."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import axis_draw_specs
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.core.note.metrics import COL
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.window import DECORATION, fitted_size

TIMEOUT = 20_000
LAPTOP = QtCore.QRect(0, 0, 1366, 768)


def panel(win, name):
    return next(p for p in win.panels if type(p).__name__ == name)


def running_past(qtbot, win, t):
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.snapshot.t > t,
        timeout=TIMEOUT,
    )


def paused(qtbot, win):
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)  # the user's pause
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(80)
    QtWidgets.QApplication.processEvents()
    return win.snapshot


def on_laptop(win):
    """The window at the size it takes on a 1366x768 screen."""
    size = fitted_size(LAPTOP, DECORATION)
    win.resize(size)
    QtWidgets.QApplication.processEvents()
    assert win.size() == size
    return size


@pytest.mark.parametrize("m", [300, 100_000])
def test_each_panel_keeps_60_percent_of_its_height_for_data_at_1366x768(qtbot, make_window, m):
    win = make_window(SimParams(m=m, lam=1e-3))
    on_laptop(win)
    running_past(qtbot, win, 3.0)
    paused(qtbot, win)
    shown = [p for p in win.panels if p.isVisible()]
    assert len(shown) == 6
    for p in shown:
        height = p.graphics.height()
        data = sum(plot.vb.sceneBoundingRect().height() for plot in p.plots)
        assert data >= 0.6 * height, f"{type(p).__name__}: {data:.0f} of {height} px for data"
        # and no legend entry's text over another's, or over the data
        for plot in p.plots:
            legend = plot.legend
            if legend is None:
                continue
            area = plot.vb.sceneBoundingRect()
            boxes = [label.sceneBoundingRect() for _s, label in legend.items]
            boxes += [sample.sceneBoundingRect() for sample, _l in legend.items]
            for i, a in enumerate(boxes):
                assert not a.intersects(area), f"{type(p).__name__}: legend over the data"
                for b in boxes[i + 1 :]:
                    assert not a.intersects(b), f"{type(p).__name__}: legend entries overlap"
            view = QtCore.QRectF(p.graphics.viewport().rect())
            assert view.contains(legend.sceneBoundingRect()), f"{type(p).__name__}: legend cut off"


def legend_lines(legend) -> int:
    """How many lines of text the legend row holds (the tallest entry of each row)."""
    line = QtGui.QFontMetricsF(legend.items[0][1].item.font()).lineSpacing()
    rows = {}
    for _sample, label in legend.items:
        box = label.item.sceneBoundingRect()
        top = round(label.sceneBoundingRect().top())
        rows[top] = max(rows.get(top, 0), round(box.height() / line))
    return sum(rows.values())


@pytest.mark.parametrize("show_w", [False, True])
def test_the_l1_law_legend_keeps_60_percent_for_data_in_every_state_at_1366x768(qtbot, make_window, show_w):
    """Whatever the fit says (both constants and the deviation; a negative c; outside the
    note's regime; both; no c), the law's legend entry takes at most two lines at 1366x768
    and the L1 panel keeps 60 % of its height for data; the whole story is its tooltip.
    (A third line, on a paused run whose early fit had c < 0, had left 50 %.)"""
    import dataclasses

    from sparsity_gui.core.note.metrics import NO_C_DIVERGED, DecayFit

    win = make_window(SimParams(m=300, lam=1e-3))
    on_laptop(win)
    running_past(qtbot, win, 1.0)
    snap = paused(qtbot, win)
    decay = panel(win, "DecayPanel")
    if show_w:
        QTest.mouseClick(decay.show_w, QtCore.Qt.MouseButton.LeftButton)
    inside = dict(snap.regime)
    outside = dict(snap.regime, balance_possible=False, lam_l1_w0=0.7231)
    # the widest numbers each form prints: three decimals with a sign, a four-digit deviation
    regime_fails = "outside the note's regime"
    states = {
        "fits": (DecayFit(c=0.868, c_bulk=0.871, max_rel_dev=12.345), inside, "bulk c"),
        "negative": (DecayFit(c=-0.012, c_bulk=-0.013, max_rel_dev=12.345), inside, "w fell"),
        "negative bulk": (DecayFit(c=0.012, c_bulk=-0.013, max_rel_dev=12.345), inside, "w fell"),
        "outside": (DecayFit(c=0.503, c_bulk=0.507, max_rel_dev=12.345), outside, regime_fails),
        "both": (DecayFit(c=-0.012, c_bulk=-0.013, max_rel_dev=12.345), outside, regime_fails),
        "diverged": (DecayFit(flags=(NO_C_DIVERGED,)), inside, "diverged"),
    }
    legend = decay.plot.legend
    for name, (fit, regime, says) in states.items():
        decay.update_from(dataclasses.replace(snap, fit=fit, regime=regime, seq=snap.seq + 1))
        QtWidgets.QApplication.processEvents()
        label = legend.getLabel(decay.law)
        assert says in label.text, name
        if name in ("outside", "both"):
            assert "λ‖W(0)‖₁ = 0.723 &gt; 1/4" in label.toolTip(), name
        assert legend_lines(legend) <= 2, f"{name}: {label.text!r} takes {legend_lines(legend)} lines"
        data = decay.plot.vb.sceneBoundingRect().height()
        assert data >= 0.6 * decay.graphics.height(), f"{name}: {data:.0f} of {decay.graphics.height()} px"


def pen_key(pen: QtGui.QPen) -> tuple:
    return (pen.color().rgba(), tuple(pen.dashPattern()), pen.style())


def test_legend_samples_are_drawn_in_their_curves_pens_pins_too(qtbot, make_window):
    win = make_window(SimParams(m=200, lam=1e-2))
    running_past(qtbot, win, 3.0)
    paused(qtbot, win)
    # the live curves: each legend sample's pen is its curve's pen
    for p in win.panels:
        for plot in p.plots:
            if plot.legend is None:
                continue
            for sample, label in plot.legend.items:
                item = sample.item
                if isinstance(item, pg_data_item()) and item in plot.listDataItems():
                    assert pen_key(item.opts["pen"]) == pen_key(sample.item.opts["pen"]), label.text
    # two pinned runs (Ctrl+P twice, a reset between), then the live run restarted
    QTest.keySequence(win, QtGui.QKeySequence("Ctrl+P"))
    QTest.keySequence(win, QtGui.QKeySequence("Ctrl+R"))
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)  # the reset kept it paused: play
    running_past(qtbot, win, 1.0)
    paused(qtbot, win)
    QTest.keySequence(win, QtGui.QKeySequence("Ctrl+P"))
    qtbot.waitUntil(lambda: len(win.pin_control.board) == 2, timeout=TIMEOUT)
    checked = 0
    for p in win.panels:
        items = p.pinned_items
        if not items:
            continue
        layer = p._pin_layer
        for number, pinned in items.items():
            sample = layer.samples[number]
            # one line per pinned curve, each in that curve's pen, whichever sub-plot it is on
            assert sorted(map(pen_key, sample.pens)) == sorted(pen_key(i.opts["pen"]) for i in pinned)
            checked += 1
    assert checked >= 2 * 5
    threshold = panel(win, "ThresholdPanel")
    m_curves = [items[1] for items in threshold.pinned_items.values()]
    assert all(c in threshold.nonzero_plot.listDataItems() for c in m_curves)  # the m' sub-plot's


def pg_data_item():
    import pyqtgraph as pg

    return pg.PlotDataItem


STEPS = re.compile(r"^(—|[\d,]+) steps/s$")


def test_status_bar_after_a_reset_shows_the_new_run_only(qtbot, note_window):
    win = note_window(SimParams(m=2000, lam=1e-2))
    running_past(qtbot, win, 2.0)
    paused(qtbot, win)
    labels = win.status_labels
    old_t = labels["t"].text()
    lefts = {k: lab.mapTo(win, QtCore.QPoint(0, 0)).x() for k, lab in labels.items()}
    seen_first = []

    def first_frame_of_the_new_run():
        snap = win.snapshot
        if snap is not None and snap.run_id == win.run_id and not seen_first:
            seen_first.append({k: lab.text() for k, lab in labels.items()} | {"_t": snap.t})
        return bool(seen_first)

    QTest.keySequence(win, QtGui.QKeySequence("Ctrl+R"))
    # until the new run's first frame: no number of the old run beside "preparing"
    assert win.snapshot.run_id != win.run_id  # no frame of the new run painted yet
    assert labels["state"].text() == "preparing"
    assert labels["t"].text() == "t = —" and labels["nonzero"].text() == "m' = —"
    assert labels["t"].text() != old_t
    qtbot.waitUntil(first_frame_of_the_new_run, timeout=TIMEOUT)
    first = seen_first[0]
    assert STEPS.match(first["sps"]), first["sps"]  # never a negative rate
    assert first["t"] == f"t = {first['_t']:.6g}"
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    running_past(qtbot, win, 1.0)
    # the fields did not move sideways as their numbers changed
    after = {k: lab.mapTo(win, QtCore.QPoint(0, 0)).x() for k, lab in labels.items()}
    assert after == lefts


def test_norm_balance_ranges_show_the_balance_after_the_transient(qtbot, note_window):
    win = note_window(SimParams(m=2000, lam=1e-3))
    running_past(qtbot, win, 6.0)
    snap = paused(qtbot, win)
    balance = panel(win, "BalancePanel")
    h = snap.history
    t = h[:, COL["t"]]
    ratio = h[:, COL["feature_push"]] / h[:, COL["reg_push"]]
    after = t >= 1.0
    lo, hi = balance.ratio_plot.vb.viewRange()[1]
    # the view holds the ratio after t = 1, and not much more
    assert lo <= ratio[after].min() and hi >= ratio[after].max()
    span = ratio[after].max() - ratio[after].min()
    assert hi - lo <= 1.5 * span
    assert np.nanmax(ratio) > hi  # the t ≈ 0 spike, which set the range before, is left out
    # the transient is marked: a band over 0 <= t < 1 on both plots, labelled on the upper
    import pyqtgraph as pg

    for plot in (balance.plot, balance.ratio_plot):
        bands = [i for i in plot.vb.allChildren() if isinstance(i, pg.LinearRegionItem)]
        assert [tuple(b.getRegion()) for b in bands] == [(0.0, 1.0)]
    texts = [i.label.toPlainText() for i in balance.plot.items if isinstance(i, pg.InfiniteLine) and i.label]
    assert "◂ transient, t < 1" in texts


@pytest.mark.qt_log_ignore("does not support raise")  # (the offscreen platform)
def test_help_viewer_closes_on_ctrl_w_and_on_escape(qtbot, make_window):
    win = make_window(SimParams(m=200, lam=1e-2), playing=False)
    for keys in ("Ctrl+W", "Esc"):
        viewer = win.show_doc("README.md")
        if viewer is None:
            pytest.skip("this copy has no docs")
        qtbot.waitExposed(viewer)
        viewer.activateWindow()
        qtbot.waitUntil(viewer.isActiveWindow, timeout=TIMEOUT)
        QTest.keySequence(viewer, QtGui.QKeySequence(keys))
        qtbot.waitUntil(lambda v=viewer: not v.isVisible(), timeout=TIMEOUT)


def test_shortcuts_list_space_as_play_pause_in_either_state(qtbot, note_window):
    win = note_window(SimParams(m=200, lam=1e-2), playing=False)
    for _ in range(2):  # paused (the action reads Play), then running (it reads Pause)
        text = win.show_shortcuts().text()
        win.shortcuts_box.close()
        assert "<b>Space</b></td><td>Play / pause</td>" in text
        QTest.keyClick(win, QtCore.Qt.Key.Key_Space)


def test_a_lam_change_then_an_immediate_pause_reaches_every_panel(qtbot, note_window):
    """λ typed and Enter pressed, then Space at once: the last frame's θ curve ends at
    the paused instant, at the θ the status bar shows (it ended before the change)."""
    win = note_window(SimParams(m=2000, lam=1e-2))
    running_past(qtbot, win, 2.0)
    edit = win.findChild(QtWidgets.QLineEdit, "field_lam")
    edit.setFocus()
    edit.selectAll()
    QTest.keyClicks(edit, "0.02")
    QTest.keyClick(edit, QtCore.Qt.Key.Key_Return)
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused" and win.snapshot.lam == 0.02, timeout=TIMEOUT)
    qtbot.wait(80)
    snap = win.snapshot
    x, y = panel(win, "ThresholdPanel").theta_curve.getData()
    x, y = x[np.isfinite(y)], y[np.isfinite(y)]
    assert x[-1] == pytest.approx(snap.t, rel=1e-12)
    assert win.status_labels["theta"].text() == f"θ = {y[-1]:.4g}"
    # the new θ, λ/(1 - ‖W‖²) with the new λ, computed here from the paused state
    assert y[-1] == pytest.approx(0.02 / (1.0 - snap.norm2_sq), rel=1e-9)


def test_the_tensor_picker_preselects_the_weight_matrix_and_says_why(qtbot, note_window, tmp_path):
    """A checkpoint whose first tensor by name is a 300×4 decoder: the picker opens on the
    encoder's weight matrix (its name, a matrix), and says why."""
    from safetensors.numpy import save_file

    from sparsity_gui.ui.weights_dialog import ArrayChoiceDialog

    rng = np.random.default_rng(3)
    path = tmp_path / "model.safetensors"
    save_file(
        {
            "a_decoder": rng.standard_normal((300, 4)).astype(np.float32),
            "encoder.bias": np.zeros(4, np.float32),
            "encoder.weight": (rng.standard_normal((4, 300)) / 20).astype(np.float32),
            "ln.scale": np.ones(300, np.float32),
        },
        str(path),
    )
    win = note_window(SimParams(m=200, lam=1e-2), playing=False)
    seen = {}

    def poke():
        dialog = QtWidgets.QApplication.activeModalWidget()
        if not isinstance(dialog, ArrayChoiceDialog):
            QtCore.QTimer.singleShot(20, poke)
            return
        seen["name"] = dialog.current_info().name
        seen["reason"] = dialog.findChild(QtWidgets.QLabel, "preselected_reason").text()
        dialog.reject()

    QtCore.QTimer.singleShot(0, poke)
    win.files.load_w0(str(path))
    assert seen["name"] == "encoder.weight"
    assert seen["reason"].startswith("Preselected encoder.weight (4 × 300)")
    assert "name says weights" in seen["reason"] and "matrix" in seen["reason"]


def answer_file_dialog(opened: list, path=None) -> None:
    """Answer the file dialog about to open: note the folder it opened in, then choose
    ``path`` (or cancel)."""

    def answer():
        dialog = QtWidgets.QApplication.activeModalWidget()
        if not isinstance(dialog, QtWidgets.QFileDialog):
            QtCore.QTimer.singleShot(20, answer)
            return
        opened.append(dialog.directory().absolutePath())
        if path is None:
            dialog.reject()
            return
        dialog.selectFile(str(path))
        dialog.accept()

    QtCore.QTimer.singleShot(0, answer)


def test_file_dialogs_open_in_the_last_folder_used(qtbot, make_window, tmp_path):
    """Load W(0) from a file in one folder: the next Load W(0) and Export figure dialogs
    open there, not in the process's working folder."""
    folder = tmp_path / "weights here"
    folder.mkdir()
    w0 = folder / "w0.npy"
    np.save(w0, np.linspace(0.05, 0.3, 200))
    win = make_window(SimParams(m=200, lam=1e-2), playing=False)
    opened = []
    answer_file_dialog(opened, w0)
    win.open_w0_dialog()
    qtbot.waitUntil(lambda: win.w0_source.kind == "file", timeout=TIMEOUT)
    answer_file_dialog(opened)
    win.open_w0_dialog()
    answer_file_dialog(opened)
    win.exports.export_figure_dialog(0)
    assert opened[1:] == [str(folder), str(folder)]


def left_axis_labels(axis) -> list[tuple[str, QtCore.QRectF]]:
    """The tick labels a left axis draws now (pyqtgraph's draw specs) and their boxes."""
    _line, _ticks, texts = axis_draw_specs(axis)
    return [(text, rect) for rect, _flags, text in texts]


def test_the_m_prime_axis_from_7_to_1000_has_three_labels_apart_at_1366x768(qtbot, make_window):
    win = make_window(SimParams(m=1000, lam=1e-2), speed=100.0)
    on_laptop(win)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.nonzero <= 8, timeout=60_000)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state in ("paused", "finished"), timeout=TIMEOUT)
    qtbot.wait(80)
    snap = win.snapshot
    assert snap.nonzero <= 8 and snap.history[0, COL["nonzero"]] == 1000
    threshold = panel(win, "ThresholdPanel")
    QtWidgets.QApplication.processEvents()
    axis = threshold.nonzero_plot.getAxis("left")
    labels = left_axis_labels(axis)
    assert len(labels) >= 3, [t for t, _r in labels]
    boxes = sorted((r for _t, r in labels), key=lambda r: r.top())
    for upper, lower in zip(boxes, boxes[1:], strict=False):
        assert upper.bottom() <= lower.top(), "labels touch"


@pytest.mark.parametrize("size", [(1600, 1000), (1366, 768)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_linear_axes_at_two_tick_levels_label_what_pyqtgraphs_three_would(qtbot, make_window, size):
    """A linear axis has ticks (and grid lines) at two levels, major and minor, and
    labels them; pyqtgraph's default is three, and working out the finest (its labels
    measured, its 50 grid lines) was half the cost of a repaint. The finest level's labels
    never fit on these panels: at either window size and any range, every linear axis
    draws the labels pyqtgraph's default draws, at the same places."""
    win = make_window(SimParams(m=1000, lam=1e-2), playing=False)
    win.resize(*size)
    qtbot.waitUntil(lambda: win.snapshot is not None, timeout=TIMEOUT)
    QtWidgets.QApplication.processEvents()
    rng = np.random.default_rng(3)
    image = QtGui.QImage(64, 64, QtGui.QImage.Format.Format_ARGB32)
    checked = labelled = 0
    for p in win.panels:
        p.sync_tick_text()  # (as its first frame does: a hidden panel has had none)
        for plot in p.plots:
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                if axis.logMode:
                    continue
                levels = (axis.style["maxTextLevel"], axis.style["maxTickLevel"])
                assert levels == (1, 1), (p.title, side)
                for _ in range(25):
                    low = rng.choice([0.0, rng.uniform(-5, 5)]) * 10.0 ** rng.integers(-6, 7)
                    axis.setRange(low, low + 10 ** rng.uniform(-6, 7))
                    drawn = []
                    for text_level, tick_level in (levels, (2, 2)):  # ours, pyqtgraph's
                        axis.setStyle(maxTextLevel=text_level, maxTickLevel=tick_level)
                        painter = QtGui.QPainter(image)
                        texts = axis.generateDrawSpecs(painter)[2]
                        painter.end()
                        drawn.append([(rect.x(), rect.y(), text) for rect, _flags, text in texts])
                    axis.setStyle(maxTextLevel=levels[0], maxTickLevel=levels[1])
                    assert drawn[0] == drawn[1], (p.title, side, axis.range)
                    checked += 1
                    labelled += bool(drawn[0])
    # (a range whose span is a millionth of its values has no labels: a fifth of them)
    assert checked >= 25 * 12 and labelled >= 0.6 * checked


def test_a_log_range_never_ends_just_past_a_decade_whose_label_it_would_cut(qtbot, make_window):
    """Whatever the data's extent, a vertical log range ends on a decade, or half a label
    or more past one: a decade just inside an end has its label cut by the edge, and
    pyqtgraph drops it (the m' axis from 8 to 1000 showed no 10^1 in 1 run of 5)."""
    import math

    win = make_window(SimParams(m=1000, lam=1e-2), playing=False)
    on_laptop(win)
    qtbot.waitUntil(lambda: win.snapshot is not None, timeout=TIMEOUT)
    threshold = panel(win, "ThresholdPanel")
    plot = threshold.nonzero_plot
    for lo in np.linspace(0.0, 1.0, 41):  # data from 10^lo to 10^3
        got = threshold._range_for(plot, 1, (lo, 3.0), (lo, 3.0), force=True)
        assert got is not None
        bottom, top = got
        room = threshold._label_room(plot, 1, 3.0 - lo)  # (as the range is worked out)
        assert room > 0
        for edge, decade in ((bottom, math.ceil(bottom)), (top, math.floor(top))):
            assert abs(decade - edge) < 1e-12 or abs(decade - edge) >= room * (1 - 1e-9), (lo, bottom, top)
        assert bottom <= lo and top >= 3.0


def test_at_launch_every_weight_and_theta_line_is_inside_its_view(qtbot, note_window):
    """Paused at t = 0 (as launched with --paused) and then running: the Sparsity force
    shows every weight and its θ line inside its x range; the largest weight of Sorted
    weights stays under the top of its plot while the run goes on."""
    win = note_window(SimParams(m=1000, lam=1e-3), playing=False)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(80)
    snap = win.snapshot
    assert snap.t == 0.0
    force = panel(win, "ForcePanel")
    (x0, x1), (y0, y1) = force.plot.vb.viewRange()
    xs = np.concatenate([force.up.getData()[0], force.down.getData()[0]])
    ys = np.concatenate([force.up.getData()[1], force.down.getData()[1]])
    assert xs.size == np.count_nonzero(snap.sorted_abs)  # every nonzero weight drawn
    assert x0 <= xs.min() and xs.max() <= x1 and y0 <= ys.min() and ys.max() <= y1
    assert force.theta_line.isVisible() and x0 <= force.theta_line.value() <= x1
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)
    weights = panel(win, "SortedWeightsPanel")
    for t in (0.5, 2.0, 5.0):
        running_past(qtbot, win, t)
        qtbot.wait(150)  # a few frames: the panel checks its ranges when the top leaves
        top = float(win.snapshot.sorted_abs.max())
        y_top = weights.plot.vb.viewRange()[1][1]
        drawn_top = float(np.nanmax(weights.growing.getData()[1]))
        # above the top for at most one frame: then the next frame checks the ranges
        assert drawn_top <= y_top or weights.range_due, (t, drawn_top, y_top, top)


def test_the_time_axes_keep_up_with_the_live_run(qtbot, note_window):
    """A fast run (the panels take turns at checking their ranges): whenever looked at,
    the live run's t is inside the shared time axis, or the next frame re-fits it."""
    win = note_window(SimParams(m=1000, lam=1e-3), speed=300.0)
    threshold = panel(win, "ThresholdPanel")
    for t in (1.0, 20.0, 100.0, 300.0):
        running_past(qtbot, win, t)
        x1 = threshold.plot.vb.viewRange()[0][1]
        assert win.snapshot.t <= x1 or threshold.range_due, (win.snapshot.t, x1)
    snap = paused(qtbot, win)
    for p in win.panels:
        if p.time_plots:
            x0, x1 = p.time_plots[0].vb.viewRange()[0]
            assert x0 <= 0.0 and snap.t <= x1, type(p).__name__
    # paused, the run is looked at, not followed: the shared time axis ends where it does
    # (not at the next 1-2-5 step, which can leave half of every time panel empty)
    qtbot.waitUntil(lambda: threshold.plot.vb.viewRange()[0][1] <= 1.15 * snap.t, timeout=TIMEOUT)


def test_the_time_axis_steps_to_1_2_5_and_always_holds_the_live_run(qtbot, note_window):
    """A run from t = 0 past t = 300: the shared time axis is re-laid out only when
    its top steps to the next 1, 2 or 5 x 10^k (each step at least doubles it), and on every
    frame looked at the live t is inside it, as is the L1 decay's newest value inside its
    falling log axis (which keeps room below for the decay)."""
    win = note_window(SimParams(m=1000, lam=1e-3))  # the default speed
    threshold, decay = panel(win, "ThresholdPanel"), panel(win, "DecayPanel")
    tops = []  # each new top of the time axis, from the first frame of a running run on

    def new_top(_vb, r):
        if win.snapshot is not None and win.snapshot.t > 0:
            tops.append(r[1])

    threshold.plot.vb.sigXRangeChanged.connect(new_top)
    looked = []

    def look():
        # what each panel drew last (a new run's first frame reaches half of the panels,
        # the next frame the others)
        snap, drawn = threshold.last, decay.last
        if any(s is None or s.run_id != win.run_id or s.state != "running" for s in (snap, drawn)):
            return False
        (x0, x1), _ = threshold.plot.vb.viewRange()
        _, (y0, y1) = decay.plot.vb.viewRange()
        newest = float(np.log10(drawn.history[-1, COL["norm1"]]))  # the log axis's coordinate
        looked.append((snap.seq, snap.t, x0, x1, newest, y0, y1))
        return snap.t > 300

    try:
        qtbot.waitUntil(look, timeout=60_000)
    finally:
        threshold.plot.vb.sigXRangeChanged.disconnect(new_top)  # (the module's shared window)
    assert len({row[0] for row in looked}) >= 2  # frames looked at along the way (any load)
    for _seq, t, x0, x1, newest, y0, y1 in looked:
        assert x0 <= t <= x1, (t, x0, x1)
        assert y0 <= newest <= y1, (t, newest, y0, y1)
    steps = [top for k, top in enumerate(tops) if k == 0 or top != tops[k - 1]]
    for top in steps:
        mantissa = top / 10 ** np.floor(np.log10(top))
        assert np.isclose(mantissa, [1.0, 2.0, 5.0]).any() or np.isclose(mantissa, 10.0), top
    assert all(b >= 2 * a for a, b in zip(steps, steps[1:], strict=False)), steps
    assert steps[-1] > 300 and len(steps) <= 10  # 2, 5, 10, ..., 500: not one per frame


def test_a_new_run_reaches_one_panel_a_frame_and_paused_all_at_once(qtbot, make_window):
    """A running run's first frame lays out every axis anew (the longest stall of a run):
    one panel draws it, the next frame one more, and so on, whether or not a newer
    snapshot has come. Paused, a new run reaches every panel on its first frame."""
    win = make_window(SimParams(m=1000, lam=1e-3), speed=20.0)
    running_past(qtbot, win, 0.2)
    painted = win.painted_panels()
    qtbot.waitUntil(lambda: all(p.last is not None and p.last.run_id == win.run_id for p in painted))
    win.paint_timer.timeout.disconnect()  # frames painted here, one at a time
    win.paint_budget_ms = None  # (no panel left for the budget: tests/ui/test_paint_budget.py)
    old_run = win.run_id
    assert len(painted) == 6

    def first_frame_of(run_id, state):
        def painted_one():
            win.paint_latest()
            snap = win.snapshot
            return snap is not None and snap.run_id == run_id and snap.state == state

        qtbot.waitUntil(painted_one, timeout=TIMEOUT)

    QTest.keySequence(win, QtGui.QKeySequence("Ctrl+R"))
    assert win.run_id != old_run
    first_frame_of(win.run_id, "running")
    for reached in range(1, 6):
        runs = [p.last.run_id for p in painted]
        assert win.panels_owed and runs == [win.run_id] * reached + [old_run] * (6 - reached), runs
        win.paint_latest()  # the next frame, news or not
    assert not win.panels_owed
    assert all(p.last.run_id == win.run_id for p in painted)
    for p in painted:  # and each drew it whole: its ranges hold its data
        for plot in p.time_plots:
            assert plot.vb.viewRange()[0][1] >= p.last.t, type(p).__name__

    QTest.keySequence(win, QtGui.QKeySequence("Space"))  # paused
    qtbot.waitUntil(lambda: (win.paint_latest(), win.snapshot.state == "paused")[1], timeout=TIMEOUT)
    paused_run = win.run_id
    QTest.keySequence(win, QtGui.QKeySequence("Ctrl+R"))  # a new run, still paused
    assert win.run_id != paused_run
    first_frame_of(win.run_id, "paused")
    assert not win.panels_owed
    assert all(p.last.run_id == win.run_id for p in painted)


def click_menu_entry(qtbot, menu: QtWidgets.QMenu, text: str) -> None:
    """Open ``menu`` and click its entry ``text`` with the mouse."""
    menu.popup(QtCore.QPoint(40, 40))
    qtbot.waitUntil(menu.isVisible, timeout=TIMEOUT)
    action = next(a for a in menu.actions() if a.text() == text)
    QTest.mouseClick(menu, QtCore.Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())


@pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing")  # the menu, offscreen
def test_a_preset_chosen_while_paused_runs(qtbot, note_window):
    """Paused with Space, then Quick demo chosen from the presets menu: the preset's run
    goes on (as it does when chosen while running), and the window says so."""
    win = note_window(SimParams(m=300, lam=1e-3))
    running_past(qtbot, win, 0.5)
    paused(qtbot, win)
    click_menu_entry(qtbot, win.files.presets_menu, "Quick demo")
    qtbot.waitUntil(
        lambda: win.snapshot.run_id == win.run_id and win.snapshot.params.m == 1000 and win.snapshot.t > 0.5,
        timeout=TIMEOUT,
    )
    assert win.snapshot.state == "running"
    assert win.act_play.text() == "Pause"
    qtbot.waitUntil(lambda: win.status_labels["state"].text() == "running", timeout=TIMEOUT)
    assert win.status_labels["nonzero"].text().startswith("m' = ")


def test_a_pin_of_a_normal_draw_is_named_so_after_w0_comes_from_a_file(qtbot, make_window, tmp_path):
    """Pin a run of a normal W(0) (Ctrl+P), then load W(0) from a file: the pin's legend
    entry says what differs, a normal draw, not 'W(0) = none'."""
    w0 = tmp_path / "w0.npy"
    np.save(w0, np.linspace(0.05, 0.3, 300))
    win = make_window(SimParams(m=300, lam=1e-3))
    running_past(qtbot, win, 0.5)
    QTest.keyClick(win, QtCore.Qt.Key.Key_P, QtCore.Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(win.pin_control.pins) == 1, timeout=TIMEOUT)
    assert win.files.load_w0(str(w0))
    running_past(qtbot, win, 0.1)
    threshold = panel(win, "ThresholdPanel")
    shown = [label.text for _s, label in threshold.plot.legend.items if label.text.startswith("pin 1")]
    assert shown == ["pin 1: W(0) = normal draw"], shown


def test_session_and_export_data_dialogs_open_in_the_last_folder_used(qtbot, make_window, tmp_path):
    """Save a session into one folder: Open session, Export data and the scaling tab's Save
    then open there, and a folder chosen in the scaling tab's Save is the next one's."""
    folder = tmp_path / "sessions here"
    folder.mkdir()
    other = tmp_path / "scaling runs"
    other.mkdir()
    win = make_window(SimParams(m=200, lam=1e-2))
    running_past(qtbot, win, 0.2)
    opened = []
    answer_file_dialog(opened, folder / "mine.json")
    win.files.save_session_dialog()
    qtbot.waitUntil(lambda: win.exports.job is None, timeout=TIMEOUT)  # written beside the GUI
    assert (folder / "mine.json").is_file()
    answer_file_dialog(opened)
    win.files.open_session_dialog()
    answer_file_dialog(opened)
    win.exports.export_data_dialog("weights")
    qtbot.waitUntil(lambda: win.exports.job is None, timeout=TIMEOUT)
    answer_file_dialog(opened)
    win.scaling.save_dialog()
    assert opened[1:] == [str(folder)] * 3
    answer_file_dialog(opened, other)
    win.scaling.save_dialog()
    answer_file_dialog(opened)
    win.files.open_session_dialog()
    assert opened[-1] == str(other)


def test_the_scaling_legend_shows_each_lam_in_its_colour_before_the_first_run(qtbot, note_window):
    """The scaling tab, clicked open before any grid has run: each λ's legend sample is
    painted in that λ's colour (all three were one colour)."""
    from sparsity_gui.plots.note.scaling import lam_colour

    win = note_window(SimParams(m=200, lam=1e-2))  # (no test of this module runs a grid)
    bar = win.tabs.tabBar()
    QTest.mouseClick(bar, QtCore.Qt.MouseButton.LeftButton, pos=bar.tabRect(1).center())
    qtbot.waitUntil(lambda: win.tabs.currentWidget() is win.scaling, timeout=TIMEOUT)
    QtWidgets.QApplication.processEvents()
    scaling = win.scaling.panels[0]
    assert not scaling.rows and len(scaling.lam_values) == 3
    image = scaling.graphics.grab().toImage()
    ratio = image.devicePixelRatio()
    for i, lam in enumerate(scaling.lam_values):
        sample = next(s for s, _l in scaling.plot.legend.items if s.item is scaling.curves[lam].means)
        centre = scaling.graphics.mapFromScene(sample.mapToScene(sample.boundingRect().center()))
        seen = image.pixelColor(round(centre.x() * ratio), round(centre.y() * ratio))
        want = QtGui.QColor(lam_colour(i, 3))
        assert (
            max(
                abs(seen.red() - want.red()), abs(seen.green() - want.green()), abs(seen.blue() - want.blue())
            )
            < 40
        ), (
            lam,
            seen.name(),
            want.name(),
        )
