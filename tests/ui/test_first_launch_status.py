"""A first launch (numba's cache empty) says in each window's status bar what is compiled
and for about how long, while the panels wait; once compiled the run starts and the line
gives way to the run's numbers. The window's kernel set is replaced by one whose compile
waits at a gate, so the test sees the compiling state however fast this machine compiles;
the real kernels are compiled first (compiling them for real: tests/core/test_warm_up.py)."""

from __future__ import annotations

import threading

import pytest

from sparsity_gui.core.interference import worker as interference_worker
from sparsity_gui.core.note import runner as note_runner
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.warm_up import KernelSet

LATER = "(later launches load them from the cache)"


def gated(name: str, what: str, source, monkeypatch, tmp_path) -> tuple[threading.Event, KernelSet]:
    """A kernel set that waits at a gate, as a slow first compile does, and its gate."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))  # no marker: a first launch
    gate = threading.Event()
    kernels = KernelSet(name, what, (source,), lambda: gate.wait(20), typical_seconds=30.0)
    return gate, kernels


def test_the_note_window_says_what_it_compiles(qtbot, make_window, monkeypatch, tmp_path):
    source = note_runner.NOTE_KERNELS.sources[0]
    gate, kernels = gated("note", "the note's solvers", source, monkeypatch, tmp_path)
    monkeypatch.setattr(note_runner, "NOTE_KERNELS", kernels)
    monkeypatch.setattr(note_runner, "_warmed", False)
    win = make_window(SimParams(m=200, lam=2e-2), playing=True)
    expected = f"compiling the note's solvers with numba, once: about 30 s {LATER}"
    qtbot.waitUntil(lambda: win.statusBar().currentMessage() == expected, timeout=10_000)
    assert win.status_labels["state"].text() == "compiling"
    gate.set()
    qtbot.waitUntil(lambda: win.status_labels["state"].text() in ("running", "finished"), timeout=20_000)
    qtbot.waitUntil(lambda: win.statusBar().currentMessage() == "", timeout=5_000)


def test_the_interference_window_says_what_it_compiles(qtbot, make_iwindow, monkeypatch, tmp_path):
    source = interference_worker.INTERFERENCE_KERNELS.sources[0]
    gate, kernels = gated("interference", "the training kernels", source, monkeypatch, tmp_path)
    monkeypatch.setattr(interference_worker, "INTERFERENCE_KERNELS", kernels)
    monkeypatch.setattr(interference_worker, "_warmed", False)
    win = make_iwindow()
    expected = f"compiling the training kernels with numba, once: about 30 s {LATER}"
    qtbot.waitUntil(lambda: win.status_line.text() == expected, timeout=10_000)
    gate.set()
    qtbot.waitUntil(lambda: win.status_line.text().startswith("step "), timeout=20_000)
    assert "compiling" not in win.status_line.text()


@pytest.fixture(autouse=True)
def _kernels_ready():
    """The real kernels are compiled (or loaded) before the gated sets replace them, so
    the runs that follow the gate do not compile behind the test's back."""
    note_runner.warm_up_kernels()
    interference_worker.warm_up_kernels()
