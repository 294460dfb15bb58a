"""The BLAS thread pools behind the interference model's matrix products.

OpenBLAS starts one thread per core for every product. On a 2-core machine with anything
else running (the GUI thread, a second sweep worker, another program) its threads spin
against each other: at n = 64, m = 128 a step went from 0.05 ms to 20 ms (measured with
benchmarks/bench_interference.py). One BLAS thread per product, with parallelism across
independent runs instead, is fast and predictable. OPENBLAS_NUM_THREADS would do the same
but only before numpy loads, so the pools are capped at run time through OpenBLAS's own
setter, in every OpenBLAS this process has loaded (numpy's and scipy's).
"""

from __future__ import annotations

import ctypes
import importlib
import sys
from pathlib import Path

_SETTERS = (
    "openblas_set_num_threads",
    "scipy_openblas_set_num_threads",
    "scipy_openblas_set_num_threads64_",
    "openblas_set_num_threads64_",
)


def limit_blas_threads(threads: int = 1) -> list[str]:
    """Cap every loaded OpenBLAS at ``threads`` threads; returns what was changed (empty
    where /proc/self/maps or OpenBLAS is absent: then this is a no-op)."""
    if "scipy" in sys.modules:  # a process that uses scipy: load (and cap) its OpenBLAS now
        try:
            importlib.import_module("scipy.linalg.cython_blas")
        except ImportError:
            pass
    # (one that does not, like `sparsity-gui interference`, never calls scipy's BLAS; importing
    # scipy.linalg only to cap it cost 0.5-1.5 s of its start-up, measured)
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            paths = {
                parts[-1]
                for parts in (line.split() for line in f)
                if len(parts) >= 6 and "openblas" in parts[-1].lower()
            }
    except OSError:
        return []
    changed = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter.argtypes = [ctypes.c_int]
                setter.restype = None
                setter(int(threads))
                changed.append(f"{Path(path).name}:{name}")
                break
    return changed
