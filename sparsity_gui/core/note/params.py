"""Run parameters as a frozen, validated snapshot (what crosses to the worker thread)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from sparsity_gui.core.checks import available_memory, finite_number
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.text import short_number

M_MAX = 10**8
LAM_MAX = 1.0
METHODS = ("exact", "gd")
# Bytes per weight the exact solver holds (W0, |W0| sorted, order, prefix sums,
# bounds for the actual and the idealized W0, death times) plus headroom for a copy.
BYTES_PER_WEIGHT = 160


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
            raise InputError("m", f"must be a whole number from 1 to {short_number(M_MAX)}, got {self.m!r}")
        if not 1 <= self.m <= M_MAX:
            raise InputError("m", f"must be from 1 to {short_number(M_MAX)}, got {self.m}")
        lam = finite_number("lam", self.lam)
        if not 0.0 <= lam <= LAM_MAX:
            raise InputError("lam", f"must be from 0 to {LAM_MAX:g}, got {self.lam}")
        sigma = finite_number("sigma", self.sigma)
        if sigma <= 0.0 or sigma > 1e6:
            raise InputError("sigma", f"must be > 0 (and at most 1e6), got {self.sigma}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise InputError("seed", f"must be a whole number from 0 to 2^63-1, got {self.seed!r}")
        if self.method not in METHODS:
            raise InputError("method", f"must be one of {', '.join(METHODS)}, got {self.method!r}")
        eta = finite_number("eta", self.eta)
        if not 0.0 < eta <= 2.0:
            raise InputError(
                "eta", f"must be > 0 and at most 2 (GD is unstable near balance for eta >= 1), got {self.eta}"
            )
        if self.t_end is not None:
            t_end = finite_number("t_end", self.t_end)
            if t_end <= 0.0:
                raise InputError("t_end", f"must be > 0, got {self.t_end}")
        if self.w0_path is not None and not isinstance(self.w0_path, str):
            raise InputError("w0", f"must be a file path, got {self.w0_path!r}")
        # normalise numeric types so equal snapshots compare equal
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "eta", eta)

    def with_changes(self, **changes: Any) -> SimParams:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def check_memory(m: int) -> None:
    """Refuse an m whose arrays cannot fit in the memory available now."""
    need = m * BYTES_PER_WEIGHT
    avail = available_memory()
    if avail is not None and need > avail:
        raise InputError(
            "m",
            f"m = {m} needs about {need / 2**30:.1f} GiB of memory, "
            f"only {avail / 2**30:.1f} GiB is available",
        )


# Fields that change during a run at an instant, continuing from W(t) (a session's live
# changes). t_end only moves the run's end; a change of any other field starts a new run.
LIVE_FIELDS = ("lam", "eta", "method")
# What sessions and presets save (W(0) from a file is saved apart, with its source).
SETTING_FIELDS = tuple(f.name for f in fields(SimParams) if f.name != "w0_path")


def needs_restart(old: SimParams, new: SimParams) -> bool:
    return any(
        getattr(old, f.name) != getattr(new, f.name)
        for f in fields(SimParams)
        if f.name not in LIVE_FIELDS and f.name != "t_end"
    )
