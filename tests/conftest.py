"""Settings for every test: Qt never opens a real display, and no test may leave a thread
running; Ctrl+C and SIGTERM reach the tests however pytest was started; the real dask
cluster that the cluster tests share."""

import faulthandler
import os
import signal
import threading
import time

import pytest
from run_layout import pytest_collection_modifyitems, pytest_xdist_make_scheduler, record_file_seconds

__all__ = ["pytest_collection_modifyitems", "pytest_xdist_make_scheduler"]  # hooks: `make test`'s layout

# Qt must never try to open a real display in tests. The offscreen platform's screen is
# 800x600 unless told otherwise: tests get a 1600x1000 desktop, where windows open at their
# full default size (tests/ui/test_window_size.py sets smaller screens in subprocesses).
OFFSCREEN_1600 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "offscreen-1600x1000.json")
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={OFFSCREEN_1600}"

# seconds: the suite takes 10-15 minutes here in two workers, about 60 at a load of 20 (a test
# of the backstop itself sets a few seconds)
SESSION_LIMIT = float(os.environ.get("SPARSITY_TEST_SESSION_SECONDS", 60 * 60))


def _terminated(signum, _frame):
    # SIGTERM's default action ends the process at once, skipping every finaliser (the
    # shared dask cluster, a test's subprocesses): as an interrupt, pytest stops the run
    # and tears its fixtures down first.
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    # Started in the background (`make test &`, some CI runners), pytest inherits SIGINT
    # ignored: then `_thread.interrupt_main()` does nothing, the tests of Ctrl+C wait
    # forever, and the CLI processes the tests interrupt ignore SIGINT too. Python's own
    # handler restores what a terminal gives (children then start with the default).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    # one limit for the whole run: pytest-xdist's workers (and a worker started in place of
    # one the backstop ended) read the controller's, so a restart cannot extend it
    if not hasattr(config, "workerinput"):
        os.environ["SPARSITY_TEST_SESSION_END"] = repr(time.time() + SESSION_LIMIT)
    config.stash[_SESSION_END] = float(os.environ["SPARSITY_TEST_SESSION_END"])
    # the terminal's stderr now, before the tests' capturing points descriptor 2 elsewhere
    config.stash[_STDERR] = os.dup(2)
    record_file_seconds(config)


_SESSION_END = pytest.StashKey[float]()  # time.time() at which the run must have ended
_STDERR = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # The backstop for a hang that the per-test timeout cannot interrupt (SIGALRM waits for
    # the interpreter; a deadlock in C code never returns to it): faulthandler's own C thread
    # prints every thread's stack and ends the run, well inside CI's 90 minutes. Armed again
    # before each test: pytest's faulthandler plugin cancels it when a test fails.
    left = item.config.stash[_SESSION_END] - time.time()
    faulthandler.dump_traceback_later(max(left, 1.0), exit=True, file=item.config.stash[_STDERR])


def pytest_unconfigure(config):
    faulthandler.cancel_dump_traceback_later()
    os.close(config.stash[_STDERR])


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    before = {t.ident for t in threading.enumerate()}
    yield
    left = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not left, f"test left threads running: {[t.name for t in left]}"


DASK_LOG_LEVEL = "DASK_LOGGING__DISTRIBUTED"


@pytest.fixture(autouse=True)
def _dask_log_level_kept():
    """A command run in this process with -v or -q sets Dask's log level variable for its
    process (cli/common.py). Left set, every Dask process a later test starts inherits it: at
    'critical' a worker never logs the 'Registered to:' line the test cluster waits for, and
    each cluster test after it failed in a full run. Put back after every test."""
    import logging

    before = os.environ.get(DASK_LOG_LEVEL)
    level = logging.getLogger("distributed").level
    yield
    if before is None:
        os.environ.pop(DASK_LOG_LEVEL, None)
    else:
        os.environ[DASK_LOG_LEVEL] = before
    logging.getLogger("distributed").setLevel(level)


# two workers; tests/test_suite_ends.py's child pytests, which only end the cluster, ask for one
DASK_WORKERS = int(os.environ.get("SPARSITY_TEST_DASK_WORKERS", 2))


@pytest.fixture(scope="session")
def _dask_processes(tmp_path_factory):
    from dask_processes import DaskProcesses

    with DaskProcesses(tmp_path_factory.mktemp("dask"), workers=DASK_WORKERS) as procs:
        yield procs


@pytest.fixture
def dask_cluster(_dask_processes):
    """A real dask scheduler and two workers (subprocesses on 127.0.0.1,
    tests/dask_processes.py), started once for all the cluster tests of the session
    (starting one takes seconds on a loaded machine) and stopped at its end. Each test gets
    it with two live workers: one a test killed is replaced. A run a test cancelled may still
    be finishing on a worker; the next test's tasks then wait for it, which only delays them."""
    procs = _dask_processes
    assert procs.scheduler.poll() is None, f"the shared dask scheduler has ended: {procs.logs()}"
    while sum(proc.poll() is None for proc in procs.workers) < DASK_WORKERS:
        procs.add_worker()
    return procs
