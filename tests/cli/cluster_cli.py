"""What the cluster tests of `scaling` and `sweep` (tests/cli/test_*_cluster.py) share: the
command in a subprocess (its stderr a terminal when the bar is watched), the terminal read
up to a moment, the rows of its CSV without the wall-clock column, the command in this
process, and the refused schedulers with their one `error:` line."""

from __future__ import annotations

import csv
import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from helpers import free_port

ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen")

# (--scheduler, the start of the one error line); {port}: a port nothing listens on
BAD_SCHEDULERS = [
    (
        "tcp://127.0.0.1:{port}",
        "error: scheduler: no scheduler answered at tcp://127.0.0.1:{port} within 3 s",
    ),
    ("local:0", "error: scheduler: local:N needs 1 to 64 workers, got 0"),
    ("udp://x:1", "error: scheduler: expected a scheduler address tcp://HOST:PORT or local:N"),
]
NO_EXTRA = (
    "error: scheduler: running on a cluster needs dask.distributed, not installed here: "
    "pip install 'sparsity-gui[cluster]'"
)


def in_terminal(command: str, args, cwd, **popen) -> tuple[subprocess.Popen, int]:
    """The command in a subprocess whose stderr is a terminal, so that it draws its bar
    from the start; returns (process, terminal fd)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sparsity_gui", command, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**ENV, "SPARSITY_GUI_PROGRESS_AFTER": "0"},
        **popen,
    )
    os.close(slave)
    return proc, master


def read_until(fd, ready, proc, timeout=120) -> str:
    """The terminal's text up to the first redraw (a line) for which ready(line) holds."""
    seen = ""
    deadline = time.monotonic() + timeout
    while True:
        if any(ready(line) for line in seen.replace("\n", "\r").split("\r")):
            return seen
        assert proc.poll() is None, seen
        left = deadline - time.monotonic()
        assert left > 0, seen
        if not select.select([fd], [], [], min(left, 1.0))[0]:
            continue  # nothing new: look at the process and the deadline again
        try:
            seen += os.read(fd, 4096).decode(errors="replace")
        except OSError:  # the terminal closed: the command ended first
            raise AssertionError(f"the command ended before the moment waited for: {seen}") from None


def read_rest(fd) -> str:
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


def runs_done(line: str, total: int) -> int:
    """K of a bar's "runs K/total" (-1 without one)."""
    found = re.search(rf"runs (\d+)/{total}\b", line)
    return int(found.group(1)) if found else -1


def rows_without_seconds(csv_file: Path) -> list[list[str]]:
    """The CSV as text cells, the wall-clock column left out."""
    header, *rows = list(csv.reader(io.StringIO(csv_file.read_text())))
    keep = [i for i, name in enumerate(header) if name != "seconds"]
    return [[header[i] for i in keep]] + [[r[i] for i in keep] for r in rows]


def main_in_process(command: str, args, cwd, monkeypatch, capsys) -> tuple[int, str, str]:
    """`sparsity-gui COMMAND ARGS` through __main__.main in this process (the same code)."""
    from sparsity_gui.__main__ import main

    monkeypatch.chdir(cwd)
    try:
        code = main([command, *args])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def check_bad_scheduler_refused(command: str, args, option, message, tmp_path, monkeypatch, capsys) -> None:
    """``--scheduler option`` after ``args``: one `error:` line starting with ``message``,
    status 2, nothing written."""
    port = free_port()  # nothing listens there
    code, out, err = main_in_process(
        command,
        [*args, "--scheduler", option.format(port=port), "--out", "res"],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert code == 2, err
    assert err.splitlines() == [err.strip()] and out == ""
    assert err.startswith(message.format(port=port)), err
    assert list(tmp_path.iterdir()) == []
