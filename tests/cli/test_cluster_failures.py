"""`sweep` and `scaling` when the cluster fails them, as real subprocesses (but for the
refusals of a silent listener and the --resume after a kill, run through __main__.main in
this process):

- a `--scheduler` address that accepts TCP connections and never answers (a real listening
  socket on 127.0.0.1 that accepts and never writes): refused within the connect bound with
  one `error:` line saying so, status 2, nothing written;
- a real dask scheduler (tests/dask_processes.py) killed mid-sweep (and mid-grid for
  `scaling`): every run that finished
  is kept (`complete: false`), stderr is one `error:` line (no traceback, none of
  distributed's log), status 2; `--resume` trains the rest; with `--verbose` (the scaling
  grid's case) the same error and the developer log of the run.
"""

from __future__ import annotations

import json
import signal
import socket
import threading

import pytest
from cluster_cli import in_terminal, read_rest, read_until, runs_done
from dask_processes import DaskProcesses
from helpers import cli, command_in_process

# six runs of about a second each, and eight of a second or more (m = 3e6)
SWEEP = ["--n", "48", "--m", "96,128,192", "--seeds", "2", "--steps", "2000", "--no-figure"]
SCALING = ["--m", "3e6", "--lam", "1e-3,1e-2,3e-2,1e-1", "--seeds", "2", "--no-figure"]
QUICK = {
    "sweep": ["--n", "4", "--m", "8", "--seeds", "1", "--steps", "20", "--no-figure"],
    "scaling": ["--m", "100", "--lam", "1e-2", "--seeds", "1", "--no-figure"],
}


class SilentListener:
    """A TCP socket on 127.0.0.1 that accepts every connection and never writes a byte."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="silent-listener", daemon=True)

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted.append(conn)

    def __enter__(self) -> SilentListener:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._closing.set()
        self._thread.join(10)
        for conn in self.accepted:
            conn.close()
        self.sock.close()


@pytest.mark.parametrize("command", ["sweep", "scaling"])
def test_a_listener_that_never_answers_is_refused_within_the_bound(tmp_path, monkeypatch, capsys, command):
    """In this process (the command's process ends on a refusal as
    test_a_listener_that_answers_garbage_ends_the_command_within_the_bound shows)."""
    with SilentListener() as listener:
        address = f"tcp://127.0.0.1:{listener.port}"
        argv = [command, *QUICK[command], "--scheduler", address, "--out", "res"]
        code, out, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
        assert listener.accepted, "the command did connect"
    assert code == 2, err
    assert err.splitlines() == [f"error: scheduler: no scheduler answered at {address} within 3 s"]
    assert out == ""
    assert list(tmp_path.iterdir()) == []


class GarbageListener(SilentListener):
    """A TCP socket on 127.0.0.1 that answers every connection with ``reply`` (not Dask's
    protocol) and keeps it open."""

    def __init__(self, reply: bytes):
        super().__init__()
        self.reply = reply

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self.sock.accept()
                conn.sendall(self.reply)
            except (TimeoutError, OSError):
                continue
            self.accepted.append(conn)


GARBAGE = {
    "bytes 0xff": b"\xff" * 64,  # read as a frame count and lengths: 6.46 EiB asked for
    "an HTTP reply": b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\ngarbage" * 4,
}


@pytest.mark.parametrize("garbage", GARBAGE)
@pytest.mark.parametrize("command", ["sweep", "scaling"])
def test_a_listener_that_answers_garbage_is_one_error_line(tmp_path, monkeypatch, capsys, command, garbage):
    from helpers import assert_refused_in_process

    monkeypatch.chdir(tmp_path)
    with GarbageListener(GARBAGE[garbage]) as listener:
        address = f"tcp://127.0.0.1:{listener.port}"
        args = [command, *QUICK[command], "--scheduler", address, "--out", "res"]
        words = f"scheduler: what answered at {address} is not a Dask scheduler"
        assert_refused_in_process(args, words, tmp_path, capsys)
        assert listener.accepted, "the command did connect"


def test_a_listener_that_answers_garbage_ends_the_command_within_the_bound(tmp_path):
    """The entry point itself: one line, status 2, no traceback, within the connect bound
    (3 s) and the start of the interpreter."""
    import time

    with GarbageListener(GARBAGE["bytes 0xff"]) as listener:
        address = f"tcp://127.0.0.1:{listener.port}"
        started = time.monotonic()
        proc = cli(["sweep", *QUICK["sweep"], "--scheduler", address, "--out", "res"], tmp_path, timeout=120)
        took = time.monotonic() - started
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("error: scheduler: what answered")
    assert took < 60 and list(tmp_path.iterdir()) == []


def _sweep_until_the_scheduler_dies(folder, extra=(), command="sweep", grid=SWEEP, total=6, least=2):
    """SWEEP (or another grid) on a cluster of its own whose scheduler is killed (SIGKILL)
    once `least` runs or more have finished; returns (status, what the terminal showed)."""
    with DaskProcesses(folder / "cluster", workers=2) as cluster:
        args = [*grid, "--scheduler", cluster.address, *extra, "--out", "res"]
        proc, fd = in_terminal(command, args, folder)
        try:
            read_until(fd, lambda line: least <= runs_done(line, total) < total, proc)
            cluster.scheduler.send_signal(signal.SIGKILL)
            cluster.scheduler.wait(30)
            proc.communicate(timeout=180)
            shown = read_rest(fd)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return proc.returncode, shown


def _lines(shown: str) -> list[str]:
    return [line.strip() for line in shown.replace("\r", "\n").split("\n") if line.strip()]


def test_a_scheduler_killed_mid_sweep_keeps_the_finished_runs(tmp_path, monkeypatch, capsys):
    (tmp_path / "cluster").mkdir()
    status, shown = _sweep_until_the_scheduler_dies(tmp_path)
    assert status == 2, shown
    assert "Traceback" not in shown and "distributed" not in shown, shown
    errors = [line for line in _lines(shown) if "error:" in line]
    assert len(errors) == 1, shown
    error = errors[0][errors[0].index("error:") :]
    assert error.startswith("error: scheduler: "), error
    assert "runs that finished" in error and "--resume" in error, error
    res = tmp_path / "res"
    assert sorted(p.name for p in res.iterdir()) == ["sweep.csv", "sweep.json"]
    meta = json.loads((res / "sweep.json").read_text())
    assert meta["complete"] is False
    kept = len((res / "sweep.csv").read_text().splitlines()) - 1
    assert 2 <= kept < 6
    assert f"wrote the {kept} of 6 runs that finished" in error, error
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []

    # --resume trains the rest here (no scheduler needed for the same settings; in this process)
    code, _out, err = command_in_process(
        ["sweep", *SWEEP, "--resume", "--out", "res"], tmp_path, monkeypatch, capsys
    )
    assert code == 0, err
    assert len((res / "sweep.csv").read_text().splitlines()) == 1 + 6
    assert json.loads((res / "sweep.json").read_text())["complete"] is True


def test_a_scheduler_killed_mid_scaling_grid_keeps_the_finished_runs_and_verbose_logs_them(tmp_path):
    """`scaling` with --verbose: the same one error: line and status 2 as without it, the
    finished runs kept, and the developer log of the run (the partial results written).
    Without --verbose no line of distributed's shows: the sweep above (both commands set
    Dask's log level in cli/common.py and meet the lost scheduler in core/cluster.py).
    Whether distributed logs its own failed reconnect before the command has ended is a
    race (seen missing in one CI run of eight), so its lines are not asserted here:
    test_messages.py shows that --verbose lets them through."""
    (tmp_path / "cluster").mkdir()
    status, shown = _sweep_until_the_scheduler_dies(tmp_path, ["--verbose"], "scaling", SCALING, 8, 1)
    assert status == 2, shown
    lines = _lines(shown)
    errors = [line[line.index("error:") :] for line in lines if "error:" in line]
    assert len(errors) == 1, shown
    assert errors[0].startswith("error: scheduler: lost the connection to the scheduler at "), errors
    assert any(line.startswith("info sparsity_gui: res written") for line in lines), shown
    meta = json.loads((tmp_path / "res" / "scaling.json").read_text())
    assert meta["complete"] is False and 1 <= meta["runs_done"] < 8
    assert f"wrote the {meta['runs_done']} of 8 runs that finished" in errors[0], errors
    assert len((tmp_path / "res" / "scaling.csv").read_text().splitlines()) == 1 + meta["runs_done"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
