"""Settings for every test: Qt never opens a real display, and no test may leave a thread
running; the real dask cluster that the cluster tests share."""

import os
import threading

import pytest

# Qt must never try to open a real display in tests. The offscreen platform's screen is
# 800x600 unless told otherwise: tests get a 1600x1000 desktop, where windows open at their
# full default size (tests/ui/test_window_size.py sets smaller screens in subprocesses).
OFFSCREEN_1600 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offscreen-1600x1000.json")
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={OFFSCREEN_1600}"


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    before = {t.ident for t in threading.enumerate()}
    yield
    left = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not left, f"test left threads running: {[t.name for t in left]}"


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A real dask scheduler and two workers (subprocesses on 127.0.0.1,
    tests/dask_processes.py), shared by the tests of one module and stopped after its
    last: starting one takes seconds on a loaded machine. A test that changes it (kills a
    worker) puts it back as it was."""
    from dask_processes import DaskProcesses

    with DaskProcesses(tmp_path_factory.mktemp("dask"), workers=2) as procs:
        yield procs
