"""Everything else is in pyproject.toml. This only adds files kept outside the package to it:
- the app icon, from resources/icons/ into sparsity_gui/assets/ (sparsity_gui.assets reads it);
- Help's documentation: README.md and the docs/ pages it links to, listed in
  packaging/shipped-docs.txt, into sparsity_gui/docs/ (ui/help.py opens them there)."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def shipped_docs() -> list[str]:
    lines = (ROOT / "packaging" / "shipped-docs.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def icon_files() -> list[Path]:
    icons = sorted((ROOT / "resources" / "icons").glob("icon*.*"))
    if not any(p.name == "icon.svg" for p in icons):
        raise SystemExit("error: resources/icons/icon.svg is missing")
    return icons


class BuildPyWithResources(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads resources/ and docs/ from the checkout itself
        package = Path(self.build_lib) / "sparsity_gui"
        (package / "assets").mkdir(parents=True, exist_ok=True)
        for icon in icon_files():
            shutil.copyfile(icon, package / "assets" / icon.name)
        for rel in shipped_docs():
            dest = package / "docs" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, dest)  # a listed file missing fails the build


setup(cmdclass={"build_py": BuildPyWithResources})
