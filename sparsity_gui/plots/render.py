"""Live panels rendered by Qt to PNG and SVG bytes, from a live window or headless.

The exported figures are matplotlib's (sparsity_gui/figures/, PDF included); this Qt path
remains for checking what a live panel draws. pyqtgraph's SVGExporter raises with current
PySide6, so the SVG is drawn by Qt itself through QSvgGenerator, which keeps curves as
vector paths and titles, labels and ticks as text; the SVG is then made
plain SVG 1.1 (plots.svgplain: no vector-effect, which only Qt and browsers know, so
librsvg draws it alike). Exports always get a white background, dark text and
print-friendly line widths (about 2 px, against the live width of 1 chosen for speed),
applied only while rendering and then restored.

`ensure_app` gives headless callers an offscreen QApplication.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator

EXPORT_WIDTH = 2.0  # line width of exported curves, in px of the unscaled figure
PANEL_SIZE = (720, 520)  # px of a headless panel figure
DEFAULT_SCALE = 2.0
SVG_DPI = 96  # one figure px = one SVG user unit, so text and widths keep their size


def ensure_app():
    """The QApplication, created on the offscreen platform if there is none (so headless
    figures need no display). Returns (app, created)."""
    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance()
    if app is not None:
        return app, False
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # always offscreen: headless figures never open a window, with or without a display
    app = QtWidgets.QApplication([sys.argv[0] if sys.argv else "sparsity-gui", "-platform", "offscreen"])
    from sparsity_gui.plots import qtmessages

    qtmessages.install()
    return app, True


@contextlib.contextmanager
def antialiased() -> Iterator[None]:
    """Plot items built inside are antialiased (pyqtgraph reads the option when an item is
    made): headless figures are built this way, live panels are not (speed)."""
    import pyqtgraph as pg

    old = pg.getConfigOption("antialias")
    pg.setConfigOptions(antialias=True)
    try:
        yield
    finally:
        pg.setConfigOptions(antialias=old)


def delete_widgets(app, *widgets) -> None:
    """Close and delete widgets now, not at interpreter exit (a pyqtgraph widget still
    alive then can crash the process)."""
    from PySide6 import QtCore

    for widget in widgets:
        widget.close()
        widget.deleteLater()
    app.processEvents()
    app.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete.value)
    app.processEvents()


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_") or "panel"


# --- print style --------------------------------------------------------------------------
def _widened(pen, width: float):
    from PySide6 import QtGui

    new = QtGui.QPen(pen)
    new.setWidthF(width)
    return new


@contextlib.contextmanager
def print_style(panels: Iterable, scale: float = 1.0) -> Iterator[None]:
    """While rendering: white background, black axes and text, opaque white legends,
    curves and lines about EXPORT_WIDTH px wide (times `scale` for bitmaps, where a
    cosmetic pen's width is in device pixels), no item caching, antialiasing on.
    Everything is restored afterwards, whatever happens."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    restore: list = []
    width = EXPORT_WIDTH * scale
    try:
        for panel in panels:
            view = panel.graphics
            old_bg = getattr(view, "_background", "default")
            view.setBackground("w")
            restore.append(lambda v=view, b=old_bg: v.setBackground(b))
            seen: set[int] = set()
            for plot in panel.plots:
                for name in ("left", "bottom", "top", "right"):
                    axis = plot.getAxis(name)
                    saved = (axis._pen, axis._textPen, dict(axis.labelStyle))
                    # axes and grid lines as wide in a PNG at `scale` as in the SVG
                    axis.setPen(pg.mkPen("k", width=scale))
                    axis.setTextPen("k")

                    def undo_axis(a=axis, saved=saved):
                        # exactly as before (None: "follow the configured foreground")
                        a._pen, a._textPen = saved[0], saved[1]
                        a.labelStyle.clear()
                        a.labelStyle.update(saved[2])
                        a.picture = None
                        a._updateLabel()
                        a.update()

                    restore.append(undo_axis)
                title = plot.titleLabel
                if title.text:
                    old_color = title.opts.get("color")
                    title.setText(title.text, color="k")
                    restore.append(lambda t=title, c=old_color: t.setText(t.text, color=c))
                items = list(plot.items)
                legend = plot.legend
                if legend is not None:
                    old_text, old_brush = legend.opts["labelTextColor"], legend.opts["brush"]
                    legend.opts["labelTextColor"] = pg.mkColor("k")
                    legend.setBrush(pg.mkBrush(255, 255, 255, 235))
                    # pyqtgraph's legend ignores transformations: a PNG at scale 2 would get
                    # it at screen size, half the size of every other text
                    fixed = QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations
                    if legend.flags() & fixed:
                        legend.setFlag(fixed, False)
                        restore.append(lambda lg=legend, f=fixed: lg.setFlag(f, True))
                    restore.append(
                        lambda lg=legend, c=old_text, b=old_brush: (
                            lg.opts.__setitem__("labelTextColor", c),
                            lg.setBrush(b),
                        )
                    )
                    for _sample, label in legend.items:
                        old_color = label.opts.get("color")
                        label.setText(label.text, color="k")
                        restore.append(lambda lb=label, c=old_color: lb.setText(lb.text, color=c))
                    items.extend(sample.item for sample, _label in legend.items)
                for item in items:
                    if id(item) in seen:
                        continue
                    seen.add(id(item))
                    if isinstance(item, pg.PlotDataItem):
                        old = item.opts["pen"]
                        if old is not None and not isinstance(old, (list, tuple)):
                            old_pen = pg.mkPen(old)
                            # pinned runs' curves are drawn thinner (plots.pins)
                            share = getattr(item, "export_width_share", 1.0)
                            item.setPen(_widened(old_pen, width * share))
                            restore.append(lambda i=item, p=old: i.setPen(p))
                        # a wide solid pen is drawn as separate segments (fast on screen, but
                        # in SVG a curve must stay one path)
                        curve = item.curve
                        old_mode = curve.opts.get("segmentedLineMode", "auto")
                        curve.setSegmentedLineMode("off")
                        restore.append(lambda c=curve, m=old_mode: c.setSegmentedLineMode(m))
                    elif isinstance(item, pg.InfiniteLine):
                        old_pen = item.pen
                        item.setPen(_widened(old_pen, width))
                        restore.append(lambda i=item, p=old_pen: i.setPen(p))
                    elif isinstance(item, pg.ErrorBarItem):
                        old_pen = item.opts["pen"]
                        item.setData(pen=_widened(pg.mkPen(old_pen), width))
                        restore.append(lambda i=item, p=old_pen: i.setData(pen=p))
            # cached pixmaps would end up as bitmaps in SVG, and at the wrong scale in PNG
            for item in view.scene().items():
                mode = item.cacheMode()
                if mode != QtWidgets.QGraphicsItem.CacheMode.NoCache:
                    item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.NoCache)
                    restore.append(lambda i=item, m=mode: i.setCacheMode(m))
        yield
    finally:
        for undo in reversed(restore):
            undo()


@contextlib.contextmanager
def export_mode(panels: Iterable, painter, scale: float) -> Iterator[None]:
    """pyqtgraph's own export switch: scatter symbols are drawn as shapes (not from a
    pixmap atlas) and curves antialiased."""
    from PySide6 import QtGui

    opts = {
        "antialias": True,
        "background": QtGui.QColor("white"),
        "painter": painter,
        "resolutionScale": scale,
    }
    items = [
        item for panel in panels for item in panel.graphics.scene().items() if hasattr(item, "setExportMode")
    ]
    for item in items:
        item.setExportMode(True, opts)
    try:
        yield
    finally:
        for item in items:
            item.setExportMode(False)


# --- rendering ------------------------------------------------------------------------------
def _panel_source(panel):
    from PySide6 import QtCore

    view = panel.graphics
    size = view.viewport().size()
    w, h = max(size.width(), 1), max(size.height(), 1)
    # pyqtgraph's GraphicsView has an identity transform: the viewport is w x h scene units
    return view.scene(), QtCore.QRectF(view.mapToScene(0, 0), QtCore.QSizeF(w, h)), w, h


def _png_bytes(image) -> bytes:
    from PySide6 import QtCore

    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise RuntimeError("Qt could not encode the PNG image")
    return bytes(buf.data())


def _paint(painter, panels: list, scale: float, draw) -> None:
    with print_style(panels, scale), export_mode(panels, painter, scale):
        draw()


def _render(fmt: str, w: int, h: int, scale: float, title: str, panels: list, draw_into) -> bytes:
    """Render something of w x h px to PNG (at `scale`) or SVG; `draw_into(painter,
    target_rect)` paints it."""
    from PySide6 import QtCore, QtGui

    fmt = fmt.lower()
    if fmt == "png":
        if not (0 < scale <= 16):
            raise ValueError(f"PNG scale must be > 0 and at most 16, got {scale}")
        W, H = max(int(round(w * scale)), 1), max(int(round(h * scale)), 1)
        image = QtGui.QImage(W, H, QtGui.QImage.Format.Format_ARGB32)
        image.fill(QtGui.QColor("white"))
        painter = QtGui.QPainter(image)
        try:
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
            painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
            _paint(painter, panels, scale, lambda: draw_into(painter, QtCore.QRectF(0, 0, W, H), scale))
        finally:
            painter.end()
        return _png_bytes(image)
    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if fmt == "svg":
        from PySide6 import QtSvg

        gen = QtSvg.QSvgGenerator()
        gen.setOutputDevice(buf)
        gen.setSize(QtCore.QSize(w, h))
        gen.setViewBox(QtCore.QRect(0, 0, w, h))
        gen.setResolution(SVG_DPI)
        gen.setTitle(title)
        gen.setDescription("sparsity-gui figure")
        painter = QtGui.QPainter()
        if not painter.begin(gen):
            raise RuntimeError("Qt could not start the SVG generator")
    else:
        raise ValueError(f"unknown figure format {fmt!r} (use png or svg)")
    try:
        target = QtCore.QRectF(0, 0, w, h)
        painter.fillRect(target, QtGui.QColor("white"))
        _paint(painter, panels, 1.0, lambda: draw_into(painter, target, 1.0))
    finally:
        painter.end()
    data = bytes(buf.data())
    if not data:
        raise RuntimeError(f"Qt wrote an empty {fmt.upper()} file")
    if fmt == "svg":
        import xml.etree.ElementTree as ET

        from sparsity_gui.plots.svgplain import plain_svg

        # Qt writes SVG Tiny 1.2 with vector-effect, which librsvg & co. draw as bands
        try:
            data = plain_svg(data)
        except (ValueError, ET.ParseError) as exc:
            raise RuntimeError(f"could not write plain SVG 1.1 from Qt's SVG: {exc}") from None
    return data


def render_panel(panel, fmt: str, scale: float = DEFAULT_SCALE) -> bytes:
    """One panel's plots (not its toggles) as PNG or SVG bytes."""
    scene, source, w, h = _panel_source(panel)

    def draw(painter, target, _scale):
        scene.render(painter, target, source)

    return _render(fmt, w, h, scale, panel.title, [panel], draw)


def render_widget(widget, fmt: str, scale: float = DEFAULT_SCALE, panels: Iterable = ()) -> bytes:
    """A whole widget (the window, or a layout of panels) as PNG or SVG bytes, with
    the print style applied to `panels` inside it."""
    from PySide6 import QtCore, QtGui, QtWidgets

    w, h = max(widget.width(), 1), max(widget.height(), 1)

    def draw(painter, target, _scale):
        painter.save()
        painter.scale(target.width() / w, target.height() / h)
        widget.render(
            painter,
            QtCore.QPoint(0, 0),
            QtGui.QRegion(),
            QtWidgets.QWidget.RenderFlag.DrawChildren | QtWidgets.QWidget.RenderFlag.DrawWindowBackground,
        )
        painter.restore()

    return _render(fmt, w, h, scale, widget.windowTitle() or "sparsity-gui", list(panels), draw)
