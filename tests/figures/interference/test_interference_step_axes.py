"""The interference model's exported step panels follow the live run's steps, as the
window's step axes do: a pinned run or a compared series of checkpoints that reaches far
past the live run is cut at the live run's last step, not the live run squeezed into the
first few percent of the plot. Real runs (api.train), real pins, the figures' own panel
functions on matplotlib figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from sparsity_gui import api  # noqa: E402
from sparsity_gui.core.interference.thresholds import run_threshold_curves  # noqa: E402
from sparsity_gui.core.pins import PinnedRun  # noqa: E402
from sparsity_gui.figures.interference import figures as fi  # noqa: E402

STEP_PANELS = ("polysemantic", "kept", "signs", "sparsity", "thresholds")


@pytest.fixture(scope="module")
def data():
    kw = dict(n=8, m=16, optimizer="gd-zero", l1=0.05, lr=0.05, seed=1)
    live = api.train(**kw, steps=2000)
    long = api.train(**kw, steps=52_000, samples=60)
    pins = [
        PinnedRun(1, (("steps", 52_000),), long.columns, long.history),
        PinnedRun(2, (), long.columns, long.history[::6], marks="points", name="ckpts"),
    ]
    assert long.history[-1, 0] == 52_000 and live.history[-1, 0] == 2000
    thresholds = run_threshold_curves(live.run)
    return fi.run_data(
        live.history, live.columns, live.w_final, live.neuron_counts, 8, pins=pins, thresholds=thresholds
    )


@pytest.mark.parametrize("name", STEP_PANELS)
def test_a_step_panel_ends_at_the_live_runs_last_step(data, name):
    fig = plt.figure()
    try:
        fi.PANELS[name][0](fig, data[name])
        step_axes = [ax for ax in fig.axes if ax.get_xlabel().startswith("step")]
        assert step_axes, [ax.get_xlabel() for ax in fig.axes]
        for ax in step_axes:
            assert ax.get_xlim() == pytest.approx((0.0, 2000.0))
    finally:
        plt.close(fig)


def test_the_layouts_step_panels_end_there_too(data):
    fig = plt.figure(figsize=fi.layout_size("paper"))
    try:
        fi.layout(fig, {"panels": [data[k] for k in fi.LAYOUT_ORDER]})
        step_axes = [ax for ax in fig.axes if ax.get_xlabel().startswith("step")]
        assert len(step_axes) >= len([p for p in STEP_PANELS if p in fi.LAYOUT_ORDER])
        assert all(ax.get_xlim() == pytest.approx((0.0, 2000.0)) for ax in step_axes)
    finally:
        plt.close(fig)


def test_the_weights_panel_is_titled_by_what_it_draws():
    """The layout's weights cell and the single panel's title name W(0)·Wᵀ when that is
    drawn (the window's toggle), W otherwise."""
    run = api.train(n=6, m=12, optimizer="gd-zero", l1=0.05, lr=0.05, seed=2, steps=300)
    for w0, want in ((None, "Weights $W$"), (run.w0, "Overlaps $W(0) \\cdot W^T$")):
        curves = run_threshold_curves(run.run)
        data = fi.run_data(
            run.history, run.columns, run.w_final, run.neuron_counts, 6, w0=w0, thresholds=curves
        )
        assert data["weights"].get("overlap", False) is (w0 is not None)
        fig = plt.figure(figsize=fi.layout_size("paper"))
        try:
            fi.layout(fig, {"panels": [data[k] for k in fi.LAYOUT_ORDER]})
            assert fig.subfigs[0].axes[0].get_title(loc="left") == want
        finally:
            plt.close(fig)
        assert fi.panel_title("weights", data["weights"]) == want.replace("$W$", "W")
