"""`sparsity-gui sweep --scheduler`: each run a task on a real dask scheduler with real
workers (subprocesses on 127.0.0.1, tests/dask_processes.py), or on `local:N` worker
processes. The rows must equal the local sweep's digit for digit (all but the wall-clock
`seconds`), also after a worker is killed mid-run, after SIGTERM or Ctrl+C and --resume.
(Bad scheduler options: tests/cli/test_grid_scheduler_options.py.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cluster_cli import (
    in_terminal,
    read_rest,
    read_until,
    runs_done,
)
from cluster_cli import rows_without_seconds as csv_rows
from helpers import cli

# six runs of about a second each: long enough to kill a worker while it trains one
SWEEP = ["--n", "48", "--m", "96,128,192", "--seeds", "2", "--steps", "2000", "--no-figure"]
TINY = ["--n", "8", "--m", "8,16", "--seeds", "2", "--steps", "100", "--no-figure"]


def rows_without_seconds(folder):
    return csv_rows(folder / "sweep.csv")


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory):
    """The reference: SWEEP on this machine's threads, as without the extra."""
    d = tmp_path_factory.mktemp("local")
    proc = cli(["sweep", *SWEEP, "--jobs", "2", "--out", "res"], d)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((d / "res" / "sweep.json").read_text())["scheduler"] is None
    return rows_without_seconds(d / "res")


def test_sigterm_keeps_the_finished_runs_and_resume_finishes_on_the_cluster(
    tmp_path, dask_cluster, local_rows
):
    """SIGTERM after two runs finished: the pending tasks are cancelled, the finished rows
    written (status 143); --resume with the same options on the cluster trains only the
    rest, keeps the first rows as they were, and ends with the local sweep's rows."""
    args = [*SWEEP, "--scheduler", dask_cluster.address, "--out", "res"]
    proc, fd = in_terminal("sweep", args, tmp_path)
    try:
        # two runs or more finished, not all (redraws are 0.1 s apart: K may skip a value)
        read_until(fd, lambda line: 2 <= runs_done(line, 6) < 6, proc)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        rest = read_rest(fd)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(fd)
    assert proc.returncode == 128 + signal.SIGTERM, rest
    assert "error: interrupted; wrote the " in rest and " of 6 runs that finished" in rest
    res = tmp_path / "res"
    partial = rows_without_seconds(res)
    assert 2 <= len(partial) - 1 < 6
    assert json.loads((res / "sweep.json").read_text())["complete"] is False
    kept = (res / "sweep.csv").read_text().splitlines()  # seconds too

    again = cli(["sweep", *args[:-2], "--resume", "--out", "res"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("wrote res: 6 runs") and f"of {dask_cluster.address}" in again.stdout
    final = (res / "sweep.csv").read_text().splitlines()
    assert set(kept) <= set(final)  # the finished rows as they were, their seconds too
    assert rows_without_seconds(res) == local_rows  # in the sweep's order, m then seed
    meta = json.loads((res / "sweep.json").read_text())
    assert meta["complete"] is True and meta["scheduler"] == dask_cluster.address


def test_ctrl_c_on_local_workers_keeps_the_finished_runs_and_resume_finishes_here(tmp_path, local_rows):
    """local:2 starts two worker processes here (a LocalCluster). Ctrl+C in the terminal
    reaches the whole process group: the sweep stops with status 130, writes the runs that
    finished (equal to the local sweep's), the workers print nothing and are gone; --resume
    without a scheduler finishes the sweep on this machine's threads, equal to the local one."""
    args = [*SWEEP, "--scheduler", "local:2", "--out", "res"]
    # its own process group, as a terminal's job
    proc, master = in_terminal("sweep", args, tmp_path, start_new_session=True)
    try:
        read_until(master, lambda line: 2 <= runs_done(line, 6) < 6 and "on 2 worker(s)" in line, proc)
        workers = subprocess.run(
            ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True
        ).stdout.split()
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl+C does
        proc.communicate(timeout=120)
        rest = read_rest(master)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(master)
    assert proc.returncode == 128 + signal.SIGINT, rest
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest, rest
    assert "error: interrupted; wrote the " in rest
    assert len(workers) >= 2  # the worker processes (and multiprocessing's resource tracker)
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in workers):
        assert time.monotonic() < deadline, "local:2's worker processes outlived the sweep"
        time.sleep(0.1)
    partial = rows_without_seconds(tmp_path / "res")
    assert 2 <= len(partial) - 1 < 6
    assert all(row in local_rows for row in partial[1:])  # digit for digit
    again = cli(["sweep", *SWEEP, "--resume", "--out", "res"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert rows_without_seconds(tmp_path / "res") == local_rows


def test_a_killed_worker_has_its_run_trained_again(tmp_path, dask_cluster, local_rows):
    """A worker is killed (SIGKILL) while both train a run: dask runs its task again on
    the other; the sweep completes with the rows of the local sweep, and the bar showed
    the cluster go from 2 workers to 1. (The shared cluster gets its second worker back.)"""
    proc, fd = in_terminal("sweep", [*SWEEP, "--scheduler", dask_cluster.address, "--out", "res"], tmp_path)
    try:
        read_until(fd, lambda line: "on 2 worker(s), 2 training" in line, proc)
        dask_cluster.kill_worker(0)
        rest = read_rest(fd)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(fd)
    assert proc.returncode == 0, rest
    assert "on 1 worker(s)" in rest  # the bar: the scheduler counts one worker now
    assert rows_without_seconds(tmp_path / "res") == local_rows
    assert json.loads((tmp_path / "res" / "sweep.json").read_text())["complete"] is True
    assert out.decode().startswith("wrote res: 6 runs")
    dask_cluster.add_worker()  # two again, for the next test
