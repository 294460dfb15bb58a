"""A headless command whose stdout is a pipe nobody reads (`sparsity-gui run ... | head -0`),
as a real subprocess writing into a real pipe whose reading end is closed: its files are
written all the same, it prints nothing on stderr (no BrokenPipeError, no "Exception
ignored"), and its status is 141 (128 + SIGPIPE), what a shell reports for a Unix tool
that SIGPIPE ended. `--help` and `--version` too.

Every command ends through cli/common.headless_command and prints its help through the same
CleanParser, so one command of each model (run: the note, sweep: the interference's grid) and
one command's --help stand for all four; each command's summary itself is tested in
tests/cli/test_messages.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen")
COMMANDS = {
    "run": (["run", "--m", "50", "--samples", "5"], "run.json"),
    "sweep": (
        ["sweep", "--n", "4", "--m", "8", "--seeds", "1", "--steps", "20", "--jobs", "1", "--no-figure"],
        "sweep.json",
    ),
}


def into_closed_pipe(args, cwd) -> subprocess.CompletedProcess:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone: every write to the pipe fails with EPIPE
    try:
        return subprocess.run(
            [sys.executable, "-m", "sparsity_gui", *args],
            cwd=cwd,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=180,
            env=ENV,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_closed_stdout_ends_quietly_with_the_files_written(tmp_path, command):
    args, json_name = COMMANDS[command]
    proc = into_closed_pipe([*args, "--out", "out"], tmp_path)
    assert proc.stderr == ""
    assert proc.returncode == 141
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary folder
    meta = json.loads((tmp_path / "out" / json_name).read_text())
    assert meta["command_line"].startswith(f"sparsity-gui {command} ")


@pytest.mark.parametrize("args", [["run", "--help"], ["--help"], ["--version"]], ids=" ".join)
def test_help_into_a_closed_pipe_ends_quietly(tmp_path, args):
    """A command's --help, and the desktop app's --help and --version (no Qt needed)."""
    proc = into_closed_pipe(args, tmp_path)
    assert proc.stderr == ""
    assert proc.returncode == 141
    assert list(tmp_path.iterdir()) == []
