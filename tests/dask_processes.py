"""A real dask.distributed scheduler and real workers, each a subprocess on 127.0.0.1, for
the cluster tests: started with the `dask` command line a user types, stopped (and waited
for) when the test is done, so that no process is left behind. tests/conftest.py's
`dask_cluster` fixture gives one to the tests of a session.

However pytest ends, its processes end with it: a finaliser stops them (SIGTERM reaches it
as an interrupt, tests/conftest.py), and each is started with the kernel's parent-death
signal, so that even a pytest killed with SIGKILL leaves none behind (Linux; elsewhere
only the finaliser)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

START_SECONDS = 90  # a loaded 2-core machine imports numpy, numba and distributed slowly

# Runs `python -m dask ...` after asking the kernel to SIGKILL this process when its parent
# (pytest) dies (prctl PR_SET_PDEATHSIG = 1). A launcher instead of preexec_fn, which is
# unsafe in a process with threads; it exits at once if pytest died before the prctl.
_ORPHAN_PROOF = (
    "import ctypes, os, signal, sys\n"
    "parent = int(sys.argv[1])\n"
    "if sys.platform.startswith('linux'):\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)\n"
    "if os.getppid() != parent:\n"
    "    sys.exit(1)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'dask', *sys.argv[2:]])\n"
)


class DaskProcesses:
    """``with DaskProcesses(folder, workers=2) as cluster:`` a scheduler (its address in
    ``cluster.address``) and ``workers`` workers with one thread each and no nanny, so
    that killing a worker's process kills the worker."""

    def __init__(self, folder: Path, workers: int = 2):
        self.folder = Path(folder)
        self.wanted = workers
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self.address = ""

    def _start(self, args: list[str], log: Path) -> subprocess.Popen:
        with open(log, "wb") as out:
            return subprocess.Popen(
                [sys.executable, "-c", _ORPHAN_PROOF, str(os.getpid()), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
                # the cluster logs at info whatever this process's Dask log level: the
                # 'Registered to:' line is what __enter__ waits for, and a command run
                # in-process with -q sets that level to critical for this whole process
                env={**os.environ, "PYTHONWARNINGS": "ignore", "DASK_LOGGING__DISTRIBUTED": "info"},
            )

    def __enter__(self) -> DaskProcesses:
        try:
            info = self.folder / "scheduler.json"
            self.scheduler = self._start(
                [
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-dashboard",
                    "--dashboard-address",
                    "127.0.0.1:0",
                    "--scheduler-file",
                    str(info),
                ],
                self.folder / "scheduler.log",
            )
            self._wait(lambda: info.exists() and info.stat().st_size > 0, self.scheduler, "the scheduler")
            self.address = json.loads(info.read_text())["address"]
            for _ in range(self.wanted):
                self.add_worker()
        except BaseException:
            self.__exit__()
            raise
        return self

    def add_worker(self) -> subprocess.Popen:
        """One more worker, returned once the scheduler has registered it."""
        k = len(self.workers)
        log = self.folder / f"worker-{k}.log"
        proc = self._start(
            [
                "worker",
                self.address,
                "--nthreads",
                "1",
                "--no-nanny",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
                "--name",
                f"worker-{k}",
            ],
            log,
        )
        self.workers.append(proc)
        self._wait(lambda: b"Registered to:" in log.read_bytes(), proc, f"worker {k}")
        return proc

    def _wait(self, ready, proc: subprocess.Popen, what: str) -> None:
        deadline = time.monotonic() + START_SECONDS
        while not ready():
            if proc.poll() is not None:
                raise RuntimeError(f"{what} ended with status {proc.returncode}: {self.logs()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start within {START_SECONDS} s: {self.logs()}")
            time.sleep(0.1)

    def kill_worker(self, k: int) -> None:
        self.workers[k].send_signal(signal.SIGKILL)
        self.workers[k].wait(30)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')}" for p in self.folder.glob("*.log"))

    def __exit__(self, *_exc) -> None:
        # the workers are killed: one still solving a task a test cancelled (tasks cannot
        # be stopped once running) would hold a graceful close for as long as the task
        # runs, up to the 10 s below each. The scheduler closes gracefully.
        for proc in self.workers:
            if proc.poll() is None:
                proc.kill()
        if self.scheduler is not None and self.scheduler.poll() is None:
            self.scheduler.terminate()
        procs = [*self.workers, *([self.scheduler] if self.scheduler else [])]
        for proc in procs:
            try:
                proc.wait(10)  # a worker closes once its running task ends
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
