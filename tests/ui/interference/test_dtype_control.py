"""The interference window's precision combo box: float32 starts a new run in float32 (W
in the snapshots and the sweep's rows), float64 comes back; real widgets, real threads."""

import numpy as np
from helpers import type_into

from sparsity_gui.core.interference.params import InterferenceParams

TIMEOUT = 30_000
LONG = InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=10**8, seed=1)


def choose(combo, data):
    combo.setCurrentIndex(combo.findData(data))
    combo.activated.emit(combo.currentIndex())


def test_precision_combo_starts_a_float32_run_and_the_sweep_follows(qtbot, make_iwindow):
    win = make_iwindow(LONG)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.step > 0, timeout=TIMEOUT)
    combo = win.controls.dtype
    assert [combo.itemData(i) for i in range(combo.count())] == ["float64", "float32"]
    assert combo.currentData() == "float64" and win.snapshot.W.dtype == np.float64
    run_id = win.snapshot.run_id
    choose(combo, "float32")
    qtbot.waitUntil(lambda: win.snapshot.params.dtype == "float32", timeout=TIMEOUT)
    assert win.snapshot.run_id > run_id, "a new run"
    qtbot.waitUntil(lambda: win.snapshot.step > 0, timeout=TIMEOUT)
    assert win.snapshot.W.dtype == np.float32
    assert combo.currentText().startswith("float32")
    # the sweep takes the dock's parameters, precision included
    sweep = win.sweep
    assert sweep.base_label.text().endswith(", float32")
    type_into(sweep.n, "8")
    type_into(sweep.m, "8,16")
    type_into(sweep.seeds, "1")
    type_into(sweep.steps, "100")
    assert sweep.start()
    qtbot.waitUntil(lambda: sweep.outcome == "done", timeout=TIMEOUT)
    assert {r.dtype for r in sweep.rows} == {"float32"} and len(sweep.rows) == 2
    choose(combo, "float64")
    qtbot.waitUntil(lambda: win.snapshot.params.dtype == "float64", timeout=TIMEOUT)
    qtbot.waitUntil(lambda: win.snapshot.W.dtype == np.float64, timeout=TIMEOUT)
