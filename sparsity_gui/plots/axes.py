"""`Axis`: pyqtgraph's axis, its bounding rect worked out only when it can change, its
title set again only when its text changes, its tick values found without np.isclose;
`PlotViewBox`: pyqtgraph's view box, its right-click menu built at the first right click."""

from __future__ import annotations

from math import ceil

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

from sparsity_gui.plots import pg_compat


class Axis(pg.AxisItem):
    """pyqtgraph's AxisItem with its bounding rect kept until the axis or its view moves
    or resizes, the view's range or the grid or the style changes. With the grid on, the
    rect spans the view, and Qt asks for it 50-60 times a frame across the panels;
    pyqtgraph works it out anew each time (mapping both geometries): about 4 % of a
    frame's GUI time at m = 10^3 (py-spy, replay)."""

    _bounds: QtCore.QRectF | None = None
    _title_html: str | None = None  # what the title item was last given

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.geometryChanged.connect(self._forget_bounds)

    def _forget_bounds(self, *_args) -> None:
        self._bounds = None

    def boundingRect(self) -> QtCore.QRectF:
        if self._bounds is None:
            self._bounds = super().boundingRect()
        return QtCore.QRectF(self._bounds)

    def linkToView(self, view) -> None:
        super().linkToView(view)
        view.geometryChanged.connect(self._forget_bounds)  # the grid spans the view
        self._forget_bounds()

    def linkedViewChanged(self, view, newRange=None) -> None:
        self._forget_bounds()
        super().linkedViewChanged(view, newRange)

    def setGrid(self, grid) -> None:
        self._forget_bounds()
        super().setGrid(grid)

    def _updateLabel(self) -> None:
        """pyqtgraph sets the title's HTML again on every range change (for an SI prefix
        that rarely changes): a re-layout of its text each time, 54 of them in one frame
        in which the time axes stepped (5 ms). Set only when the text changes."""
        html = self.labelString()
        if html != self._title_html:
            self._title_html = html
            self.label.setHtml(html)
        pg_compat.adjust_axis_size(self)
        self.picture = None
        self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        """pyqtgraph's AxisItem.tickValues, value for value, with its test of which ticks a
        higher level already has written out: np.isclose's argument checks and conversions
        were 60 % of the call, and every axis whose range moves calls it (six bottom axes
        in a step of the shared time axis)."""
        lo, hi = sorted((minVal, maxVal))
        lo *= self.scale
        hi *= self.scale
        ticks = []
        seen = np.array([])
        for spacing, offset in self.tickSpacing(lo, hi, size):
            start = (ceil((lo - offset) / spacing) * spacing) + offset
            num = int((hi - start) / spacing) + 1
            values = (np.arange(num) * spacing + start) / self.scale
            # np.isclose(seen, values[:, None], rtol=0, atol=...), as it computes it
            column = values[:, np.newaxis]
            atol = spacing / self.scale * 0.01
            with np.errstate(invalid="ignore"):
                near = (np.abs(seen - column) <= atol) & np.isfinite(column) | (seen == column)
            close = near.any(axis=-1)
            values = values[~close]
            seen = np.concatenate([seen, values])
            ticks.append((spacing / self.scale, values.tolist()))
        if self.logMode:
            return self.logTickValues(lo, hi, size, ticks)
        return ticks

    def setStyle(self, **kwargs) -> None:
        self._forget_bounds()  # (tick length, label overlap: both widen the rect)
        super().setStyle(**kwargs)


def axes() -> dict[str, Axis]:
    """A plot's left and bottom axes, for PlotItem(axisItems=...) (pyqtgraph shows every
    axis it is given: the hidden top and right ones stay its own)."""
    return {side: Axis(side) for side in ("left", "bottom")}


def plot_parts() -> dict:
    """A panel plot's parts for PlotItem(**plot_parts()): its axes and a view box whose
    right-click menu is built when first asked for."""
    return {"axisItems": axes(), "viewBox": PlotViewBox()}


class PlotViewBox(pg.ViewBox):
    """pyqtgraph's view box with its right-click menu (View All, the X and Y axes' range,
    link and mouse settings, the mouse mode) built at the first right click instead of with
    the plot: the menu's two forms of widgets were the largest part of a plot's
    construction (about a third of a window's build CPU, py-spy), and most plots are never
    right-clicked. Everything pyqtgraph's menu offers stays, unchanged."""

    def __init__(self, *args, enableMenu: bool = True, **kwargs):  # noqa: N803 - pyqtgraph's name
        super().__init__(*args, enableMenu=False, **kwargs)
        self.menu_offered = enableMenu

    def setMenuEnabled(self, enableMenu: bool = True) -> None:  # noqa: N802, N803
        self.menu_offered = enableMenu
        if not enableMenu or self.menu is not None:
            super().setMenuEnabled(enableMenu)

    def menuEnabled(self) -> bool:  # noqa: N802 - pyqtgraph's name
        return self.menu_offered

    def getMenu(self, ev):  # noqa: N802 - pyqtgraph's name
        if self.menu is None and self.menu_offered:
            super().setMenuEnabled(True)  # (pyqtgraph builds its menu here)
        return self.menu

    def getContextMenus(self, event):  # noqa: N802 - pyqtgraph's name
        return self.getMenu(event).actions() if self.menu_offered else []
