"""The note model's numba kernels: the exact flow through the (S, C) reduction
(docs/theory.md §3), the relative-variance bounds, and the GD pass.

All kernels are ``nogil=True`` (the GUI thread must keep running while the worker
computes) and ``cache=True`` (core/numba_env.py makes the cache folder writable).
They work on |W| sorted in descending order: the dynamics never reorder weights, so
the survivors are always a prefix ``[0, m')`` of that array.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sparsity_gui.core.note import dop853

# ----------------------------------------------------------------------------------
# DOP853 tableau (Hairer's 8(5,3) pair), the published constants kept in core/note/dop853.py.

N_STAGES = dop853.N_STAGES
RK_A = np.ascontiguousarray(dop853.A, dtype=np.float64)
RK_B = np.ascontiguousarray(dop853.B, dtype=np.float64)
RK_C = np.ascontiguousarray(dop853.C, dtype=np.float64)
RK_E3 = np.ascontiguousarray(dop853.E3, dtype=np.float64)
RK_E5 = np.ascontiguousarray(dop853.E5, dtype=np.float64)

# Layout of the exact solver's float state vector. lam(t) = F_LAM + F_SLOPE (t - F_LAM_T0)
# on the schedule's piece in force, which ends at F_NEXT_KNOT (inf: constant from there).
F_T, F_B, F_DELTA, F_CREF, F_SUMD, F_SUMD2, F_H, F_LAM, F_LOGSHIFT, F_SLOPE, F_LAM_T0, F_NEXT_KNOT = range(12)
N_FSTATE = 12
# Layout of its integer state vector.
I_MP, I_STEPS, I_DEATHS = range(3)
N_ISTATE = 3

# Status codes returned by exact_advance (REACHED_STUCK: no step could move t; the state
# is left where it is, and the solver says so rather than trying again forever).
REACHED_TARGET, REACHED_NONZERO, REACHED_MAX_STEPS, REACHED_STUCK = 0, 1, 2, 3

RTOL = 1e-12
ATOL_T = 1e-13  # absolute tolerance on t when integrating in delta
# A death the integration places within DEATH_SNAP * t after the instant asked for happens
# at that instant: death times are only known to about RTOL, and two step sequences to the
# same instant (a live run stopping at a death, the replay of it for an export sampling on
# the way) place the same death a few ulps apart. Without this the replay landed just
# before the last death and exported a second survivor of 1e-14 (issue 22, item 4).
DEATH_SNAP = RTOL
SMALL_PREFIX = 512  # below this many survivors, sums are taken directly (no cancellation)
# At m' = 1 the survivor is B |delta| and every segment sum is 0, so (B, delta) can be
# rescaled to (1, B delta) before B overflows; F_LOGSHIFT keeps the true log B.
REBASE_B = 1e100


@njit(cache=True, nogil=True)
def kahan_prefix_sums(u):
    """P1[j] = sum(u[:j]), P2[j] = sum(u[:j]**2), compensated (m up to 10^8)."""
    m = u.shape[0]
    p1 = np.empty(m + 1)
    p2 = np.empty(m + 1)
    s1 = 0.0
    c1 = 0.0
    s2 = 0.0
    c2 = 0.0
    p1[0] = 0.0
    p2[0] = 0.0
    for k in range(m):
        y = u[k] - c1
        t = s1 + y
        c1 = (t - s1) - y
        s1 = t
        y = u[k] * u[k] - c2
        t = s2 + y
        c2 = (t - s2) - y
        s2 = t
        p1[k + 1] = s1
        p2[k + 1] = s2
    return p1, p2


@njit(cache=True, nogil=True)
def shifted_sums(u, p1, p2, mp, c):
    """(sum, sum of squares) of u[k] - c over k < mp, without cancellation for small mp."""
    if mp <= SMALL_PREFIX:
        sd = 0.0
        sd2 = 0.0
        for k in range(mp):
            d = u[k] - c
            sd += d
            sd2 += d * d
        return sd, sd2
    sd = p1[mp] - mp * c
    sd2 = p2[mp] - 2.0 * c * p1[mp] + mp * c * c
    return max(sd, 0.0), max(sd2, 0.0)


@njit(cache=True, nogil=True)
def _relvar_shifted(u, p1, p2, mp, c):
    sd, sd2 = shifted_sums(u, p1, p2, mp, c)
    if sd > 0.0:
        # (sd2 / sd) / sd, not sd2 / sd**2: sd*sd can underflow for tiny weights
        return max(mp * (sd2 / sd) / sd - 1.0, 0.0)
    return 0.0  # all entries equal (or one zero entry): no spread


@njit(cache=True, nogil=True)
def relvar_bounds_at(u, p1, p2, mps, lo, hi):
    """lo(m'), hi(m') (docs/theory.md §2) for each m' in mps (NaN for m' = 0). u sorted
    descending; O(1) per entry above SMALL_PREFIX survivors, O(m') below."""
    m = u.shape[0]
    for i in range(mps.shape[0]):
        mp = mps[i]
        if mp <= 0 or mp > m:
            lo[i] = np.nan
            hi[i] = np.nan
            continue
        lo[i] = _relvar_shifted(u, p1, p2, mp, u[mp] if mp < m else 0.0)
        hi[i] = _relvar_shifted(u, p1, p2, mp, u[mp - 1])


# ----------------------------------------------------------------------------------
# Exact solver: the (S, C) reduction (docs/theory.md §3), C written as c_ref + delta where
# c_ref = u[m'-1] is the next weight to die. Then delta <= 0 and every sum over the
# survivors is a sum of non-negative terms, and delta keeps full relative precision
# as the last survivor's offset shrinks.


@njit(cache=True, nogil=True, inline="always")
def _rhs(mode, x, y0, y1, lam, mp, sd, sd2, slope, t0):
    """mode 0: d(B, delta)/dt at y = (B, delta). mode 1: d(B, t)/d delta at x = delta.
    lam(t) = lam + slope (t - t0) (slope 0: lam itself, whatever t).

    B = e^S is integrated directly so the right-hand side is a polynomial (no exp)."""
    if slope != 0.0:
        lam = lam + slope * ((x if mode == 0 else y1) - t0)
    b = y0
    delta = y1 if mode == 0 else x
    q = sd2 - 2.0 * delta * sd + mp * delta * delta
    s = 1.0 - b * b * q
    if mode == 0:
        return s * b, lam / b
    return s * b * b / lam, b / lam


@njit(cache=True, nogil=True)
def _dop853_step(mode, x, y0, y1, h, lam, mp, sd, sd2, K, atol1, slope, t0):
    """One DOP853 step from (x, y); returns (y0_new, y1_new, scaled error norm)."""
    k0, k1 = _rhs(mode, x, y0, y1, lam, mp, sd, sd2, slope, t0)
    K[0, 0] = k0
    K[0, 1] = k1
    for s in range(1, N_STAGES):
        z0 = y0
        z1 = y1
        for j in range(s):
            a = RK_A[s, j] * h
            z0 += a * K[j, 0]
            z1 += a * K[j, 1]
        k0, k1 = _rhs(mode, x + RK_C[s] * h, z0, z1, lam, mp, sd, sd2, slope, t0)
        K[s, 0] = k0
        K[s, 1] = k1
    n0 = y0
    n1 = y1
    for s in range(N_STAGES):
        n0 += h * RK_B[s] * K[s, 0]
        n1 += h * RK_B[s] * K[s, 1]
    k0, k1 = _rhs(mode, x + h, n0, n1, lam, mp, sd, sd2, slope, t0)
    K[N_STAGES, 0] = k0
    K[N_STAGES, 1] = k1
    if not (math.isfinite(n0) and math.isfinite(n1)):
        return n0, n1, math.inf
    # scipy's DOP853 error estimate; B is controlled relatively, the second
    # component relatively too (delta keeps its precision as it shrinks)
    e5n = 0.0
    e3n = 0.0
    for i in range(2):
        sc = RTOL * max(abs(y0), abs(n0)) if i == 0 else atol1 + RTOL * max(abs(y1), abs(n1))
        e5 = 0.0
        e3 = 0.0
        for s in range(N_STAGES + 1):
            e5 += K[s, i] * RK_E5[s]
            e3 += K[s, i] * RK_E3[s]
        e5 /= sc
        e3 /= sc
        e5n += e5 * e5
        e3n += e3 * e3
    if e5n == 0.0 and e3n == 0.0:
        return n0, n1, 0.0
    return n0, n1, abs(h) * e5n / math.sqrt((e5n + 0.01 * e3n) * 2.0)


@njit(cache=True, nogil=True, inline="always")
def _grow_factor(err):
    if err == 0.0:
        return 10.0
    return min(10.0, max(0.2, 0.9 * err ** (-1.0 / 8.0)))


@njit(cache=True, nogil=True, inline="always")
def _shrink_factor(err):
    return max(0.2, 0.9 * err ** (-1.0 / 8.0)) if math.isfinite(err) else 0.2


@njit(cache=True, nogil=True)
def _set_segment(fs, ist, u, p1, p2):
    """c_ref and the survivors' shifted sums for the current m'."""
    mp = ist[I_MP]
    if mp == 0:
        fs[F_CREF] = 0.0
        fs[F_SUMD] = 0.0
        fs[F_SUMD2] = 0.0
        return
    c = u[mp - 1]
    sd, sd2 = shifted_sums(u, p1, p2, mp, c)
    fs[F_CREF] = c
    fs[F_SUMD] = sd
    fs[F_SUMD2] = sd2


@njit(cache=True, nogil=True)
def count_positive(u):
    """Number of entries > 0 in u sorted descending (bisection)."""
    lo_i, hi_i = 0, u.shape[0]
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if u[mid] > 0.0:
            lo_i = mid + 1
        else:
            hi_i = mid
    return lo_i


@njit(cache=True, nogil=True)
def lam_piece(kt, kv, t):
    """The piece of the schedule through knots (kt, kv) in force at t: (lam at t0, slope,
    t0, the piece's end). Piecewise linear, constant before the first knot and from the
    last; at a jump (two knots at one instant) the value after it."""
    n = kt.shape[0]
    j = 0
    while j < n and kt[j] <= t:
        j += 1
    if j == 0:
        return kv[0], 0.0, t, kt[0]
    if j == n:
        return kv[n - 1], 0.0, t, math.inf
    slope = (kv[j] - kv[j - 1]) / (kt[j] - kt[j - 1])
    if not math.isfinite(slope):
        # a piece too short for its slope to be a float (λ changes by at most 1 over under
        # 1e-308: a subnormal knot time): λ stays at its start value to the piece's end, a
        # jump there (λ at the knot is right; ∫λ over the piece is below 1e-308 either way)
        return kv[j - 1], 0.0, t, kt[j]
    return kv[j - 1], slope, kt[j - 1], kt[j]


@njit(cache=True, nogil=True, inline="always")
def lam_now(fs, t):
    """lam(t) on the piece in force (fs's)."""
    slope = fs[F_SLOPE]
    return fs[F_LAM] if slope == 0.0 else fs[F_LAM] + slope * (t - fs[F_LAM_T0])


@njit(cache=True, nogil=True)
def set_lam_piece(fs, kt, kv):
    """The schedule's piece in force at fs's time."""
    lam, slope, t0, end = lam_piece(kt, kv, fs[F_T])
    fs[F_LAM] = lam
    fs[F_SLOPE] = slope
    fs[F_LAM_T0] = t0
    fs[F_NEXT_KNOT] = end


@njit(cache=True, nogil=True)
def exact_init(fs, ist, u, p1, p2, t0, kt, kv):
    """Start at C = 0, B = 1 from u = |W(0)| sorted descending, lam(t) through the knots
    (kt, kv) (one knot: a constant)."""
    ist[I_MP] = count_positive(u)
    ist[I_STEPS] = 0
    ist[I_DEATHS] = 0
    fs[F_T] = t0
    fs[F_B] = 1.0
    fs[F_LOGSHIFT] = 0.0
    fs[F_H] = 0.01
    set_lam_piece(fs, kt, kv)
    _set_segment(fs, ist, u, p1, p2)
    fs[F_DELTA] = -fs[F_CREF]


@njit(cache=True, nogil=True)
def _kill_at_cref(fs, ist, u, p1, p2, death_t):
    """C has reached c_ref: the weights equal to it die now (ties together)."""
    c_old = fs[F_CREF]
    mp = ist[I_MP]
    t = fs[F_T]
    while mp > 0 and u[mp - 1] <= c_old:
        mp -= 1
        death_t[mp] = t
        ist[I_DEATHS] += 1
    ist[I_MP] = mp
    _set_segment(fs, ist, u, p1, p2)
    # delta' = C - c_new = c_old - c_new (a rebase only happens at m' = 1, so the
    # scale shift is 0 whenever survivors remain after a death)
    fs[F_DELTA] = c_old - fs[F_CREF] if mp > 0 else 0.0


@njit(cache=True, nogil=True)
def _integrate_to_death(fs, ist, t_limit, K):
    """Integrate in delta from delta < 0 up to 0 exactly, y = (B, t). Returns False
    (state untouched) if the death comes after t_limit by more than DEATH_SNAP*t_limit;
    one within that comes at t_limit."""
    t_late = t_limit + DEATH_SNAP * abs(t_limit)
    lam = fs[F_LAM]
    slope = fs[F_SLOPE]
    t0 = fs[F_LAM_T0]
    mp = ist[I_MP]
    sd = fs[F_SUMD]
    sd2 = fs[F_SUMD2]
    x = fs[F_DELTA]
    b = fs[F_B]
    t = fs[F_T]
    # first guess: the whole way, or the delta covered by one time step
    hx = min(-x, fs[F_H] * lam_now(fs, t) / b)
    if not hx > 0.0:
        hx = -x
    steps = 0
    while x < 0.0:
        last = hx >= -x
        if last:
            hx = -x
        nb, nt, err = _dop853_step(1, x, b, t, hx, lam, mp, sd, sd2, K, ATOL_T, slope, t0)
        steps += 1
        if err <= 1.0:
            if nt > t_late:
                ist[I_STEPS] += steps
                return False
            x = 0.0 if last else x + hx
            b = nb
            t = nt
            hx *= _grow_factor(err)
        else:
            hx *= _shrink_factor(err)
            if hx < 1e-300:
                hx = -x
    ist[I_STEPS] += steps
    fs[F_B] = b
    fs[F_T] = min(t, t_limit)
    fs[F_DELTA] = 0.0
    return True


@njit(cache=True, nogil=True)
def exact_advance(fs, ist, u, p1, p2, death_t, kt, kv, t_target, stop_nonzero, max_steps):
    """Advance the exact flow to t_target (landing on it), stopping early when
    m' <= stop_nonzero or after max_steps steps. Deaths land exactly on C = u_k;
    death_t[k] (k in sorted order) receives each death time. lam(t) follows the knots
    (kt, kv); the flow lands on each knot (its right-hand side is smooth between)."""
    K = np.empty((N_STAGES + 1, 2))
    steps = 0
    clear_until = -math.inf  # under a ramp of λ: no death before this instant (known)
    while True:
        t = fs[F_T]
        mp = ist[I_MP]
        if mp <= stop_nonzero:
            return REACHED_NONZERO
        if t >= t_target:
            return REACHED_TARGET
        if steps >= max_steps:
            return REACHED_MAX_STEPS
        if t >= fs[F_NEXT_KNOT]:
            set_lam_piece(fs, kt, kv)  # a knot reached: the next piece
            continue
        if mp == 0:
            fs[F_T] = t_target  # nothing left to move
            set_lam_piece(fs, kt, kv)
            return REACHED_TARGET
        # this piece's end, or the target if sooner: a step never crosses a knot
        t_stop = min(t_target, fs[F_NEXT_KNOT])
        if mp == 1 and fs[F_B] > REBASE_B:
            # a_1 = B |delta| and the segment sums are 0: move B into delta
            fs[F_DELTA] *= fs[F_B]
            fs[F_LOGSHIFT] += math.log(fs[F_B])
            fs[F_B] = 1.0
        h = min(fs[F_H], t_stop - t)
        if not t + h > t:
            return REACHED_STUCK  # a step size of 0 (or NaN) would be retried forever
        delta = fs[F_DELTA]
        b = fs[F_B]
        reach = h + DEATH_SNAP * abs(t_stop) if h == t_stop - t else h
        lam = lam_now(fs, t)
        # (lam is linear on the piece: its largest over the step is at one end)
        lam_most = max(lam, lam_now(fs, t + reach))
        if lam > 0.0 and t_stop > clear_until and delta + 1.05 * reach * lam_most / b >= 0.0:
            # the next death is (probably) within this step: land on it exactly
            steps += 1
            if _integrate_to_death(fs, ist, t_stop, K):
                _kill_at_cref(fs, ist, u, p1, p2, death_t)
                continue
            # it dies after t_stop: step to t_stop (under a ramp of λ at most the step
            # size the control allows: the whole way may be refused again and again)
            if fs[F_SLOPE] == 0.0:
                h = t_stop - t
            else:
                h = min(fs[F_H], t_stop - t)
                clear_until = t_stop
        nb, nd, err = _dop853_step(
            0, t, b, delta, h, fs[F_LAM], mp, fs[F_SUMD], fs[F_SUMD2], K, 0.0, fs[F_SLOPE], fs[F_LAM_T0]
        )
        ist[I_STEPS] += 1
        steps += 1
        if err <= 1.0 and nd < 0.0:
            fs[F_T] = t_stop if h == t_stop - t else t + h
            fs[F_B] = nb
            fs[F_DELTA] = nd
            # a step clipped to land on t_target says little about the next one
            if h >= fs[F_H]:
                fs[F_H] = h * _grow_factor(err)
        elif err <= 1.0:
            fs[F_H] = 0.5 * h  # crossed a death the prediction missed: retry smaller
        else:
            fs[F_H] = h * _shrink_factor(err)


@njit(cache=True, nogil=True)
def exact_abs_at_ranks(fs, ist, u, ranks, out):
    """|W| at the given sorted ranks, without materialising the whole vector."""
    mp = ist[I_MP]
    b = fs[F_B]
    c_ref = fs[F_CREF]
    delta = fs[F_DELTA]
    for i in range(ranks.shape[0]):
        k = ranks[i]
        if k < mp:
            out[i] = b * ((u[k] - c_ref) - delta)
        else:
            out[i] = 0.0


@njit(cache=True, nogil=True)
def exact_moments(fs, ist):
    """(m', ||W||_1, ||W||^2) from the segment sums: O(1)."""
    mp = ist[I_MP]
    if mp == 0:
        return 0, 0.0, 0.0
    b = fs[F_B]
    sd = fs[F_SUMD]
    sd2 = fs[F_SUMD2]
    delta = fs[F_DELTA]
    l1 = b * (sd - mp * delta)
    n2 = b * b * (sd2 - 2.0 * delta * sd + mp * delta * delta)
    return mp, l1, n2


# ----------------------------------------------------------------------------------
# Gradient descent: W <- W + eta*[(1 - ||W||^2) W - lam sign(W)], a weight whose step
# would cross zero set to zero. On sorted |W| one step is a*g - h with g = 1 + eta*s,
# so order is kept and the dead are a suffix: one fused pass over the survivors that
# also accumulates the next ||W||^2.


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz", "arcp"})
def _gd_pass(a, mp, g, h):
    acc = 0.0
    for k in range(mp):
        v = a[k] * g - h
        v = v if v > 0.0 else 0.0
        a[k] = v
        acc += v * v
    return acc


@njit(cache=True, nogil=True)
def gd_run(a, mp, norm2, n_steps, eta, kt, kv, t_eta0, s0, step0, death_step, stop_nonzero):
    """n_steps of GD on sorted |W| (survivors a[:mp]), stopping after the step that
    brings m' to stop_nonzero or below; returns (mp, norm2, steps_done, unstable, low).
    Step n is taken at t = t_eta0 + eta (s0 + n) with lam(t) through the knots (kt, kv).
    unstable is True when a step flipped the sign of every weight (1 + eta*(1 - ||W||^2)
    <= 0), which the zero rule turns into instant death. low is the last step (1-based, 0
    if none) taken with 0 < 1 + eta*(1 - ||W||^2) < 1/2 while weights were alive: an
    overshoot of ||W||^2 past 1 that more than halves every weight in one step."""
    lam, slope, t0, end = lam_piece(kt, kv, t_eta0 + eta * s0)
    h = eta * lam
    low = 0
    for n in range(n_steps):
        t = t_eta0 + eta * (s0 + n)
        if t >= end:
            lam, slope, t0, end = lam_piece(kt, kv, t)
        h = eta * (lam + slope * (t - t0)) if slope != 0.0 else eta * lam
        g = 1.0 + eta * (1.0 - norm2)
        if not (g > 0.0) and mp > 0:
            for k in range(mp):
                a[k] = 0.0
                death_step[k] = step0 + n + 1
            return 0, 0.0, n + 1, True, low
        if g < 0.5 and mp > 0:
            low = n + 1
        norm2 = _gd_pass(a, mp, g, h)
        while mp > 0 and a[mp - 1] <= 0.0:
            mp -= 1
            death_step[mp] = step0 + n + 1
        if mp <= stop_nonzero:
            return mp, norm2, n + 1, False, low
    return mp, norm2, n_steps, False, low


@njit(cache=True, nogil=True)
def sorted_moments(a, mp):
    """(||W||_1, ||W||^2) of a[:mp]."""
    l1 = 0.0
    n2 = 0.0
    for k in range(mp):
        l1 += a[k]
        n2 += a[k] * a[k]
    return l1, n2
