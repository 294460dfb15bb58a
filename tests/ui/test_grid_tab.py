"""The scheduler field that the scaling tab and the sweep tab share (ui/grid_tab.py), in
each tab: a bad scheduler said at the field with nothing started, an unreachable one failing
at the field with the tab left usable, and without the extra the field naming it while the
grid on this machine's threads runs as before. Real widgets, real threads. (A grid on a real
cluster: tests/ui/test_grid_tab_cluster.py.)"""

from __future__ import annotations

import socket
import sys

import pytest
from helpers import type_into

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.interference.sweep_tab import SweepWidget
from sparsity_gui.ui.note.scaling_tab import ScalingWidget

TIMEOUT = 120_000
# one quick run each: m = 100 at lam = 1e-2 solved to one weight; n = m = 8 for 50 steps
NOTE = SimParams(m=200, lam=1e-2, sigma=0.8, seed=4)
INTERFERENCE = InterferenceParams(n=8, m=8, optimizer="gd-zero", l1=0.04, lr=0.05, steps=300, seed=3)
ONE_RUN = {
    "scaling": {"m": "100", "lam": "1e-2", "seeds": "1"},
    "sweep": {"n": "8", "m": "8", "seeds": "1", "steps": "50"},
}


@pytest.fixture(params=["scaling", "sweep"])
def tab(request, show_tab):
    widget = ScalingWidget(lambda: NOTE) if request.param == "scaling" else SweepWidget(lambda: INTERFERENCE)
    show_tab(widget)
    for name, text in ONE_RUN[request.param].items():
        type_into(widget.fields[name], text)
    return widget


@pytest.mark.parametrize(
    "text, reason",
    [("local:0", "1 to 64 workers"), ("tcp://host", "tcp://HOST:PORT"), ("local:x", "whole number")],
)
def test_a_bad_scheduler_is_said_at_the_field_and_nothing_starts(tab, text, reason):
    type_into(tab.scheduler, text)
    assert tab.scheduler.error.isVisibleTo(tab) and reason in tab.scheduler.error.text()
    assert not tab.start()
    assert tab.job is None and tab.outcome == ""


def test_an_unreachable_scheduler_fails_at_the_field_and_the_tab_stays_usable(qtbot, tab):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    type_into(tab.scheduler, f"tcp://127.0.0.1:{port}")
    assert tab.start()
    qtbot.waitUntil(lambda: tab.outcome == "error", timeout=TIMEOUT)
    expected = f"no scheduler answered at tcp://127.0.0.1:{port} within 3 s"
    assert tab.scheduler.error.isVisibleTo(tab) and tab.scheduler.error.text() == expected
    assert expected in tab.info.text() and tab.error_box is not None
    assert tab.start_button.isEnabled() and tab.scheduler.isEnabled() and tab.rows == []


def test_without_the_extra_the_field_names_it(qtbot, tab, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    type_into(tab.scheduler, "local:2")
    assert "pip install 'sparsity-gui[cluster]'" in tab.scheduler.error.text()
    assert not tab.start() and tab.job is None
    type_into(tab.scheduler, "")  # the grid on this machine's threads is unchanged
    assert tab.workers.isEnabled()
    assert tab.start()
    qtbot.waitUntil(lambda: tab.outcome == "done", timeout=TIMEOUT)
    assert len(tab.rows) == 1
