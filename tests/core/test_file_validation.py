"""The Qt-free checks of input files and of bounded work (core/checks.py and their callers).

- Every reader (weights of both models, sessions, presets, a resumed sweep) refuses a FIFO,
  a socket or a device before opening it. Each FIFO case runs in a child process with a
  timeout, so a reader that blocked would fail the test instead of hanging it.
- JSON nested deeper than the limit (10^5 deep: RecursionError in Python's parser) is a
  named InputError, in sessions, presets and sweep.json alike; the depth is measured
  without recursion.
- Damaged presets files of every kind raise InputError and are left as they were.
- The estimate of a run's solver steps is checked against the real exact solver.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sparsity_gui.core import checks
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note import presets as P
from sparsity_gui.core.note.changes import RunScript
from sparsity_gui.core.note.initial import draw_normal
from sparsity_gui.core.note.params import SimParams, check_run_work, one_left_time_estimate, run_steps
from sparsity_gui.core.note.session import W0Source, load_session, save_session, session_dict
from sparsity_gui.core.note.solvers import ExactSolver, InitialState

DEEP = "[" * 100_000 + "]" * 100_000

# A reader in a child process: it prints the InputError's message (or "no error")
READERS = {
    "note W(0)": "from sparsity_gui.core.note.initial import load_w0 as read; read(PATH)",
    "matrix W(0)": "from sparsity_gui.core.interference.initial import load_w0_matrix as read; read(PATH)",
    "session": "from sparsity_gui.core.note.session import load_session as read; read(PATH)",
    "presets": (
        "import os; from sparsity_gui.core.note.presets import load_user_presets as read; "
        "read(os.path.dirname(PATH))"
    ),
    "input bytes": "from sparsity_gui.core.checks import read_input_bytes as read; read(PATH, 'x', 100)",
}


def _in_child(code: str, path: Path) -> str:
    script = textwrap.dedent(
        f"""
        from sparsity_gui.core.errors import InputError
        PATH = {str(path)!r}
        try:
            {code}
            print("no error")
        except InputError as exc:
            print(exc)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout.strip()


def _fifo(tmp_path: Path, name: str) -> Path:
    os.mkfifo(tmp_path / name)
    return tmp_path / name


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_refuses_a_fifo_unopened(tmp_path, reader):
    name = "presets.json" if reader == "presets" else "input.npy"
    path = _fifo(tmp_path, name)
    message = _in_child(READERS[reader], path)
    assert f"{path}: is a FIFO (named pipe), not a regular file" in message, message


@pytest.mark.parametrize("reader", ["note W(0)", "session", "input bytes"])
def test_every_reader_refuses_a_socket_and_a_device(tmp_path, reader):
    sock_path = tmp_path / "s.npy"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    sock.close()
    assert "is a socket, not a regular file" in _in_child(READERS[reader], sock_path)
    assert "is a character device, not a regular file" in _in_child(READERS[reader], Path("/dev/null"))


def test_regular_file_names_missing_files_and_folders(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        checks.regular_file(tmp_path / "none", "w0")
    with pytest.raises(InputError, match="is a folder, not a file"):
        checks.regular_file(tmp_path, "w0")
    (tmp_path / "dangling").symlink_to(tmp_path / "none")
    with pytest.raises(InputError, match="no such file"):
        checks.regular_file(tmp_path / "dangling", "w0")
    (tmp_path / "f").write_bytes(b"12345")
    assert checks.regular_file(tmp_path / "f", "w0").st_size == 5


def test_read_input_bytes_bounds_the_size(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 101)
    with pytest.raises(InputError, match="101 bytes is too large for a thing"):
        checks.read_input_bytes(tmp_path / "f", "x", 100, "thing")
    assert checks.read_input_bytes(tmp_path / "f", "x", 101) == b"x" * 101


def test_json_depth_counts_without_recursion():
    assert checks.json_depth(3) == 0
    assert checks.json_depth([]) == 1
    assert checks.json_depth({"a": [1, {"b": []}], "c": 2}) == 4
    deep: list = []
    for _ in range(50_000):  # far past Python's recursion limit
        deep = [deep]
    assert checks.json_depth(deep) == 50_001


@pytest.mark.parametrize("text", [DEEP, '{"a": ' + "[" * 40 + "]" * 40 + "}"])
def test_deep_json_is_a_named_error_not_a_recursion_error(text):
    with pytest.raises(InputError, match="nested more than 32 deep"):
        checks.parse_json_text(text, "f.json", "x", "file of ours")


@pytest.mark.parametrize("text", ["1" * 5000, '{"t": ' + "9" * 10_000 + "}"])
def test_an_integer_python_will_not_read_is_a_named_error(text, tmp_path):
    """Python reads JSON integers of at most 4300 digits and raises a plain ValueError (not
    a JSONDecodeError) past that: a session, presets file or sweep.json with one ended in
    that error, past the readers' checks."""
    with pytest.raises(InputError, match=r"f.json: not valid JSON \(Exceeds the limit \(4300 digits\)"):
        checks.parse_json_text(text, "f.json", "x", "file")
    (tmp_path / "s.json").write_text(text)
    with pytest.raises(InputError, match="s.json: not valid JSON"):
        load_session(tmp_path / "s.json")
    (tmp_path / P.FILE_NAME).write_text(text)
    with pytest.raises(InputError, match="presets.json: not valid JSON"):
        P.load_user_presets(tmp_path)


def test_json_as_deep_as_the_limit_is_read():
    text = "[" * 32 + "]" * 32
    assert checks.json_depth(checks.parse_json_text(text, "f.json", "x", "file")) == 32


def _good_session(tmp_path: Path) -> dict:
    params = SimParams(m=8, lam=1e-2, seed=1)
    script = RunScript(params, draw_normal(8, 0.9, 1), (), 5.0, 11)
    save_session(tmp_path / "good.json", script, W0Source("normal"))
    load_session(tmp_path / "good.json")  # the starting point is a good session
    return session_dict(script, W0Source("normal"))


def test_a_session_nested_deeply_is_named(tmp_path):
    obj = _good_session(tmp_path)
    text = json.dumps(obj)[:-1] + ', "extra": ' + DEEP + "}"
    (tmp_path / "deep.json").write_text(text)
    with pytest.raises(InputError, match="deep.json: not a sparsity-gui session .*nested more than 32"):
        load_session(tmp_path / "deep.json")


def test_a_session_replaying_the_exact_solver_too_far_is_refused(tmp_path):
    """Only gradient descent's steps were counted: t = 1e300 by the exact solver (about
    4e299 steps) was replayed, and never ended."""
    obj = _good_session(tmp_path)
    obj["t"] = 1e300
    (tmp_path / "far.json").write_text(json.dumps(obj))
    with pytest.raises(InputError, match=r"replaying to t = 1e300 would need about 4e299 steps"):
        load_session(tmp_path / "far.json")


def _presets(items) -> str:
    return json.dumps({"format": "sparsity-gui presets", "version": 1, "presets": items})


BAD_PRESETS = {
    "deep": (DEEP, "nested more than 32 deep"),
    "deep inside": (_presets([]).replace("[]", DEEP), "nested"),
    "a list": ("[]", "not a presets file"),
    "binary": ("\x00\x01", "binary data"),
    "empty": ("", "the file is empty"),
    "not JSON": ("{", "not valid JSON"),
    "presets not a list": (_presets({}), "must be a list"),
    "version as true": (_presets([]).replace('"version": 1', '"version": true'), "version"),
    "item not an object": (_presets([3]), "presets[0]"),
    "name too long": (_presets([{"name": "x" * 81, "parameters": {}}]), "1 to 80 characters"),
    "parameter of a wrong type": (_presets([{"name": "a", "parameters": {"m": [1]}}]), "preset 'a'"),
    "too many": (_presets([{"name": f"p{i}", "parameters": {}} for i in range(1001)]), "at most 1000"),
}


@pytest.mark.parametrize("case", BAD_PRESETS)
def test_a_damaged_presets_file_is_named_and_left_as_it_was(tmp_path, case):
    text, needle = BAD_PRESETS[case]
    path = tmp_path / P.FILE_NAME
    path.write_text(text)
    before = path.read_bytes()
    with pytest.raises(InputError) as caught:
        P.load_user_presets(tmp_path)
    assert str(path) in caught.value.message and needle in caught.value.message, caught.value.message
    with pytest.raises(InputError):  # saving needs the user's presets: refused, file kept
        P.save_user_preset("new", SimParams(), directory=tmp_path)
    assert path.read_bytes() == before
    assert [p.name for p in P.BUILTIN] == [p.name for p in P.all_presets(tmp_path / "elsewhere")]


# --- bounded work -------------------------------------------------------------------------------
def test_the_work_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("SPARSITY_GUI_MAX_STEPS", raising=False)
    assert checks.work_limit("steps") == 10**9
    monkeypatch.setenv("SPARSITY_GUI_MAX_STEPS", "1e12")
    assert checks.work_limit("steps") == 10**12
    checks.check_work("lam", "a run", 5e11, "steps")
    with pytest.raises(InputError, match="a run would need about 5e12 steps; the limit is 1e12 per run"):
        checks.check_work("lam", "a run", 5e12, "steps")
    for bad in ("x", "0", "-1", "2.5", "nan"):
        monkeypatch.setenv("SPARSITY_GUI_MAX_STEPS", bad)
        with pytest.raises(InputError, match="SPARSITY_GUI_MAX_STEPS: must be a whole number"):
            checks.work_limit("steps")


@pytest.mark.parametrize("need", [math.inf, math.nan, 1e301])
def test_work_beyond_any_limit_is_refused(need):
    with pytest.raises(InputError, match="no run that long can end"):
        checks.check_work("t_end", "a run", need, "steps")


@pytest.mark.parametrize("m, lam", [(1000, 1e-3), (1000, 1e-4), (20_000, 1e-3), (20_000, 1e-5)])
def test_the_estimate_of_a_run_to_one_weight_follows_the_exact_solver(m, lam):
    """The estimated time to one weight left and the estimated solver steps are within a
    factor 2 of what the real exact solver takes on the normal draw."""
    w0 = draw_normal(m, 0.9, 3)
    solver = ExactSolver(InitialState.from_weights(w0), lam)
    solver.advance_to(math.inf, stop_nonzero=1)
    assert solver.moments().nonzero == 1
    t_est = one_left_time_estimate(lam, w0)
    assert 0.5 < t_est / solver.t < 2.0, (t_est, solver.t)
    steps_est = run_steps(m, [("exact", 0.0, t_est)])
    assert 0.5 < steps_est / solver.steps < 2.0, (steps_est, solver.steps)


def test_a_tie_at_the_top_lengthens_the_estimate_by_the_last_phase():
    """docs/theory.md §4: the last phase lasts at most (1/lam) ln((u1 - u3)/(u1 - u2))."""
    w0 = np.array([0.5, 0.5 - 1e-9, 0.3, 0.1])
    t_last = math.log(0.2 / 1e-9) / 1e-3
    assert t_last < one_left_time_estimate(1e-3, w0) < t_last + 3e3
    # a true tie settles or dies together (the solver tells which): no last phase
    assert one_left_time_estimate(1e-3, np.array([0.5, 0.5, 0.3])) < 1e4
    assert one_left_time_estimate(0.0) == math.inf


def test_check_run_work_allows_a_tiny_lam_with_a_short_t_end():
    check_run_work(SimParams(m=1000, lam=1e-300, t_end=100.0))
    check_run_work(SimParams(m=1000, lam=0.0))  # no default end: refused by the run itself
    with pytest.raises(InputError, match="lam = 1e-300 to one weight left"):
        check_run_work(SimParams(m=1000, lam=1e-300))
