"""The layers hold: core and the headless CLI never import Qt, and the import-linter
contracts in pyproject.toml are all kept."""

import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sparsity_gui.cli
import sparsity_gui.core

ROOT = Path(__file__).resolve().parents[1]


def _modules(package) -> list[str]:
    """Every module of a package and its sub-packages, found on disk (a new module is
    covered by itself)."""
    return sorted(info.name for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."))


def test_core_and_cli_import_without_qt():
    modules = _modules(sparsity_gui.core) + _modules(sparsity_gui.cli)
    for name in (
        "sparsity_gui.core.note.kernels",
        "sparsity_gui.core.interference.kernels",
        "sparsity_gui.cli.note",
        "sparsity_gui.cli.interference",
        "sparsity_gui.cli.sweep",
    ):
        assert name in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'))\n"
        "assert not bad, bad\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_import_contracts_are_kept():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint_imports is None:
        pytest.skip("import-linter is not installed (make lint installs it)")
    out = subprocess.run([lint_imports, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout and "kept" in out.stdout
