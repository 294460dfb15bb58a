"""Everything else is in pyproject.toml. This only adds the documentation to the package:
Help opens README.md and the docs/ pages it links to from sparsity_gui/docs/ in
an installed wheel, so build_py copies the files packaging/shipped-docs.txt lists there."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def shipped_docs() -> list[str]:
    lines = (ROOT / "packaging" / "shipped-docs.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


class BuildPyWithDocs(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "sparsity_gui" / "docs"
        for rel in shipped_docs():
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, dest)  # a listed file missing fails the build


setup(cmdclass={"build_py": BuildPyWithDocs})
