"""Pinned runs in the note's window: Pin run keeps the run's curves, faded, on every time
panel (and the phase plane) while parameters change and runs restart; the legend names
each by the parameters that differ; up to eight, removed one by one or all; saved in
sessions, restored on Open, and exported (CSVs, figures)."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from helpers import read_number_csv
from PySide6 import QtGui, QtWidgets

from sparsity_gui.core.note.metrics import COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.session import load_session

TIMEOUT = 20_000
SVG = "{http://www.w3.org/2000/svg}"
PARAMS = SimParams(m=200, lam=1e-2)
# the panels that draw the run's history over time, and the phase plane
PINNED_PANELS = ("ThresholdPanel", "BalancePanel", "DecayPanel", "RelVarPanel", "PhasePlanePanel")


def panel(win, name):
    return next(p for p in win.panels if type(p).__name__ == name)


def run_until(qtbot, win, t):
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.snapshot.t > t,
        timeout=TIMEOUT,
    )


def paused(qtbot, win):
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(50)
    return win.snapshot


def legend_texts(plot):
    return [label.text for _sample, label in plot.legend.items]


def painted(qtbot, win):
    """Let the window paint (labels follow the live parameters on a painted frame)."""
    seq = win.snapshot.seq
    qtbot.waitUntil(lambda: win.snapshot.seq != seq or win.snapshot.state != "running", timeout=TIMEOUT)
    qtbot.wait(60)


def test_pin_keeps_a_read_only_copy_drawn_faded_through_resets_and_changes(qtbot, make_window):
    win = make_window(PARAMS)
    run_until(qtbot, win, 8.0)
    snap = paused(qtbot, win)
    assert win.pin_control.pin(), win.last_error
    (pin,) = win.pin_control.pins
    history = snap.history[:, : len(COLUMNS)]
    # a copy of the snapshot's history, bit for bit, that nobody can write to
    np.testing.assert_array_equal(pin.rows, history)
    assert not pin.rows.flags.writeable and not np.shares_memory(pin.rows, snap.history)
    with pytest.raises(ValueError):
        pin.rows[0, 0] = 1.0
    assert pin.param_dict["lam"] == 1e-2 and pin.param_dict["m"] == 200

    t = history[:, COLUMNS.index("t")]
    for p in win.panels:
        items = p.pinned_items
        assert (1 in items) == (type(p).__name__ in PINNED_PANELS), type(p).__name__
    # what is drawn is the pinned data: the balance panel's pushes and ratio against t
    feature, reg, ratio = panel(win, "BalancePanel").pinned_items[1]
    np.testing.assert_array_equal(feature.xData, t)
    np.testing.assert_array_equal(feature.yData, history[:, COLUMNS.index("feature_push")])
    np.testing.assert_array_equal(reg.yData, history[:, COLUMNS.index("reg_push")])
    np.testing.assert_allclose(
        ratio.yData, history[:, COLUMNS.index("feature_push")] / history[:, COLUMNS.index("reg_push")]
    )
    (path,) = panel(win, "PhasePlanePanel").pinned_items[1]
    np.testing.assert_array_equal(path.xData, history[:, COLUMNS.index("norm2_sq")])
    np.testing.assert_array_equal(path.yData, history[:, COLUMNS.index("norm1")])
    # faded: the live curve's colour at a lower alpha, dashed, behind the live curves
    live = panel(win, "BalancePanel").feature
    pinned_pen = feature.opts["pen"]
    assert pinned_pen.color().rgb() == live.opts["pen"].color().rgb()
    assert pinned_pen.color().alpha() < 160 and live.opts["pen"].color().alpha() == 255
    assert pinned_pen.dashPattern() and feature.zValue() < live.zValue()
    # named in the legend: the same parameters as the live run so far
    balance_plot = panel(win, "BalancePanel").plot
    assert "pin 1: same parameters" in legend_texts(balance_plot)

    # a live change of lam renames it at the next frame
    win.set_playing(True)
    win.on_params_changed({"lam": 2e-2})
    # at a frame after the engine has taken the change (a loaded machine takes a few)
    qtbot.waitUntil(lambda: "pin 1: λ = 1.0e-2" in legend_texts(balance_plot), timeout=TIMEOUT)
    # a reset (Ctrl+R): the live run starts again, the pinned curves stay as they were
    win.act_reset.trigger()
    run_until(qtbot, win, 0.5)
    snap = paused(qtbot, win)
    assert snap.t < t[-1]
    feature = panel(win, "BalancePanel").pinned_items[1][0]
    np.testing.assert_array_equal(feature.yData, history[:, COLUMNS.index("feature_push")])
    # by default the time axes follow the live run: the pin, longer, runs past their end
    live_t = win.snapshot.t
    for name in ("ThresholdPanel", "BalancePanel", "DecayPanel"):
        x_lo, x_hi = panel(win, name).plot.vb.viewRange()[0]
        assert x_lo <= 0.0 and live_t <= x_hi < t[-1], name
    # View > Time axes follow the live run, unchecked: they take the pinned curves in
    win.act_follow_live.trigger()
    assert not win.act_follow_live.isChecked()
    qtbot.wait(50)
    for name in ("ThresholdPanel", "BalancePanel", "DecayPanel"):
        x_lo, x_hi = panel(win, name).plot.vb.viewRange()[0]
        assert x_lo <= 0.0 and x_hi >= t[-1], name
    y_lo, y_hi = balance_plot.vb.viewRange()[1]
    settled = history[:, COLUMNS.index("t")] >= 1.0  # the panel's range is set after the transient
    pushes = history[settled][:, [COLUMNS.index("feature_push"), COLUMNS.index("reg_push")]]
    assert y_lo <= pushes.min() and y_hi >= pushes.max()
    # a new m (a new run): the label names both differences, lam first
    win.on_params_changed({"m": 300})
    # at a frame after the engine has taken the change (a loaded machine takes a few)
    qtbot.waitUntil(lambda: "pin 1: λ = 1.0e-2, m = 200" in legend_texts(balance_plot), timeout=TIMEOUT)
    # the log toggle draws the pinned curves again (positive values only)
    panel(win, "BalancePanel").log_y.setChecked(True)
    feature = panel(win, "BalancePanel").pinned_items[1][0]
    assert np.all(feature.yData > 0)


def test_eight_pins_at_most_remove_one_then_clear_all(qtbot, make_window):
    win = make_window(PARAMS)
    run_until(qtbot, win, 2.0)
    pc = win.pin_control
    for k in range(8):
        if k == 4:
            win.on_params_changed({"lam": 1.5e-2})
            painted(qtbot, win)
        assert pc.pin(), win.last_error
    assert [p.number for p in pc.pins] == list(range(1, 9))
    assert not pc.act_pin.isEnabled()
    assert not pc.pin()
    assert "8 runs are pinned already" in win.last_error
    assert len(pc.pins) == 8
    # each pin has its own dashes
    items = panel(win, "DecayPanel").pinned_items
    dashes = {tuple(items[n][0].opts["pen"].dashPattern()) for n in items}
    assert len(dashes) == 8
    plot = panel(win, "DecayPanel").plot
    assert sum(t.startswith("pin ") for t in legend_texts(plot)) == 8

    # Simulation -> Pinned runs -> Remove 'pin 3: ...'
    pc.menu.aboutToShow.emit()
    texts = [a.text() for a in pc.menu.actions()]
    remove3 = next(a for a in pc.menu.actions() if a.text().startswith("Remove 'pin 3: "))
    assert sum(t.startswith("Remove 'pin ") for t in texts) == 8
    remove3.trigger()
    assert [p.number for p in pc.pins] == [1, 2, 4, 5, 6, 7, 8]
    assert 3 not in panel(win, "DecayPanel").pinned_items
    assert not any(t.startswith("pin 3:") for t in legend_texts(plot))
    assert pc.act_pin.isEnabled()
    # the freed number is taken by the next pin
    assert pc.pin()
    assert 3 in [p.number for p in pc.pins]
    # Clear all: no pinned curve or legend entry left anywhere
    pc.menu.aboutToShow.emit()
    next(a for a in pc.menu.actions() if a.objectName() == "act_clear_pins").trigger()
    assert pc.pins == []
    for p in win.panels:
        assert p.pinned_items == {}
        for q in p.plots:
            if q.legend is not None:
                assert not any(t.startswith("pin ") for t in legend_texts(q))
    pc.menu.aboutToShow.emit()
    assert not next(a for a in pc.menu.actions() if a.objectName() == "act_clear_pins").isEnabled()


def test_ctrl_p_pins_and_the_menus_hold_the_action(qtbot, make_window):
    win = make_window(PARAMS)
    run_until(qtbot, win, 1.0)
    pc = win.pin_control
    assert pc.act_pin.shortcut() == QtGui.QKeySequence("Ctrl+P")
    sim_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Simulation")
    assert pc.act_pin in sim_menu.actions()
    assert pc.menu in [a.menu() for a in sim_menu.actions()]
    tb = win.findChild(QtWidgets.QToolBar, "toolbar_simulation")
    assert pc.act_pin in tb.actions()
    win.activateWindow()
    win.setFocus()
    qtbot.keyClick(win, "p", QtGui.Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(pc.pins) == 1, timeout=TIMEOUT)


def test_pins_round_trip_through_a_session(qtbot, make_window, tmp_path):
    win = make_window(PARAMS)
    run_until(qtbot, win, 5.0)
    paused(qtbot, win)
    assert win.pin_control.pin()
    win.on_params_changed({"lam": 2e-2})
    win.set_playing(True)
    win.act_reset.trigger()
    run_until(qtbot, win, 3.0)
    paused(qtbot, win)
    assert win.pin_control.pin()
    pins = win.pin_control.pins
    path = tmp_path / "with_pins.json"
    assert win.files.save_session(path), win.last_error
    saved = json.loads(path.read_text())
    assert [p["number"] for p in saved["pins"]] == [1, 2]
    assert saved["pins"][0]["parameters"]["lam"] == 1e-2
    session = load_session(path)
    for a, b in zip(session.pins, pins, strict=True):
        assert a.number == b.number and a.params == b.params
        np.testing.assert_array_equal(a.rows, b.rows)  # bit for bit, NaN and inf too
        assert not a.rows.flags.writeable

    # Open in another window: the pinned runs come back, drawn and named against its run
    other = make_window(SimParams(m=150, lam=5e-3))
    run_until(qtbot, other, 0.5)
    assert other.files.open_session(path), other.last_error
    qtbot.waitUntil(lambda: other.snapshot.run_id == other.run_id, timeout=TIMEOUT)
    painted(qtbot, other)
    restored = other.pin_control.pins
    assert [p.number for p in restored] == [1, 2]
    for a, b in zip(restored, pins, strict=True):
        np.testing.assert_array_equal(a.rows, b.rows)
    texts = legend_texts(panel(other, "BalancePanel").plot)
    assert "pin 1: λ = 1.0e-2" in texts and "pin 2: same parameters" in texts
    items = panel(other, "RelVarPanel").pinned_items
    np.testing.assert_array_equal(items[2][0].yData, pins[1].column("rel_var"))

    # a session whose pins are damaged: the reason names the field; pins and run untouched
    bad = dict(saved)
    bad["pins"] = [dict(saved["pins"][0], columns=["t"])]
    bad_path = tmp_path / "bad.json"
    bad_path.write_text(json.dumps(bad))
    run_id = other.run_id
    assert not other.files.open_session(bad_path)
    assert "pins[0].columns" in other.last_error
    assert other.run_id == run_id and [p.number for p in other.pin_control.pins] == [1, 2]
    # a session saved without pins has no "pins" field (older readers read it as before)
    other.pin_control.clear()
    plain = tmp_path / "plain.json"
    assert other.files.save_session(plain)
    assert "pins" not in json.loads(plain.read_text())


def svg_texts(data: bytes) -> str:
    """The SVG's text without spaces (Qt splits a label into runs, spaced apart)."""
    root = ET.fromstring(data)
    return "".join("".join("".join(el.itertext()) for el in root.iter(SVG + "text")).split())


def test_export_all_writes_the_pinned_runs_and_draws_them(qtbot, make_window, tmp_path):
    win = make_window(PARAMS)
    run_until(qtbot, win, 5.0)
    paused(qtbot, win)
    assert win.pin_control.pin()
    win.on_params_changed({"lam": 2e-2})
    win.set_playing(True)
    win.act_reset.trigger()
    run_until(qtbot, win, 3.0)
    paused(qtbot, win)
    painted(qtbot, win)
    (pin,) = win.pin_control.pins
    folder = tmp_path / "all"
    # (the figures read as SVG below: that format alone)
    assert win.exports.export_all(folder, formats="svg"), win.last_error
    header, rows = read_number_csv(folder / "pin_1.csv")
    assert header == list(COLUMNS)
    np.testing.assert_array_equal(rows, pin.rows)  # every float written to read back exactly
    listing = json.loads((folder / "pins.json").read_text())
    assert listing == [
        {
            "number": 1,
            "label": "pin 1: λ = 1.0e-2",
            "file": "pin_1.csv",
            "parameters": json.loads(json.dumps(pin.param_dict)),
            "rows": pin.rows.shape[0],
        }
    ]
    assert [p["number"] for p in json.loads((folder / "session.json").read_text())["pins"]] == [1]
    # the figures draw the pinned run (named in the legend) on the time panels
    for name in ("threshold_crossing", "norm_balance", "l1_decay", "relative_variance", "phase_plane"):
        assert "pin1:λ=1.0e-2" in svg_texts((folder / f"{name}.svg").read_bytes()), name
    assert "pin1" not in svg_texts((folder / "weights_sorted.svg").read_bytes())
    # the live panel's own export draws the pinned curves too: more paths than without
    count = lambda p: sum(1 for _ in ET.fromstring(p.read_bytes()).iter(SVG + "path"))  # noqa: E731
    with_pin, without = tmp_path / "with.svg", tmp_path / "without.svg"
    assert win.exports.export_figure(2, with_pin)
    assert "pin1:λ=1.0e-2" in svg_texts(with_pin.read_bytes())
    win.pin_control.clear()
    assert win.exports.export_figure(2, without)
    assert "pin1" not in svg_texts(without.read_bytes())
    assert count(with_pin) > count(without)
    assert win.pin_control.pin()
    # Pinned runs -> Export pinned runs (CSV): the same files on their own
    only = tmp_path / "pins"
    assert win.pin_control.export(only)
    assert sorted(p.name for p in only.iterdir()) == ["pin_1.csv", "pins.json"]
