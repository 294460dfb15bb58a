"""The Sweep tab says what a sweep will use: its n and steps follow the Parameters dock
until typed here (not copies from when the window opened), its "from the Parameters dock"
line lists a noise σ only when a noise kind the sweep trains uses it, its count axis has no
unit prefix; and the dock's lr decay box says "no decay" while none is set. Real window,
keys typed as a user types them."""

from __future__ import annotations

from helpers import type_keys

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.ui.interference.sweep_tab import base_text

TIMEOUT = 30_000
BASE = InterferenceParams(n=8, m=16, optimizer="gd-zero", l1=0.04, lr=0.05, steps=300, seed=2)


def settled(qtbot, win):
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.params == win.params, timeout=TIMEOUT)


def test_n_and_steps_follow_the_dock_until_typed(qtbot, make_iwindow):
    win = make_iwindow(BASE)
    tab = win.sweep
    assert tab.n.text() == "8" and tab.steps.text() == ""
    win.on_params_changed({"steps": 600})
    win.on_params_changed({"n": 12})
    settled(qtbot, win)
    assert tab.n.text() == "12" and tab.steps.edit.placeholderText() == "dock: 600"
    assert "600 steps" in tab.base_label.text()
    plan = tab.make_plan(None)
    assert plan.base.n == 12 and plan.base.steps == 600
    type_keys(tab.n, "5")  # typed here: kept whatever the dock does
    win.on_params_changed({"n": 10})
    settled(qtbot, win)
    assert tab.n.text() == "5" and tab.make_plan(None).base.n == 5


def test_the_dock_line_names_a_noise_sigma_only_when_used(qtbot, make_iwindow):
    win = make_iwindow(BASE.with_changes(noise="bernoulli", noise_sigma=0.1))
    tab = win.sweep
    assert "Bernoulli noise σ = 0.1" in tab.base_label.text()
    type_keys(tab.lists["noise"], "none")
    assert "σ = 0.1" not in tab.base_label.text()
    assert tab.make_plan(None).base.noise == "none"
    type_keys(tab.lists["noise"], "none,bernoulli")
    assert "noise σ = 0.1" in tab.base_label.text()


def test_the_lr_decay_box_says_no_decay_while_none_is_set(qtbot, make_iwindow):
    win = make_iwindow(BASE)
    box = win.controls.lr_decay
    assert box.currentText() == "no decay" and win.params.lr_decay == "none"
    type_keys(win.controls.lr_decay_steps, "100")
    assert win.params.lr_decay == "cosine" and box.currentText() == "cosine"
    box.setCurrentIndex(box.findData("linear"))
    box.activated.emit(box.currentIndex())  # the user's pick
    assert win.params.lr_decay == "linear"
    type_keys(win.controls.lr_decay_steps, "")
    assert win.params.lr_decay == "none" and box.currentText() == "no decay"


def test_the_sweep_count_axis_has_no_unit_prefix(qtbot, make_iwindow):
    win = make_iwindow(BASE.with_changes(n=1))
    tab = win.sweep
    win.tabs.setCurrentWidget(tab)
    type_keys(tab.m, "256,1024")  # n²/(4m) of 0.0002 … 0.001: pyqtgraph's prefix would say x0.001
    tab.draw_preview()
    qtbot.wait(100)
    for side in ("left", "bottom"):
        label = tab.panel.plot.getAxis(side).labelString()
        assert "(x" not in label and "neurons" in label, label


def test_the_dock_line_writes_each_setting_as_the_table():
    """l1, lr, σ, steps, weight decay and the noise's σ as the settings table writes them
    (once ':g' by hand: 'l1 = 0.002', '10000 steps')."""
    p = InterferenceParams(
        n=8, m=16, optimizer="adamw", l1=2e-3, lr=1e-3, sigma=0.5, steps=10_000, seed=3,
        noise="bernoulli", noise_sigma=0.1,
    )  # fmt: skip
    assert base_text(p, set(), None) == (
        "from the Parameters dock: AdamW (paper), l1 = 2.0e-3, lr = 1.0e-3, σ = 0.5, 10,000 steps, "
        "interference on, weight decay = 0.01, Bernoulli noise σ = 0.1, first seed 3"
    )
    assert ", Bernoulli noise, first seed 3" in base_text(p, {"noise_sigma"}, None)
