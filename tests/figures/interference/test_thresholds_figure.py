"""The Thresholds figure (`interference --figures`, api.TrainingResult.plot("thresholds"))
draws the threshold each sparsity mechanism applies, recomputed here from the run itself
without the code's summaries: under JumpReLU every recorded theta_k, its rail
theta(0) +- lr * step and the threshold steps past it (a move > lr) counted from the
thresholds; under TopK the K-th largest |h| = |W_i| of each input at the end; under l1
the note's (l1/4)/(1 - |W_i|^2) of the final W. Real runs (api.train), the figure's own
matplotlib artists."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from sparsity_gui import api  # noqa: E402

STEPS = 200
RUN = dict(n=8, m=16, optimizer="adam", lr=3e-3, seed=3, steps=STEPS)
MECHANISMS = {
    "l1": dict(l1=0.02),
    "topk": dict(sparsity="topk", k=2),
    "jumprelu": dict(sparsity="jumprelu", l0=0.01, bandwidth=0.02, threshold_init=0.05),
}


@pytest.fixture(scope="module")
def runs():
    """One run a mechanism, a history row at every step (the JumpReLU rail's counts)."""
    return {kind: api.train(**RUN, **extra, samples=STEPS + 1) for kind, extra in MECHANISMS.items()}


def summary(values):
    """(median, 10th, 90th percentile over the finite values, the first value)."""
    finite = sorted(v for v in values if math.isfinite(v))
    p10, median, p90 = np.percentile(finite, [10.0, 50.0, 90.0])
    return median, p10, p90, values[0]


def drawn(result):
    """The figure's curves by name (threshold-median, threshold-tracked, rail-hi, rail-lo),
    the legend's texts and the y scale."""
    fig = result.plot("thresholds")
    try:
        ax = fig.axes[0]
        lines = {}
        for line in ax.get_lines():
            lines[line.get_gid()] = np.asarray(line.get_ydata(), float)
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        return lines, legend, ax.get_yscale()
    finally:
        plt.close(fig)


def test_jumprelu_draws_every_threshold_and_its_rail(runs):
    result = runs["jumprelu"]
    every = result.run.sparsity_history.thresholds.array()  # step, theta_1..m at each row
    assert np.array_equal(every[:, 0], np.arange(STEPS + 1))
    want = np.array([summary(row[1:].tolist()) for row in every])
    lines, legend, scale = drawn(result)
    np.testing.assert_allclose(lines["threshold-median"], want[:, 0], rtol=1e-12)
    np.testing.assert_allclose(lines["threshold-tracked"], want[:, 3], rtol=1e-12)
    # the rail: theta(0) +- lr per step (a constant lr, thresholds stored plain); the
    # lower side only where it is above 0 (a log axis)
    p = result.params
    np.testing.assert_allclose(lines["rail-hi"], p.threshold_init + p.lr * every[:, 0], rtol=1e-12)
    low = p.threshold_init - p.lr * every[:, 0]
    np.testing.assert_allclose(lines["rail-lo"], low[low > 0], rtol=1e-12)
    moves = np.abs(np.diff(every[:, 1:], axis=0))
    moved, past = int(np.count_nonzero(moves)), int(np.count_nonzero(moves > p.lr))
    assert moved > 0
    assert f"{past:,} of {moved:,}" in legend[-1], legend
    assert scale == "log" and legend[0].startswith("median over units")


def test_topk_draws_the_kth_largest_h_of_each_input(runs):
    result = runs["topk"]
    k = result.params.k
    kth = [sorted((abs(w) for w in row), reverse=True)[k - 1] for row in result.w_final.tolist()]
    lines, legend, _scale = drawn(result)
    median, p10, p90, first = summary(kth)
    assert lines["threshold-median"][-1] == pytest.approx(median, rel=1e-12)
    assert lines["threshold-tracked"][-1] == pytest.approx(first, rel=1e-12)
    assert "rail-hi" not in lines, "no rail under TopK"
    assert legend[0].startswith("median over inputs") and "$K = 2$" in legend[-1]


def test_l1_draws_the_notes_threshold_and_says_what_it_is_exact_for(runs):
    result = runs["l1"]
    l1 = result.params.l1
    theta = []
    for row in result.w_final.tolist():
        room = 1.0 - sum(w * w for w in row)
        theta.append((l1 / 4) / room if room > 0 else math.nan)
    lines, legend, _scale = drawn(result)
    median, p10, p90, first = summary(theta)
    assert lines["threshold-median"][-1] == pytest.approx(median, rel=1e-12)
    assert "exact for a row no interference acts on" in legend[-1]
    assert legend[1] == "feature 0"
