"""`sparsity-gui --version` (python -m sparsity_gui --version): the program's version, then
Python's and those of numpy, numba, PySide6, pyqtgraph and matplotlib, each checked against
the module's own __version__ imported here; no Qt loaded to print them. Every result file
records the same versions (and scipy's)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sparsity_gui
from sparsity_gui.__main__ import LIBRARIES, library_version


def _run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, **kw)


def _module_version(name: str) -> str:
    try:
        module = __import__(name)
    except ImportError:
        return "not installed"
    return module.__version__


def test_version_prints_the_program_python_and_every_library():
    out = _run("-m", "sparsity_gui", "--version")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"sparsity-gui {sparsity_gui.__version__}"
    assert lines[1] == f"Python {sys.version.split()[0]}"
    assert lines[2:] == [f"{name} {_module_version(name)}" for name in LIBRARIES]
    assert [line.split()[0] for line in lines[2:]] == ["numpy", "numba", "PySide6", "pyqtgraph", "matplotlib"]
    for name in ("numpy", "numba", "PySide6", "pyqtgraph"):  # dependencies: always there
        assert "not installed" not in lines[2 + LIBRARIES.index(name)]


def test_version_after_the_apps_options_is_the_same(tmp_path, monkeypatch, capsys):
    """In-process (the real entry point's output: the test above)."""
    from helpers import command_in_process

    alone = command_in_process(["--version"], tmp_path, monkeypatch, capsys)
    assert alone[0] == 0 and alone[1].startswith("sparsity-gui ")
    assert command_in_process(["--m", "1000", "--version"], tmp_path, monkeypatch, capsys) == alone


def test_printing_the_versions_loads_no_qt():
    code = (
        "import sys\n"
        "from sparsity_gui.__main__ import main\n"
        "assert main(['--version']) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6.', 'pyqtgraph'))))\n"
    )
    out = _run("-c", code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "[]"


def test_a_missing_library_is_not_installed():
    assert library_version("no_such_library_for_sparsity_gui") == "not installed"


@pytest.mark.parametrize("source", ["__version__ = '9.8.7'\n", "raise ImportError('broken')\n"])
def test_without_metadata_the_modules_own_version_is_read(tmp_path, source):
    """A frozen bundle has no distribution metadata: the module's __version__ then, and
    "not installed" if it cannot be imported."""
    (tmp_path / "nometa_lib_xyz.py").write_text(source)
    code = "from sparsity_gui.__main__ import library_version\nprint(library_version('nometa_lib_xyz'))"
    out = _run("-c", code, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("9.8.7" if "9.8.7" in source else "not installed")


def test_every_result_file_records_the_versions_it_was_made_with(tmp_path, monkeypatch, capsys):
    """run.json of both models, scaling.json and sweep.json: Python's version, the machine's
    and the version of each library that computed or drew it, as the modules say (each
    command in-process: the promise is the file)."""
    import json
    import platform

    from helpers import command_in_process

    commands = {
        "run/run.json": ["run", "--m", "50", "--lam", "0.05"],
        "net/run.json": ["interference", "--n", "4", "--m", "8", "--steps", "20"],
        "grid/scaling.json": ["scaling", "--m", "50", "--lam", "0.05", "--seeds", "1", "--no-figure"],
        "sweep/sweep.json": ["sweep", "--n", "4", "--m", "8", "--seeds", "1", "--steps", "20", "--no-figure"],
    }
    want = {"python": sys.version.split()[0], "machine": platform.machine()}
    want |= {
        name: _module_version(name)
        for name in ("numpy", "numba", "scipy", "matplotlib", "PySide6", "pyqtgraph")
    }
    for file, args in commands.items():
        status, _, err = command_in_process(
            [*args, "--out", file.split("/")[0]], tmp_path, monkeypatch, capsys
        )
        assert status == 0, err
        assert json.loads((tmp_path / file).read_text())["platform"] == want, file
