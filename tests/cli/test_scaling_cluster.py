"""`sparsity-gui scaling --scheduler`: each (m, lam, seed) run a task on a real dask
scheduler with real workers (subprocesses on 127.0.0.1, tests/dask_processes.py), or on
`local:N` worker processes. The rows must equal the local grid's digit for digit (all but
the wall-clock `seconds`); SIGTERM keeps the finished rows. (Bad scheduler options:
tests/cli/test_grid_scheduler_options.py.)"""

from __future__ import annotations

import json
import os
import signal

import pytest
from cluster_cli import (
    in_terminal,
    read_rest,
    read_until,
    runs_done,
)
from cluster_cli import rows_without_seconds as csv_rows
from helpers import cli

# eight runs of a few milliseconds each once compiled, solved to one weight left
GRID = ["--m", "100,1000", "--lam", "1e-2,1e-1", "--seeds", "2", "--no-figure"]
# runs of a second or more each at m = 3e6: long enough to be stopped halfway
SLOW = ["--m", "3e6", "--lam", "1e-3,1e-2,3e-2,1e-1", "--seeds", "2", "--no-figure"]


def rows_without_seconds(folder):
    return csv_rows(folder / "scaling.csv")


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory):
    """The reference: GRID on this machine's threads, as without the extra."""
    d = tmp_path_factory.mktemp("local")
    proc = cli(["scaling", *GRID, "--jobs", "2", "--out", "res"], d)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((d / "res" / "scaling.json").read_text())["scheduler"] is None
    return rows_without_seconds(d / "res")


def test_a_grid_on_a_running_cluster_equals_the_local_grid_and_sigterm_keeps_its_rows(
    tmp_path, local_rows, dask_cluster
):
    """GRID through a real scheduler and two workers gives the local grid's rows; then SLOW
    on the same workers gets SIGTERM once a run has finished: the pending tasks are
    cancelled, the finished runs written with complete: false, status 143 (128 + SIGTERM)."""
    proc = cli(["scaling", *GRID, "--scheduler", dask_cluster.address, "--out", "res"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("wrote res: 8 runs"), first
    assert first.endswith(f"on 2 worker(s) of {dask_cluster.address}"), first
    assert rows_without_seconds(tmp_path / "res") == local_rows
    meta = json.loads((tmp_path / "res" / "scaling.json").read_text())
    assert meta["scheduler"] == dask_cluster.address and meta["complete"] is True
    assert meta["runs_done"] == 8

    slow, master = in_terminal(
        "scaling", [*SLOW, "--scheduler", dask_cluster.address, "--out", "slow"], tmp_path
    )
    try:
        read_until(master, lambda line: 1 <= runs_done(line, 8) < 8 and "on 2 worker(s)" in line, slow)
        slow.send_signal(signal.SIGTERM)
        slow.communicate(timeout=60)
        rest = read_rest(master)
    finally:
        if slow.poll() is None:
            slow.kill()
            slow.communicate()
        os.close(master)
    assert slow.returncode == 128 + signal.SIGTERM, rest
    assert "Traceback" not in rest, rest
    assert "error: interrupted; wrote the " in rest and " of 8 runs that finished" in rest, rest
    meta = json.loads((tmp_path / "slow" / "scaling.json").read_text())
    assert meta["complete"] is False and meta["scheduler"] == dask_cluster.address
    assert 1 <= meta["runs_done"] < 8
    rows = rows_without_seconds(tmp_path / "slow")[1:]
    assert len(rows) == meta["runs_done"]
    planned = [
        (m, lam, seed) for m in ["3000000"] for lam in ["0.001", "0.01", "0.03", "0.1"] for seed in "01"
    ]
    assert [tuple(r[:3]) for r in rows] == [key for key in planned if key in {tuple(r[:3]) for r in rows}]


def test_local_workers_equal_the_local_grid(tmp_path, local_rows):
    """local:2 starts two worker processes here (a LocalCluster) and closes them."""
    proc = cli(["scaling", *GRID, "--scheduler", "local:2", "--out", "res"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].endswith("on 2 worker(s) of local:2"), proc.stdout
    assert rows_without_seconds(tmp_path / "res") == local_rows
    assert json.loads((tmp_path / "res" / "scaling.json").read_text())["scheduler"] == "local:2"
