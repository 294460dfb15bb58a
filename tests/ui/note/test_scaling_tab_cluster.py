"""The scaling tab's scheduler field: a grid whose runs are tasks on a real dask scheduler
with real workers (subprocesses on 127.0.0.1), the workers counted in the tab, the rows
equal to the same runs solved here. Real widgets, real threads. (Bad, unreachable and
missing-extra schedulers, in both grid tabs: tests/ui/test_grid_tab.py.)"""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
from helpers import type_into

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.scaling import scaling_row
from sparsity_gui.ui.note.scaling_tab import ScalingWidget

TIMEOUT = 120_000
BASE = SimParams(m=200, lam=1e-2, sigma=0.8, seed=4)


@pytest.fixture
def scaling_widget(show_tab):
    return show_tab(ScalingWidget(lambda: BASE))


def fill(widget, m, lam, seeds, scheduler):
    for field, text in (
        (widget.m, m),
        (widget.lam, lam),
        (widget.seeds, seeds),
        (widget.scheduler, scheduler),
    ):
        type_into(field, text)


def without_seconds(row):
    # NaN (a θ that never fell has no instant) compares unequal to itself: compare its repr
    return {
        k: (repr(v) if isinstance(v, float) and v != v else v)
        for k, v in asdict(row).items()
        if k != "seconds"
    }


def test_a_grid_on_the_cluster_shows_its_workers_and_gives_the_local_rows(
    qtbot, scaling_widget, tmp_path, dask_cluster
):
    w = scaling_widget
    assert w.scheduler.text() == "" and w.workers.isEnabled()  # optional: local threads by default
    fill(w, "100,1000", "1e-2", "2", dask_cluster.address)
    assert not w.scheduler.error.isVisibleTo(w)
    assert not w.workers.isEnabled()  # the cluster's workers solve, not this machine's threads
    assert w.start()
    assert not w.scheduler.isEnabled()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert w.cluster_label.text() == f"on the cluster {dask_cluster.address}: 2 workers, 0 running"
    assert "4 / 4 runs" in w.progress.text() and w.progress.value() == w.progress.maximum()
    assert [(r.m, r.lam, r.seed) for r in w.rows] == [(m, 1e-2, s) for m in (100, 1000) for s in (4, 5)]
    for row in w.rows:  # digit for digit the same run solved in this process
        assert without_seconds(row) == without_seconds(scaling_row(row.m, row.lam, row.seed, 0.8))
    assert w.scheduler.isEnabled() and not w.workers.isEnabled()
    assert w.save(tmp_path / "saved")
    meta = json.loads((tmp_path / "saved" / "scaling.json").read_text(encoding="utf-8"))
    assert meta["scheduler"] == dask_cluster.address and meta["complete"] is True
    type_into(w.scheduler, "")  # back to this machine's threads
    assert w.workers.isEnabled() and w.cluster_label.text() == ""
