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


#: The distributions that install an import name under another name (PySide6 comes as
#: PySide6-Essentials too); every other library here installs as its import name.
KNOWN_DISTRIBUTIONS = {"PySide6": ("PySide6", "PySide6_Essentials")}


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()  # scans every installed distribution once


def _candidate_distributions(module: str):
    """The distributions that may hold ``module``: its own name and the known others first
    (a look-up each), then whatever the scan of every installed distribution finds, which
    costs about 0.25 s of CPU in a venv with the test extras and is taken only if needed."""
    yield from KNOWN_DISTRIBUTIONS.get(module, (module,))
    yield from _distributions().get(module, [])


def library_version(module: str) -> str:
    """The installed version of ``module``: from its distribution's metadata, else from the
    module itself (a frozen bundle carries no metadata); "not installed" when it cannot be
    imported."""
    for dist in _candidate_distributions(module):
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
