"""Point numba's on-disk cache at a writable folder before numba is imported.

numba writes its cache beside the source by default; that folder is read-only in a
system install or a frozen bundle, so fall back to a per-user cache directory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _user_cache_dir() -> Path:
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "sparsity-gui" / "numba"


def configure_numba_cache() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    source_dir = Path(__file__).resolve().parent
    frozen = getattr(sys, "frozen", False)
    if frozen or not os.access(source_dir, os.W_OK):
        cache = _user_cache_dir()
        try:
            cache.mkdir(parents=True, exist_ok=True)
            os.environ["NUMBA_CACHE_DIR"] = str(cache)
        except OSError:
            pass  # numba then warns once and compiles without caching
