"""The sweep tab's scheduler field: a sweep whose runs are tasks on a real dask scheduler
with real workers (subprocesses on 127.0.0.1), the workers counted in the tab, and Cancel
keeping the finished runs. Real widgets, real threads. (Bad, unreachable and missing-extra
schedulers, in both grid tabs: tests/ui/test_grid_tab.py.)"""

from __future__ import annotations

from dataclasses import asdict

import pytest
from helpers import type_into

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec
from sparsity_gui.ui.interference.sweep_tab import SweepWidget

TIMEOUT = 120_000
BASE = InterferenceParams(n=8, m=8, optimizer="gd-zero", l1=0.04, lr=0.05, steps=300, seed=3)


@pytest.fixture
def sweep_widget(show_tab):
    return show_tab(SweepWidget(lambda: BASE))


def fill(widget, n, m, seeds, steps, scheduler):
    for field, text in ((widget.n, n), (widget.m, m), (widget.seeds, seeds), (widget.steps, steps)):
        type_into(field, text)
    type_into(widget.scheduler, scheduler)


def without_seconds(rows):
    return [{k: v for k, v in asdict(r).items() if k != "seconds"} for r in rows]


def test_a_sweep_on_the_cluster_shows_its_workers_and_gives_the_local_rows(qtbot, sweep_widget, dask_cluster):
    w = sweep_widget
    assert w.scheduler.text() == "" and w.workers.isEnabled()  # optional: local threads by default
    fill(w, "8", "8,16,24", "2", "300", dask_cluster.address)
    assert not w.scheduler.error.isVisibleTo(w)
    assert not w.workers.isEnabled()  # the cluster's workers train, not this machine's threads
    assert w.start()
    assert not w.scheduler.isEnabled()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert w.cluster_label.text() == f"on the cluster {dask_cluster.address}: 2 workers, 0 training"
    assert "6 / 6 runs" in w.progress.text() and w.progress.value() == w.progress.maximum()
    spec = SweepSpec(base=BASE.with_changes(m=8), m_values=(8, 16, 24), seeds=2)
    local = spec.run(workers=1)
    assert without_seconds(sorted(w.rows, key=lambda r: (r.m, r.seed))) == without_seconds(local)
    assert w.scheduler.isEnabled() and not w.workers.isEnabled()
    type_into(w.scheduler, "")  # back to this machine's threads
    assert w.workers.isEnabled() and w.cluster_label.text() == ""


def test_cancel_on_the_cluster_keeps_the_finished_runs(qtbot, sweep_widget, dask_cluster):
    """Cancel cancels the cluster's pending runs; the finished ones stay shown, each equal
    to the same run trained here."""
    w = sweep_widget
    fill(w, "8", "8:512:8", "2", "3000", dask_cluster.address)  # 128 runs: cancelled long before the end
    assert w.start()
    qtbot.waitUntil(lambda: len(w.panel.rows) >= 2, timeout=TIMEOUT)
    thread = w.job.worker
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
        assert without_seconds([row]) == without_seconds(spec.run())
