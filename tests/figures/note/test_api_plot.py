"""SimulationResult.plot: a panel as a matplotlib Figure, or drawn into a given axes,
from the same arrays the result's files hold; never a Qt import."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

from sparsity_gui import api
from sparsity_gui.core.note.metrics import COL
from sparsity_gui.figures import layout
from sparsity_gui.figures.note.figures import PANELS


@pytest.fixture(scope="module")
def result():
    return api.simulate(m=300, lam=2e-3, seed=1, t_end=80.0, samples=161)


@pytest.mark.parametrize("panel", [*PANELS, "layout"])
def test_plot_returns_a_figure_of_the_panel(result, panel):
    fig = result.plot(panel)
    assert isinstance(fig, Figure) and fig.axes
    assert layout.layout_faults(fig) == []


def test_plot_draws_the_timeseries(result):
    fig = result.plot("l1_decay")
    line = fig.axes[0].get_lines()[0]
    np.testing.assert_array_equal(line.get_xdata(), result.timeseries[:, COL["t"]])
    np.testing.assert_array_equal(line.get_ydata(), result.timeseries[:, COL["norm1"]])


def test_plot_into_an_axes(result):
    fig = Figure(figsize=(7, 3))
    left, right = fig.subplots(1, 2)
    assert result.plot("relative_variance", ax=left) is fig
    assert left.get_lines() and left.get_legend() is not None
    result.plot("threshold_crossing", ax=right)
    assert right not in fig.axes and len(fig.axes) == 3


def test_plot_in_the_talk_style_is_larger(result):
    paper, talk = result.plot("norm_balance"), result.plot("norm_balance", style="talk")
    assert talk.get_size_inches()[0] > paper.get_size_inches()[0]


@pytest.mark.parametrize("panel", ["nope", ""])
def test_an_unknown_panel_is_refused_by_name(result, panel):
    with pytest.raises(ValueError, match="weights_sorted"):
        result.plot(panel)


def test_the_api_and_its_figures_import_no_qt():
    """In a fresh Python: the API, a plot, and the figure layer's modules load no Qt."""
    code = (
        "import sys\n"
        "from sparsity_gui import api\n"
        "import sparsity_gui.figures.save, sparsity_gui.figures.layout, sparsity_gui.figures.style\n"
        "r = api.simulate(m=50, t_end=5.0, samples=11)\n"
        "r.plot('threshold_crossing')\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
