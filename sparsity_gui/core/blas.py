"""The BLAS thread pools behind the interference model's matrix products.

OpenBLAS starts one thread per core for every product. On a 2-core machine with anything
else running (the GUI thread, a second sweep worker, another program) its threads spin
against each other: at n = 64, m = 128 a step went from 0.05 ms to 20 ms (measured with
benchmarks/bench_interference.py). One BLAS thread per product, with parallelism across
independent runs instead, is fast and predictable. OPENBLAS_NUM_THREADS would do the same
but only before numpy loads, so the pools are capped at run time, in every BLAS this
process has loaded (numpy's and scipy's), through threadpoolctl: it finds the libraries on
Linux, macOS and Windows alike, and knows OpenBLAS, MKL and BLIS.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import sys
from pathlib import Path

from threadpoolctl import ThreadpoolController


def limit_blas_threads(threads: int = 1) -> list[str]:
    """Cap every loaded BLAS at ``threads`` threads, for the whole process; returns the
    libraries that now run that many (``file:implementation``; empty where no BLAS is
    loaded: then this is a no-op)."""
    if "scipy" in sys.modules:  # a process that uses scipy: load (and cap) its OpenBLAS now
        with contextlib.suppress(ImportError):
            importlib.import_module("scipy.linalg.cython_blas")
    # (one that does not, like `sparsity-gui interference`, never calls scipy's BLAS; importing
    # scipy.linalg only to cap it cost 0.5-1.5 s of its start-up, measured)
    threads = int(threads)
    libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    for lib in libraries:
        lib.set_num_threads(threads)
    # threadpoolctl lets one thread at a time set OpenBLAS's process-wide pool (a guard for
    # nested `with threadpool_limits()` blocks). This cap is meant for the process, set from
    # the GUI thread, a sweep's worker or the CLI, so this thread gives that control back.
    openblas = next((type(lib) for lib in libraries if lib.internal_api == "openblas"), None)
    if openblas is not None:
        openblas.clear_controlling_thread()
    capped = [
        f"{Path(lib.filepath).name}:{lib.internal_api}"
        for lib in libraries
        if lib.get_num_threads() == threads
    ]
    logging.getLogger(__name__).debug(f"BLAS at {threads} thread(s): {', '.join(capped) or 'none loaded'}")
    return capped


# glibc's mallopt parameters, and the limits it reaches by itself on 64-bit Linux
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
GLIBC_MMAP_MAX = 32 * 2**20
GLIBC_TRIM_MAX = 2 * GLIBC_MMAP_MAX


def malloc_as_glibc_tunes_it() -> bool:
    """Undo, in this process, a MALLOC_TRIM_THRESHOLD_ set in its environment, as Dask's
    nanny sets it (64 KiB) for every worker process it starts: glibc then stops adapting
    its thresholds, serves each array above 128 KiB by a fresh mmap and gives it back at
    free, and a run of the interference model spends its time in page faults (a sweep's
    run took 1.8x as long on a worker as here). The thresholds are set to the values glibc
    reaches by itself. True when it changed them; a no-op elsewhere (not glibc, not set)."""
    import ctypes
    import os

    if os.environ.get("MALLOC_TRIM_THRESHOLD_") is None or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, GLIBC_MMAP_MAX)) and bool(
        libc.mallopt(M_TRIM_THRESHOLD, GLIBC_TRIM_MAX)
    )
