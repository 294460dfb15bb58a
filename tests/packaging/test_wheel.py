"""Build the sdist and wheel, install the wheel into a fresh virtual environment (no system
site-packages, no access to this checkout) and run the installed entry points.

About a minute here: a few seconds building, ~20 s of pip unpacking PySide6/numba/scipy
into the venv (from pip's cache or the local index), ~20 s running (the kernels compile once,
in the venv), ~8 s deleting the 700 MB venv. Needs the `build` package and setuptools (the
`test` extra).

The build runs without isolation, with the test environment's setuptools: `build` still
refuses unless every [build-system] requirement is installed there, and an isolated build
(a fresh environment holding only those requirements, 10 s more of CPU) is what `make dist`
runs. The venv is made without pip; this environment's pip installs into it (`pip --python`),
which spares the venv its own copy of pip (10 s of CPU) and installs the same.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

import sparsity_gui

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
ICON_FILES = ["icon.svg"] + [f"icon-{n}.png" for n in (16, 24, 32, 48, 64, 128, 256, 512)]
# Help's pages, as the checkout lists them (read here, not from setup.py, so the test does not
# take its expectation from the code under test)
SHIPPED_DOCS = [
    line.strip()
    for line in (ROOT / "packaging" / "shipped-docs.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]
_SKIP_DIRS = {".git", ".venv", "venv", "build", "dist", "__pycache__", ".pytest_cache", "out"}


def _source_files(root: Path) -> list[Path]:
    """The files a fresh clone plus the uncommitted work would have (tracked and untracked,
    minus what .gitignore excludes); without git, everything but caches and build output."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
        return [Path(n) for n in names if (root / n).is_file()]
    except (OSError, subprocess.SubprocessError):
        files = []
        for path in root.rglob("*"):
            rel = path.relative_to(root)
            if (
                path.is_file()
                and not (set(rel.parts) & _SKIP_DIRS)
                and not any(p.endswith(".egg-info") for p in rel.parts)
            ):
                files.append(rel)
        return files


def _clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "NUMBA_CACHE_DIR")
    }
    env.update(extra)
    return env


def _run(cmd: list, cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=_clean_env(**env), capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"{cmd} exited {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(wheel path, sdist path) built by `python -m build` from a copy of the checkout."""
    pytest.importorskip("build", reason="the `build` package (the `test` extra) is not installed")
    work = tmp_path_factory.mktemp("wheel-build")
    src = work / "src"
    for rel in _source_files(ROOT):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    dist = work / "dist"
    # the sdist, then the wheel from the unpacked sdist (a file the sdist leaves out fails)
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, src], cwd=work, timeout=600)
    wheels = list(dist.glob("*.whl"))
    sdists = list(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    return wheels[0], sdists[0]


@pytest.fixture(scope="module")
def venv(built):
    """A fresh venv with only the wheel (and its dependencies) installed; removed afterwards
    (it holds ~700 MB)."""
    wheel, _ = built
    base = Path(tempfile.mkdtemp(prefix="sparsity-gui-wheel-venv-"))
    try:
        env_dir = base / "venv"
        # sys.executable may itself be a venv's python: `-m venv` then uses the base interpreter.
        _run([sys.executable, "-m", "venv", "--without-pip", env_dir], cwd=base)
        py = env_dir / "bin" / "python"
        # --no-compile: this venv lives for one test module; skipping the .pyc pass saves time.
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                py,
                "install",
                "--quiet",
                "--no-input",
                "--no-compile",
                wheel,
            ],
            cwd=base,
            timeout=600,
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        yield env_dir
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_wheel_carries_the_runtime_assets(built):
    wheel, _ = built
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ICON_FILES:  # copied in from resources/icons/ by the build (setup.py)
        assert (
            zipfile.ZipFile(wheel).read(f"sparsity_gui/assets/{name}")
            == (ROOT / "resources" / "icons" / name).read_bytes()
        )
    assert "sparsity_gui/assets/__init__.py" in names
    assert "sparsity_gui/py.typed" in names  # type checkers read the Python API's annotations
    assert "sparsity_gui/core/note/dop853_tableau.json" in names  # the note's kernels read it
    # Help's documentation, byte for byte the checkout's (setup.py, packaging/shipped-docs.txt)
    assert {"README.md", "docs/guide.md", "docs/theory.md", "docs/screenshot.png"} <= set(SHIPPED_DOCS)
    for rel in SHIPPED_DOCS:
        assert zipfile.ZipFile(wheel).read(f"sparsity_gui/docs/{rel}") == (ROOT / rel).read_bytes(), rel
    # every page and image the shipped pages link to is shipped too: no link in Help leads nowhere
    for rel in (r for r in SHIPPED_DOCS if r.endswith(".md")):
        text = (ROOT / rel).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            linked = os.path.normpath(Path(rel).parent / target)
            assert f"sparsity_gui/docs/{linked}" in names, (rel, target)
    stray = [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".nbi", ".nbc"))]
    assert not stray, stray
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[gui_scripts]" in text and "sparsity-gui = sparsity_gui.__main__:main" in text


def test_installed_package_is_the_wheel_and_finds_its_icon(venv, tmp_path):
    code = (
        "import sparsity_gui, sparsity_gui.assets as r\n"
        "print(sparsity_gui.__file__)\n"
        "print(r.icon_path())\n"
        "print(r.icon_path(64))\n"
        "print(len(r.read_asset('icon-512.png')))\n"
    )
    out = _run([venv / "bin" / "python", "-c", code], cwd=tmp_path).stdout.split()
    assert Path(out[0]).is_relative_to(venv), out[0]  # not this checkout
    assert Path(out[1]).name == "icon.svg" and Path(out[1]).is_file()
    assert Path(out[2]).name == "icon-64.png" and Path(out[2]).is_file()
    assert int(out[3]) > 1000


def test_installed_help_opens_the_shipped_docs(venv, tmp_path):
    """Help in the installed app: every page of its menu comes from the wheel's copy and renders."""
    code = (
        "from PySide6 import QtWidgets\n"
        "app = QtWidgets.QApplication([])\n"
        "from sparsity_gui.ui.help import DOCS, DocsViewer, docs_root\n"
        "root = docs_root()\n"
        "print(root)\n"
        "viewer = DocsViewer(root)\n"
        "for _key, rel, _text in DOCS:\n"
        "    viewer.open_page(rel)\n"
        "    print(rel + '\\t' + viewer.browser.toPlainText().splitlines()[0])\n"
    )
    out = _run([venv / "bin" / "python", "-c", code], cwd=tmp_path, QT_QPA_PLATFORM="offscreen")
    lines = out.stdout.splitlines()
    assert Path(lines[0]).is_relative_to(venv) and Path(lines[0]).name == "docs", lines[0]
    shown = dict(line.split("\t", 1) for line in lines[1:])
    assert {"README.md", "docs/guide.md", "docs/theory.md"} <= set(shown) <= set(SHIPPED_DOCS), shown
    for rel, line in shown.items():
        heading = next(x for x in (ROOT / rel).read_text().splitlines() if x.startswith("# "))
        assert line == heading.removeprefix("# ").strip(), (rel, line)


def test_every_installed_entry_point_resolves(venv, tmp_path):
    code = (
        "from importlib.metadata import distribution\n"
        "for ep in distribution('sparsity-gui').entry_points:\n"
        "    assert callable(ep.load()), ep\n"
        "    print(ep.group, ep.name)\n"
    )
    out = _run([venv / "bin" / "python", "-c", code], cwd=tmp_path).stdout.splitlines()
    assert "gui_scripts sparsity-gui" in out
    for line in out:
        assert (venv / "bin" / line.split()[1]).is_file(), line


def test_installed_version(venv, tmp_path):
    out = _run([venv / "bin" / "sparsity-gui", "--version"], cwd=tmp_path)
    lines = out.stdout.strip().splitlines()
    assert lines[0] == f"sparsity-gui {sparsity_gui.__version__}"
    names = [line.split()[0] for line in lines[2:]]
    assert names == ["numpy", "numba", "PySide6", "pyqtgraph", "matplotlib"], lines
    for line in lines[2:6]:  # the dependencies, installed with the wheel
        assert line.split(maxsplit=1)[1][0].isdigit(), line


def test_the_distributions_pass_twine_check_and_carry_the_metadata(built):
    """What `make dist` checks: twine's --strict check of both files (PyPI renders the README
    from them), and the authors, URLs and classifiers of pyproject.toml in the wheel."""
    pytest.importorskip("twine", reason="twine (the `test` extra) is not installed")
    wheel, sdist = built
    out = _run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist], cwd=wheel.parent)
    assert out.stdout.count("PASSED") == 2, out.stdout + out.stderr
    metadata = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Author: The sparsity-gui developers" in text
    assert "Project-URL: Source, https://github.com/sparsitygui/sparsity-gui" in text
    assert "Classifier: Intended Audience :: Science/Research" in text
    assert "Description-Content-Type: text/markdown" in text


def test_installed_headless_run(venv, tmp_path):
    out_dir = tmp_path / "result"
    _run(
        [
            venv / "bin" / "sparsity-gui",
            "run",
            "--out",
            out_dir,
            "--m",
            "300",
            "--seed",
            "3",
            "--samples",
            "21",
        ],
        cwd=tmp_path,
        timeout=300,
    )
    for name in ("timeseries.csv", "weights.csv", "deaths.csv", "run.json"):
        assert (out_dir / name).is_file(), name
    json.loads((out_dir / "run.json").read_text())
    rows = (out_dir / "timeseries.csv").read_text().strip().splitlines()
    assert len(rows) == 1 + 21  # header + samples


def test_installed_gui_offscreen(venv, tmp_path):
    shot = tmp_path / "window.png"
    _run(
        [venv / "bin" / "sparsity-gui", "--m", "500", "--quit-after", "1500", "--screenshot", shot],
        cwd=tmp_path,
        timeout=300,
        QT_QPA_PLATFORM="offscreen",
    )
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
