"""Log axes show readable labels whatever they span: the decades over a decade or more;
1, 2 and 5 times a power of ten (as plain numbers) within less; evenly spaced values where
even those are missing (the range 1.1 to 1.9 holds none of pyqtgraph's ticks)."""

import pytest

from sparsity_gui.plots.base import Panel


@pytest.fixture
def log_axis(qapp):
    panel = Panel()
    plot = panel.add_plot(0, "t", "x", "y", legend=False)
    plot.setLogMode(y=True)
    panel.sync_tick_text()
    panel.resize(400, 400)
    panel.show()
    yield plot
    panel.close()
    panel.deleteLater()


def labels(qapp, plot, lo, hi):
    """The texts the axis draws for a view of 10^lo .. 10^hi."""
    plot.vb.setYRange(lo, hi, padding=0)
    qapp.processEvents()
    axis = plot.getAxis("left")
    lo, hi = axis.range
    shown = []
    for spacing, values in axis.tickValues(lo, hi, 400)[: axis.style["maxTextLevel"] + 1]:
        inside = [v for v in values if lo - 1e-9 <= v <= hi + 1e-9]
        shown += [text for text in axis.tickStrings(inside, 1.0, spacing) if text]
    return sorted(set(shown), key=float)


def test_a_narrow_log_axis_has_readable_labels(qapp, log_axis):
    assert labels(qapp, log_axis, 1.2, 1.8) == ["20", "50"]  # 16 to 63: no decade inside
    assert labels(qapp, log_axis, 0.05, 0.3) == ["1.2", "1.4", "1.6", "1.8"]  # 1.12 to 2.0


def test_a_wide_log_axis_labels_its_decades_only(qapp, log_axis):
    plot = log_axis
    plot.vb.setYRange(0.0, 3.0, padding=0)
    qapp.processEvents()
    axis = plot.getAxis("left")
    texts = []
    for spacing, values in axis.tickValues(0.0, 3.0, 400)[: axis.style["maxTextLevel"] + 1]:
        texts += [(v, t) for v, t in zip(values, axis.tickStrings(values, 1.0, spacing), strict=True) if t]
    assert texts and all(abs(v - round(v)) < 1e-9 for v, _t in texts)  # 2·10^k … 9·10^k stay blank
