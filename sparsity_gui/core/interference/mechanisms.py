"""The sparsity mechanisms beside L1 (issue 51; docs/theory.md §9): TopK and JumpReLU on the
paper's tied model y = ReLU(W a(W^T x)) over the n basis vectors, where the hidden activation
of feature i is its row, h = W_i, so a(h) acts on W itself.

The smooth gradient of sum_ij (ReLU(z_ij) - delta_ij)^2, z = A W^T with A's rows a(W_i):
R_ij = 2 (ReLU(z_ij) - delta_ij) 1[z_ij > 0] (off the diagonal 0 without interference),
    dL/dW = D * (R W) + R^T A,
the encoder side through D = da/dh (the kept units: TopK's mask; JumpReLU's H(|h| - theta),
straight through) and the decoder side through the activations themselves (the weights are
tied). JumpReLU's thresholds get, with the rectangle kernel K(u) = 1[|u| < 1/2],
    dL/dtheta_k = sum_i (R W)_ik (-sign(W_ik) theta_k / eps) K_ik - (C / eps) sum_i K_ik,
K_ik = K((|W_ik| - theta_k) / eps): the reconstruction's and the L0 penalty's
pseudo-derivatives (Rajamanoharan et al. 2024); the penalty gives W no gradient.

With noise in the hidden layer (noise.py) the noise is added to h before the mechanism, as
it is for L1: h_i = W_i + xi, TopK selects by |h| and JumpReLU gates h against theta, and
the formulas above hold with A's rows a(h_i), D and K taken at h (not W); R W and Z = A W^T
keep W, the decoder's side. xi is a draw, not a parameter: it gets no gradient.

Z, R W and R^T A are BLAS products while many units are kept, and loops when few are
(`MechanismState.sparse_below`: TopK with K up to about m/4, a trained JumpReLU): Z and R^T A
over the kept units alone, R W only where the gradient uses it (the kept units and, for
JumpReLU, the kernel's band). The BLAS products do about twice l1's work (three products
where l1 has a symmetric one and one); docs/benchmarks.md has what each part costs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

THRESHOLD_RAIL_DEFINITION = (
    "among the thresholds that moved at a step, the share whose stored parameter (theta, or "
    "log theta) moved by at least lr/2 (Adam at its usual largest rate); past the rail: by more than lr"
)
# the mask's share of kept units under which the products are loops over the kept units
# (the crossover measured at n = 256, m = 1024 by benchmarks/bench_interference.py's
# mechanisms section: between 0.25 and 0.35 kept, under load)
SPARSE_BELOW = 0.3


@njit(cache=True, nogil=True)
def _kth_largest(buf, k):
    """The k-th largest of buf (reordered in place): Hoare's quickselect, median-of-three
    pivots (np.partition in numba allocates and was 5x slower here)."""
    lo, hi = 0, buf.shape[0] - 1
    want = k - 1  # its index in decreasing order
    while lo < hi:
        mid = (lo + hi) // 2
        a, b, c = buf[lo], buf[mid], buf[hi]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while buf[i] > pivot:
                i += 1
            while buf[j] < pivot:
                j -= 1
            if i <= j:
                buf[i], buf[j] = buf[j], buf[i]
                i += 1
                j -= 1
        if want <= j:
            hi = j
        elif want >= i:
            lo = i
        else:
            break
    return buf[want]


@njit(cache=True, nogil=True, error_model="numpy")
def _kth_in_band(w, k, lo, hi, buf):
    """The k-th largest |w_q| if it lies in [lo, hi]: one pass counts the values above hi and
    gathers those in [lo, hi] (without a branch: each is written, the count moves on for
    those in the band), a quickselect over the gathered alone; -1.0 when it does not lie
    there (or w holds a NaN)."""
    above = 0
    gathered = 0
    nan = 0
    for q in range(w.shape[0]):
        x = abs(w[q])
        above += 1 if x > hi else 0
        nan += 1 if x != x else 0
        buf[gathered] = x
        gathered += 1 if (x >= lo and x <= hi) else 0
    if nan > 0 or not (above < k and k <= above + gathered):
        return -1.0
    return _kth_largest(buf[:gathered], k - above)


@njit(cache=True, nogil=True, error_model="numpy")
def _kth_largest_abs(w, k, last, width, buf):
    """(the k-th largest |w_q|, the band to search around it next time). Searched first in
    the band last -/+ width (W moves little in a step: one pass and a quickselect over a few
    values), then in bands 4 and 16 times as wide, then over the whole row: exact either way."""
    if math.isfinite(last) and math.isfinite(width):
        wide = width
        for _ in range(3):
            t = _kth_in_band(w, k, last - wide, last + wide, buf)
            if t >= 0.0:
                return t, max(0.75 * wide, 8.0 * abs(t - last))
            wide *= 4.0
    for q in range(w.shape[0]):
        buf[q] = abs(w[q])
    t = _kth_largest(buf, k)
    return t, max(8.0 * abs(t - last) if math.isfinite(last) else 0.0, 1e-3 * t)


@njit(cache=True, nogil=True, error_model="numpy")
def topk_mask(W, k, mask, kth, width):
    """mask[i] = 1 on the k largest |W_ik| of row i (ties: the lower index kept), else 0;
    kth[i] = the k-th largest |W_ik| (the threshold TopK applies), found from the last
    call's kth[i] and width[i] (_kth_largest_abs). Returns the units kept."""
    n, m = W.shape
    buf = np.empty(m)
    for i in range(n):
        t, width[i] = _kth_largest_abs(W[i], k, kth[i], width[i], buf)
        kept = 0
        for q in range(m):
            on = abs(W[i, q]) >= t
            mask[i, q] = 1.0 if on else 0.0
            kept += 1 if on else 0
        for q in range(m - 1, -1, -1):  # ties at t past the k-th: the higher indices dropped
            if kept <= k:
                break
            if abs(W[i, q]) == t:
                mask[i, q] = 0.0
                kept -= 1
        kth[i] = t
    return n * k


@njit(cache=True, nogil=True)
def jump_mask(W, theta, mask):
    """mask[i, k] = H(|W_ik| - theta_k) (H(0) = 0). Returns the units kept."""
    n, m = W.shape
    kept = 0
    for i in range(n):
        for k in range(m):
            on = abs(W[i, k]) > theta[k]
            mask[i, k] = 1.0 if on else 0.0
            kept += 1 if on else 0
    return kept


@njit(cache=True, nogil=True)
def _residuals(Z, interference):
    """Z -> R in place: R_ij = 2 (ReLU(z_ij) - delta_ij) 1[z_ij > 0], 0 off the diagonal
    without interference."""
    n = Z.shape[0]
    for i in range(n):
        for j in range(n):
            z = Z[i, j]
            if not (z > 0.0) or (i != j and not interference):
                Z[i, j] = 0.0
            else:
                Z[i, j] = 2.0 * (z - (1.0 if i == j else 0.0))


@njit(cache=True, nogil=True)
def transpose_into(src, dst, scale):
    """dst = scale src^T, by square tiles (a strided copy of the whole would miss the cache)."""
    n, m = src.shape
    tile = 8  # 32 rows at a power-of-two stride thrash the cache sets: 3x slower here
    for i0 in range(0, n, tile):
        for k0 in range(0, m, tile):
            for k in range(k0, min(k0 + tile, m)):
                for i in range(i0, min(i0 + tile, n)):
                    dst[k, i] = scale * src[i, k]


# a |d| past eps / 2 by more than rounding cannot divide to under 1/2
_NEAR_BAND = 0.5000001


@njit(cache=True, nogil=True, error_model="numpy")
def _in_band(x, theta, eps):
    """K((|x| - theta) / eps) != 0: the rectangle kernel's support (the division only near
    it)."""
    d = abs(x) - theta
    return abs(d) < _NEAR_BAND * eps and abs(d / eps) < 0.5


@njit(cache=True, nogil=True, error_model="numpy")
def needed_units(H, mask, theta, eps, jump, rptr, rcol, cptr, crow, cw, ckept):
    """Where the gradient needs (R W)_ik: the kept units and, for JumpReLU, those in the
    threshold kernel's band (and the few just past it that _in_band tells apart later,
    so that no division is done here); by input (rptr, rcol) and by unit (cptr, crow, inputs in
    increasing order, with the hidden layer's H_ik and mask_ik beside: cw, ckept, read in order
    later rather than down H's columns). Returns how many."""
    n, m = H.shape
    count = 0
    for i in range(n):
        rptr[i] = count
        for k in range(m):  # each written, the count moving on where needed: no branch
            rcol[count] = k
            near = jump and abs(abs(H[i, k]) - theta[k]) < _NEAR_BAND * eps
            count += 1 if mask[i, k] != 0.0 or near else 0
    rptr[n] = count
    cptr[:] = 0
    for e in range(count):
        cptr[rcol[e] + 1] += 1
    for k in range(m):
        cptr[k + 1] += cptr[k]
    for i in range(n):  # in increasing i, so each unit's inputs come in order
        for e in range(rptr[i], rptr[i + 1]):
            k = rcol[e]
            at = cptr[k]
            crow[at] = i
            cw[at] = H[i, k]
            ckept[at] = 1 if mask[i, k] != 0.0 else 0
            cptr[k] = at + 1
    for k in range(m - 1, -1, -1):  # the fill moved each start to the next's
        cptr[k + 1] = cptr[k]
    cptr[0] = 0
    return count


# kept_gram's units a block: their rows of W^T (128 x n) stay in the cache for every input
GRAM_UNITS_A_BLOCK = 128


@njit(cache=True, nogil=True, error_model="numpy")
def _next_kept(i, e, last, end, rcol, mask):
    """The next place from e on in row i's list (rcol[e:last]) that is kept and below unit
    ``end``, or the first at or past ``end`` (or last) when there is none."""
    while e < last and rcol[e] < end and mask[i, rcol[e]] == 0.0:
        e += 1
    return e


@njit(cache=True, nogil=True, error_model="numpy")
def kept_gram(H, WT, mask, rptr, rcol, Z, cursor):
    """Z = A W^T, A = mask * H, summed over the kept units of each row alone, in increasing
    unit order: by blocks of units (their rows of W^T stay in the cache), four units a pass
    over Z's row (a quarter of its loads and stores)."""
    n, m = H.shape
    Z[:, :] = 0.0
    cursor[:n] = rptr[:n]
    for k0 in range(0, m, GRAM_UNITS_A_BLOCK):
        end = k0 + GRAM_UNITS_A_BLOCK
        for i in range(n):
            z = Z[i]
            e, last = cursor[i], rptr[i + 1]
            e = _next_kept(i, e, last, end, rcol, mask)
            while e < last and rcol[e] < end:
                e2 = _next_kept(i, e + 1, last, end, rcol, mask)
                e3 = _next_kept(i, e2 + 1, last, end, rcol, mask)
                e4 = _next_kept(i, e3 + 1, last, end, rcol, mask)
                if e4 < last and rcol[e4] < end:
                    u1, u2, u3, u4 = rcol[e], rcol[e2], rcol[e3], rcol[e4]
                    w1, w2, w3, w4 = WT[u1], WT[u2], WT[u3], WT[u4]
                    a1, a2, a3, a4 = H[i, u1], H[i, u2], H[i, u3], H[i, u4]
                    for j in range(n):
                        z[j] = z[j] + a1 * w1[j] + a2 * w2[j] + a3 * w3[j] + a4 * w4[j]
                    e = _next_kept(i, e4 + 1, last, end, rcol, mask)
                else:  # fewer than four left in the block: one at a time
                    a1, w1 = H[i, rcol[e]], WT[rcol[e]]
                    for j in range(n):
                        z[j] += a1 * w1[j]
                    e = _next_kept(i, e + 1, last, end, rcol, mask)
            cursor[i] = e


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "nsz", "contract"})
def kept_products(WT, R, cptr, crow, cw, ckept, RtAT, rws, theta, dtheta, eps, l0, jump):
    """Unit by unit: (R W)_ik = R_i . W^T_k at the places needed_units put there (into
    ``rws``, n long; summed in whatever order vectorises, as BLAS's products are), RtAT[k] =
    (R^T A)[:, k] (summed over the inputs i that keep k, in increasing order) + (mask *
    R W)[:, k], which is push^T times 4, and for JumpReLU dtheta[k] (module docstring).
    Four inputs a pass over the unit's row."""
    m, n = WT.shape
    if jump:
        dtheta[:] = 0.0
    for k in range(m):
        acc = RtAT[k]
        acc[:] = 0.0
        wk = WT[k]
        first, last = cptr[k], cptr[k + 1]
        e = first
        while e + 4 <= last:
            i1, i2, i3, i4 = crow[e], crow[e + 1], crow[e + 2], crow[e + 3]
            r1, r2, r3, r4 = R[i1], R[i2], R[i3], R[i4]
            a1 = cw[e] if ckept[e] != 0 else 0.0
            a2 = cw[e + 1] if ckept[e + 1] != 0 else 0.0
            a3 = cw[e + 2] if ckept[e + 2] != 0 else 0.0
            a4 = cw[e + 3] if ckept[e + 3] != 0 else 0.0
            d1 = d2 = d3 = d4 = 0.0
            for j in range(n):
                w = wk[j]
                d1 += r1[j] * w
                d2 += r2[j] * w
                d3 += r3[j] * w
                d4 += r4[j] * w
                acc[j] = acc[j] + a1 * r1[j] + a2 * r2[j] + a3 * r3[j] + a4 * r4[j]
            at = e - first
            rws[at], rws[at + 1], rws[at + 2], rws[at + 3] = d1, d2, d3, d4
            e += 4
        while e < last:
            i = crow[e]
            r = R[i]
            a = cw[e] if ckept[e] != 0 else 0.0
            d = 0.0
            for j in range(n):
                d += r[j] * wk[j]
                acc[j] += a * r[j]
            rws[e - first] = d
            e += 1
        th = theta[k] if jump else 0.0
        for e in range(first, last):  # the kept units' R W beside their R^T A
            rw = rws[e - first]
            if ckept[e] != 0:
                acc[crow[e]] += rw
            x = cw[e]
            if jump and _in_band(x, th, eps):
                sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
                dtheta[k] += -rw * sx * th / eps - l0 / eps


@njit(cache=True, nogil=True, error_model="numpy")
def dense_combine(H, mask, RW, RtA, push, theta, dtheta, eps, l0, jump):
    """push = (mask * RW + R^T A) / 4 and, for JumpReLU, dtheta = dL/dtheta at the hidden
    layer H (module docstring), from the whole products."""
    n, m = H.shape
    if jump:
        dtheta[:] = 0.0
    for i in range(n):
        for k in range(m):
            rw = RW[i, k]
            if jump:
                x = H[i, k]
                if _in_band(x, theta[k], eps):
                    sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
                    dtheta[k] += -rw * sx * theta[k] / eps - l0 / eps
            push[i, k] = (mask[i, k] * rw + RtA[i, k]) * 0.25


@njit(cache=True, nogil=True, error_model="numpy")
def threshold_step(phi, grad, mom1, mom2, opt_code, t, lr, beta1, beta2, eps, moves):
    """One step of the thresholds' stored parameter phi (theta or log theta) by the run's
    optimizer, without weight decay: gradient descent for gd-zero, gd and ISTA (no L1 acts
    on phi), lr sign(grad) for signSGD, torch's Adam for adam and adamw. Adds to ``moves``
    (thresholds moved, moved by at least lr/2, moved by more than lr)."""
    if opt_code >= 2 and opt_code <= 3:
        bc1 = 1.0 - beta1**t
        bc2 = math.sqrt(1.0 - beta2**t)
        step_size = lr / bc1
    for k in range(phi.shape[0]):
        g = grad[k]
        old = phi[k]
        if opt_code == 5:
            phi[k] = old - lr * ((1.0 if g > 0.0 else 0.0) - (1.0 if g < 0.0 else 0.0))
        elif opt_code >= 2 and opt_code <= 3:
            a = beta1 * mom1[k] + (1.0 - beta1) * g
            b = beta2 * mom2[k] + (1.0 - beta2) * g * g
            mom1[k] = a
            mom2[k] = b
            phi[k] = old - step_size * a / (math.sqrt(b) / bc2 + eps)
        else:
            phi[k] = old - lr * g
        move = abs(phi[k] - old)
        if move > 0.0:
            moves[0] += 1
            moves[1] += 1 if move >= 0.5 * lr else 0
            moves[2] += 1 if move > lr else 0


class MechanismState:
    """TopK's or JumpReLU's part of a run: the mask of kept units, the thresholds (their
    stored parameter and its optimizer state) and the scratch of the products."""

    def __init__(self, params, dtype: np.dtype):
        n, m = params.n, params.m
        self.sparsity = params.sparsity
        self.k = params.k
        self.interference = params.interference and n > 1
        self.jump = params.sparsity == "jumprelu"
        self.log_theta = params.threshold_param == "log"
        self.bandwidth = params.bandwidth
        theta0 = params.threshold_init
        self.phi = np.full(m, math.log(theta0) if self.log_theta else theta0)
        self.theta0 = self.phi.copy()  # the rail's start, in phi
        self.mom1 = np.zeros(m)
        self.mom2 = np.zeros(m)
        self.dtheta = np.zeros(m)
        # thresholds moved, moved at the rail (>= lr/2), past it (> lr): over the run
        self.moves = np.zeros(3, dtype=np.int64)
        self.kth = np.full(n, math.nan)  # TopK: the k-th largest |h| of each input
        self.width = np.zeros(n)  # TopK: the band around kth searched first (topk_mask)
        self.mask = np.ones((n, m), dtype=dtype)
        self.kept = n * m
        self._Z = np.empty((n, n), dtype=dtype)
        self._H: np.ndarray | None = None  # the hidden layer W + xi of a noisy step
        self._dense: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # A, R W, R^T A
        self._loops: tuple[np.ndarray, ...] | None = None  # W^T and needed_units' arrays
        self.sparse_below = SPARSE_BELOW
        self.sparse_steps = 0  # steps whose products were loops over the kept units

    @property
    def theta(self) -> np.ndarray:
        return np.exp(self.phi) if self.log_theta else self.phi.copy()

    def update_mask(self, W: np.ndarray) -> int:
        if self.jump:
            self.kept = int(jump_mask(W, self.theta, self.mask))
        else:
            self.kept = int(topk_mask(W, self.k, self.mask, self.kth, self.width))
        return self.kept

    def gradient(self, W: np.ndarray, push: np.ndarray, l0: float, xi: np.ndarray | None = None) -> None:
        """push = dL/dW / 4 of the reconstruction (module docstring) and, for JumpReLU,
        dtheta = dL/dphi (the L0 penalty's part at coefficient ``l0`` included), at W; with
        ``xi`` (the step's noise, sigma included) through the hidden layer H = W + xi."""
        H = W
        if xi is not None:
            if self._H is None:
                self._H = np.empty_like(W)
            H = np.add(W, xi.astype(W.dtype, copy=False)[None, :], out=self._H)
        self.update_mask(H)
        theta = self.theta
        Z = self._Z
        if self.kept < self.sparse_below * W.size:
            self.sparse_steps += 1
            self._dense = None  # one path's scratch at a time (about 4 n x m arrays each)
            self._loops_gradient(W, H, push, theta, l0)
        else:
            self._loops = None
            if self._dense is None:
                self._dense = (np.empty_like(W), np.empty_like(W), np.empty_like(W))
            A, RW, RtA = self._dense
            np.multiply(H, self.mask, out=A)
            np.matmul(A, W.T, out=Z)
            _residuals(Z, self.interference)
            np.matmul(Z, W, out=RW)
            np.matmul(Z.T, A, out=RtA)
            dense_combine(H, self.mask, RW, RtA, push, theta, self.dtheta, self.bandwidth, l0, self.jump)
        if self.jump and self.log_theta:
            self.dtheta *= theta  # d/dlog theta = theta d/dtheta

    def _loops_gradient(
        self, W: np.ndarray, H: np.ndarray, push: np.ndarray, theta: np.ndarray, l0: float
    ) -> None:
        """The gradient by loops over the units where it needs R W (needed_units); H is the
        hidden layer (W itself without noise)."""
        n, m = W.shape
        if self._loops is None:
            index = np.int32 if n * m < 2**31 else np.int64
            self._loops = (
                np.empty((m, n), dtype=W.dtype),  # W^T
                np.empty(n + 1, dtype=np.int64),
                np.empty(n * m, dtype=index),
                np.empty(m + 1, dtype=np.int64),
                np.empty(n * m, dtype=index),
                np.empty((m, n), dtype=W.dtype),  # (R^T A)^T
                np.empty(n, dtype=W.dtype),  # R W where needed, a unit's
                np.empty(n * m, dtype=W.dtype),  # W at the needed places, by unit
                np.empty(n * m, dtype=np.int8),  # the mask there
                np.empty(n, dtype=np.int64),  # kept_gram's place in each row
            )
        WT, rptr, rcol, cptr, crow, RtAT, rws, cw, ckept, cursor = self._loops
        transpose_into(W, WT, 1.0)
        needed_units(H, self.mask, theta, self.bandwidth, self.jump, rptr, rcol, cptr, crow, cw, ckept)
        kept_gram(H, WT, self.mask, rptr, rcol, self._Z, cursor)
        _residuals(self._Z, self.interference)
        kept_products(
            WT,
            self._Z,
            cptr,
            crow,
            cw,
            ckept,
            RtAT,
            rws,
            theta,
            self.dtheta,
            self.bandwidth,
            l0,
            self.jump,
        )
        transpose_into(RtAT, push, 0.25)

    def threshold_step(
        self, opt_code: int, t: int, lr: float, beta1: float, beta2: float, eps: float
    ) -> None:
        if self.jump:
            threshold_step(
                self.phi, self.dtheta, self.mom1, self.mom2, opt_code, t, lr, beta1, beta2, eps, self.moves
            )

    def reconstruction_loss(self, W: np.ndarray) -> float:
        """sum_ij (ReLU(z_ij) - delta_ij)^2 at W (off the diagonal only with interference)."""
        self.update_mask(W)
        with np.errstate(all="ignore"):
            Z = (W * self.mask) @ W.T
            loss = float(np.sum((np.maximum(np.diagonal(Z), 0.0) - 1.0) ** 2))
            if self.interference:
                np.fill_diagonal(Z, 0.0)
                loss += float(np.sum(np.maximum(Z, 0.0) ** 2))
        return loss

    def penalty(self, l0: float) -> float:
        """``l0`` times the units kept (JumpReLU's L0 penalty; 0 for TopK), at the last mask."""
        return l0 * self.kept if self.jump else 0.0


# what a TopK or JumpReLU run records beside its history (run.HISTORY_COLUMNS), at the same
# steps: the units kept, and the thresholds (JumpReLU's theta_k; TopK's k-th largest |h| of
# each input) as a median and 10-90 % band with one tracked unit (input) 0; the threshold
# steps so far that moved, moved at the rail (>= lr/2) and past it (> lr)
SPARSITY_COLUMNS = (
    *("step", "l0_per_input", "dead_units"),
    *("threshold_median", "threshold_p10", "threshold_p90", "threshold_tracked"),
    *("thresholds_moved", "thresholds_at_rail", "thresholds_past_rail"),
)


class SparsityHistory:
    """SPARSITY_COLUMNS at each recorded step, and every threshold there (``thresholds``:
    rows of step then theta_1..m, or step then the k-th largest |h| of inputs 1..n)."""

    def __init__(self, run, capacity: int):
        from sparsity_gui.core.history import History

        self.run = run
        mechanism = run.mechanism
        width = run.params.m if mechanism.jump else run.params.n
        self.rows = History(len(SPARSITY_COLUMNS), capacity)
        self.thresholds = History(1 + width, max(16, min(capacity, 2**22 // (1 + width))))
        self.append()

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """(the row of SPARSITY_COLUMNS, the thresholds) at the run's W now."""
        from sparsity_gui.core.interference.readouts import dead_units, l0_per_input

        mechanism = self.run.mechanism
        mechanism.update_mask(self.run.W)
        values = mechanism.theta if mechanism.jump else mechanism.kth.copy()
        with np.errstate(all="ignore"):
            p10, median, p90 = np.percentile(values, [10.0, 50.0, 90.0])
        row = np.array(
            [
                self.run.step,
                l0_per_input(mechanism.mask),
                dead_units(mechanism.mask),
                median,
                p10,
                p90,
                values[0],
                *mechanism.moves,
            ],
            dtype=float,
        )
        return row, values

    def append(self) -> None:
        row, values = self.current()
        self.rows.append(row)
        self.thresholds.append(np.concatenate(([float(self.run.step)], values)))
