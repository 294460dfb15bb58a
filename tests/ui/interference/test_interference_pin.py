"""Pinned runs in the interference window: its step panels keep a pinned run's history,
faded and named by the parameters that differ, through restarts; remove, clear, export."""

import csv
import json

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS

TIMEOUT = 30_000
SMALL = InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=400, seed=1)
STEP_PANELS = ("PolysemanticPanel", "KeptPanel", "SignsPanel", "SparsityPanel")


def finished(qtbot, win):
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.finished,
        timeout=TIMEOUT,
    )
    qtbot.wait(60)
    return win.snapshot


def test_pinned_history_on_the_step_panels_through_a_restart(qtbot, make_iwindow, tmp_path):
    win = make_iwindow(SMALL)
    snap = finished(qtbot, win)
    pc = win.pin_control
    assert pc.pin(), win.last_error
    (pin,) = pc.pins
    np.testing.assert_array_equal(pin.rows, snap.history)
    assert not pin.rows.flags.writeable and not np.shares_memory(pin.rows, snap.history)
    for panel in win.panels:
        assert (1 in panel.pinned_items) == (type(panel).__name__ in STEP_PANELS), type(panel).__name__
    step = snap.history[:, HISTORY_COLUMNS.index("step")]
    (poly,) = win.poly_panel.pinned_items[1]
    np.testing.assert_array_equal(poly.xData, step)
    np.testing.assert_array_equal(poly.yData, snap.history[:, HISTORY_COLUMNS.index("polysemantic")])
    assert poly.opts["pen"].color().alpha() < 160 and poly.opts["pen"].dashPattern()
    legend = [label.text for _s, label in win.poly_panel.plot.legend.items]
    assert "pin 1: same parameters" in legend

    # a new m restarts the run; the pinned curves stay and are renamed
    win.on_params_changed({"m": 48})
    snap2 = finished(qtbot, win)
    assert snap2.params.m == 48
    legend = [label.text for _s, label in win.poly_panel.plot.legend.items]
    assert "pin 1: m = 32" in legend
    (poly,) = win.poly_panel.pinned_items[1]
    np.testing.assert_array_equal(poly.yData, pin.column("polysemantic"))
    # a second pin, then an l1 change: both named against the live run
    assert pc.pin()
    win.on_params_changed({"l1": 0.02})
    qtbot.waitUntil(lambda: win.snapshot.params.l1 == 0.02, timeout=TIMEOUT)
    qtbot.wait(100)
    labels = pc.labels
    assert labels == {1: "pin 1: m = 32, l1 = 4.0e-2", 2: "pin 2: l1 = 4.0e-2"}

    # Export pinned runs (CSV): a file per pin, exact, and pins.json naming them
    assert pc.export(tmp_path / "pins"), win.last_error
    with open(tmp_path / "pins" / "pin_1.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(HISTORY_COLUMNS)
    np.testing.assert_array_equal(np.array([[float(v) for v in r] for r in rows[1:]]), pin.rows)
    listing = json.loads((tmp_path / "pins" / "pins.json").read_text())
    assert [(p["number"], p["label"], p["parameters"]["m"]) for p in listing] == [
        (1, "pin 1: m = 32, l1 = 4.0e-2", 32),
        (2, "pin 2: l1 = 4.0e-2", 48),
    ]
    # a file where the folder should be: the reason, nothing written
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert not pc.export(blocker)
    assert "is a file, not a folder" in win.last_error

    # remove one, then clear: no pinned item or legend entry left
    assert pc.remove(1)
    assert [p.number for p in pc.pins] == [2] and 1 not in win.signs_panel.pinned_items
    assert not pc.remove(1)
    assert pc.clear()
    for panel in win.panels:
        assert panel.pinned_items == {}
    legend = [label.text for _s, label in win.poly_panel.plot.legend.items]
    assert not any(t.startswith("pin ") for t in legend)
