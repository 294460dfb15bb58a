"""A right click on a plot of the window opens pyqtgraph's menu (View All, the X and Y axes,
the mouse mode, Plot Options, and our Export panel…), built at that first right click
(plots/axes.PlotViewBox) rather than with the plot: the menu and its actions work as
before. Real mouse events on the offscreen window."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.plots.axes import PlotViewBox

# (menus on the offscreen platform)
pytestmark = pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing")


def _right_click(qtbot, plot: pg.PlotItem) -> QtWidgets.QMenu:
    view = plot.scene().views()[0]
    at = view.mapFromScene(plot.vb.mapToScene(plot.vb.boundingRect().center()))
    QTest.mouseClick(view.viewport(), QtCore.Qt.MouseButton.RightButton, pos=at)
    qtbot.waitUntil(lambda: isinstance(QtWidgets.QApplication.activePopupWidget(), QtWidgets.QMenu))
    return QtWidgets.QApplication.activePopupWidget()


def _click(qtbot, menu: QtWidgets.QMenu, text: str) -> None:
    action = next(a for a in menu.actions() if a.text() == text)
    QTest.mouseClick(menu, QtCore.Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())
    qtbot.waitUntil(lambda: QtWidgets.QApplication.activePopupWidget() is None)


def test_a_right_click_opens_the_menu_and_its_actions_work(qtbot, note_window):
    win = note_window(playing=False)
    plots = [p for panel in win.panels for p in panel.plots]
    assert plots and all(isinstance(p.vb, PlotViewBox) for p in plots)
    assert all(p.vb.menu is None for p in plots), "no menu is built with the window"
    panel = win.panels[0]
    plot = panel.plots[0]
    (x0, x1), (y0, y1) = plot.vb.viewRange()
    # zoomed into a corner of the data
    plot.vb.setRange(xRange=(x0, x0 + (x1 - x0) / 100), yRange=(y0, y0 + (y1 - y0) / 100), padding=0)

    menu = _right_click(qtbot, plot)
    assert menu is plot.vb.menu
    texts = [a.text() for a in menu.actions()]
    for wanted in ("View All", "X axis", "Y axis", "Mouse Mode", "Plot Options", "Export panel…"):
        assert wanted in texts, f"{wanted!r} not in the plot's menu {texts}"
    assert all(p.vb.menu is None for p in plots if p is not plot), "only the clicked plot's menu is built"

    _click(qtbot, menu, "View All")
    (a0, a1), (b0, b1) = plot.vb.viewRange()
    data = plot.vb.childrenBounds()
    assert a0 <= data[0][0] and a1 >= data[0][1] and b0 <= data[1][0] and b1 >= data[1][1]
    assert a1 - a0 > (x1 - x0) / 100

    # the second right click shows the same menu; its Mouse Mode sets the view's mode
    menu = _right_click(qtbot, plot)
    assert menu is plot.vb.menu
    modes = next(a.menu() for a in menu.actions() if a.text() == "Mouse Mode")
    at = menu.actionGeometry(modes.menuAction()).center()
    QTest.mouseClick(menu, QtCore.Qt.MouseButton.LeftButton, pos=at)
    qtbot.waitUntil(lambda: QtWidgets.QApplication.activePopupWidget() is modes)
    assert plot.vb.state["mouseMode"] == pg.ViewBox.PanMode
    _click(qtbot, modes, "1 button")
    assert plot.vb.state["mouseMode"] == pg.ViewBox.RectMode
    plot.vb.setMouseMode(pg.ViewBox.PanMode)


def test_a_plot_whose_menu_is_turned_off_offers_none(qtbot):
    view = PlotViewBox(enableMenu=False)
    assert not view.menuEnabled() and view.getContextMenus(None) == []
    view.setMenuEnabled(True)
    assert view.menuEnabled() and view.menu is None  # still built only when asked for
    assert view.getMenu(None) is view.menu is not None
    view.setMenuEnabled(False)
    assert view.menu is None and not view.menuEnabled()
