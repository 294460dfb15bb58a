"""The scaling tab's scheduler field: a grid whose runs are tasks on a real dask scheduler
with real workers (subprocesses on 127.0.0.1), the workers counted in the tab, the rows
equal to the same runs solved here, and bad or unreachable schedulers said at the field.
Real widgets, real threads."""

from __future__ import annotations

import json
import socket
import sys
from dataclasses import asdict

import pytest
from dask_processes import DaskProcesses

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.scaling import scaling_row
from sparsity_gui.ui.note.scaling_tab import ScalingWidget

TIMEOUT = 120_000
BASE = SimParams(m=200, lam=1e-2, sigma=0.8, seed=4)


@pytest.fixture
def scaling_widget(qtbot):
    import pyqtgraph as pg

    pg.setConfigOptions(background="w", foreground="k", antialias=False)
    widget = ScalingWidget(lambda: BASE)
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


def fill(widget, m, lam, seeds, scheduler):
    for field, text in (
        (widget.m, m),
        (widget.lam, lam),
        (widget.seeds, seeds),
        (widget.scheduler, scheduler),
    ):
        type_into(field, text)


def without_seconds(row):
    return {k: v for k, v in asdict(row).items() if k != "seconds"}


def test_a_grid_on_the_cluster_shows_its_workers_and_gives_the_local_rows(qtbot, scaling_widget, tmp_path):
    w = scaling_widget
    assert w.scheduler.text() == "" and w.workers.isEnabled()  # optional: local threads by default
    (tmp_path / "dask").mkdir()
    with DaskProcesses(tmp_path / "dask", workers=2) as cluster:
        fill(w, "100,1000", "1e-2", "2", cluster.address)
        assert not w.scheduler.error.isVisibleTo(w)
        assert not w.workers.isEnabled()  # the cluster's workers solve, not this machine's threads
        assert w.start()
        assert not w.scheduler.isEnabled()
        qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert w.cluster_label.text() == f"on the cluster {cluster.address}: 2 workers, 0 running"
    assert "4 / 4 runs" in w.progress.text() and w.progress.value() == w.progress.maximum()
    assert [(r.m, r.lam, r.seed) for r in w.rows] == [(m, 1e-2, s) for m in (100, 1000) for s in (4, 5)]
    for row in w.rows:  # digit for digit the same run solved in this process
        assert without_seconds(row) == without_seconds(scaling_row(row.m, row.lam, row.seed, 0.8))
    assert w.scheduler.isEnabled() and not w.workers.isEnabled()
    assert w.save(tmp_path / "saved")
    meta = json.loads((tmp_path / "saved" / "scaling.json").read_text(encoding="utf-8"))
    assert meta["scheduler"] == cluster.address and meta["complete"] is True
    type_into(w.scheduler, "")  # back to this machine's threads
    assert w.workers.isEnabled() and w.cluster_label.text() == ""


@pytest.mark.parametrize(
    "text, reason",
    [("local:0", "1 to 64 workers"), ("tcp://host", "tcp://HOST:PORT"), ("local:x", "whole number")],
)
def test_a_bad_scheduler_is_said_at_the_field_and_nothing_starts(qtbot, scaling_widget, text, reason):
    w = scaling_widget
    fill(w, "100", "1e-2", "1", text)
    assert w.scheduler.error.isVisibleTo(w) and reason in w.scheduler.error.text()
    assert not w.start()
    assert w.thread is None and w.outcome == ""


def test_an_unreachable_scheduler_fails_at_the_field_and_the_tab_stays_usable(qtbot, scaling_widget):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    w = scaling_widget
    fill(w, "100", "1e-2", "1", f"tcp://127.0.0.1:{port}")
    assert w.start()
    qtbot.waitUntil(lambda: w.outcome == "error", timeout=TIMEOUT)
    expected = f"no scheduler answered at tcp://127.0.0.1:{port} within 3 s"
    assert w.scheduler.error.isVisibleTo(w) and w.scheduler.error.text() == expected
    assert expected in w.info.text() and w.error_box is not None
    assert w.start_button.isEnabled() and w.scheduler.isEnabled() and w.rows == []


def test_without_the_extra_the_field_names_it(qtbot, scaling_widget, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    w = scaling_widget
    fill(w, "100", "1e-2", "1", "local:2")
    assert "pip install 'sparsity-gui[cluster]'" in w.scheduler.error.text()
    assert not w.start() and w.thread is None
    type_into(w.scheduler, "")  # the local grid is unchanged
    assert w.workers.isEnabled()
    assert w.start()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert len(w.rows) == 1
