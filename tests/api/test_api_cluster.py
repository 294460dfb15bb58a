"""api.sweep and api.scaling with scheduler=: each run a task on a real dask scheduler with
real workers (subprocesses on 127.0.0.1, tests/dask_processes.py), or on local:2 worker
processes the call starts. The rows equal the local run's digit for digit (all but the
wall-clock `seconds`), save() writes the files of the CLI command with --scheduler, and
bad input is a ValueError with the message the CLI prints after `error:`."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers import free_port
from result_files import assert_same_files, same_dir_both_ways

from sparsity_gui import api
from sparsity_gui.__main__ import main

# small grids: a run takes milliseconds, the cluster's start-up is the cost
SWEEP = dict(n=8, m=[8, 16], seeds=2, steps=100)
SWEEP_ARGV = ["--n", "8", "--m", "8,16", "--seeds", "2", "--steps", "100", "--no-figure"]
GRID = dict(m=[100, 1000], lam=[1e-2, 1e-1], seeds=2)
GRID_ARGV = ["--m", "100,1000", "--lam", "1e-2,1e-1", "--seeds", "2", "--no-figure"]
CALLS = [("sweep", SWEEP, SWEEP_ARGV), ("scaling", GRID, GRID_ARGV)]


def assert_same_rows(here: dict, there: dict) -> None:
    assert list(here) == list(there) and "seconds" in here
    for name in here:
        if name != "seconds":
            assert here[name].dtype == there[name].dtype, name
            nan = here[name].dtype.kind == "f"
            assert np.array_equal(here[name], there[name], equal_nan=nan), name


@pytest.mark.parametrize("fn, kwargs, _argv", CALLS, ids=[c[0] for c in CALLS])
def test_a_running_cluster_gives_the_local_rows_and_the_clis_files(
    fn, kwargs, _argv, dask_cluster, tmp_path, monkeypatch, capsys
):
    cluster = dask_cluster  # the session's scheduler and two workers (tests/conftest.py)
    monkeypatch.chdir(tmp_path)
    here = getattr(api, fn)(**kwargs, jobs=1)
    there = getattr(api, fn)(**kwargs, scheduler=cluster.address)
    assert here.scheduler is None and here.jobs == 1
    assert there.jobs is None and str(there.scheduler) == cluster.address
    assert_same_rows(here.rows, there.rows)
    means = (here.mean, there.mean) if fn == "scaling" else ({"": here.mean}, {"": there.mean})
    assert all(np.array_equal(means[0][k], means[1][k], equal_nan=True) for k in means[0])
    assert f" --scheduler {cluster.address} --no-figure --out DIR>" in repr(there)
    api_dir, cli_dir = same_dir_both_ways(tmp_path, capsys, there.save, fn)
    assert_same_files(api_dir, cli_dir, clock_fields=("run_seconds",), csv_clock_column="seconds")
    if fn == "scaling":  # where the runs ran
        assert json.loads((api_dir / "scaling.json").read_text())["scheduler"] == cluster.address


def test_local_workers_started_by_the_call_give_the_local_rows(tmp_path):
    """local:2 in a fresh interpreter (as a notebook's kernel: the call starts and closes
    two worker processes; the process ends, so none is left)."""
    code = textwrap.dedent(
        """
        from sparsity_gui import api
        result = api.sweep(n=8, m=[8, 16], seeds=2, steps=100, scheduler="local:2")
        assert result.jobs is None and str(result.scheduler) == "local:2", result
        result.save("cluster")
        api.sweep(n=8, m=[8, 16], seeds=2, steps=100, jobs=1).save("here")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 0, proc.stderr

    def rows(folder: str) -> list[list[str]]:
        header, *body = csv.reader(io.StringIO((tmp_path / folder / "sweep.csv").read_text()))
        keep = [i for i, name in enumerate(header) if name != "seconds"]
        return [[header[i] for i in keep]] + [[r[i] for i in keep] for r in body]

    assert rows("cluster") == rows("here") and len(rows("here")) == 1 + 4
    meta = json.loads((tmp_path / "cluster" / "sweep.json").read_text())
    assert meta["command_line"] == (
        "sparsity-gui sweep --n 8 --m 8,16 --seeds 2 --steps 100 --scheduler local:2 --no-figure "
        "--out cluster"
    )


def test_an_unreachable_scheduler_is_the_clis_error(tmp_path, capsys):
    """(The CLI's scaling says the same: tests/cli/test_scaling_cluster.py.)"""
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(SystemExit) as stop:
        main(["sweep", *SWEEP_ARGV, "--scheduler", address, "--out", str(tmp_path / "res")])
    assert stop.value.code == 2
    cli_lines = capsys.readouterr().err.splitlines()
    assert cli_lines == [f"error: scheduler: no scheduler answered at {address} within 3 s"]
    for fn, kwargs in (("sweep", SWEEP), ("scaling", GRID)):
        with pytest.raises(ValueError) as err:
            getattr(api, fn)(**kwargs, scheduler=address)
        assert cli_lines == [f"error: {err.value}"], fn
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fn, kwargs, argv", CALLS, ids=[c[0] for c in CALLS])
def test_without_the_extra_the_message_names_it(fn, kwargs, argv, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    with pytest.raises(SystemExit):
        main([fn, *argv, "--scheduler", "local:2", "--out", str(tmp_path / "res")])
    cli_lines = capsys.readouterr().err.splitlines()
    with pytest.raises(ValueError) as err:
        getattr(api, fn)(**kwargs, scheduler="local:2")
    assert cli_lines == [f"error: {err.value}"]
    assert str(err.value) == (
        "scheduler: running on a cluster needs dask.distributed, not installed here: "
        "pip install 'sparsity-gui[cluster]'"
    )
