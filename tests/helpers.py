"""The command line as the tests start it: `python -m sparsity_gui ARGS` in a subprocess,
its output as text, Qt offscreen; one helper for every test of the CLI."""

from __future__ import annotations

import os
import subprocess
import sys

# the environment of every CLI subprocess: Qt never opens a real display
ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen")
COMMAND = [sys.executable, "-m", "sparsity_gui"]


def cli(args, cwd=None, *, env=None, timeout: float = 180, prefix=(), **kw) -> subprocess.CompletedProcess:
    """`sparsity-gui ARGS` run in ``cwd`` and waited for (``prefix``: a command that starts
    it, such as a shell's ``exec``); ``kw`` go to subprocess.run (preexec_fn, input)."""
    return subprocess.run(
        [*prefix, *COMMAND, *[str(a) for a in args]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV if env is None else env,
        **kw,
    )


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The one `error:` line of a refused command (exit 2, nothing on stdout, no traceback)."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert proc.stdout == ""
    return lines[0]
