"""The weights panel's W(0)·Wᵀ view (the paper's correlation figure): the image is the
overlaps of the run's W(0) with its W, features by features, computed here with numpy; its
exported figure draws the same matrix; turned off, the panel shows W again. And the figures'
change marks include a schedule's turns, as the panels do."""

from __future__ import annotations

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams

TIMEOUT = 30_000
BASE = InterferenceParams(
    n=8,
    m=16,
    optimizer="gd",
    l1=0.0,
    lr=0.02,
    steps=3000,
    seed=1,
    noise="bernoulli",
    noise_sigma=0.1,
    l1_warmup=0,
    lr_warmup=1000,
)


def test_the_overlap_view_is_w0_times_w_transposed_on_screen_and_in_the_figure(qtbot, make_iwindow):
    win = make_iwindow(BASE)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)
    snap = win.snapshot
    panel = win.weights_panel
    panel.overlap.setChecked(True)
    want = snap.w0 @ snap.W.T
    np.testing.assert_allclose(panel.image.image, want, rtol=0, atol=1e-13)
    assert not panel.order.isEnabled() and panel.plot.titleLabel.text.startswith("W(0)")
    data = win.exports.run_data()["weights"]
    assert data["overlap"] and data["shape"] == [8, 8]
    np.testing.assert_allclose(np.reshape(data["image"], (8, 8)), want, rtol=0, atol=1e-13)
    assert data["level"] >= np.abs(want).max()
    # the step figures mark where the lr warm-up ended, as the panels do
    marks = win.exports.run_data()["kept"]["changes"]
    assert [step for step, _text in marks] == [1000.0]
    panel.overlap.setChecked(False)
    np.testing.assert_array_equal(panel.image.image, snap.W)
    assert panel.order.isEnabled() and panel.plot.titleLabel.text.startswith("W:")
    assert "overlap" not in win.exports.run_data()["weights"]
