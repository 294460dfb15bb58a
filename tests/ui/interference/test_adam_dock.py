"""Adam's β₁, β₂ and ε in the interference window's Parameters dock, built from their rows of
the settings table: shown only under Adam and AdamW; a β₁ typed key by key reaches the run's
parameters, and the next run (Ctrl+R) trains exactly api.train's W with it; a bad value is
refused at its field with the table's reason and the run untouched."""

import numpy as np
from helpers import type_keys
from PySide6 import QtCore
from PySide6.QtTest import QTest

from sparsity_gui import api
from sparsity_gui.core.interference.params import InterferenceParams

TIMEOUT = 60_000
START = InterferenceParams(n=8, m=16, optimizer="adam", l1=1e-3, lr=1e-2, steps=300, seed=3)
ADAM_FIELDS = ("beta1", "beta2", "eps")


def shown(win, name):
    return win.controls.fields[name].isVisibleTo(win.controls)


def settled(win):
    return win.snapshot is not None and win.snapshot.params == win.params and win.snapshot.state == "finished"


def test_a_typed_beta1_trains_the_next_run_and_a_bad_one_is_refused_at_its_field(qtbot, make_iwindow):
    win = make_iwindow(START)
    win.resize(1366, 768)
    win.show()
    qtbot.waitUntil(lambda: settled(win), timeout=TIMEOUT)
    controls = win.controls
    assert all(shown(win, name) for name in ADAM_FIELDS)
    assert [controls.fields[n].text() for n in ADAM_FIELDS] == ["0.9", "0.999", "1e-08"]

    type_keys(controls.fields["beta1"], "0.8")
    qtbot.waitUntil(lambda: win.params.beta1 == 0.8, timeout=TIMEOUT)
    assert not controls.fields["beta1"].error.isVisibleTo(controls)
    QTest.keyClick(win, QtCore.Qt.Key.Key_R, QtCore.Qt.KeyboardModifier.ControlModifier)  # a new run
    qtbot.waitUntil(lambda: settled(win) and win.snapshot.step == START.steps, timeout=TIMEOUT)
    snap = win.snapshot
    assert snap.params.beta1 == 0.8
    result = api.train(n=8, m=16, optimizer="adam", l1=1e-3, lr=1e-2, steps=300, seed=3, beta1=0.8)
    assert np.array_equal(snap.W, result.w_final), "the window's run is api.train's with β₁ = 0.8"

    before = (win.params, snap.run_id, snap.W.copy())
    for name, text, reason in (("beta1", "1.5", "from 0 to below 1"), ("eps", "0", "> 0")):
        field = controls.fields[name]
        type_keys(field, text)
        assert field.error.isVisibleTo(controls) and reason in field.error.text(), field.error.text()
        assert f"got {text}" in field.error.text() or f"got {float(text):g}" in field.error.text()
    qtbot.wait(300)
    assert win.params == before[0] and win.snapshot.run_id == before[1]
    assert np.array_equal(win.snapshot.W, before[2]), "the run is untouched"

    # gradient descent has no β₁, β₂, ε: the row is hidden
    controls.optimizer.setCurrentIndex(controls.optimizer.findData("gd"))
    controls.optimizer.activated.emit(controls.optimizer.currentIndex())
    qtbot.waitUntil(lambda: win.params.optimizer == "gd", timeout=TIMEOUT)
    assert not any(shown(win, name) for name in ADAM_FIELDS)
