"""The suite ends, and leaves nothing behind, however it is started and however it ends.

Each test runs a real pytest in a subprocess, with the suite's settings (pyproject.toml) and
its conftest: one started with SIGINT ignored (as a background job is), whose test that hangs
must fail alone and whose Ctrl+C test must still pass instead of waiting forever; one whose
hang the per-test timeout cannot interrupt, which the session's backstop must end; and one
holding the shared dask cluster (tests/dask_processes.py) when it is sent SIGTERM or SIGKILL,
after which none of the cluster's processes may still run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
LIMIT = 240  # seconds for a child pytest on a loaded 2-core machine


def _suite_pytest(folder: Path, *args: str) -> list[str]:
    """A pytest with the suite's settings and conftest, run on the test files in ``folder``."""
    return [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(TESTS.parent / "pyproject.toml"),
        "--rootdir",
        str(folder),
        "-p",
        "conftest",
        "-p",
        "no:cacheprovider",
        "-q",
        *args,
    ]


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


HANGS = """
import signal, time

import pytest


@pytest.mark.timeout(2)
def test_hangs():
    time.sleep(120)


def test_after_the_hang():
    pass


def test_hangs_where_no_alarm_reaches():
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
    time.sleep(120)
"""


def test_a_hang_the_timeout_cannot_interrupt_ends_at_the_session_limit(tmp_path):
    """SIGALRM blocked, as in a thread stuck in C code: the per-test timeout never fires;
    faulthandler's backstop prints the stacks and ends the run at the session limit, in a
    single process (in a pytest-xdist worker, as `make test` runs: the next test)."""
    (tmp_path / "test_hangs.py").write_text(HANGS)
    argv = _suite_pytest(tmp_path, "--timeout=2", "test_hangs.py::test_hangs_where_no_alarm_reaches")
    env = _env(SPARSITY_TEST_SESSION_SECONDS="6")
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=LIMIT)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Timeout (0:00:0" in out and "most recent call first" in out
    assert "test_hangs_where_no_alarm_reaches" in out  # the stack shows where it hung


def test_a_worker_started_in_place_of_one_the_backstop_ended_keeps_the_runs_limit(tmp_path):
    """In a pytest-xdist worker (`make test`) the backstop ends a hang the per-test timeout
    cannot interrupt, with the stacks, as in a single process; and pytest-xdist starts a new
    worker in place of the one it ended: the new one must not get a session limit of its
    own, or a run of hangs could go on for a limit each. Its backstop is armed with what is
    left of the run's (nothing: the minimum of 1 s), as faulthandler's message shows,
    instead of a fresh 6 s."""
    (tmp_path / "test_hangs.py").write_text(
        HANGS + HANGS.split("\n\n\n")[-1].replace("reaches", "reaches_again")
    )
    tests = (
        "test_hangs.py::test_hangs_where_no_alarm_reaches",
        "test_hangs.py::test_hangs_where_no_alarm_reaches_again",
    )
    argv = _suite_pytest(tmp_path, "--timeout=2", "-n", "1", *tests)
    env = _env(SPARSITY_TEST_SESSION_SECONDS="6")
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=LIMIT)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "2 failed" in out, out
    assert out.count("Timeout (0:00:0") == 2 and "Timeout (0:00:01)" in out, out
    assert "most recent call first" in out  # the stacks show where each hung
    assert "test_hangs_where_no_alarm_reaches" in out and "test_hangs_where_no_alarm_reaches_again" in out


def _ignoring_sigint(argv: list[str]) -> list[str]:
    """argv run with SIGINT ignored on entry, which exec keeps (what `cmd &` gives)."""
    launcher = (
        "import os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n"
    )
    return [sys.executable, "-c", launcher, *argv]


CTRL_C_TEST = "core/test_threads.py::test_ctrl_c_stops_and_joins_every_thread_before_it_propagates"


def test_a_hung_test_fails_alone_and_the_ctrl_c_tests_pass_with_sigint_ignored(tmp_path):
    """One pytest started with SIGINT ignored, as `make test &` starts it: a hung test fails
    at its timeout and the run goes on; and the suite's test of Ctrl+C passes.
    `_thread.interrupt_main()` does nothing while SIGINT is ignored: without the suite's
    handler (tests/conftest.py) that test hung until CI's limit."""
    (tmp_path / "test_hangs.py").write_text(HANGS)
    tests = ("test_hangs.py::test_hangs", "test_hangs.py::test_after_the_hang", str(TESTS / CTRL_C_TEST))
    argv = _ignoring_sigint(_suite_pytest(tmp_path, "-rA", *tests))
    proc = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=LIMIT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "1 failed, 2 passed" in out, out
    assert re.search(r"^FAILED test_hangs.py::test_hangs - Failed: Timeout", out, re.M), out
    assert re.search(r"^PASSED test_hangs.py::test_after_the_hang$", out, re.M), out
    # (a file outside the child's rootdir: its node id is the test's name after "::")
    assert re.search(rf"^PASSED \S*::{CTRL_C_TEST.split('::')[-1]}$", out, re.M), out


def _state(pid: int) -> str | None:
    """The process's state letter (Z: ended, not yet reaped), or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def _running(pids: list[int]) -> list[int]:
    return [pid for pid in pids if _state(pid) not in (None, "Z", "X")]


HOLDER = """
import json, os, time


def test_holds_the_cluster(dask_cluster):
    # this pytest (or its xdist worker) and the cluster's scheduler and workers
    pids = [os.getpid(), dask_cluster.scheduler.pid, *(w.pid for w in dask_cluster.workers)]
    path = os.environ["CLUSTER_PIDS"]
    with open(path + ".tmp", "w") as out:
        json.dump(pids, out)
    os.replace(path + ".tmp", path)
    time.sleep(600)
"""


LINUX_ONLY = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; uses prctl")

WHERE = {"in-process": (), "xdist-worker": ("-n", "1")}
CASES = [(how, where) for where in WHERE for how in (signal.SIGTERM, signal.SIGKILL)]


@pytest.fixture(scope="module")
def holders(request, tmp_path_factory):
    """``holders(case)``: the case's pytest holding the shared cluster, and the next case's
    started beside it. A holder spends most of its time waiting for its cluster's processes
    to import and for its end, so that one overlaps the next one's start (at most two
    starting at once, as when both of `make test`'s workers start their clusters)."""
    order = [  # the cases in the order this session runs them
        item.callspec.params["case"]
        for item in request.session.items
        if item.module is request.module and "case" in getattr(getattr(item, "callspec", None), "params", {})
    ]
    started: dict[tuple, tuple[Path, subprocess.Popen]] = {}

    def start(case: tuple) -> tuple[Path, subprocess.Popen]:
        if case not in started:
            how, where = case
            folder = tmp_path_factory.mktemp(f"holder-{how.name}-{where}")
            (folder / "test_holder.py").write_text(HOLDER)
            pids_file = folder / "pids.json"
            # the suite's conftest: its signal handling and its dask_cluster fixture (one
            # worker: each of the cluster's processes is started and ended alike)
            env = _env(CLUSTER_PIDS=str(pids_file), SPARSITY_TEST_DASK_WORKERS="1")
            argv = _suite_pytest(folder, "-s", *WHERE[where], "test_holder.py")
            proc = subprocess.Popen(
                argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            started[case] = pids_file, proc
        return started[case]

    def holder(case: tuple) -> tuple[Path, subprocess.Popen]:
        got = start(case)
        later = [c for c in order[order.index(case) + 1 :] if c not in started] if case in order else []
        if later:
            start(later[0])
        return got

    yield holder
    for pids_file, proc in started.values():  # left only by a failure or an interruption
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        if pids_file.exists():
            for pid in _running(json.loads(pids_file.read_text())):
                os.kill(pid, signal.SIGKILL)


@LINUX_ONLY
@pytest.mark.parametrize("case", CASES, ids=[f"{how.name}-{where}" for how, where in CASES])
def test_the_shared_cluster_ends_with_pytest(holders, case):
    """A pytest holding the shared cluster is ended from outside. SIGTERM: it stops as on
    Ctrl+C and its finaliser stops the cluster. SIGKILL: no finaliser runs, and the kernel
    ends every process of the cluster with it (their parent-death signal). The same when the
    test runs in a pytest-xdist worker (`make test`): the worker ends with its controller."""
    how, _where = case
    pids_file, proc = holders(case)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + LIMIT
        while not pids_file.exists():
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the cluster did not start"
            time.sleep(0.1)
        pids = json.loads(pids_file.read_text())
        # the pytest (or its xdist worker), the scheduler and the worker
        assert len(pids) == 3 and _running(pids) == pids
        proc.send_signal(how)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode != 0
        if how == signal.SIGTERM:
            assert "KeyboardInterrupt" in out  # stopped as an interrupt, fixtures torn down
        deadline = time.monotonic() + 30
        while _running(pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _running(pids) == [], f"left running after {how.name}: {_running(pids)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _running(pids):
            os.kill(pid, signal.SIGKILL)
