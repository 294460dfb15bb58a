"""SIGINT, SIGTERM and SIGHUP end every headless command, as real subprocesses sent real
signals once their run has visibly started (their progress bar is on a terminal):

- the status is 128 + the signal (130, 143, 129), stderr is one `error:` line and no
  traceback, and nothing is left behind: no DIR, no temporary folder;
- the runs chosen would take hours (a gradient descent of 10^7 steps of 10^6 weights that
  lam = 1e-5 keeps alive, with no sample between; a training of 10^8 steps), so a command
  that did not stop between bounded chunks of its work would run into the test's bound;
- each command is started with SIGINT ignored, as a command started in the background
  (`cmd &`) is: `kill -INT` must end it all the same; SIGHUP is at its default even when the
  test runner itself runs under nohup;
- a temporary folder left by a process killed outright (SIGKILL) is removed by the next run
  into the same DIR (here run in this process, through __main__.main), and one of a live
  process is left alone.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from cluster_cli import ENV, in_terminal, read_rest, read_until
from helpers import command_in_process

LONG = {
    "run": [
        "run",
        "--method",
        "gd",
        "--m",
        "1e6",
        "--lam",
        "1e-5",
        "--eta",
        "1e-3",
        "--t-end",
        "1e4",
        "--samples",
        "2",
    ],  # fmt: skip
    "interference": ["interference", "--n", "64", "--m", "64", "--steps", "100000000"],
    "sweep": [
        "sweep",
        "--n",
        "64",
        "--m",
        "64,128",
        "--seeds",
        "1",
        "--steps",
        "100000000",
        "--jobs",
        "1",
        "--no-figure",
    ],  # fmt: skip
    "scaling": ["scaling", "--m", "3e6", "--lam", "1e-3", "--seeds", "8", "--jobs", "1", "--no-figure"],
}
# what the progress bar shows once the work is under way
STARTED = {"run": "gd [", "interference": "step ", "sweep": "runs 0/2", "scaling": "runs 0/8"}
WAIT = 120  # seconds: a bound on every wait, so that no test can hang
# a short run into the same DIR, in this process (another process than the long run's)
NEXT_RUN = ["run", "--m", "50", "--samples", "5", "--out", "out"]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as for a background job
    # and SIGHUP at its default, as a terminal's command has it, whatever the test runner
    # inherited (under nohup it is ignored, and the command rightly keeps it so)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _start(command: str, folder: Path, out: str = "out"):
    """The command on a terminal (its bar drawn from the start), SIGINT ignored on entry."""
    return in_terminal(command, [*LONG[command][1:], "--out", out], folder, preexec_fn=_ignore_sigint)


def _stop(proc) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


def _temp_folders(folder: Path, name: str = "out") -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}."))


def _interrupt(command: str, sig: int, folder: Path) -> tuple[int, str, str]:
    """Start `command`, wait until its bar shows the work started, send `sig`, and return
    (status, stdout, what the terminal showed after the signal)."""
    proc, fd = _start(command, folder)
    try:
        read_until(fd, lambda line: STARTED[command] in line, proc, timeout=WAIT)
        assert _temp_folders(folder), "the run is under way: its temporary folder exists"
        os.kill(proc.pid, sig)
        out, _ = proc.communicate(timeout=WAIT)
        shown = read_rest(fd)
    finally:
        _stop(proc)
        os.close(fd)
    return proc.returncode, out.decode(), shown


def _error_lines(shown: str) -> list[str]:
    lines = [line.strip() for line in shown.replace("\r", "\n").split("\n")]
    return [line for line in lines if line.startswith("error:")]


@pytest.mark.parametrize(
    "command, sig",
    [
        ("run", signal.SIGINT),
        ("interference", signal.SIGHUP),
        ("sweep", signal.SIGINT),
        ("scaling", signal.SIGTERM),
    ],
    ids=lambda v: v if isinstance(v, str) else signal.Signals(v).name,
)
# run's SIGTERM: test_a_live_runs_folder_is_left_alone_and_nohup_keeps_it_going; run's SIGHUP:
# test_closing_the_terminal_ends_the_command_as_sighup
def test_a_signal_ends_the_command_and_leaves_nothing(tmp_path, command, sig):
    status, out, shown = _interrupt(command, sig, tmp_path)
    assert status == 128 + sig, shown
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown, shown
    assert out == ""
    errors = _error_lines(shown)
    if command == "scaling" and (tmp_path / "out").exists():
        # a run of the grid finished just before the signal: it is kept, said so
        assert len(errors) == 1 and "runs that finished" in errors[0], shown
        assert json.loads((tmp_path / "out" / "scaling.json").read_text())["complete"] is False
        assert _temp_folders(tmp_path) == []
        return
    assert errors == ["error: interrupted; nothing was written"], shown
    assert list(tmp_path.iterdir()) == []


def test_a_folder_left_by_a_killed_run_is_removed_by_the_next_run(tmp_path, monkeypatch, capsys):
    """SIGKILL leaves the temporary folder (nothing can clean up); the next run into the
    same DIR recognises it (its process is gone, its lock free) and removes it."""
    proc, fd = _start("run", tmp_path)
    try:
        read_until(fd, lambda line: STARTED["run"] in line, proc, timeout=WAIT)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=WAIT)
    finally:
        _stop(proc)
        os.close(fd)
    left = _temp_folders(tmp_path)
    assert len(left) == 1 and left[0].startswith(f".out.tmp-{proc.pid}-"), left
    status, _out, err = command_in_process(NEXT_RUN, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_live_runs_folder_is_left_alone_and_nohup_keeps_it_going(tmp_path, monkeypatch, capsys):
    """A second command into the same DIR while the first still runs: the first's folder is
    kept (its process is alive), the second writes DIR. The first was started as under
    nohup (SIGHUP ignored on entry, and SIGINT as a background job's): SIGHUP stays ignored,
    so SIGHUP and then SIGTERM end it with SIGTERM's status (a SIGHUP acted on would have
    ended it with 129 first), and it ends cleanly."""

    def like_nohup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc, fd = in_terminal("run", [*LONG["run"][1:], "--out", "out"], tmp_path, preexec_fn=like_nohup)
    try:
        read_until(fd, lambda line: STARTED["run"] in line, proc, timeout=WAIT)
        first = _temp_folders(tmp_path)
        status, _out, err = command_in_process(NEXT_RUN, tmp_path, monkeypatch, capsys)
        assert status == 0, err
        assert _temp_folders(tmp_path) == first
        assert proc.poll() is None
        os.kill(proc.pid, signal.SIGHUP)
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=WAIT)
        shown = read_rest(fd)
    finally:
        _stop(proc)
        os.close(fd)
    # SIGTERM ended run as every signal ends a command: its status, one error line, no
    # traceback, nothing on stdout and nothing of its own left (only the second's DIR)
    assert proc.returncode == 128 + signal.SIGTERM, shown
    assert "Traceback" not in shown and out == b""
    assert _error_lines(shown) == ["error: interrupted; nothing was written"], shown
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (tmp_path / "out" / "run.json").is_file()


def test_closing_the_terminal_ends_the_command_as_sighup(tmp_path):
    """The command's controlling terminal closes (its pseudo-terminal's master end): the
    kernel sends SIGHUP; the command, its stderr now a dead terminal, still removes its
    temporary folder and ends with 129."""

    def own_terminal() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)  # not nohup's SIG_IGN, if pytest has it
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # stdin, the pseudo-terminal: the controlling one

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sparsity_gui", *LONG["run"], "--out", "out"],
        cwd=tmp_path,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**ENV, "SPARSITY_GUI_PROGRESS_AFTER": "0"},
        preexec_fn=own_terminal,
    )
    os.close(slave)
    try:
        read_until(master, lambda line: STARTED["run"] in line, proc, timeout=WAIT)
        os.close(master)  # the terminal window is closed
        master = -1
        out, _ = proc.communicate(timeout=WAIT)
    finally:
        _stop(proc)
        if master >= 0:
            os.close(master)
    assert proc.returncode == 128 + signal.SIGHUP
    assert out == b""
    assert list(tmp_path.iterdir()) == []


WEAKREF_BODY = """
import signal, sys, weakref
from sparsity_gui.cli.common import write_headless

class Held:
    pass

def body(result_dir):
    result_dir.path("a.txt").write_text("a")
    held = Held()
    weakref.finalize(held, signal.raise_signal, signal.SIGTERM)
    del held  # the signal arrives inside this weakref callback, as during run --figures
    result_dir.path("b.txt").write_text("b")

write_headless(sys.argv[1], False, body)
print("committed")
"""


def test_a_signal_inside_a_weakref_callback_still_ends_the_command(tmp_path):
    """Python swallows an exception raised in a weakref callback ("Exception ignored"):
    the handler's Interrupted went nowhere and the command wrote its folder with status 0.
    The signal is remembered and ends the command before its folder is committed."""
    script = tmp_path / "body.py"
    script.write_text(WEAKREF_BODY)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=120, env=ENV
    )
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert proc.stdout == "" and proc.stderr.strip() == "error: interrupted; nothing was written", proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["body.py"]
