"""After Cancel the sweep tab's figure, and the sweep.json and figures/sweep.svg it saves, say the
sweep is cancelled and count only the m values that have runs. Real widget, real sweep
thread, real files."""

import json
import xml.etree.ElementTree as ET

import pytest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.ui.interference.sweep_tab import SweepWidget

TIMEOUT = 60_000
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def sweep_widget(show_tab):
    base = InterferenceParams(n=8, m=8, optimizer="gd-zero", l1=0.04, lr=0.05, steps=200, seed=3)
    return show_tab(SweepWidget(lambda: base), 1100, 600)


def test_cancelled_sweep_is_marked_on_the_figure_and_in_its_files(qtbot, sweep_widget, tmp_path):
    w = sweep_widget
    for field, text in ((w.n, "32"), (w.m, "32:4096:32"), (w.seeds, "1"), (w.steps, "3000")):
        field.edit.setText(text)
        field.edit.editingFinished.emit()
    assert w.start()
    planned = len(w.spec.runs())
    # while it runs the figure already says it holds fewer runs than planned
    qtbot.waitUntil(lambda: len(w.panel.rows) >= 1, timeout=TIMEOUT)
    assert f"INCOMPLETE: {len(w.panel.rows)} of {planned} planned runs" in w.panel.note.text
    qtbot.waitUntil(lambda: len(w.panel.rows) >= 2, timeout=TIMEOUT)
    w.cancel_button.click()
    qtbot.waitUntil(lambda: w.outcome == "cancelled", timeout=TIMEOUT)
    rows = list(w.rows)
    with_runs = sorted({r.m for r in rows})
    assert len(with_runs) < len(w.spec.m_values)
    text = w.panel.note.text
    assert f"CANCELLED: {len(rows)} of {planned} planned runs" in text
    assert "m with runs: " + ", ".join(map(str, with_runs)) in text
    assert f"{len(with_runs)} value{'s' if len(with_runs) > 1 else ''} of m" in text
    assert list(w.panel.summary.m) == with_runs
    # saved: sweep.json and the figure say the same
    assert w.save(tmp_path), w.info.text()
    meta = json.loads((tmp_path / "sweep.json").read_text())
    assert meta["complete"] is False and meta["runs_done"] == len(rows) and meta["runs_planned"] == planned
    assert meta["m_with_runs"] == with_runs
    assert meta["m_without_runs"] == [m for m in w.spec.m_values if m not in with_runs]
    root = ET.parse(tmp_path / "figures" / "sweep.svg").getroot()
    svg_text = " ".join("".join(t.itertext()) for t in root.iter(SVG + "text"))
    assert f"cancelled: {len(rows)} of {planned} runs" in svg_text
