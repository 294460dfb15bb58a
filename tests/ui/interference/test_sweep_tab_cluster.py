"""The sweep tab's scheduler field: a sweep whose runs are tasks on a real dask scheduler
with real workers (subprocesses on 127.0.0.1), the workers counted in the tab, and bad or
unreachable schedulers said at the field. Real widgets, real threads."""

from __future__ import annotations

import socket
import sys
from dataclasses import asdict

import pytest
from dask_processes import DaskProcesses

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec, run_sweep
from sparsity_gui.ui.interference.sweep_tab import SweepWidget

TIMEOUT = 120_000
BASE = InterferenceParams(n=8, m=8, optimizer="gd-zero", l1=0.04, lr=0.05, steps=300, seed=3)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with DaskProcesses(tmp_path_factory.mktemp("dask"), workers=2) as procs:
        yield procs


@pytest.fixture
def sweep_widget(qtbot):
    import pyqtgraph as pg

    pg.setConfigOptions(background="w", foreground="k", antialias=False)
    widget = SweepWidget(lambda: BASE)
    qtbot.addWidget(widget)
    widget.resize(1100, 650)
    widget.show()
    yield widget
    widget.shutdown()
    assert widget.thread is None or not widget.thread.is_alive()
    if widget.error_box is not None:
        widget.error_box.close()


def type_into(field, text):
    field.edit.setText(text)
    field.edit.editingFinished.emit()


def fill(widget, n, m, seeds, steps, scheduler):
    for field, text in ((widget.n, n), (widget.m, m), (widget.seeds, seeds), (widget.steps, steps)):
        type_into(field, text)
    type_into(widget.scheduler, scheduler)


def without_seconds(rows):
    return [{k: v for k, v in asdict(r).items() if k != "seconds"} for r in rows]


def test_a_sweep_on_the_cluster_shows_its_workers_and_gives_the_local_rows(qtbot, sweep_widget, cluster):
    w = sweep_widget
    assert w.scheduler.text() == "" and w.workers.isEnabled()  # optional: local threads by default
    fill(w, "8", "8,16,24", "2", "300", cluster.address)
    assert not w.scheduler.error.isVisibleTo(w)
    assert not w.workers.isEnabled()  # the cluster's workers train, not this machine's threads
    assert w.start()
    assert not w.scheduler.isEnabled()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert w.cluster_label.text() == f"on the cluster {cluster.address}: 2 workers, 0 training"
    assert "6 / 6 runs" in w.progress.text() and w.progress.value() == w.progress.maximum()
    spec = SweepSpec(base=BASE.with_changes(m=8), m_values=(8, 16, 24), seeds=2)
    local = run_sweep(spec, workers=1)
    assert without_seconds(sorted(w.rows, key=lambda r: (r.m, r.seed))) == without_seconds(local)
    assert w.scheduler.isEnabled() and not w.workers.isEnabled()
    type_into(w.scheduler, "")  # back to this machine's threads
    assert w.workers.isEnabled() and w.cluster_label.text() == ""


@pytest.mark.parametrize(
    "text, reason",
    [("local:0", "1 to 64 workers"), ("tcp://host", "tcp://HOST:PORT"), ("local:x", "whole number")],
)
def test_a_bad_scheduler_is_said_at_the_field_and_nothing_starts(qtbot, sweep_widget, text, reason):
    w = sweep_widget
    fill(w, "8", "8", "1", "50", text)
    assert w.scheduler.error.isVisibleTo(w) and reason in w.scheduler.error.text()
    assert not w.start()
    assert w.thread is None and w.outcome == ""


def test_an_unreachable_scheduler_fails_at_the_field_and_the_tab_stays_usable(qtbot, sweep_widget):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    w = sweep_widget
    fill(w, "8", "8", "1", "50", f"tcp://127.0.0.1:{port}")
    assert w.start()
    qtbot.waitUntil(lambda: w.outcome == "error", timeout=TIMEOUT)
    expected = f"no scheduler answered at tcp://127.0.0.1:{port} within 3 s"
    assert w.scheduler.error.isVisibleTo(w) and w.scheduler.error.text() == expected
    assert expected in w.info.text() and w.error_box is not None
    assert w.start_button.isEnabled() and w.scheduler.isEnabled() and w.rows == []


def test_without_the_extra_the_field_names_it(qtbot, sweep_widget, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    w = sweep_widget
    fill(w, "8", "8", "1", "50", "local:2")
    assert "pip install 'sparsity-gui[cluster]'" in w.scheduler.error.text()
    assert not w.start() and w.thread is None
    type_into(w.scheduler, "")  # the local sweep is unchanged
    assert w.start()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert len(w.rows) == 1


def test_cancel_on_the_cluster_keeps_the_finished_runs(qtbot, sweep_widget, cluster):
    """Cancel cancels the cluster's pending runs; the finished ones stay shown, each equal
    to the same run trained here."""
    w = sweep_widget
    fill(w, "8", "8:512:8", "2", "3000", cluster.address)  # 128 runs: cancelled long before the end
    assert w.start()
    qtbot.waitUntil(lambda: len(w.panel.rows) >= 2, timeout=TIMEOUT)
    thread = w.thread
    w.cancel_button.click()
    assert "cancelling the runs not finished on the cluster" in w.info.text()
    qtbot.waitUntil(lambda: w.outcome == "cancelled", timeout=TIMEOUT)
    assert not thread.is_alive()
    kept = sorted(w.rows, key=lambda r: (r.m, r.seed))
    assert 2 <= len(kept) < 128 and f"{len(kept)} / 128 runs" in w.progress.text()
    assert w.save_button.isEnabled() and w.start_button.isEnabled()
    for row in kept[:3]:
        spec = SweepSpec(
            base=BASE.with_changes(m=row.m, seed=row.seed, steps=3000), m_values=(row.m,), seeds=1
        )
        assert without_seconds([row]) == without_seconds(run_sweep(spec))
