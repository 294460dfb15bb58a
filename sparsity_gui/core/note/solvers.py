"""The two solvers (exact flow and gradient descent) behind one interface.

Both work on |W(0)| sorted in descending order (the dynamics never reorder weights, so
the survivors are always the first m' ranks) and map back to the input order only when
a full signed W(t) is asked for.
"""

from __future__ import annotations

import math
import threading
import weakref
from dataclasses import dataclass, field

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note import kernels as K
from sparsity_gui.core.note.metrics import Moments
from sparsity_gui.core.note.normal_quantiles import normal_quantiles


@dataclass
class InitialState:
    """W(0) sorted once, with everything derived from it that never changes."""

    w0: np.ndarray  # signed, input order
    u: np.ndarray  # |W(0)| sorted descending
    p1: np.ndarray
    p2: np.ndarray
    _order: np.ndarray | None = field(default=None, repr=False)
    _ideal: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _deriving: threading.Thread | None = field(default=None, repr=False)

    @classmethod
    def from_weights(cls, w0: np.ndarray) -> InitialState:
        """The state of W(0). Given the read-only W(0) of a state that still exists (a
        snapshot's, as a replay for an export gets it), that state itself: nothing here
        ever changes, and sharing it spares sorting again and a second copy of every
        array (560 MB at m = 10^7)."""
        known = _STATES.get(id(w0))
        if known is not None and known.w0 is w0:
            return known
        state = cls._sorted(w0)
        _STATES[id(state.w0)] = state
        return state

    @classmethod
    def _sorted(cls, w0: np.ndarray) -> InitialState:
        w0 = np.ascontiguousarray(w0, dtype=np.float64).view()
        w0.flags.writeable = False  # shared with snapshots (exports, sessions): never written
        check_representable(w0)
        # np.sort is ~8x faster than argsort at m = 10^7; the permutation is only needed
        # to map back to input order, so it is computed when first asked for
        u = np.abs(w0)
        u *= -1.0  # sorted ascending in place, then negated back: descending, no copy
        u.sort()
        u *= -1.0
        p1, p2 = K.kahan_prefix_sums(u)
        return cls(w0=w0, u=u, p1=p1, p2=p2)

    def derive_in_background(self) -> None:
        """Start computing `order` and the idealized W(0) in a thread: numpy's argsort and
        the array operations of the normal quantiles release the GIL, so a headless run's
        exact solve, which needs neither, overlaps them on a second core (about 2 s and 1 s
        of CPU at m = 10^7). Whoever asks for either waits for the thread;
        `finish_deriving` waits for it in any case."""
        if self._deriving is not None or (self._order is not None and self._ideal is not None):
            return

        def derive() -> None:
            try:
                if self._order is None:
                    self._order = np.argsort(-np.abs(self.w0))
                if self._ideal is None:
                    u = ideal_abs_weights(self.m)
                    self._ideal = (u, *K.kahan_prefix_sums(u))
            except MemoryError:  # no traceback from here: the caller meets it again
                pass

        self._deriving = threading.Thread(target=derive, name="initial-state", daemon=True)
        self._deriving.start()

    def finish_deriving(self) -> None:
        """Wait for derive_in_background's thread, if any (a failure there, such as
        MemoryError, is met again when the value is computed here instead)."""
        thread = self._deriving
        if thread is not None:
            thread.join()
            self._deriving = None

    @property
    def order(self) -> np.ndarray:
        """order[rank] = input index. Ties need no stable order: equal weights have
        equal trajectories, so any permutation that sorts |W(0)| maps correctly."""
        self.finish_deriving()
        if self._order is None:
            self._order = np.argsort(-np.abs(self.w0))
        return self._order

    @property
    def m(self) -> int:
        return int(self.u.shape[0])

    @property
    def nonzero0(self) -> int:
        # by bisection of the sorted u: the worker asks at every chunk, and counting all
        # of u took 30 ms at m = 10^7 (which throttled the run to ~4,000 steps/s)
        return int(K.count_positive(self.u))

    def rel_var_bounds(self, nonzero) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) at each m' in nonzero, from the actual W(0)."""
        return _bounds_at(self.u, self.p1, self.p2, nonzero)

    @property
    def has_ideal(self) -> bool:
        """Whether the idealized W(0) is computed (rel_var_ideal_bounds is then cheap)."""
        return self._ideal is not None and self._deriving is None

    def rel_var_ideal_bounds(self, nonzero) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) at each m' in nonzero, from the idealized W(0) (half-normal percentiles)."""
        self.finish_deriving()
        if self._ideal is None:
            u = ideal_abs_weights(self.m)
            self._ideal = (u, *K.kahan_prefix_sums(u))
        return _bounds_at(*self._ideal, nonzero)


def check_representable(w0: np.ndarray) -> None:
    """Refuse a W(0) whose sums of squares leave double precision: ||W||^2 overflowing to
    inf, or every weight so small that squares underflow to 0 (then nothing can be said
    about the dynamics in floating point)."""
    peak = max(float(w0.max()), -float(w0.min())) if w0.size else 0.0
    if peak == 0.0:
        return  # all zeros: nothing moves, a valid (dull) run
    # a plain dot product cannot overflow or lose every square with moderate weights; only
    # extreme ones need the rescaled copy (which costs a second pass at m = 10^7)
    sum_sq = (
        float(np.dot(w0, w0)) if 1e-100 <= peak <= 1e100 else float(np.dot(w0 / peak, w0 / peak)) * peak**2
    )
    if not np.isfinite(sum_sq):
        raise InputError("w0", f"||W(0)||^2 overflows (largest |W_k| = {peak:.3g}); rescale the weights")
    if peak < 1e-100:
        raise InputError(
            "w0",
            f"every |W_k| is below 1e-100 (largest {peak:.3g}): squares "
            "underflow in double precision; rescale the weights",
        )


# every InitialState alive, by the id of its W(0) (checked by identity: an id can be reused
# once its array is gone); weak, so an entry goes with the last Simulation holding it
_STATES: weakref.WeakValueDictionary[int, InitialState] = weakref.WeakValueDictionary()


def _bounds_at(u, p1, p2, nonzero) -> tuple[np.ndarray, np.ndarray]:
    mps = np.atleast_1d(np.asarray(nonzero, dtype=np.int64))
    lo = np.empty(mps.shape[0])
    hi = np.empty(mps.shape[0])
    K.relvar_bounds_at(u, p1, p2, mps, lo, hi)
    return lo, hi


def ideal_abs_weights(m: int) -> np.ndarray:
    """u*_k = Phi^-1(1 - (k - 1/2)/(2m)), k = 1..m: half-normal quantiles, descending."""
    k = np.arange(1, m + 1, dtype=np.float64)
    return normal_quantiles(1.0 - (k - 0.5) / (2.0 * m))


LamKnots = tuple[np.ndarray, np.ndarray]  # (times, values) of lam's schedule


def lam_knots(lam: float | LamKnots) -> LamKnots:
    """The kernels' form of lam: a constant is one knot (at t = 0; constant before and after)."""
    if isinstance(lam, tuple):
        kt, kv = lam
        if not (isinstance(kt, np.ndarray) and isinstance(kv, np.ndarray)):
            raise TypeError("lam: a number or (times, values) arrays (lam_knots_of makes them)")
        return np.ascontiguousarray(kt, dtype=np.float64), np.ascontiguousarray(kv, dtype=np.float64)
    return np.zeros(1), np.full(1, float(lam))


def lam_knots_of(knots) -> LamKnots:
    """The kernels' form of a schedule's knots ((t, λ) pairs)."""
    return (
        np.array([t for t, _v in knots], dtype=np.float64),
        np.array([v for _t, v in knots], dtype=np.float64),
    )


class Solver:
    """What the simulation needs from a solver. Ranks index the sorted |W(0)|."""

    method = ""

    def __init__(self, init: InitialState, start: Solver | None):
        """From W(0) at t = 0, or (``start``) from another solver's state: its t, its |W|
        in the order of sorted |W(0)| and its death times, which this one goes on filling
        (a switch of method mid-run)."""
        self.init = init
        self.death_t: np.ndarray = np.full(init.m, np.nan) if start is None else start.death_t
        self.diverged: str | None = None

    # --- the state ---------------------------------------------------------------
    @property
    def t(self) -> float:
        raise NotImplementedError

    @property
    def lam(self) -> float:
        raise NotImplementedError

    def set_lam(self, lam: float) -> None:
        raise NotImplementedError

    def moments(self) -> Moments:
        raise NotImplementedError

    def abs_at_ranks(self, ranks: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def advance_to(self, t_target: float, stop_nonzero: int = -1, max_work: int = 2**62) -> int:
        """Advance towards t_target; stop early at m' <= stop_nonzero or after about
        max_work units of work. Returns a kernels.REACHED_* code."""
        raise NotImplementedError

    # --- derived -----------------------------------------------------------------
    def abs_sorted(self) -> np.ndarray:
        """|W(t)| in the order of sorted |W(0)| (descending)."""
        return self.abs_at_ranks(np.arange(self.init.m, dtype=np.int64))

    def weights(self) -> np.ndarray:
        """Signed W(t) in input order (materialises m values)."""
        w = np.zeros(self.init.m)
        w[self.init.order] = self.abs_sorted()
        # a dead weight is 0, not -0 (copysign would keep the sign of W(0))
        return np.where(w > 0, np.copysign(w, self.init.w0), 0.0)

    def death_times(self) -> np.ndarray:
        """Death time of each weight in input order (NaN while alive or never alive)."""
        out = np.empty(self.init.m)
        out[self.init.order] = self.death_t
        return out


class ExactSolver(Solver):
    """The exact flow through the two-variable reduction (S, C) (docs/theory.md §3)."""

    method = "exact"

    def __init__(self, init: InitialState, lam: float | LamKnots, start: Solver | None = None):
        super().__init__(init, start)
        self.knots = lam_knots(lam)
        if start is None:
            self.u, self.p1, self.p2 = init.u, init.p1, init.p2
        else:
            # starting mid-run (from a GD state): the current |W| is the new "u"
            self.u = np.ascontiguousarray(start.abs_sorted(), dtype=np.float64)
            self.p1, self.p2 = K.kahan_prefix_sums(self.u)
        self.fs = np.zeros(K.N_FSTATE)
        self.ist = np.zeros(K.N_ISTATE, dtype=np.int64)
        t0 = 0.0 if start is None else start.t
        K.exact_init(self.fs, self.ist, self.u, self.p1, self.p2, float(t0), *self.knots)

    @property
    def t(self) -> float:
        return float(self.fs[K.F_T])

    @property
    def lam(self) -> float:
        """lam in force now."""
        return float(K.lam_now(self.fs, self.fs[K.F_T]))

    def set_lam(self, lam: float | LamKnots) -> None:
        """lam from now: a constant, or knots (the schedule's)."""
        self.knots = lam_knots(lam)
        K.set_lam_piece(self.fs, *self.knots)

    @property
    def steps(self) -> int:
        return int(self.ist[K.I_STEPS])

    @property
    def log_b(self) -> float:
        """S = log B, with B the affine map's scale: a_k = B*(u_k - C)."""
        return float(math.log(self.fs[K.F_B]) + self.fs[K.F_LOGSHIFT])

    @property
    def offset_c(self) -> float:
        """C of the affine map a_k = B*(u_k - C) (relative to the u this solver started from)."""
        return float(self.fs[K.F_CREF] + self.fs[K.F_DELTA] * math.exp(-self.fs[K.F_LOGSHIFT]))

    def moments(self) -> Moments:
        mp, l1, n2 = K.exact_moments(self.fs, self.ist)
        return Moments(self.t, self.lam, int(mp), float(l1), float(n2))

    def abs_at_ranks(self, ranks: np.ndarray) -> np.ndarray:
        ranks = np.ascontiguousarray(ranks, dtype=np.int64)
        out = np.empty(ranks.shape[0])
        K.exact_abs_at_ranks(self.fs, self.ist, self.u, ranks, out)
        return out

    def weights(self) -> np.ndarray:
        """Signed W(t) in input order: only the m' live ranks are computed (a rank past m'
        is 0 here), the same values as Solver.weights."""
        mp = int(self.ist[K.I_MP])
        w = np.zeros(self.init.m)
        idx = self.init.order[:mp]
        a = self.abs_at_ranks(np.arange(mp, dtype=np.int64))
        w[idx] = np.where(a > 0, np.copysign(a, self.init.w0[idx]), 0.0)
        return w

    def advance_to(self, t_target: float, stop_nonzero: int = -1, max_work: int = 2**62) -> int:
        if self.diverged:
            return K.REACHED_TARGET
        status = int(
            K.exact_advance(
                self.fs,
                self.ist,
                self.u,
                self.p1,
                self.p2,
                self.death_t,
                *self.knots,
                float(t_target),
                int(stop_nonzero),
                int(max_work),
            )
        )
        if status == K.REACHED_STUCK:
            # ends the run as a diverged one does: every caller stops there and says why
            self.diverged = (
                f"the exact solver cannot advance at t = {self.t:.6g}: its step size fell "
                f"to {self.fs[K.F_H]:g} (lam = {self.lam:g} there)"
            )
            return K.REACHED_TARGET
        return status


class GDSolver(Solver):
    """Plain gradient descent with the zero rule, on sorted |W| (numba kernel)."""

    method = "gd"

    def __init__(self, init: InitialState, lam: float | LamKnots, eta: float, start: Solver | None = None):
        super().__init__(init, start)
        src = init.u if start is None else start.abs_sorted()
        self.a = np.array(src, dtype=np.float64)  # own copy: the kernel writes it
        self.mp = int(np.count_nonzero(self.a))
        _, self.norm2 = K.sorted_moments(self.a, self.mp)
        self.knots = lam_knots(lam)
        self.steps = 0
        self._eta = float(eta)
        # t = t_eta0 + eta * steps_at_eta, so that t stays on the step grid exactly
        self._t_eta0 = 0.0 if start is None else float(start.t)
        self._steps_at_eta = 0
        self.weight_steps = 0
        self._low_gain_step = -(2**62)  # last step (in self.steps) with 0 < 1 + eta*s < 1/2

    @property
    def t(self) -> float:
        return self._t_eta0 + self._eta * self._steps_at_eta

    @property
    def lam(self) -> float:
        """lam in force now (at this step's time)."""
        lam, slope, t0, _end = K.lam_piece(*self.knots, self.t)
        return float(lam if slope == 0.0 else lam + slope * (self.t - t0))

    @property
    def eta(self) -> float:
        return self._eta

    def set_lam(self, lam: float | LamKnots) -> None:
        """lam from now: a constant, or knots (the schedule's)."""
        self.knots = lam_knots(lam)

    def set_eta(self, eta: float) -> None:
        self._t_eta0 = self.t
        self._steps_at_eta = 0
        self._eta = float(eta)

    def moments(self) -> Moments:
        l1, n2 = K.sorted_moments(self.a, self.mp)
        return Moments(self.t, self.lam, self.mp, float(l1), float(n2))

    def abs_at_ranks(self, ranks: np.ndarray) -> np.ndarray:
        return self.a[np.asarray(ranks, dtype=np.int64)]

    def steps_to(self, t_target: float) -> int:
        """Steps until the step time nearest t_target."""
        if not math.isfinite(t_target):
            return 2**62
        n = int(round((t_target - self._t_eta0) / self._eta)) - self._steps_at_eta
        return max(n, 0)

    def step(self, n_steps: int, stop_nonzero: int = -1) -> None:
        if n_steps <= 0 or self.diverged:
            return
        mp_before = self.mp
        steps_before = self.steps
        death_steps = np.zeros(max(mp_before, 1), dtype=np.int64)
        mp, norm2, done, unstable, low = K.gd_run(
            self.a,
            self.mp,
            self.norm2,
            int(n_steps),
            self._eta,
            *self.knots,
            self._t_eta0,
            self._steps_at_eta,
            0,
            death_steps,
            int(stop_nonzero),
        )
        if low:
            self._low_gain_step = steps_before + int(low)
        if mp < mp_before:
            dead = slice(mp, mp_before)
            # on the same grid as self.t, so chunked and one-go runs agree to the bit
            self.death_t[dead] = self._t_eta0 + self._eta * (self._steps_at_eta + death_steps[dead])
        self.weight_steps += int(done) * mp_before  # an upper bound; enough for rates
        self.mp, self.norm2 = int(mp), float(norm2)
        self._steps_at_eta += int(done)
        self.steps += int(done)
        if unstable:
            self.diverged = (
                f"gradient descent is unstable at t = {self.t:.6g}: with eta = {self._eta:g} "
                f"one step flipped the sign of every weight (1 + eta*(1 - ||W||^2) <= 0), "
                f"so the zero rule killed them all. Use a smaller eta (below 1) or the "
                f"exact method."
            )
        elif mp == 0 and mp_before >= 1 and steps_before + int(death_steps[0]) - self._low_gain_step <= 100:
            # the last weights died within 100 steps of a step with 0 < g = 1 + eta*s < 1/2:
            # feature benefit alone more than halved every weight, ||W||^2 having overshot 1
            # by over 1/(2 eta); the flow (factor exp(eta s) > 0) never does that, and the
            # tiny weights such a step leaves die within a few steps. (When lam exceeds
            # 2/(3 sqrt 3), or the weights are small, the flow itself kills every weight,
            # with g near 1: not flagged.)
            self.diverged = (
                f"gradient descent is unstable at t = {self.death_t[0]:.6g}: with eta = {self._eta:g} "
                f"||W||^2 overshot 1 and the zero rule killed the last weights. "
                f"Use a smaller eta (below 1; the step is stable near "
                f"balance for eta < 1) or the exact method."
            )

    def advance_to(self, t_target: float, stop_nonzero: int = -1, max_work: int = 2**62) -> int:
        """max_work counts weight-steps (steps times survivors)."""
        if self.mp <= stop_nonzero:
            return K.REACHED_NONZERO
        n = self.steps_to(t_target)
        take = min(n, max(1, max_work // max(self.mp, 1)))
        mp_before = self.mp
        self.step(take, stop_nonzero)
        if self.mp <= stop_nonzero < mp_before:
            return K.REACHED_NONZERO
        return K.REACHED_TARGET if take >= n or self.diverged else K.REACHED_MAX_STEPS
