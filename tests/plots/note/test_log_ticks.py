"""Log axes show readable labels whatever they span: the decades (every 2nd, 5th... where
they would crowd, with grid lines only at the labelled ones) over three decades or more;
1, 2 and 5 times a power of ten (as plain numbers) over fewer; evenly spaced values where
even those are missing (the range 1.1 to 1.9 holds none of pyqtgraph's ticks).

The labels checked are the ones the axis draws (pyqtgraph's draw specs: text, place and
box), placed against a plain linear map of the axis range onto the axis."""

import dataclasses
import math
import re
from collections.abc import Callable

import pytest
from helpers import axis_draw_specs
from PySide6 import QtCore
from test_scaling_figure import LAMS, M_VALUES, fake_rows

from sparsity_gui.plots.base import Panel
from sparsity_gui.plots.note.scaling import DecayConstantPanel

_DIGITS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def label_value(text: str) -> float:
    """What a label reads: '10³' 1000, '2·10⁻³' 0.002, '20' 20, '0.01' 0.01."""
    power = re.fullmatch(r"(?:(\d)·)?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
    if power:
        return float(power.group(1) or 1) * 10.0 ** int(power.group(2).translate(_DIGITS))
    return float(text)


@dataclasses.dataclass
class Drawn:
    texts: list[str]  # the labels, by value
    labels: list[tuple[float, float, QtCore.QRectF]]  # (value, y of the text's centre, box), by value
    lines: list[float]  # y of every tick / grid line
    y_of: Callable[[float], float]  # log10(value) -> y on the axis, by the axis range


def drawn(axis) -> Drawn:
    """What a left axis draws now, from pyqtgraph's draw specs."""
    _line, ticks, texts = axis_draw_specs(axis)
    box = axis.mapRectFromParent(axis.geometry())
    lo, hi = axis.range

    def y_of(v: float) -> float:
        return box.top() + (hi - v) / (hi - lo) * box.height()

    texts = sorted(texts, key=lambda spec: label_value(spec[2]))
    labels = [(label_value(text), rect.center().y(), rect) for rect, _flags, text in texts]
    return Drawn([text for _r, _f, text in texts], labels, [p1.y() for _pen, p1, _p2 in ticks], y_of)


def check_readable(d: Drawn, axis) -> None:
    """At least 3 labels, each at its value, none overlapping another; a grid line at each
    labelled value, and every grid line at a decade labelled."""
    lo, hi = axis.range
    px_per_decade = abs(d.y_of(lo + 1) - d.y_of(lo))
    values = [v for v, _y, _r in d.labels]
    assert len(values) >= 3, d.texts
    for v, y, _rect in d.labels:
        assert abs(y - d.y_of(math.log10(v))) < 1.0, (v, y)
        assert any(abs(line - y) < 0.5 for line in d.lines), f"no grid line at the label {v}"
    boxes = sorted((r for _v, _y, r in d.labels), key=lambda r: r.top())
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert a.bottom() <= b.top(), f"labels overlap: {d.texts}"
    for line in d.lines:
        v = lo + (d.y_of(lo) - line) / px_per_decade
        if abs(v - round(v)) * px_per_decade < 0.5:
            assert any(abs(math.log10(x) - round(v)) < 1e-6 for x in values), (
                f"a grid line at 10^{round(v)} without a label: {d.texts}"
            )


def settle(qapp, panel) -> None:
    qapp.processEvents()
    panel.settle_tick_text()


@pytest.fixture(params=[400, 240], ids=["400px", "240px"])
def log_axis(qapp, request):
    panel = Panel()
    plot = panel.add_plot(0, "t", "x", "y", legend=False)
    plot.setLogMode(y=True)
    panel.sync_tick_text()
    panel.resize(400, request.param)
    panel.show()
    yield panel, plot
    panel.close()
    panel.deleteLater()


def view(qapp, panel, plot, lo, hi) -> Drawn:
    """Show 10^lo .. 10^hi; what the left axis draws."""
    plot.vb.setYRange(lo, hi, padding=0)
    settle(qapp, panel)
    return drawn(plot.getAxis("left"))


def test_a_narrow_log_axis_has_readable_labels(qapp, log_axis):
    panel, plot = log_axis
    assert view(qapp, panel, plot, 1.2, 1.8).texts == ["20", "50"]  # 16 to 63: no decade inside
    assert view(qapp, panel, plot, 0.05, 0.3).texts == ["1.2", "1.4", "1.6", "1.8"]  # 1.12 to 2.0


def test_a_wide_log_axis_labels_its_decades_only(qapp, log_axis):
    panel, plot = log_axis
    d = view(qapp, panel, plot, -0.25, 3.25)
    assert d.texts == ["1", "10¹", "10²", "10³"]  # 2·10^k … 9·10^k stay blank
    check_readable(d, plot.getAxis("left"))


@pytest.mark.parametrize("decades", [1, 3, 6, 9])
@pytest.mark.parametrize("lo", [0.3, -2.45])
def test_a_log_axis_is_readable_over_any_span(qapp, log_axis, decades, lo):
    panel, plot = log_axis
    d = view(qapp, panel, plot, lo, lo + decades)
    check_readable(d, plot.getAxis("left"))
    if decades == 1:  # 1, 2 and 5 times a power of ten (and 3 where one of those is at an end)
        assert {round(v / 10 ** math.floor(math.log10(v) + 1e-9)) for v, _y, _r in d.labels} <= {1, 2, 3, 5}
    else:
        assert all(abs(math.log10(v) - round(math.log10(v))) < 1e-9 for v, _y, _r in d.labels)


def c_rows(hi: float = 1e5):
    """fake_rows with the bulk c (the figure's column) from 0.5 to `hi`, evenly in log."""
    rows = fake_rows()
    n = len(rows) - 1
    return [dataclasses.replace(r, fitted_c_bulk=0.5 * (hi / 0.5) ** (i / n)) for i, r in enumerate(rows)]


def test_the_scaling_figure_labels_six_decades_of_c(qapp):
    """The fitted c from 0.5 to 10^5 (and the legend's room above): the y axis labels its
    decades as the figure is rendered, right after the rows are drawn."""
    panel = DecayConstantPanel()
    try:
        panel.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        panel.resize(720, 520)
        panel.show()
        qapp.processEvents()
        panel.show_rows(c_rows(), m_values=M_VALUES, lam_values=LAMS)
        settle(qapp, panel)
        axis = panel.plot.getAxis("left")
        d = drawn(axis)
        check_readable(d, axis)
        assert {1, 10, 100, 1000, 10_000, 100_000} <= {v for v, _y, _r in d.labels}
        assert len(d.lines) == len(d.labels)  # the figure's grid: at the labelled values only
    finally:
        panel.close()
        panel.deleteLater()
