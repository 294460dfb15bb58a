"""What many test files share, written once: the command line as the tests start it
(`python -m sparsity_gui ARGS` in a subprocess, Qt offscreen), typing into a field of
ui/fields.py, a CSV file read back, the default W(0) drawn without the package, a free
port on the loopback for a test's own Dask cluster, a sweep's row with known readouts and
the tick labels a pyqtgraph axis draws."""

from __future__ import annotations

import csv
import math
import os
import socket
import subprocess
import sys

import numpy as np

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


def type_into(field, text: str) -> None:
    """``text`` put into a Field and committed, as when its editing finishes."""
    field.edit.selectAll()
    field.edit.setText(text)
    field.edit.editingFinished.emit()


def type_keys(field, text: str) -> None:
    """``text`` typed into a Field as a user does, key by key: select all, erase, type, Enter."""
    from PySide6 import QtCore
    from PySide6.QtTest import QTest

    edit = field.edit
    edit.selectAll()
    QTest.keyClick(edit, QtCore.Qt.Key.Key_Backspace)
    if text:
        QTest.keyClicks(edit, text)
    QTest.keyClick(edit, QtCore.Qt.Key.Key_Return)


def read_csv(path) -> tuple[list[str], list[list[str]]]:
    """A CSV file's header and its rows, as text."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def read_number_csv(path) -> tuple[list[str], np.ndarray]:
    """A CSV file of numbers: its header and its rows as a float array."""
    header, rows = read_csv(path)
    return header, np.array([[float(x) for x in row] for row in rows])


def normal_w0(m: int, seed: int, sigma: float = 0.9) -> np.ndarray:
    """The default W(0) (docs/theory.md §1), drawn here without the package's draw_normal."""
    return np.random.default_rng(seed).standard_normal(m) * (sigma / math.sqrt(m))


def free_port() -> int:
    """A TCP port that nothing listens on at 127.0.0.1 now (for a test's scheduler)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command_in_process(argv, cwd, monkeypatch, capsys, env=None) -> tuple[int, str, str]:
    """`sparsity-gui ARGV` through __main__.main in this process, in ``cwd`` with ``env``'s
    variables set (a value None unsets one), as its subprocess would run: (status, stdout,
    stderr). What the command sets for the process (its loggers, Dask's log level variable)
    is put back afterwards, so later tests see none of it."""
    import logging

    from sparsity_gui.__main__ import main

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", [COMMAND[-1], *map(str, argv)])  # as the process's, for its log
    monkeypatch.delenv("DASK_LOGGING__DISTRIBUTED", raising=False)  # set by -v and -q
    for name, value in (env or {}).items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))
    loggers = [logging.getLogger(name) for name in ("sparsity_gui", "sparsity_gui.say", "distributed")]
    saved = [(lg, list(lg.handlers), lg.level, lg.propagate) for lg in loggers]
    capsys.readouterr()  # only the command's own text
    try:
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    finally:
        for lg, handlers, level, propagate in saved:
            lg.handlers[:] = handlers
            lg.setLevel(level)
            lg.propagate = propagate
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def command_result(argv, cwd, monkeypatch, capsys) -> subprocess.CompletedProcess:
    """`sparsity-gui ARGV` in ``cwd`` through command_in_process, returned as the finished
    process cli() returns (returncode, stdout, stderr), for tests that read either."""
    status, out, err = command_in_process(argv, cwd, monkeypatch, capsys)
    return subprocess.CompletedProcess([*COMMAND, *map(str, argv)], status, out, err)


def assert_refused_in_process(argv, words: str, folder, capsys) -> None:
    """`sparsity-gui ARGV` run in-process in ``folder`` (the caller's cwd): exit status 2, one
    `error:` line on stderr holding ``words``, nothing on stdout and nothing written there."""
    import pytest

    from sparsity_gui.__main__ import main

    with pytest.raises(SystemExit) as info:
        main(list(argv))
    assert info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], captured.err
    assert captured.out == "" and list(folder.iterdir()) == []


def sweep_row(p, **readouts):
    """The SweepRow of the run ``p`` (InterferenceParams) with known readouts, not a
    training's (a figure test needs none): ``readouts`` replace the counts given here."""
    from sparsity_gui.core.interference.axes import row_value
    from sparsity_gui.core.interference.sweep import SETTING_AXES, SweepRow

    fields = {
        "m": p.m,
        "seed": p.seed,
        "n": p.n,
        "polysemantic": 0,
        "predicted": p.n * p.n / (4.0 * p.m),
        "active": 8,
        "opposite_pairs": 0,
        "same_pairs": 0,
        "kept_share": 0.5,
        "nonzero": 40,
        "steps": p.steps,
        "optimizer": p.optimizer,
        "settled": True,
        "seconds": 0.1,
        **{a: row_value(p, a) for a in SETTING_AXES if a not in ("m", "optimizer", "dtype")},
    }
    return SweepRow(**{**fields, **readouts})


def axis_draw_specs(axis):
    """What a pyqtgraph axis draws now: its draw specs (line, ticks, texts), worked out on a
    scratch painter."""
    from PySide6 import QtGui

    image = QtGui.QImage(8, 8, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    try:
        return axis.generateDrawSpecs(painter)
    finally:
        painter.end()


def tick_texts(axis) -> list[str]:
    """The tick labels a pyqtgraph axis draws now (its draw specs), from its low end to its
    high end."""
    _line, _ticks, texts = axis_draw_specs(axis)
    if axis.orientation in ("left", "right"):
        return [t for _y, t in sorted((-rect.center().y(), text) for rect, _f, text in texts)]
    return [t for _x, t in sorted((rect.center().x(), text) for rect, _f, text in texts)]
