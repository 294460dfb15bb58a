"""The sweep over m in the GUI: its own thread, a progress bar, cancel, the figure, saving.
Real widgets, real threads, real files."""

import json
import time

import numpy as np
import pytest

from sparsity_gui.core.checks import default_workers
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import ROW_COLUMNS, SweepSpec
from sparsity_gui.core.text import format_duration
from sparsity_gui.ui.interference.sweep_tab import SweepWidget

TIMEOUT = 60_000
BASE = InterferenceParams(n=8, m=8, optimizer="gd-zero", l1=0.04, lr=0.05, steps=200, seed=3)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def sweep_widget(show_tab):
    params = {"p": BASE}
    widget = SweepWidget(lambda: params["p"])
    widget.params = params  # the test changes the "window's" parameters through this
    return show_tab(widget, 1100, 600)


def fill(widget, n, m, seeds, steps):
    for field, text in ((widget.n, n), (widget.m, m), (widget.seeds, seeds), (widget.steps, steps)):
        field.edit.setText(text)
        field.edit.editingFinished.emit()


def test_a_small_sweep_completes_with_the_bar_full(qtbot, sweep_widget):
    w = sweep_widget
    fill(w, "8", "8,16", "2", "200")
    started = []
    finished = []
    w.started.connect(started.append)
    w.finished.connect(lambda: finished.append(True))
    assert w.start()
    assert started == [True]  # the window is asked to pause its live run
    assert w.workers.value() == default_workers()  # runs side by side (SweepSpec.run's threads)
    assert not w.start_button.isEnabled() and w.cancel_button.isEnabled()
    assert w.job.worker.name == "sweep" and w.job.worker is not __import__("threading").main_thread()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert finished == [True]
    assert w.progress.value() == w.progress.maximum()
    assert "100%" in w.progress.text() and "4 / 4 runs" in w.progress.text()
    assert w.start_button.isEnabled() and not w.cancel_button.isEnabled() and w.save_button.isEnabled()
    # the rows are the core's, run by run: a sweep run here, one run at a time, agrees
    spec = SweepSpec(base=BASE.with_changes(n=8, m=8, steps=200), m_values=(8, 16), seeds=2)
    expect = spec.run()
    got = sorted(w.rows, key=lambda r: (r.m, r.seed))
    assert [(r.m, r.seed, r.polysemantic, r.opposite_pairs, r.same_pairs) for r in got] == [
        (r.m, r.seed, r.polysemantic, r.opposite_pairs, r.same_pairs) for r in expect
    ]
    # the figure shows them: a point per run and the prediction n^2/(4m) over the swept m
    panel = w.panel
    assert len(panel.rows) == 4 and panel.n == 8 and panel.m_values == (8, 16)
    px, py = panel.prediction.getOriginalDataset()
    np.testing.assert_allclose(py, 64 / (4 * px))
    assert px.min() == pytest.approx(8) and px.max() == pytest.approx(16)


def test_bad_fields_are_shown_and_nothing_starts(qtbot, sweep_widget):
    w = sweep_widget
    for field, text, reason in (
        (w.m, "abc", "expected a list"),
        (w.m, "0:10:0", "start:stop:step"),
        (w.m, "100000", "65536"),
        (w.seeds, "0", "from 1"),
        (w.n, "-3", "from 1"),
        (w.steps, "x", "'x' is not a whole number"),  # steps takes a list now
    ):
        fill(w, "8", "8,16", "2", "200")
        field.edit.setText(text)
        field.edit.editingFinished.emit()
        assert not w.start(), text
        assert field.error.isVisibleTo(w), text
        assert reason in field.error.text(), (text, field.error.text())
        assert w.job is None
    fill(w, "8", "8", "1", "50")
    assert not any(f.error.isVisibleTo(w) for f in w.fields.values())
    # the base parameters are checked too: the window's lr and weight decay meet here
    w.params["p"] = BASE.with_changes(optimizer="adamw")
    assert w.start()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert {r.optimizer for r in w.rows} == {"adamw"}


def test_cancel_stops_promptly_and_keeps_the_finished_runs(qtbot, sweep_widget, tmp_path):
    w = sweep_widget
    # first runs are quick, the sweep as a whole takes minutes
    fill(w, "32", "32:4096:32", "4", "20000")
    assert w.start()
    qtbot.waitUntil(lambda: len(w.panel.rows) >= 2, timeout=TIMEOUT)
    thread = w.job.worker
    t0 = time.perf_counter()
    w.cancel_button.click()
    qtbot.waitUntil(lambda: w.outcome == "cancelled", timeout=TIMEOUT)
    print(f"cancel took {time.perf_counter() - t0:.2f} s")
    assert not thread.is_alive()
    kept = len(w.rows)
    # stopped, not run out: 2 to a few of the 128 x 4 runs (minutes of work) are kept
    assert 2 <= kept < 128 * 4 and len(w.panel.rows) == kept
    assert "cancelled" in w.progress.text() and f"{kept} / " in w.progress.text()
    assert w.start_button.isEnabled() and w.save_button.isEnabled()
    # the partial sweep can be saved: csv, json (saying it is incomplete) and the figure
    assert w.save(tmp_path), w.info.text()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["figures", "sweep.csv", "sweep.json"]
    figures = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert figures == [f"sweep.{ext}" for ext in ("json", "pdf", "png", "py", "svg")]
    lines = (tmp_path / "sweep.csv").read_text().splitlines()
    assert lines[0].split(",") == list(ROW_COLUMNS) and len(lines) == kept + 1
    meta = json.loads((tmp_path / "sweep.json").read_text())
    assert meta["runs_done"] == kept and meta["complete"] is False
    assert (tmp_path / "figures" / "sweep.png").read_bytes().startswith(PNG_MAGIC)
    # and the widget is usable again: a new small sweep runs to the end
    fill(w, "8", "8", "1", "100")
    assert w.start()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert len(w.rows) == 1


def test_shutdown_with_a_sweep_running_joins_its_thread(qtbot, sweep_widget):
    w = sweep_widget
    fill(w, "64", "64:4096:64", "4", "100000")
    assert w.start()
    qtbot.waitUntil(lambda: w.job.progress is not None, timeout=TIMEOUT)
    thread = w.job.worker
    w.shutdown()
    assert not thread.is_alive()  # joined: not left running at the shutdown's deadline
    assert len(w.rows) < 64 * 4


def test_time_left_is_readable():
    assert format_duration(float("nan")) == "—"
    assert format_duration(42.4) == "42 s"
    assert format_duration(125) == "2 min 05 s"
    assert format_duration(3 * 3600 + 7 * 60) == "3 h 07 min"
