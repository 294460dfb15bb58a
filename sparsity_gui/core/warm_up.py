"""Compiling a model's numba kernels once, and saying what is compiled and for about how long.

numba compiles a kernel on its first call and keeps it in its on-disk cache (`cache=True`;
core/numba_env.py points the cache at a writable folder), so only a first launch, or the first
after an upgrade or an edit of the kernels, waits: tens of seconds on a busy 2-core machine.
Each model declares its kernels as a `KernelSet`. A marker beside numba's cache records the
sources the set was last compiled from and how long that took, so the window can say before
it starts whether it will load the kernels (about a second) or compile them, and for about how
long. The marker only informs the message: numba decides what to compile.

`make run` compiles every set at install (`python -m sparsity_gui.cli.precompile`), so the
first window loads them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sparsity_gui.core.files import atomic_write_text

# a compile this much slower than a load from the cache is recorded as a compile
LOAD_SECONDS = 2.0


@dataclass(frozen=True)
class KernelSet:
    """One model's numba kernels: the files that define them, and a call that compiles (or
    loads) every one of them on a tiny problem."""

    name: str  # the marker's key, e.g. "note"
    what: str  # said in the status bar: "the note's solvers (exact flow, gradient descent)"
    sources: tuple[Path, ...]  # every file with an @njit(cache=True) kernel the call reaches
    compile_all: Callable[[], object]
    typical_seconds: float  # a first compile here (2 busy cores): the estimate before any

    def marker_path(self) -> Path:
        """Beside numba's cache: $NUMBA_CACHE_DIR, else the __pycache__ numba writes beside
        the kernels' source (removing either removes the marker with the kernels)."""
        folder = os.environ.get("NUMBA_CACHE_DIR")
        base = Path(folder) if folder else self.sources[0].parent / "__pycache__"
        return base / f"sparsity-gui-warm-up-{self.name}.json"

    def key(self) -> str:
        """What numba's cache depends on: its version, Python's, and each source file's
        modification time and size (numba's own test of a cached kernel's freshness)."""
        import numba

        parts = [f"numba {numba.__version__}", f"python {sys.version_info[0]}.{sys.version_info[1]}"]
        for path in self.sources:
            try:
                stat = path.stat()
                parts.append(f"{path.name} {stat.st_mtime_ns} {stat.st_size}")
            except OSError:
                parts.append(f"{path.name} missing")
        return "; ".join(parts)

    def _marker(self) -> dict:
        try:
            marker = json.loads(self.marker_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return marker if isinstance(marker, dict) else {}

    def cached(self) -> bool:
        """Whether the kernels were compiled from these sources by this numba: a load."""
        return self._marker().get("key") == self.key()

    def estimate(self) -> float:
        """Seconds a compile takes: the last one measured here, else the typical one."""
        seconds = self._marker().get("compile_seconds")
        return float(seconds) if isinstance(seconds, int | float) and seconds > 0 else self.typical_seconds

    def status(self) -> str:
        """The status bar's line while the kernels are readied."""
        if self.cached():
            return f"loading {self.what} from numba's cache"
        seconds = self.estimate()
        about = f"about {seconds:.0f} s" if seconds >= 10 else f"about {seconds:.1f} s"
        return f"compiling {self.what} with numba, once: {about} (later launches load them from the cache)"

    def warm_up(self) -> float:
        """Compile (or load) every kernel of the set; the seconds it took. A compile's time (one
        slower than LOAD_SECONDS) is recorded for the next estimate; a marker that cannot be
        written changes nothing."""
        start = time.perf_counter()
        self.compile_all()
        seconds = time.perf_counter() - start
        # a load (numba's cache was there, marker or not) keeps the last compile's time
        compiled = seconds > LOAD_SECONDS
        marker = {"key": self.key(), "compile_seconds": round(seconds, 2) if compiled else self.estimate()}
        try:
            self.marker_path().parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.marker_path(), json.dumps(marker) + "\n")
        except OSError:
            pass  # read-only cache folder: numba then compiles each launch, and says so
        return seconds
