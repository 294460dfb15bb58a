"""Both grid tabs on a real dask scheduler with real workers (subprocesses on 127.0.0.1):
the scheduler field takes the place of the threads' count, the workers are counted in the
tab, and the rows equal the same runs done here, digit for digit. Real widgets, real
threads. (Bad, unreachable and missing-extra schedulers: tests/ui/test_grid_tab.py; Cancel
on the cluster: tests/ui/interference/test_sweep_tab_cluster.py.)"""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
from helpers import type_into

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.scaling import scaling_row
from sparsity_gui.ui.interference.sweep_tab import SweepWidget
from sparsity_gui.ui.note.scaling_tab import ScalingWidget

TIMEOUT = 120_000
NOTE = SimParams(m=200, lam=1e-2, sigma=0.8, seed=4)
INTERFERENCE = InterferenceParams(n=8, m=8, optimizer="gd-zero", l1=0.04, lr=0.05, steps=300, seed=3)


def without_seconds(row) -> dict:
    # NaN (a θ that never fell has no instant) compares unequal to itself: compare its repr
    values = asdict(row)
    del values["seconds"]
    return {k: (repr(v) if isinstance(v, float) and v != v else v) for k, v in values.items()}


def scaling_here(rows) -> list:
    return [scaling_row(r.m, r.lam, r.seed, NOTE.sigma) for r in rows]


def sweep_here(rows) -> list:
    return SweepSpec(base=INTERFERENCE, m_values=(8, 16, 24), seeds=2).run(workers=1)


# per tab: the widget, its fields, the runs, what a worker does, the same runs done here
GRIDS = {
    "scaling": (
        lambda: ScalingWidget(lambda: NOTE),
        {"m": "100,1000", "lam": "1e-2", "seeds": "2"},
        4,
        "running",
        scaling_here,
    ),
    "sweep": (
        lambda: SweepWidget(lambda: INTERFERENCE),
        {"n": "8", "m": "8,16,24", "seeds": "2", "steps": "300"},
        6,
        "training",
        sweep_here,
    ),
}


@pytest.mark.parametrize("grid", list(GRIDS))
def test_a_grid_on_the_cluster_shows_its_workers_and_gives_the_local_rows(
    qtbot, show_tab, tmp_path, dask_cluster, grid
):
    make, fields, runs, working, here = GRIDS[grid]
    w = show_tab(make())
    assert w.scheduler.text() == "" and w.workers.isEnabled()  # optional: local threads by default
    for name, text in fields.items():
        type_into(w.fields[name], text)
    type_into(w.scheduler, dask_cluster.address)
    assert not w.scheduler.error.isVisibleTo(w)
    assert not w.workers.isEnabled()  # the cluster's workers do the runs, not this machine's threads
    assert w.start()
    assert not w.scheduler.isEnabled()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert w.cluster_label.text() == f"on the cluster {dask_cluster.address}: 2 workers, 0 {working}"
    assert f"{runs} / {runs} runs" in w.progress.text() and w.progress.value() == w.progress.maximum()
    rows = sorted(w.rows, key=lambda r: (r.m, r.seed))
    assert len(rows) == runs
    assert [without_seconds(r) for r in rows] == [without_seconds(r) for r in here(rows)]
    assert w.scheduler.isEnabled() and not w.workers.isEnabled()
    assert w.save(tmp_path / "saved")
    saved = json.loads((tmp_path / "saved" / f"{grid}.json").read_text(encoding="utf-8"))
    assert saved["scheduler"] == dask_cluster.address and saved["complete"] is True
    type_into(w.scheduler, "")  # back to this machine's threads
    assert w.workers.isEnabled() and w.cluster_label.text() == ""
