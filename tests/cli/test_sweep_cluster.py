"""`sparsity-gui sweep --scheduler`: each run a task on a real dask scheduler with real
workers (subprocesses on 127.0.0.1, tests/dask_processes.py), or on `local:N` worker
processes. The rows must equal the local sweep's digit for digit (all but the wall-clock
`seconds`), also after a worker is killed mid-run, after SIGTERM or Ctrl+C and --resume;
bad input is one `error:` line, exit status 2 and nothing written."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dask_processes import DaskProcesses

ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen")
# six runs of about a second each: long enough to kill a worker while it trains one
SWEEP = ["--n", "48", "--m", "96,128,192", "--seeds", "2", "--steps", "2000", "--no-figure"]
TINY = ["--n", "8", "--m", "8,16", "--seeds", "2", "--steps", "100", "--no-figure"]


def cli(args, cwd, env=ENV, timeout=180):
    return subprocess.run(
        [sys.executable, "-m", "sparsity_gui", "sweep", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def rows_without_seconds(folder: Path) -> list[list[str]]:
    """sweep.csv as text cells, the wall-clock column left out."""
    header, *rows = list(csv.reader(io.StringIO((folder / "sweep.csv").read_text())))
    keep = [i for i, name in enumerate(header) if name != "seconds"]
    return [[header[i] for i in keep]] + [[r[i] for i in keep] for r in rows]


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory):
    """The reference: SWEEP on this machine's threads, as without the extra."""
    d = tmp_path_factory.mktemp("local")
    proc = cli([*SWEEP, "--jobs", "2", "--out", "res"], d)
    assert proc.returncode == 0, proc.stderr
    return rows_without_seconds(d / "res")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with DaskProcesses(tmp_path_factory.mktemp("dask"), workers=2) as procs:
        yield procs


def _pty_sweep(args, cwd):
    """The sweep in a subprocess whose stderr is a terminal, so that it draws its bar
    from the start; returns (process, terminal fd)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sparsity_gui", "sweep", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**ENV, "SPARSITY_GUI_PROGRESS_AFTER": "0"},
    )
    os.close(slave)
    return proc, master


def _read_until(fd, ready, proc, timeout=120) -> str:
    """The terminal's text up to the first redraw (a line) for which ready(line) holds."""
    seen = ""
    deadline = time.monotonic() + timeout
    while True:
        if any(ready(line) for line in seen.replace("\n", "\r").split("\r")):
            return seen
        assert proc.poll() is None, seen
        assert time.monotonic() < deadline, seen
        try:
            seen += os.read(fd, 4096).decode(errors="replace")
        except OSError:  # the terminal closed: the sweep ended first
            raise AssertionError(f"the sweep ended before the moment waited for: {seen}") from None


def runs_done(line: str) -> int:
    """K of a bar's "runs K/6" (-1 without one)."""
    found = re.search(r"runs (\d+)/6", line)
    return int(found.group(1)) if found else -1


def _read_rest(fd) -> str:
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode(errors="replace")


def test_sigterm_keeps_the_finished_runs_and_resume_finishes_on_the_cluster(tmp_path, cluster, local_rows):
    """SIGTERM after two runs finished: the pending tasks are cancelled, the finished rows
    written (status 130); --resume with the same options on the cluster trains only the
    rest, keeps the first rows as they were, and ends with the local sweep's rows."""
    args = [*SWEEP, "--scheduler", cluster.address, "--out", "res"]
    proc, fd = _pty_sweep(args, tmp_path)
    try:
        # two runs or more finished, not all (redraws are 0.1 s apart: K may skip a value)
        _read_until(fd, lambda line: 2 <= runs_done(line) < 6, proc)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        rest = _read_rest(fd)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(fd)
    assert proc.returncode == 130, rest
    assert "error: interrupted; wrote the " in rest and " of 6 runs that finished" in rest
    res = tmp_path / "res"
    partial = rows_without_seconds(res)
    assert 2 <= len(partial) - 1 < 6
    assert json.loads((res / "sweep.json").read_text())["complete"] is False
    kept = (res / "sweep.csv").read_text().splitlines()  # seconds too

    again = cli([*args[:-2], "--resume", "--out", "res"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("wrote res: 6 runs") and f"of {cluster.address}" in again.stdout
    final = (res / "sweep.csv").read_text().splitlines()
    assert set(kept) <= set(final)  # the finished rows as they were, their seconds too
    assert rows_without_seconds(res) == local_rows  # in the sweep's order, m then seed
    assert json.loads((res / "sweep.json").read_text())["complete"] is True


def test_ctrl_c_on_local_workers_keeps_the_finished_runs_and_resume_finishes_here(tmp_path, local_rows):
    """local:2 starts two worker processes here (a LocalCluster). Ctrl+C in the terminal
    reaches the whole process group: the sweep stops with status 130, writes the runs that
    finished (equal to the local sweep's), the workers print nothing and are gone; --resume
    without a scheduler finishes the sweep on this machine's threads, equal to the local one."""
    args = [*SWEEP, "--scheduler", "local:2", "--out", "res"]
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sparsity_gui", "sweep", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**ENV, "SPARSITY_GUI_PROGRESS_AFTER": "0"},
        start_new_session=True,  # its own process group, as a terminal's job
    )
    os.close(slave)
    try:
        _read_until(master, lambda line: 2 <= runs_done(line) < 6 and "on 2 worker(s)" in line, proc)
        workers = subprocess.run(
            ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True
        ).stdout.split()
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl+C does
        proc.communicate(timeout=120)
        rest = _read_rest(master)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(master)
    assert proc.returncode == 130, rest
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
    again = cli([*SWEEP, "--resume", "--out", "res"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert rows_without_seconds(tmp_path / "res") == local_rows


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _main(args, cwd, monkeypatch, capsys) -> tuple[int, str, str]:
    """`sparsity-gui sweep ARGS` through __main__.main in this process (the same code)."""
    from sparsity_gui.__main__ import main

    monkeypatch.chdir(cwd)
    try:
        code = main(["sweep", *args])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "option, message",
    [
        (
            "tcp://127.0.0.1:{port}",
            "error: scheduler: no scheduler answered at tcp://127.0.0.1:{port} within 3 s",
        ),
        ("local:0", "error: scheduler: local:N needs 1 to 64 workers, got 0"),
        ("udp://x:1", "error: scheduler: expected a scheduler address tcp://HOST:PORT or local:N"),
    ],
)
def test_bad_scheduler_is_one_error_line_and_nothing_written(tmp_path, monkeypatch, capsys, option, message):
    port = _free_port()  # nothing listens there
    code, out, err = _main(
        [*TINY, "--scheduler", option.format(port=port), "--out", "res"], tmp_path, monkeypatch, capsys
    )
    assert code == 2, err
    assert err.splitlines() == [err.strip()] and out == ""
    assert err.startswith(message.format(port=port)), err
    assert list(tmp_path.iterdir()) == []


def test_jobs_with_a_scheduler_is_refused(tmp_path, monkeypatch, capsys):
    code, out, err = _main(
        [*TINY, "--scheduler", "local:2", "--jobs", "2", "--out", "res"], tmp_path, monkeypatch, capsys
    )
    assert code == 2 and err.startswith("error: jobs: ") and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_without_the_extra_one_error_line_and_the_local_sweep_unchanged(tmp_path, monkeypatch, capsys):
    """With distributed unimportable (None in sys.modules: `import distributed` raises
    ImportError, as when it is not installed), --scheduler names the extra to install; the
    local sweep runs as before."""
    monkeypatch.setitem(sys.modules, "distributed", None)
    code, out, err = _main([*TINY, "--scheduler", "local:2", "--out", "res"], tmp_path, monkeypatch, capsys)
    assert code == 2, err
    assert err.splitlines() == [
        "error: scheduler: running on a cluster needs dask.distributed, not installed here: "
        "pip install 'sparsity-gui[cluster]'"
    ]
    assert list(tmp_path.iterdir()) == []
    code, out, err = _main([*TINY, "--out", "res"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert out.startswith("wrote res: 4 runs") and "with " in out.splitlines()[0]


def test_a_killed_worker_has_its_run_trained_again(tmp_path, cluster, local_rows):
    """A worker is killed (SIGKILL) while both train a run: dask runs its task again on
    the other; the sweep completes with the rows of the local sweep, and the bar showed
    the cluster go from 2 workers to 1. (Last: the module's cluster keeps one worker.)"""
    proc, fd = _pty_sweep([*SWEEP, "--scheduler", cluster.address, "--out", "res"], tmp_path)
    try:
        _read_until(fd, lambda line: "on 2 worker(s), 2 training" in line, proc)
        cluster.kill_worker(0)
        rest = _read_rest(fd)
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
    cluster.add_worker()  # two again, for the next test
