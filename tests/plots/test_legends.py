"""Legends never cover data: every panel's legend is a row under its plot's x axis
(plots.legend.LegendRow), in scene coordinates, at the tick labels' size, and scales with
an export like everything else (pyqtgraph's own legend ignores the view's transform, so an
export at scale 2 drew it at half size). Real panels drawn from a real sampled run."""

from __future__ import annotations

import pytest
from legend_checks import check_legends_clear_of_data
from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import simulate_samples
from sparsity_gui.figures.note.figures import run_snapshot as sampled_snapshot
from sparsity_gui.plots.note import PANEL_TYPES
from sparsity_gui.plots.qt_setup import prepare_qt

# a panel's size in the note window's 3 x 2 grid at 1600 x 1000 and at 1366 x 768, and
# the size of a headless panel figure
SIZES = ((520, 430), (440, 300), (720, 520))


@pytest.fixture(scope="module")
def snap():
    run = simulate_samples(SimParams(m=400, lam=1e-2, seed=5), None, 201)
    return sampled_snapshot(run)


def make_panel(qtbot, cls, size):
    prepare_qt()
    panel = cls()
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    QtWidgets.QApplication.processEvents()
    return panel


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_note_panels_legends_do_not_cover_data(qtbot, snap, size):
    checked = 0
    for cls in PANEL_TYPES:
        panel = make_panel(qtbot, cls, size)
        panel.update_from(snap)
        checked += check_legends_clear_of_data(panel)
    assert checked == 7  # one a panel (a stacked pair shares one, under both), and the phase plane


def test_legends_follow_toggles_and_label_changes(qtbot, snap):
    """Log axes, w = 1/‖W‖₁ (longer labels) and a different tracked count: still clear."""
    for cls in PANEL_TYPES:
        panel = make_panel(qtbot, cls, SIZES[1])
        for box in panel.findChildren(QtWidgets.QCheckBox):
            box.setChecked(not box.isChecked())
        if hasattr(panel, "count"):
            panel.count.setValue(3)
        panel.update_from(snap)
        check_legends_clear_of_data(panel)


def test_entries_flow_into_columns_that_fit_the_width(qtbot, snap):
    panel = make_panel(qtbot, PANEL_TYPES[0], (900, 500))
    panel.update_from(snap)
    legend = panel.plot.legend
    wide_columns = legend.columns  # the most entries in a row
    assert wide_columns >= 2
    panel.resize(330, 500)
    QtWidgets.QApplication.processEvents()
    assert legend.columns < wide_columns
    check_legends_clear_of_data(panel)
    # every entry is as wide as its text: the rows hold them side by side without overlap
    boxes = [label.sceneBoundingRect() for _s, label in legend.items]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.intersects(b)


def test_sweep_panel_legend_is_clear_of_data(qtbot):
    from sparsity_gui.plots.interference.sweep import SweepPanel
    from tests.plots.interference.test_sweep_figure import ROWS

    # the headless figure, and the sweep tab's plot in windows of 1600 x 1000 and 1366 x 768
    for size in ((720, 520), (1000, 560), (760, 420)):
        panel = make_panel(qtbot, SweepPanel, size)
        panel.show_rows(ROWS, m_values=[8, 16, 32, 64, 128], planned_runs=20)
        assert check_legends_clear_of_data(panel) == 1
        # the text under the plot is shown whole too
        view = QtCore.QRectF(panel.graphics.viewport().rect())
        assert view.contains(panel.note.sceneBoundingRect())


def test_a_relayout_leaves_no_layout_behind(qtbot, snap):
    """Each re-flow of a legend's rows (every rename of a pinned run at a live λ change,
    every new width) made new row layouts, and Qt's removeAt deletes none: the window grew
    by 4-6 MB a minute with pins. The rows' old layouts are deleted, and a thousand
    re-flows end with no more rows than entries."""
    import shiboken6

    panel = make_panel(qtbot, PANEL_TYPES[0], (900, 500))
    panel.update_from(snap)
    legend = panel.plot.legend
    item = legend.items[0][0].item
    old_lines = []
    for k in range(1000):
        old_lines.extend(legend._lines)
        legend.set_label(item, "x" * (5 + 200 * (k % 2)))  # short, then too long for one row
        legend.relayout(force=True)
    assert old_lines and not any(shiboken6.isValid(line) for line in old_lines)
    assert all(shiboken6.isValid(line) for line in legend._lines)
    assert len(legend._lines) <= len(legend.items)
    check_legends_clear_of_data(panel)
