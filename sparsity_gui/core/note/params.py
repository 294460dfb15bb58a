"""Run parameters as a frozen, validated snapshot (what crosses to the worker thread)."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields, replace
from typing import Any

from sparsity_gui.core.errors import InputError

M_MAX = 10**8
LAM_MAX = 1.0
METHODS = ("exact", "gd")
# Bytes per weight the exact solver holds (W0, |W0| sorted, order, prefix sums,
# bounds for the actual and the idealized W0, death times) plus headroom for a copy.
BYTES_PER_WEIGHT = 160


def _available_memory() -> int | None:
    """Bytes this process can still allocate: free RAM, or less under a ulimit -v."""
    limit = None
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limit = soft
    except (ImportError, OSError, ValueError):
        pass
    ram = _free_ram()
    if ram is None:
        return limit
    return ram if limit is None else min(ram, limit)


def _free_ram() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(name, f"must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise InputError(name, f"must be finite, got {value}")
    return value


@dataclass(frozen=True)
class SimParams:
    """Everything that defines a run. Invalid values raise InputError naming the field."""

    m: int = 1000
    lam: float = 1e-3
    sigma: float = 0.9
    seed: int = 0
    w0_path: str | None = None
    method: str = "exact"
    eta: float = 0.05
    t_end: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.m, bool) or not isinstance(self.m, int):
            raise InputError("m", f"must be a whole number from 1 to {M_MAX:.0e}, got {self.m!r}")
        if not 1 <= self.m <= M_MAX:
            raise InputError("m", f"must be from 1 to {M_MAX:.0e}, got {self.m}")
        lam = _finite("lam", self.lam)
        if not 0.0 <= lam <= LAM_MAX:
            raise InputError("lam", f"must be from 0 to {LAM_MAX:g}, got {self.lam}")
        sigma = _finite("sigma", self.sigma)
        if sigma <= 0.0 or sigma > 1e6:
            raise InputError("sigma", f"must be > 0 (and at most 1e6), got {self.sigma}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise InputError("seed", f"must be a whole number from 0 to 2^63-1, got {self.seed!r}")
        if self.method not in METHODS:
            raise InputError("method", f"must be one of {', '.join(METHODS)}, got {self.method!r}")
        eta = _finite("eta", self.eta)
        if not 0.0 < eta <= 2.0:
            raise InputError("eta", f"must be > 0 and at most 2 (GD is unstable near balance "
                             f"for eta >= 1), got {self.eta}")
        if self.t_end is not None:
            t_end = _finite("t_end", self.t_end)
            if t_end <= 0.0:
                raise InputError("t_end", f"must be > 0, got {self.t_end}")
        if self.w0_path is not None and not isinstance(self.w0_path, str):
            raise InputError("w0", f"must be a file path, got {self.w0_path!r}")
        # normalise numeric types so equal snapshots compare equal
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "eta", eta)

    def with_changes(self, **changes: Any) -> "SimParams":
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def check_memory(m: int) -> None:
    """Refuse an m whose arrays cannot fit in the memory available now."""
    need = m * BYTES_PER_WEIGHT
    avail = _available_memory()
    if avail is not None and need > avail:
        raise InputError("m", f"m = {m} needs about {need / 2**30:.1f} GiB of memory, "
                         f"only {avail / 2**30:.1f} GiB is available")
