"""Point numba's on-disk cache at a writable folder before numba is imported.

numba writes its cache beside the source by default; that folder is read-only in a
system install or a frozen bundle, so fall back to a per-user cache directory. An explicit
$NUMBA_CACHE_DIR always wins.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs


def user_cache_dir() -> Path:
    """numba's folder in the platform's user cache folder (platformdirs: $XDG_CACHE_HOME or
    ~/.cache on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows)."""
    return platformdirs.user_cache_path("sparsity-gui", appauthor=False) / "numba"


def configure_numba_cache() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    source_dir = Path(__file__).resolve().parent
    frozen = getattr(sys, "frozen", False)
    if frozen or not os.access(source_dir, os.W_OK):
        cache = user_cache_dir()
        try:
            cache.mkdir(parents=True, exist_ok=True)
            os.environ["NUMBA_CACHE_DIR"] = str(cache)
        except OSError:
            pass  # numba then warns once and compiles without caching
