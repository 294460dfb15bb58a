"""The interference window's Thresholds panel (issue 51) draws, for each sparsity mechanism,
the threshold it applies, recomputed here from the run itself: under l1 the note's
theta_i = (l1/4)/(1 - |W_i|^2) from W's rows at every recorded step (W retrained here by the
core's run, step by step), under JumpReLU every recorded theta_k and the rail
theta(0) +- sum lr, under TopK the K-th largest |h| of each input."""

import math

import numpy as np
from helpers import type_into

from sparsity_gui.core.interference.mechanisms import SPARSITY_COLUMNS
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun

TIMEOUT = 60_000
L1_RUN = InterferenceParams(n=8, m=16, optimizer="adam", l1=0.02, lr=1e-2, steps=200, seed=5)


def choose(combo, data):
    combo.setCurrentIndex(combo.findData(data))
    combo.activated.emit(combo.currentIndex())


def summary(values):
    """(median, 10th, 90th percentile over the finite values, the first value)."""
    finite = [v for v in values if math.isfinite(v)]
    p10, median, p90 = np.percentile(finite, [10.0, 50.0, 90.0])
    return median, p10, p90, values[0]


def finished(qtbot, win):
    qtbot.waitUntil(
        lambda: (
            win.snapshot is not None
            and win.snapshot.params == win.params
            and win.snapshot.state == "finished"
        ),
        timeout=TIMEOUT,
    )
    return win.snapshot


def same_as_figure(win, data):
    """The exported figure's data (Export figure, Export all) are the panel's curves."""
    figure = win.exports.run_data()["thresholds"]
    assert figure["sparsity"] == win.snapshot.params.sparsity
    for name, values in data.items():
        if isinstance(values, np.ndarray):
            assert np.array_equal(figure[name], values, equal_nan=True), name
        else:
            assert figure[name] == values, name


def drawn(item):
    """A curve's y as drawn on the log axis, back in the data's units."""
    return 10.0 ** item.getData()[1]


def test_the_thresholds_panel_draws_each_mechanisms_threshold(qtbot, make_iwindow):
    win = make_iwindow(L1_RUN)
    win.resize(1366, 768)
    win.show()
    panel = win.thresholds_panel
    win.panel_tabs.setCurrentWidget(panel)
    snap = finished(qtbot, win)
    # l1: the note's threshold of each row, from W retrained here to each recorded step
    data = panel.curve_data(snap)
    steps = data["step"]
    assert steps[0] == 0 and steps[-1] == L1_RUN.steps and len(steps) > 100
    run = InterferenceRun(L1_RUN)
    want = []
    for s in steps:
        run.advance(int(s) - run.step)
        rows = [sum(w * w for w in row) for row in run.W.tolist()]
        want.append(summary([(L1_RUN.l1 / 4) / (1 - r) if r < 1 else math.nan for r in rows]))
    want = np.array(want)
    for i, name in enumerate(("median", "p10", "p90", "tracked")):
        np.testing.assert_allclose(data[name], want[:, i], rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(drawn(panel.median), data["median"], rtol=1e-12)
    assert "rail_hi" not in data and not panel.rail_hi.isVisible()
    assert panel.plot.titleLabel.text.startswith("Note")
    assert panel.plot.getAxis("left").labelText.startswith("θ")
    assert "no interference" in panel.note.text
    same_as_figure(win, data)

    # JumpReLU: every theta_k recorded, and the rail theta(0) +- lr * step (constant lr)
    choose(win.controls.sparsity, "jumprelu")
    for name, text in (("l0", "0.002"), ("bandwidth", "0.05"), ("threshold_init", "0.02")):
        type_into(win.controls.fields[name], text)
    qtbot.waitUntil(lambda: win.params.threshold_init == 0.02, timeout=TIMEOUT)
    snap = finished(qtbot, win)
    p = snap.params
    data = panel.curve_data(snap)
    every = snap.thresholds
    assert np.array_equal(data["step"], every[:, 0])
    want = np.array([summary(list(row[1:])) for row in every])
    for i, name in enumerate(("median", "p10", "p90", "tracked")):
        np.testing.assert_allclose(data[name], want[:, i], rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(data["rail_hi"], p.threshold_init + p.lr * every[:, 0], rtol=1e-12)
    np.testing.assert_allclose(data["rail_lo"], p.threshold_init - p.lr * every[:, 0], rtol=1e-12)
    assert panel.rail_hi.isVisible() and panel.plot.titleLabel.text.startswith("JumpReLU")
    np.testing.assert_allclose(drawn(panel.rail_hi), data["rail_hi"], rtol=1e-12)
    last = snap.sparsity_rows[-1]
    column = {name: i for i, name in enumerate(SPARSITY_COLUMNS)}
    moved, past = int(last[column["thresholds_moved"]]), int(last[column["thresholds_past_rail"]])
    assert moved > 0
    assert f"{past:,} of {moved:,}" in panel.note.text, panel.note.text
    same_as_figure(win, data)

    # TopK: the K-th largest |h| of each input, at the end from W's rows
    choose(win.controls.sparsity, "topk")
    snap = finished(qtbot, win)
    k = snap.params.k
    data = panel.curve_data(snap)
    kth = [sorted((abs(w) for w in row), reverse=True)[k - 1] for row in snap.W.tolist()]
    np.testing.assert_allclose(
        [data[name][-1] for name in ("median", "p10", "p90", "tracked")], summary(kth), rtol=1e-12
    )
    assert not panel.rail_hi.isVisible() and panel.plot.titleLabel.text.startswith("TopK")
    assert "K = 1" in panel.note.text
    same_as_figure(win, data)
