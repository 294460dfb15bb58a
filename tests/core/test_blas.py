"""core/blas.py caps every loaded BLAS, checked through OpenBLAS's own getter on the libraries
the kernel lists as mapped (/proc/self/maps, independent of threadpoolctl), from any thread."""

from __future__ import annotations

import ctypes
import sys
import threading

import numpy as np
import pytest
import scipy.linalg  # noqa: F401  (loads scipy's own OpenBLAS beside numpy's)

from sparsity_gui.core.blas import limit_blas_threads

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")

GETTERS = (
    "openblas_get_num_threads",
    "scipy_openblas_get_num_threads",
    "scipy_openblas_get_num_threads64_",
    "openblas_get_num_threads64_",
)


def openblas_threads() -> dict[str, int]:
    """Each mapped OpenBLAS's own thread count, by file name."""
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
        paths = {p[-1] for p in (line.split() for line in f) if len(p) >= 6 and "openblas" in p[-1].lower()}
    counts = {}
    for path in sorted(paths):
        lib = ctypes.CDLL(path)
        for name in GETTERS:
            getter = getattr(lib, name, None)
            if getter is not None:
                getter.restype = ctypes.c_int
                counts[path.rsplit("/", 1)[-1]] = getter()
                break
    return counts


@pytest.fixture(autouse=True)
def one_thread_after():
    yield
    limit_blas_threads(1)  # what the rest of the suite (and the app) runs with


def test_every_loaded_openblas_is_capped_and_reported():
    before = openblas_threads()
    assert len(before) >= 2, before  # numpy's and scipy's
    changed = limit_blas_threads(1)
    assert set(openblas_threads().values()) == {1}
    assert sorted(name.split(":")[0] for name in changed) == sorted(before)
    assert all(name.endswith(":openblas") for name in changed)


def test_the_cap_is_process_wide_and_the_last_caller_wins():
    """Set in a worker thread (as a sweep's worker does), seen from this one; then set again
    from this thread while that worker is still alive, as the GUI thread would."""
    cores = 2
    set_in_worker = threading.Event()
    finish = threading.Event()

    def worker():
        limit_blas_threads(cores)
        set_in_worker.set()
        finish.wait(30)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert set_in_worker.wait(30)
        assert set(openblas_threads().values()) == {cores}
        assert limit_blas_threads(1)  # the worker is alive: its call must not keep control
        assert set(openblas_threads().values()) == {1}
    finally:
        finish.set()
        thread.join(30)


def test_products_are_right_under_the_cap():
    limit_blas_threads(1)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 48))
    expected = np.array([[sum(a[i, k] * a[j, k] for k in range(48)) for j in range(64)] for i in range(64)])
    np.testing.assert_allclose(a @ a.T, expected, rtol=1e-12, atol=1e-12)


PAGE_FAULTS = """
import resource, sys
import numpy as np
from sparsity_gui.core.blas import malloc_as_glibc_tunes_it
changed = malloc_as_glibc_tunes_it() if sys.argv[1] == "undo" else False
np.ones(2**17).sum()  # a 1 MiB array once, before counting
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):
    np.ones(2**17).sum()  # 1 MiB, freed at once: a run's temporaries
print(changed, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_dask_workers_malloc_setting_is_undone(tmp_path):
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536: each 1 MiB array is
    then a fresh mmap, its pages faulted in again at every allocation. Undone, the same
    loop reuses the memory: far fewer page faults (counted by the kernel, not timed)."""
    import os
    import subprocess

    env = dict(os.environ, MALLOC_TRIM_THRESHOLD_="65536")

    def faults(mode: str) -> tuple[str, int]:
        out = subprocess.run(
            [sys.executable, "-c", PAGE_FAULTS, mode], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        return out[0], int(out[1])

    changed, kept = faults("keep")
    assert changed == "False" and kept >= 200 * 100  # about 256 pages per MiB, every time
    changed, undone = faults("undo")
    assert changed == "True" and undone < kept / 10
    plain = dict(os.environ)
    plain.pop("MALLOC_TRIM_THRESHOLD_", None)
    out = subprocess.run(
        [sys.executable, "-c", PAGE_FAULTS, "undo"], env=plain, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "False"  # nothing to undo: glibc's own tuning is left alone
