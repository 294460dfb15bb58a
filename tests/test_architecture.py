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


def _layout_tree() -> dict[str, str]:
    """docs/architecture.md's Layout tree as {path: what it says}: each line's name, placed
    under the folder above it by its indentation (two spaces a level); a line indented to
    the descriptions' column goes on the description above it."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    lines = [line for line in block.splitlines() if line.strip()]
    first = lines[1]  # "  __init__.py   __version__": where the descriptions start
    column = len(first) - len(first.split(None, 1)[1])
    entries: dict[str, str] = {}
    stack: list[tuple[int, str]] = []  # (indent, folder path)
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        if indent >= column:
            continue  # a description's next line
        name, _, words = line.strip().partition(" ")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = (stack[-1][1] if stack else "") + name
        entries[path] = words.strip()
        if name.endswith("/"):
            stack.append((indent, path))
    return entries


def test_the_layout_tree_in_architecture_md_lists_every_module():
    """The map stays true: every tracked module of the package is in the tree, with words
    beside it, and the tree names no module that is not there."""
    tracked = subprocess.run(
        ["git", "ls-files", "sparsity_gui"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    if tracked.returncode != 0 or not tracked.stdout.strip():
        pytest.skip("not a git checkout (an sdist or installed copy)")
    # a package's __init__ needs no line of its own unless it holds something
    modules = {p for p in tracked.stdout.splitlines() if p.endswith(".py") and not p.endswith("/__init__.py")}
    tree = _layout_tree()
    listed = {p for p in tree if p.endswith(".py") and not p.endswith("/__init__.py")}
    assert "sparsity_gui/core/note/kernels.py" in listed  # the parser reads nesting
    assert sorted(modules - listed) == [], "modules missing from docs/architecture.md's Layout"
    assert sorted(listed - modules) == [], "docs/architecture.md's Layout names modules that are gone"
    assert all(tree[p] for p in listed), [p for p in listed if not tree[p]]
