"""One run: W(0), the active solver, the lam schedule and the recorded history.

Synchronous and Qt-free: the CLI calls it directly, the GUI's worker thread hosts the
same object and steps it in bounded chunks.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import kernels as K
from .history import History
from .initial import initial_weights
from .params import SimParams
from .solvers import ExactSolver, GDSolver, InitialState, Solver
from .state import COL, COLUMNS, Moments

N_TRACKED_MAX = 16


def tracked_ranks(nonzero: int, count: int = N_TRACKED_MAX) -> np.ndarray:
    """Ranks (in sorted |W(0)|) spread log-uniformly from the largest to the smallest
    nonzero weight: the winner, a few near the top, and some that die early."""
    if nonzero <= 0:
        return np.zeros(0, dtype=np.int64)
    ranks = np.unique(np.round(np.geomspace(1, nonzero, min(count, nonzero))).astype(np.int64) - 1)
    return ranks


@dataclass(frozen=True)
class LamChange:
    t: float
    lam: float


class Simulation:
    def __init__(self, params: SimParams, w0: np.ndarray | None = None, history_capacity: int = 2048):
        self.params = params
        w0 = initial_weights(params) if w0 is None else np.asarray(w0, dtype=np.float64)
        self.init = InitialState.from_weights(w0)
        self.lam_changes: list[LamChange] = [LamChange(0.0, params.lam)]
        self.solver: Solver = self._new_solver(params.method, 0.0, None)
        self.tracked = tracked_ranks(self.init.nonzero0)
        self.history = History(len(COLUMNS) + N_TRACKED_MAX, history_capacity)
        self._lam_t = 0.0  # integral of lam dt up to the last record
        self._lam_t_at = 0.0
        self.record()

    # --- construction ---------------------------------------------------------------
    def _new_solver(self, method: str, t0: float, abs_sorted: np.ndarray | None,
                    death_t: np.ndarray | None = None) -> Solver:
        lam = self.lam_changes[-1].lam
        if method == "exact":
            return ExactSolver(self.init, lam, t0, abs_sorted, death_t)
        return GDSolver(self.init, lam, self.params.eta, t0, abs_sorted, death_t)

    @property
    def m(self) -> int:
        return self.init.m

    @property
    def t(self) -> float:
        return self.solver.t

    @property
    def lam(self) -> float:
        return self.solver.lam

    @property
    def method(self) -> str:
        return self.solver.method

    # --- live changes (no reset) ----------------------------------------------------
    def set_lam(self, lam: float) -> None:
        if lam == self.solver.lam:
            return
        self._accumulate_lam_t()
        self.solver.set_lam(lam)
        t = self.t
        if self.lam_changes and self.lam_changes[-1].t == t:
            self.lam_changes[-1] = LamChange(t, lam)
        else:
            self.lam_changes.append(LamChange(t, lam))
        self.params = self.params.with_changes(lam=lam)

    def set_eta(self, eta: float) -> None:
        self.params = self.params.with_changes(eta=eta)
        if isinstance(self.solver, GDSolver):
            self.solver.set_eta(eta)

    def set_method(self, method: str) -> None:
        """Switch solver, continuing from the current W(t)."""
        if method == self.solver.method:
            return
        self.params = self.params.with_changes(method=method)
        current = self.solver.abs_sorted()
        self.solver = self._new_solver(method, self.t, current, self.solver.death_t)

    def apply(self, params: SimParams) -> bool:
        """Apply a new parameter snapshot. Returns False when it needs a new run
        (m, sigma, seed or the initial condition changed): the caller rebuilds."""
        if needs_restart(self.params, params):
            return False
        self.set_method(params.method)
        self.set_eta(params.eta)
        self.set_lam(params.lam)
        self.params = params
        return True

    # --- stepping -------------------------------------------------------------------
    def advance(self, t_target: float, stop_nonzero: int = -1, max_work: int = 2**62) -> int:
        if self.solver.diverged:
            return K.REACHED_TARGET
        return self.solver.advance_to(t_target, stop_nonzero, max_work)

    def time_to_nonzero(self, nonzero: int = 1) -> float:
        """The time at which m' first reaches `nonzero`, from a separate exact run of the
        same W(0) and current lam (inf when lam = 0 and it never happens)."""
        if self.init.nonzero0 <= nonzero:
            return 0.0
        if self.lam <= 0.0:
            return math.inf
        probe = ExactSolver(self.init, self.lam)
        probe.advance_to(math.inf, stop_nonzero=nonzero)
        return probe.t

    # --- what is shown and saved ----------------------------------------------------
    def _accumulate_lam_t(self) -> None:
        t = self.t
        self._lam_t += self.solver.lam * (t - self._lam_t_at)
        self._lam_t_at = t

    def moments(self) -> Moments:
        return self.solver.moments()

    def metrics_row(self) -> np.ndarray:
        """The COLUMNS of the current instant (plus tracked |W_k|)."""
        mo = self.solver.moments()
        self._accumulate_lam_t()
        row = np.full(len(COLUMNS) + N_TRACKED_MAX, np.nan)
        lo, hi = self.init.rel_var_bounds(mo.nonzero)
        ilo, ihi = self.init.rel_var_ideal_bounds(mo.nonzero)
        row[COL["t"]] = mo.t
        row[COL["norm2_sq"]] = mo.norm2_sq
        row[COL["norm1"]] = mo.norm1
        row[COL["nonzero"]] = mo.nonzero
        row[COL["theta"]] = mo.theta
        row[COL["feature_push"]] = mo.s * mo.norm2_sq
        row[COL["reg_push"]] = mo.lam * mo.norm1
        row[COL["rel_var"]] = mo.rel_var
        row[COL["rel_var_lo"]] = lo[0]
        row[COL["rel_var_hi"]] = hi[0]
        row[COL["rel_var_ideal_lo"]] = ilo[0]
        row[COL["rel_var_ideal_hi"]] = ihi[0]
        row[COL["lam"]] = mo.lam
        row[COL["s"]] = mo.s
        row[COL["w"]] = 1.0 / mo.norm1 if mo.norm1 > 0 else math.inf
        row[COL["lam_t"]] = self._lam_t
        if self.tracked.size:
            row[len(COLUMNS):len(COLUMNS) + self.tracked.size] = self.solver.abs_at_ranks(self.tracked)
        return row

    def record(self) -> np.ndarray:
        row = self.metrics_row()
        self.history.append(row)
        return row

    def fitted_c(self, rows: np.ndarray | None = None) -> float:
        return fit_decay_constant(self.history.array() if rows is None else rows)


def needs_restart(old: SimParams, new: SimParams) -> bool:
    return (old.m, old.sigma, old.seed, old.w0_path) != (new.m, new.sigma, new.seed, new.w0_path)


def fit_decay_constant(rows: np.ndarray) -> float:
    """c in ||W||_1 ~ 1/(w(0) + c*lam*t): least squares of w - w(0) against the
    integral of lam dt (lam*t for constant lam), over rows with m' >= 2, through the
    origin so that w(0) is the run's own."""
    if rows.shape[0] < 2:
        return math.nan
    w = rows[:, COL["w"]]
    x = rows[:, COL["lam_t"]]
    use = (rows[:, COL["nonzero"]] >= 2) & np.isfinite(w)
    if use.sum() < 2:
        return math.nan
    w0 = w[0]
    xx = x[use]
    den = float(np.dot(xx, xx))
    if den <= 0.0:
        return math.nan
    return float(np.dot(xx, w[use] - w0) / den)
