"""The versions of the libraries behind a result, read from their distributions' metadata,
which needs no import (PySide6's would load Qt): `sparsity-gui --version` prints them, and
every result file records them beside Python's and the machine's."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import platform
import sys
from collections.abc import Mapping

#: What --version prints (and a bug report needs), by import name.
LIBRARIES = ("numpy", "numba", "PySide6", "pyqtgraph", "matplotlib")
#: What a result file records: the solvers' libraries and the drawing ones.
RESULT_LIBRARIES = ("numpy", "numba", "scipy", "matplotlib", "PySide6", "pyqtgraph")


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()  # scans every installed distribution once


def library_version(module: str) -> str:
    """The installed version of ``module``: from its distribution's metadata, else from the
    module itself (a frozen bundle carries no metadata); "not installed" when it cannot be
    imported."""
    for dist in _distributions().get(module, []):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        if importlib.util.find_spec(module) is None:
            return "not installed"
        return str(getattr(importlib.import_module(module), "__version__", "unknown"))
    except ImportError:
        return "not installed"


def platform_versions() -> dict[str, str]:
    """What a result file records of where it was computed: Python's version, each of
    RESULT_LIBRARIES' and the machine."""
    versions = {name: library_version(name) for name in RESULT_LIBRARIES}
    return {"python": sys.version.split()[0], **versions, "machine": platform.machine()}
