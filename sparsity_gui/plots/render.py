"""Figures: the panels rendered to PNG, SVG and PDF, live or headless.

pyqtgraph's SVGExporter fails with current Qt (GUIDE.md), so every vector format is drawn
by Qt itself: the panel's scene is rendered through QSvgGenerator or QPdfWriter, which
keeps curves as vector paths and titles, labels and ticks as text. Exports always get a
white background, dark text and print-friendly line widths (about 2 px, against the
live width of 1 chosen for speed), applied only while rendering and then restored.

`write_figures(run, folder)` is the headless `run --figures`: it creates an offscreen
QApplication if there is none, builds the six panels from the run's rows, writes each as
PNG and SVG plus the whole layout as PNG, and tears everything down before returning.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sys
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

EXPORT_WIDTH = 2.0  # line width of exported curves, in px of the unscaled figure
PANEL_SIZE = (720, 520)  # px of a headless panel figure
LAYOUT_SIZE = (1800, 1040)  # px of the headless six-panel layout
DEFAULT_SCALE = 2.0
PDF_DPI = 96  # one figure px = one PDF device unit, so text and widths keep their size
FORMATS = ("png", "svg", "pdf")


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
                    axis.setPen("k")
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
                    restore.append(lambda lg=legend, c=old_text, b=old_brush: (
                        lg.opts.__setitem__("labelTextColor", c), lg.setBrush(b)))
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
                            item.setPen(_widened(old_pen, width))
                            restore.append(lambda i=item, p=old: i.setPen(p))
                        # a wide solid pen is drawn as separate segments (fast on screen, but
                        # in SVG/PDF a curve must stay one path)
                        curve = item.curve
                        old_mode = curve.opts.get("segmentedLineMode", "auto")
                        curve.setSegmentedLineMode("off")
                        restore.append(lambda c=curve, m=old_mode: c.setSegmentedLineMode(m))
                    elif isinstance(item, pg.InfiniteLine):
                        old_pen = item.pen
                        item.setPen(_widened(old_pen, width))
                        restore.append(lambda i=item, p=old_pen: i.setPen(p))
            # cached pixmaps would end up as bitmaps in SVG/PDF, and at the wrong scale in PNG
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

    opts = {"antialias": True, "background": QtGui.QColor("white"), "painter": painter,
            "resolutionScale": scale}
    items = [item for panel in panels for item in panel.graphics.scene().items()
             if hasattr(item, "setExportMode")]
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
    """Render something of w x h px to PNG (at `scale`), SVG or PDF; `draw_into(painter,
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
        gen.setResolution(PDF_DPI)
        gen.setTitle(title)
        gen.setDescription("sparsity-gui figure")
        painter = QtGui.QPainter()
        if not painter.begin(gen):
            raise RuntimeError("Qt could not start the SVG generator")
    elif fmt == "pdf":
        gen = QtGui.QPdfWriter(buf)
        gen.setResolution(PDF_DPI)
        gen.setPageSize(QtGui.QPageSize(QtCore.QSizeF(w * 72.0 / PDF_DPI, h * 72.0 / PDF_DPI),
                                        QtGui.QPageSize.Unit.Point, title,
                                        QtGui.QPageSize.SizeMatchPolicy.ExactMatch))
        gen.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
        gen.setTitle(title)
        gen.setCreator("sparsity-gui")
        painter = QtGui.QPainter()
        if not painter.begin(gen):
            raise RuntimeError("Qt could not start the PDF writer")
    else:
        raise ValueError(f"unknown figure format {fmt!r} (use png, svg or pdf)")
    try:
        vp = painter.viewport()
        target = QtCore.QRectF(0, 0, vp.width(), vp.height()) if fmt == "pdf" else QtCore.QRectF(0, 0, w, h)
        painter.fillRect(target, QtGui.QColor("white"))
        _paint(painter, panels, 1.0, lambda: draw_into(painter, target, 1.0))
    finally:
        painter.end()
    data = bytes(buf.data())
    if not data:
        raise RuntimeError(f"Qt wrote an empty {fmt.upper()} file")
    return data


def render_panel(panel, fmt: str, scale: float = DEFAULT_SCALE) -> bytes:
    """One panel's plots (not its toggles) as PNG, SVG or PDF bytes."""
    scene, source, w, h = _panel_source(panel)

    def draw(painter, target, _scale):
        scene.render(painter, target, source)

    return _render(fmt, w, h, scale, panel.title, [panel], draw)


def render_widget(widget, fmt: str, scale: float = DEFAULT_SCALE, panels: Iterable = ()) -> bytes:
    """A whole widget (the window, or a layout of panels) as PNG, SVG or PDF bytes, with
    the print style applied to `panels` inside it."""
    from PySide6 import QtCore, QtGui, QtWidgets

    w, h = max(widget.width(), 1), max(widget.height(), 1)

    def draw(painter, target, _scale):
        painter.save()
        painter.scale(target.width() / w, target.height() / h)
        widget.render(painter, QtCore.QPoint(0, 0), QtGui.QRegion(),
                      QtWidgets.QWidget.RenderFlag.DrawChildren
                      | QtWidgets.QWidget.RenderFlag.DrawWindowBackground)
        painter.restore()

    return _render(fmt, w, h, scale, widget.windowTitle() or "sparsity-gui", list(panels), draw)


# --- headless panels from a run's rows -------------------------------------------------
def snapshot_of(run):
    """A Snapshot (what the panels draw) of a sampled run: its rows as the history and its
    final state for the weight panels."""
    from sparsity_gui.core.note.runner import Runner, decimated_ranks

    sim = run.sim
    runner = Runner(sim.params, warm_up=False, playing=False)
    runner.sim = sim
    runner.run_id = 1
    runner.state = "finished"
    snap = runner.make_snapshot(0.0)
    mo = sim.moments()
    ranks = decimated_ranks(mo.nonzero, sim.m)
    changes = dict(history=np.array(run.rows, copy=True), fitted_c=run.fitted_c, ranks=ranks,
                   sorted_abs=sim.solver.abs_at_ranks(ranks), t_one=run.t_one,
                   steps_per_second=0.0, sim_time_per_second=0.0)
    names = {f.name for f in dataclasses.fields(snap)}
    return dataclasses.replace(snap, **{k: v for k, v in changes.items() if k in names})


def panel_view_state(panel) -> dict:
    """The user's view choices on a panel (toggles, tracked count), to copy onto a fresh one."""
    from PySide6 import QtWidgets

    state: dict = {"checks": [b.isChecked() for b in panel.findChildren(QtWidgets.QCheckBox)]}
    count = getattr(panel, "count", None)
    if isinstance(count, QtWidgets.QSpinBox):
        state["count"] = count.value()
    return state


def _apply_view_state(panel, state: dict | None) -> None:
    from PySide6 import QtWidgets

    if not state:
        return
    boxes = panel.findChildren(QtWidgets.QCheckBox)
    for box, checked in zip(boxes, state.get("checks", ())):
        box.blockSignals(True)
        box.setChecked(checked)
        box.blockSignals(False)
    if "count" in state and isinstance(getattr(panel, "count", None), QtWidgets.QSpinBox):
        panel.count.blockSignals(True)
        panel.count.setValue(state["count"])
        panel.count.blockSignals(False)
    panel.apply_toggles()


class FigureSet:
    """The six panels (in a hidden host widget laid out like the window's centre) drawn
    from one snapshot. Use as a context manager: the widgets are deleted on exit."""

    def __init__(self, snap, view_states: list[dict] | None = None,
                 layout_size: tuple[int, int] = LAYOUT_SIZE):
        import pyqtgraph as pg
        from PySide6 import QtCore, QtWidgets

        from sparsity_gui.plots.note import PANEL_TYPES

        self.app, _ = ensure_app()
        old_aa = pg.getConfigOption("antialias")
        pg.setConfigOptions(antialias=True)
        try:
            self.host = QtWidgets.QWidget()
            self.host.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
            self.host.setStyleSheet("background: white;")
            grid = QtWidgets.QGridLayout(self.host)
            grid.setContentsMargins(2, 2, 2, 2)
            grid.setSpacing(3)
            self.panels = [cls() for cls in PANEL_TYPES]
        finally:
            pg.setConfigOptions(antialias=old_aa)
        for i, panel in enumerate(self.panels):
            grid.addWidget(panel, i // 3, i % 3)
            if view_states and i < len(view_states):
                _apply_view_state(panel, view_states[i])
        self.host.resize(*layout_size)
        self.host.show()
        self.app.processEvents()
        for panel in self.panels:
            panel.update_from(snap)
        self.app.processEvents()

    def render_panel(self, panel, fmt: str, scale: float = DEFAULT_SCALE,
                     size: tuple[int, int] = PANEL_SIZE) -> bytes:
        """A panel on its own at `size` px: taken out of the grid while it is rendered."""
        from PySide6 import QtCore

        layout = self.host.layout()
        index = layout.indexOf(panel)
        pos = layout.getItemPosition(index)
        layout.removeWidget(panel)
        panel.setParent(None)
        panel.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        panel.resize(*size)
        panel.show()
        self.app.processEvents()
        try:
            return render_panel(panel, fmt, scale)
        finally:
            panel.hide()
            layout.addWidget(panel, pos[0], pos[1])
            panel.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, False)
            panel.show()
            self.app.processEvents()

    def render_layout(self, fmt: str = "png", scale: float = DEFAULT_SCALE) -> bytes:
        return render_widget(self.host, fmt, scale, self.panels)

    def files(self, formats: Iterable[str] = ("png", "svg"), scale: float = DEFAULT_SCALE,
              layout_name: str | None = "layout") -> dict[str, bytes]:
        """{file name: bytes} of every panel in each format, and the layout as PNG."""
        out: dict[str, bytes] = {}
        for panel in self.panels:
            for fmt in formats:
                out[f"{slug(panel.title)}.{fmt}"] = self.render_panel(panel, fmt, scale)
        if layout_name:
            out[f"{layout_name}.png"] = self.render_layout("png", scale=1.0)
        return out

    def close(self) -> None:
        from PySide6 import QtCore

        for panel in self.panels:
            panel.close()
            panel.deleteLater()
        self.host.close()
        self.host.deleteLater()
        self.panels = []
        self.app.processEvents()
        self.app.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete.value)
        self.app.processEvents()

    def __enter__(self) -> "FigureSet":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def tracked_csv(run) -> str:
    """|W_k|(t) of the tracked weights (the threshold panel's curves): t, then a column
    per weight named by its input index."""
    from sparsity_gui.core.files import csv_text
    from sparsity_gui.core.note.metrics import COL, COLUMNS

    sim = run.sim
    ks = sim.init.order[sim.tracked]
    rows = run.rows
    table = np.column_stack([rows[:, COL["t"]], rows[:, len(COLUMNS):len(COLUMNS) + len(ks)]])
    return csv_text(["t", *[f"w{int(k)}" for k in ks]], table)


def write_figures(run, folder: str | Path, view_states: list[dict] | None = None,
                  scale: float = DEFAULT_SCALE) -> list[Path]:
    """`run --figures`: each panel as PNG and SVG and the whole layout as PNG in `folder`,
    plus tracked.csv (the threshold panel's tracked weights, the one figure input that is
    not in timeseries.csv). Works without a display; leaves no widget alive."""
    from sparsity_gui.core.errors import InputError
    from sparsity_gui.core.files import atomic_write_bytes

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        app, created = ensure_app()
        snap = snapshot_of(run)
        with FigureSet(snap, view_states) as figs:
            files = figs.files(("png", "svg"), scale)
    except ImportError as exc:
        raise InputError("figures", f"drawing figures needs PySide6 and pyqtgraph ({exc})") from None
    except RuntimeError as exc:
        raise InputError("figures", str(exc)) from None
    written = []
    for name, data in files.items():
        atomic_write_bytes(folder / name, data)
        written.append(folder / name)
    atomic_write_bytes(folder / "tracked.csv", tracked_csv(run).encode("utf-8"))
    written.append(folder / "tracked.csv")
    if created:
        app.processEvents()
    return written
