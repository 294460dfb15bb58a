"""The sweep tab on a real dask scheduler with real workers (subprocesses on 127.0.0.1):
Cancel keeps the finished runs. Real widgets, real threads. (A whole grid on the cluster,
in both grid tabs: tests/ui/test_grid_tab_cluster.py; bad schedulers: tests/ui/test_grid_tab.py.)"""

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


def without_seconds(rows):
    """The rows' fields but the time they took; a readout a mechanism does not have (NaN
    under l1) compares equal to itself, as the same run's must."""
    return [{k: "nan" if v != v else v for k, v in asdict(r).items() if k != "seconds"} for r in rows]


def test_cancel_on_the_cluster_keeps_the_finished_runs(qtbot, sweep_widget, dask_cluster):
    """Cancel cancels the cluster's pending runs; the finished ones stay shown, each equal
    to the same run trained here."""
    w = sweep_widget
    for field, text in ((w.n, "8"), (w.m, "8:512:8"), (w.seeds, "2"), (w.steps, "3000")):
        type_into(field, text)
    type_into(w.scheduler, dask_cluster.address)  # 128 runs: cancelled long before the end
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
