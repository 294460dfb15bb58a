"""The headless commands' progress bar (tqdm, cli/common.Progress): on a terminal only, only
once a command has run for SPARSITY_GUI_PROGRESS_AFTER seconds (1 by default), with the time
elapsed and the time left. Real pseudo-terminals and pipes, real subprocesses."""

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios

import pytest

ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen")
# a gradient-descent run: a row every 4 of 501 samples moves the bar (about a second)
RUN = ["run", "--m", "20000", "--method", "gd", "--lam", "1e-2", "--no-weights", "--out", "res"]


def _set_width(fd: int, columns: int, rows: int = 24) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


def _run_on_terminal(tmp_path, args, after: str, columns: int | None = 160):
    """The command with stderr on a pseudo-terminal (of `columns`, or of no size at all):
    (return code, stdout, everything written to the terminal)."""
    master, slave = pty.openpty()
    if columns is not None:
        _set_width(slave, columns)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sparsity_gui", *args],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
            env={**ENV, "SPARSITY_GUI_PROGRESS_AFTER": after},
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not data:
                break
            chunks.append(data)
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(master)
    return proc.returncode, out, b"".join(chunks).decode()


def _bar_lines(text: str) -> list[str]:
    return [part for part in text.replace("\n", "\r").split("\r") if part.strip()]


def _percent(line: str) -> float:
    return float(line.split("%")[0].split()[-1])


@pytest.mark.parametrize("columns", [None, 60], ids=["no-size", "60-columns"])
def test_a_terminal_shows_the_bar_with_the_time_left(tmp_path, columns):
    """A terminal that reports no size gets the whole line; a narrow one gets it trimmed to
    its width (tqdm keeps the last column free), never wrapped onto a second line."""
    rc, out, text = _run_on_terminal(tmp_path, RUN, after="0", columns=columns)
    assert rc == 0, out
    assert out.startswith("wrote res: 501 rows")
    lines = _bar_lines(text)
    assert lines, text  # at least the last state, at close (a fast machine may draw no other)
    for line in lines:
        assert line.startswith("gd [") and "%  " in line, line
        if columns is None:
            assert " elapsed, about " in line and line.endswith(" left"), line
        else:
            assert len(line.rstrip()) <= columns - 1, line
    assert [_percent(line) for line in lines] == sorted(_percent(line) for line in lines)
    assert _percent(lines[-1]) == 100.0
    assert text.endswith("\n")  # the line is ended: the shell's prompt starts on its own line
    assert sorted(p.name for p in (tmp_path / "res").iterdir()) == [
        "deaths.csv",
        "run.json",
        "timeseries.csv",
    ]


def test_no_bar_before_the_delay(tmp_path):
    """A command that ends before SPARSITY_GUI_PROGRESS_AFTER seconds writes nothing to the
    terminal (by default quick commands end within the second)."""
    rc, out, text = _run_on_terminal(tmp_path, RUN, after="3600")
    assert rc == 0, out
    assert text == ""


def test_no_bar_through_a_pipe(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "sparsity_gui", *RUN],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**ENV, "SPARSITY_GUI_PROGRESS_AFTER": "0"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.startswith("wrote res: 501 rows")


def test_update_takes_a_new_total_a_detail_and_a_known_time_left(monkeypatch):
    """What a sweep passes: the share of its cost done out of 1.0, its own estimate of the
    time left, and which runs are done (in process, on a real pseudo-terminal)."""
    from sparsity_gui.cli.common import Progress

    master, slave = pty.openpty()
    _set_width(slave, 200)
    terminal = os.fdopen(slave, "w")
    try:
        monkeypatch.setenv("SPARSITY_GUI_PROGRESS_AFTER", "0")
        monkeypatch.setattr(sys, "stderr", terminal)
        progress = Progress(3, "sweep")
        progress.update(0.25, 1.0, detail="runs 1/4  m=64 seed=0", eta=95.0)
        progress.close()
        progress.update(0.5, 1.0)  # after close: nothing more
        terminal.flush()
        text = ""
        while not text.endswith("\n") and select.select([master], [], [], 10)[0]:
            text += os.read(master, 65536).decode()  # the terminal may hand it over in pieces
    finally:
        terminal.close()
        os.close(master)
    lines = _bar_lines(text)
    assert lines, text
    # the elapsed time depends on the machine's load; the time left is the one given
    assert re.fullmatch(
        r"sweep \[#{7} {23}\] runs 1/4  m=64 seed=0   25\.0%  \d+ s elapsed, about 1 min 35 s left",
        lines[-1].rstrip(),
    ), lines[-1]
    assert text.endswith("\n") and "50.0%" not in text
