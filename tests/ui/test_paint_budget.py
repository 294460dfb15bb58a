"""The paint budget (ui/painting.PanelPainting.paint_panels): on a real note window with
its real worker thread, frames over the budget leave up to half the panels for the next
frame, never more than one frame behind, and a paused or finished run shows on every
panel exactly what a window without the budget shows for the same snapshot: curves,
markers, lines, change markers and legends."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.plots.curves import CurveBundle, Marks
from sparsity_gui.plots.markers import ChangeMarkers

TIMEOUT = 30_000


def drawn(panel) -> list:
    """Everything a panel's plots show, item by item, in order: the data of curves and
    marks (the view's, after log axes), lines' places, change markers, legend texts."""
    out = []
    for plot in panel.plots:
        for item in plot.items:
            if not item.isVisible():
                out.append(("hidden", type(item).__name__))
            elif isinstance(item, pg.PlotDataItem):
                x, y = item.getData()
                out.append(("curve", None if x is None else x.tolist(), None if y is None else y.tolist()))
            elif isinstance(item, CurveBundle):
                curves = [item.getData(k) for k in range(item.curve_count)]
                out.append(("bundle", [[x.tolist(), y.tolist()] for x, y in curves]))
            elif isinstance(item, (Marks, pg.ScatterPlotItem)):
                x, y = item.getData()
                out.append(("marks", np.asarray(x).tolist(), np.asarray(y).tolist()))
            elif isinstance(item, pg.InfiniteLine):
                out.append(("line", item.value()))
            elif isinstance(item, ChangeMarkers):
                out.append(("changes", item.markers))
        if plot.legend is not None:
            out.append(("legend", [label.text for _sample, label in plot.legend.items]))
    return out


def frame(win) -> None:
    """One tick of the paint timer, and the views painted."""
    win.paint_latest()
    QtWidgets.QApplication.processEvents()


@pytest.mark.parametrize("end", ["paused", "finished"])
def test_staggered_frames_are_one_behind_at_most_and_exact_when_the_run_stops(qtbot, make_window, end):
    # (finished: at 80 time units a second the run reaches one weight in about 6 s, ~20 s at
    # 20, and shows dozens of running frames before)
    win = make_window(SimParams(m=3000, lam=3e-3, seed=4), speed=2.0 if end == "paused" else 80.0)
    win.paint_timer.stop()  # frames painted here, one at a time
    win.paint_budget_ms = 0.0  # every running frame is over it: staggered whenever possible
    seqs: list[int] = []  # the snapshot of each frame
    left: list[int] = []  # panels each running frame left for the next
    # running frames, until 40 or the run ends (a loaded machine paints few of a fast run)
    while len(seqs) < 40 and not (win.snapshot is not None and win.snapshot.state in ("finished", "error")):
        before, staggered = win.snapshot, win.staggered
        frame(win)
        snap = win.snapshot
        if snap is None or snap is before or snap.state != "running":
            qtbot.wait(10)
            continue
        seqs.append(snap.seq)
        left.append(win.staggered - staggered)
        if win.panels_owed and any(p.run_drawn != snap.run_id for p in win.painted_panels()):
            continue  # a new run's first frames (one panel a frame)
        for p in win.painted_panels():
            # drawn this frame, or left by it and drawn the frame before
            assert p.last.seq in seqs[-2:], (type(p).__name__, p.last.seq, seqs[-2:])
        qtbot.wait(12)
    assert len(seqs) >= 8
    assert win.staggered > 0
    heavy = [p for p in win.painted_panels() if p.STAGGERED]
    assert len(heavy) == 6  # every shown panel of the note's window may wait a frame
    assert max(left) <= len(heavy) // 2, left  # never more than half of them in one frame

    if end == "paused":
        QTest.keyClick(win, pg.QtCore.Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: (frame(win), win.snapshot.state == end)[1], timeout=TIMEOUT)
    for _ in range(3):
        frame(win)
    snap = win.snapshot
    assert all(p.last is snap for p in win.painted_panels())  # every panel at the same instant
    assert not win.panels_owed
    staggered = {type(p).__name__: drawn(p) for p in win.painted_panels()}

    # the same snapshot on a window without the budget (its own worker idle)
    other = make_window(SimParams(m=3000, lam=3e-3, seed=4), playing=False)
    other.paint_timer.stop()
    other.paint_budget_ms = None
    other.resize(win.size())
    other.snapshot = snap
    other.paint_panels(snap)
    QtWidgets.QApplication.processEvents()
    plain = {type(p).__name__: drawn(p) for p in other.painted_panels()}
    assert plain.keys() == staggered.keys()
    for name in plain:
        assert staggered[name] == plain[name], name
    assert any(kind == "bundle" for kind, *_ in staggered["ThresholdPanel"])


def test_no_budget_no_staggering(qtbot, make_window):
    win = make_window(SimParams(m=3000, lam=3e-3, seed=4), speed=2.0)
    win.paint_budget_ms = None
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0.5, timeout=TIMEOUT)
    assert win.staggered == 0


def test_the_fps_counts_frames_that_reach_the_screen(qtbot, make_window):
    """A frame drawn on the panels counts once its views paint it; ticks with nothing new
    and views painted with nothing new drawn (an expose, a resize) do not count."""
    win = make_window(SimParams(m=1000, lam=1e-3), speed=2.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "running", timeout=TIMEOUT)
    win.paint_timer.stop()
    QtWidgets.QApplication.processEvents()
    frames = win.frames
    for p in win.panels:
        p.graphics.viewport().repaint()  # painted, nothing new drawn
    assert win.frames == frames
    win.frame_drawn()
    assert win.frames == frames  # drawn, not yet on screen
    win.panels[0].graphics.viewport().repaint()
    win.panels[1].graphics.viewport().repaint()
    assert win.frames == frames + 1  # one frame, however many views paint it
