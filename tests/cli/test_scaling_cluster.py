"""`sparsity-gui scaling --scheduler`: each (m, lam, seed) run a task on a real dask
scheduler with real workers (subprocesses on 127.0.0.1, tests/dask_processes.py), or on
`local:N` worker processes. The rows must equal the local grid's digit for digit (all but
the wall-clock `seconds`); SIGTERM keeps the finished rows; bad input is one `error:` line,
exit status 2 and nothing written."""

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
# eight runs of a few milliseconds each once compiled, solved to one weight left
GRID = ["--m", "100,1000", "--lam", "1e-2,1e-1", "--seeds", "2", "--no-figure"]
# runs of a second or more each at m = 3e6: long enough to be stopped halfway
SLOW = ["--m", "3e6", "--lam", "1e-3,1e-2,3e-2,1e-1", "--seeds", "2", "--no-figure"]


def cli(args, cwd, timeout=180):
    return subprocess.run(
        [sys.executable, "-m", "sparsity_gui", "scaling", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
    )


def rows_without_seconds(folder: Path) -> list[list[str]]:
    """scaling.csv as text cells, the wall-clock column left out."""
    header, *rows = list(csv.reader(io.StringIO((folder / "scaling.csv").read_text())))
    keep = [i for i, name in enumerate(header) if name != "seconds"]
    return [[header[i] for i in keep]] + [[r[i] for i in keep] for r in rows]


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory):
    """The reference: GRID on this machine's threads, as without the extra."""
    d = tmp_path_factory.mktemp("local")
    proc = cli([*GRID, "--jobs", "2", "--out", "res"], d)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((d / "res" / "scaling.json").read_text())["scheduler"] is None
    return rows_without_seconds(d / "res")


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
        except OSError:  # the terminal closed: the grid ended first
            raise AssertionError(f"the grid ended before the moment waited for: {seen}") from None


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


def runs_done(line: str) -> int:
    """K of a bar's "runs K/8" (-1 without one)."""
    found = re.search(r"runs (\d+)/8", line)
    return int(found.group(1)) if found else -1


def test_a_grid_on_a_running_cluster_equals_the_local_grid_and_sigterm_keeps_its_rows(tmp_path, local_rows):
    """GRID through a real scheduler and two workers gives the local grid's rows; then SLOW
    on the same workers gets SIGTERM once a run has finished: the pending tasks are
    cancelled, the finished runs written with complete: false, status 130."""
    (tmp_path / "dask").mkdir()
    with DaskProcesses(tmp_path / "dask", workers=2) as cluster:
        proc = cli([*GRID, "--scheduler", cluster.address, "--out", "res"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        first = proc.stdout.splitlines()[0]
        assert first.startswith("wrote res: 8 runs"), first
        assert first.endswith(f"on 2 worker(s) of {cluster.address}"), first
        assert rows_without_seconds(tmp_path / "res") == local_rows
        meta = json.loads((tmp_path / "res" / "scaling.json").read_text())
        assert meta["scheduler"] == cluster.address and meta["complete"] is True
        assert meta["runs_done"] == 8

        # its stderr a terminal, so that it draws its bar from the start
        master, slave = pty.openpty()
        slow = subprocess.Popen(
            [sys.executable, "-m", "sparsity_gui", "scaling", *SLOW, "--scheduler", cluster.address]
            + ["--out", "slow"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=slave,
            env={**ENV, "SPARSITY_GUI_PROGRESS_AFTER": "0"},
        )
        os.close(slave)
        try:
            _read_until(master, lambda line: 1 <= runs_done(line) < 8 and "on 2 worker(s)" in line, slow)
            slow.send_signal(signal.SIGTERM)
            slow.communicate(timeout=60)
            rest = _read_rest(master)
        finally:
            if slow.poll() is None:
                slow.kill()
                slow.communicate()
            os.close(master)
    assert slow.returncode == 130, rest
    assert "Traceback" not in rest, rest
    assert "error: interrupted; wrote the " in rest and " of 8 runs that finished" in rest, rest
    meta = json.loads((tmp_path / "slow" / "scaling.json").read_text())
    assert meta["complete"] is False and meta["scheduler"] == cluster.address
    assert 1 <= meta["runs_done"] < 8
    rows = rows_without_seconds(tmp_path / "slow")[1:]
    assert len(rows) == meta["runs_done"]
    planned = [
        (m, lam, seed) for m in ["3000000"] for lam in ["0.001", "0.01", "0.03", "0.1"] for seed in "01"
    ]
    assert [tuple(r[:3]) for r in rows] == [key for key in planned if key in {tuple(r[:3]) for r in rows}]


def test_local_workers_equal_the_local_grid(tmp_path, local_rows):
    """local:2 starts two worker processes here (a LocalCluster) and closes them."""
    proc = cli([*GRID, "--scheduler", "local:2", "--out", "res"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].endswith("on 2 worker(s) of local:2"), proc.stdout
    assert rows_without_seconds(tmp_path / "res") == local_rows
    assert json.loads((tmp_path / "res" / "scaling.json").read_text())["scheduler"] == "local:2"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _main(args, cwd, monkeypatch, capsys) -> tuple[int, str, str]:
    """`sparsity-gui scaling ARGS` through __main__.main in this process (the same code)."""
    from sparsity_gui.__main__ import main

    monkeypatch.chdir(cwd)
    try:
        code = main(["scaling", *args])
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
        [*GRID, "--scheduler", option.format(port=port), "--out", "res"], tmp_path, monkeypatch, capsys
    )
    assert code == 2, err
    assert err.splitlines() == [err.strip()] and out == ""
    assert err.startswith(message.format(port=port)), err
    assert list(tmp_path.iterdir()) == []


def test_jobs_with_a_scheduler_is_refused(tmp_path, monkeypatch, capsys):
    code, out, err = _main(
        [*GRID, "--scheduler", "local:2", "--jobs", "2", "--out", "res"], tmp_path, monkeypatch, capsys
    )
    assert code == 2 and err.startswith("error: jobs: ") and len(err.splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_without_the_extra_one_error_line(tmp_path, monkeypatch, capsys):
    """With distributed unimportable (None in sys.modules: `import distributed` raises
    ImportError, as when it is not installed), --scheduler names the extra to install."""
    monkeypatch.setitem(sys.modules, "distributed", None)
    code, out, err = _main([*GRID, "--scheduler", "local:2", "--out", "res"], tmp_path, monkeypatch, capsys)
    assert code == 2, err
    assert err.splitlines() == [
        "error: scheduler: running on a cluster needs dask.distributed, not installed here: "
        "pip install 'sparsity-gui[cluster]'"
    ]
    assert list(tmp_path.iterdir()) == []
