"""pyqtgraph's private parts the panels use (plots/pg_compat.py): every one is there in
the installed pyqtgraph and the fast paths are taken (an upgrade that removes one fails
here instead of silently making the live window slower), and with the off switch every
fast path is off and the panels still draw their data."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from screen_pixels import near, screen_rgb, white_plot

from sparsity_gui.plots import pg_compat
from sparsity_gui.plots.curves import Dots, set_curve

X = np.linspace(0.05, 0.95, 7)


def test_every_touch_is_there_in_this_pyqtgraph():
    missing = [name for name, there in pg_compat.touches().items() if not there]
    assert not missing, f"pyqtgraph {pg.__version__} lacks {missing}: see plots/pg_compat.py"
    # the version is within the tested range that pyproject.toml's bounds keep
    version = tuple(int(p) for p in pg.__version__.split(".")[:2])
    oldest, newest = (tuple(int(p) for p in v.split(".")[:2]) for v in pg_compat.TESTED_PYQTGRAPH)
    assert oldest <= version <= newest


def test_the_fast_paths_are_taken(qtbot):
    _widget, plot = white_plot(qtbot)
    item = plot.plot(pen=pg.mkPen("#1f77b4"))
    assert pg_compat.put_curve_data(item, X, X**2, finite=True)
    np.testing.assert_array_equal(item.getData()[1], X**2)
    assert Dots("#1f77b4")._fragments is not None


def test_the_off_switch_turns_every_fast_path_off_and_the_panels_still_draw(qtbot, monkeypatch):
    monkeypatch.setenv(pg_compat.OFF_SWITCH, "1")
    assert not pg_compat.fast_curves() and not pg_compat.fast_dots()
    widget, plot = white_plot(qtbot)
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(0, 1, padding=0)
    line = plot.plot(pen=pg.mkPen("#d62728", width=1))
    assert not pg_compat.put_curve_data(line, X, X, finite=True)
    set_curve(line, X, 1 - X)  # through setData
    np.testing.assert_array_equal(line.getData()[1], 1 - X)
    dots = Dots("#1f77b4", size=5)
    assert dots._fragments is None
    plot.addItem(dots)
    dots.setData(X, X)
    image = screen_rgb(widget)
    blue, red = near(image, "#1f77b4"), near(image, "#d62728")
    for x in X:
        at = widget.mapFromScene(dots.mapToScene(pg.QtCore.QPointF(x, x)))
        assert blue[at.y() - 1 : at.y() + 2, at.x() - 1 : at.x() + 2].any(), f"no dot at {x}"
    assert red.sum() > 100  # the line, drawn by pyqtgraph's own path
