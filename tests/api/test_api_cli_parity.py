"""The Python API and the CLI refuse the same inputs with the same words: a table of bad
inputs goes through the CLI (its one `error:` line, through __main__.main in this process; a
FIFO as W(0) in a real subprocess, whose timeout bounds a read that would block) and through
the API (its InputError), and the messages are compared. Where the API is given an array instead
of a file, the message names "the array" where the CLI names the file; the rest is the
same."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from helpers import cli, command_in_process, one_error_line

from sparsity_gui import api
from sparsity_gui.core.errors import InputError

ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen")
LIMITS = ("SPARSITY_GUI_MAX_STEPS", "SPARSITY_GUI_MAX_WEIGHT_STEPS", "SPARSITY_GUI_MAX_MULTIPLY_ADDS")
for _variable in LIMITS:
    ENV.pop(_variable, None)


def _files(tmp: Path) -> None:
    np.save(tmp / "vector.npy", np.linspace(-1.0, 1.0, 5))
    np.save(tmp / "matrix.npy", np.arange(12.0).reshape(3, 4) - 5.5)
    np.save(tmp / "cube.npy", np.zeros((2, 2, 2)))
    os.mkfifo(tmp / "fifo.npy")


# (name, the API's function and keywords, the CLI's arguments); {tmp} is the test's folder
CASES = [
    ("negative lam", "simulate", dict(lam=-1.0), ["run", "--lam", "-1"]),
    ("lam above 1", "simulate", dict(lam=2.0), ["run", "--lam", "2"]),
    ("m of 0", "simulate", dict(m=0), ["run", "--m", "0"]),
    ("a tiny lam", "simulate", dict(lam=1e-300), ["run", "--lam", "1e-300"]),
    ("t_end near the float limit", "simulate", dict(t_end=1.7e308), ["run", "--t-end", "1.7e308"]),
    (
        "10^13 gradient-descent steps",
        "simulate",
        dict(method="gd", eta=1e-3, t_end=1e10),
        ["run", "--method", "gd", "--eta", "1e-3", "--t-end", "1e10"],
    ),
    (
        "2e15 gradient-descent weight-steps",
        "simulate",
        dict(m=10**7, method="gd", t_end=1e7),
        ["run", "--m", "1e7", "--method", "gd", "--t-end", "1e7"],
    ),
    (
        "a row of a 1-D file",
        "simulate",
        dict(w0="{tmp}/vector.npy", w0_row=0),
        ["run", "--w0", "{tmp}/vector.npy", "--w0-row", "0"],
    ),
    (
        "a row out of range",
        "simulate",
        dict(w0="{tmp}/matrix.npy", w0_row=3),
        ["run", "--w0", "{tmp}/matrix.npy", "--w0-row", "3"],
    ),
    ("a matrix without a row", "simulate", dict(w0="{tmp}/matrix.npy"), ["run", "--w0", "{tmp}/matrix.npy"]),
    (
        "a row of a 3-D file",
        "simulate",
        dict(w0="{tmp}/cube.npy", w0_row=1),
        ["run", "--w0", "{tmp}/cube.npy", "--w0-row", "1"],
    ),
    ("a FIFO as W(0)", "simulate", dict(w0="{tmp}/fifo.npy"), ["run", "--w0", "{tmp}/fifo.npy"]),
    ("a missing W(0)", "simulate", dict(w0="{tmp}/none.npy"), ["run", "--w0", "{tmp}/none.npy"]),
    ("a folder as W(0)", "simulate", dict(w0="{tmp}"), ["run", "--w0", "{tmp}"]),
    (
        "a grid with a tiny lam",
        "scaling",
        dict(m=[100, 1000], lam=[1e-3, 1e-12], seeds=1),
        ["scaling", "--m", "100,1000", "--lam", "1e-3,1e-12", "--seeds", "1"],
    ),
    (
        "10^17 multiply-adds of training",
        "train",
        dict(n=2048, m=2048, steps=10**8),
        ["interference", "--n", "2048", "--m", "2048", "--steps", "1e8"],
    ),
    (
        "a FIFO as the matrix W(0)",
        "train",
        dict(w0="{tmp}/fifo.npy"),
        ["interference", "--w0", "{tmp}/fifo.npy"],
    ),
    (
        "Adam's beta2 under gradient descent",
        "train",
        dict(optimizer="gd", beta2=0.99),
        ["interference", "--optimizer", "gd", "--beta2", "0.99"],
    ),
    (
        "a sweep whose largest run is too long",
        "sweep",
        dict(n=1024, m=[1024, 8192], steps=10**7),
        ["sweep", "--n", "1024", "--m", "1024,8192", "--steps", "1e7"],
    ),
]


def _api_message(tmp: Path, function: str, kwargs: dict) -> str:
    kwargs = {k: v.replace("{tmp}", str(tmp)) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises(InputError) as caught:
        getattr(api, function)(**kwargs)
    return str(caught.value)


def _cli_message(tmp: Path, args: list[str], monkeypatch, capsys) -> str:
    args = [a.replace("{tmp}", str(tmp)) for a in args]
    before = sorted(os.listdir(tmp))
    if str(tmp / "fifo.npy") in args:  # a read that would block: bounded by the timeout
        proc = cli([*args, "--out", tmp / "out"], env=ENV, timeout=120)
        assert "Traceback" not in proc.stderr
        line = one_error_line(proc)
    else:
        status, out, err = command_in_process([*args, "--out", tmp / "out"], tmp, monkeypatch, capsys)
        assert status == 2 and out == "" and "Traceback" not in err, (status, out, err)
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        line = lines[0]
    assert sorted(os.listdir(tmp)) == before, "nothing left behind"
    return line.removeprefix("error: ")


@pytest.mark.parametrize("name, function, kwargs, args", CASES, ids=[c[0] for c in CASES])
def test_the_api_and_the_cli_refuse_alike(tmp_path, monkeypatch, capsys, name, function, kwargs, args):
    for variable in LIMITS:
        monkeypatch.delenv(variable, raising=False)
    _files(tmp_path)
    assert _api_message(tmp_path, function, kwargs) == _cli_message(tmp_path, args, monkeypatch, capsys)


ARRAY_CASES = [
    # (name, W(0) as an array, the row, the file the CLI reads it from)
    ("a row of a 1-D array", np.linspace(-1.0, 1.0, 5), 0, "vector.npy"),
    ("a row out of range", np.arange(12.0).reshape(3, 4) - 5.5, 3, "matrix.npy"),
    ("a matrix without a row", np.arange(12.0).reshape(3, 4) - 5.5, None, "matrix.npy"),
    ("a row of a 3-D array", np.zeros((2, 2, 2)), 1, "cube.npy"),
]


@pytest.mark.parametrize("name, w0, row, file", ARRAY_CASES, ids=[c[0] for c in ARRAY_CASES])
def test_an_array_is_refused_as_its_file_is(tmp_path, monkeypatch, capsys, name, w0, row, file):
    """api.simulate(w0=<1-D array>, w0_row=0) was accepted silently; now every array is
    refused where its file is, in the same words ("the array" for the file's path)."""
    for variable in LIMITS:
        monkeypatch.delenv(variable, raising=False)
    _files(tmp_path)
    with pytest.raises(InputError) as caught:
        api.simulate(w0=w0, w0_row=row)
    args = ["run", "--w0", str(tmp_path / file)] + ([] if row is None else ["--w0-row", str(row)])
    said = _cli_message(tmp_path, args, monkeypatch, capsys)
    assert str(caught.value) == said.replace(str(tmp_path / file), "the array")
