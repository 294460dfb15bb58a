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

Z and R^T A are BLAS products while many units are kept, and loops over the kept units
(`MechanismState.sparse_below`) when few are: TopK with a small K, a trained JumpReLU.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

THRESHOLD_RAIL_DEFINITION = (
    "among the thresholds that moved at a step, the share whose stored parameter (theta, or "
    "log theta) moved by at least lr/2 (Adam at its usual largest rate); past the rail: by more than lr"
)
# the mask's share of kept units under which Z and R^T A are loops over the kept units
SPARSE_BELOW = 0.125


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


@njit(cache=True, nogil=True)
def topk_mask(W, k, mask, kth):
    """mask[i] = 1 on the k largest |W_ik| of row i (ties: the lower index kept), else 0;
    kth[i] = the k-th largest |W_ik| (the threshold TopK applies). Returns the units kept."""
    n, m = W.shape
    buf = np.empty(m)
    for i in range(n):
        for q in range(m):
            buf[q] = abs(W[i, q])
        t = _kth_largest(buf, k)
        kept = 0
        for q in range(m):
            on = abs(W[i, q]) > t
            mask[i, q] = 1.0 if on else 0.0
            kept += 1 if on else 0
        for q in range(m):  # the ties at t, in index order, until k are kept
            if kept == k:
                break
            if abs(W[i, q]) == t:
                mask[i, q] = 1.0
                kept += 1
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
def _kept_gram(W, WT, mask, Z):
    """Z = A W^T, A = mask * W, summed over the kept units of each row alone."""
    n, m = W.shape
    Z[:, :] = 0.0
    for i in range(n):
        for k in range(m):
            if mask[i, k] != 0.0:
                a = W[i, k]
                for j in range(n):
                    Z[i, j] += a * WT[k, j]


@njit(cache=True, nogil=True)
def _kept_decoder(W, mask, R, RtAT):
    """RtAT = (R^T A)^T = A^T R (m x n), over the kept units alone."""
    n, m = W.shape
    RtAT[:, :] = 0.0
    for i in range(n):
        for k in range(m):
            if mask[i, k] != 0.0:
                a = W[i, k]
                for j in range(n):
                    RtAT[k, j] += a * R[i, j]


@njit(cache=True, nogil=True, error_model="numpy")
def _combine(W, mask, RW, RtAT, push, theta, dtheta, eps, l0, jump):
    """push = (mask * RW + R^T A) / 4 (the optimizer step's whole gradient, divided by 4) and,
    for JumpReLU, dtheta = dL/dtheta (module docstring)."""
    n, m = W.shape
    if jump:
        dtheta[:] = 0.0
    for i in range(n):
        for k in range(m):
            rw = RW[i, k]
            if jump:
                x = W[i, k]
                if abs((abs(x) - theta[k]) / eps) < 0.5:
                    sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
                    dtheta[k] += -rw * sx * theta[k] / eps - l0 / eps
            push[i, k] = (mask[i, k] * rw + RtAT[k, i]) * 0.25


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
        self.l0 = params.l0
        theta0 = params.threshold_init
        self.phi = np.full(m, math.log(theta0) if self.log_theta else theta0)
        self.theta0 = self.phi.copy()  # the rail's start, in phi
        self.mom1 = np.zeros(m)
        self.mom2 = np.zeros(m)
        self.dtheta = np.zeros(m)
        # thresholds moved, moved at the rail (>= lr/2), past it (> lr): over the run
        self.moves = np.zeros(3, dtype=np.int64)
        self.kth = np.full(n, math.nan)  # TopK: the k-th largest |h| of each input
        self.mask = np.ones((n, m), dtype=dtype)
        self.kept = n * m
        self._A = np.empty((n, m), dtype=dtype)
        self._Z = np.empty((n, n), dtype=dtype)
        self._RW = np.empty((n, m), dtype=dtype)
        self._RtAT = np.empty((m, n), dtype=dtype)
        self.sparse_below = SPARSE_BELOW
        self.sparse_steps = 0  # steps whose products were loops over the kept units

    @property
    def theta(self) -> np.ndarray:
        return np.exp(self.phi) if self.log_theta else self.phi.copy()

    def update_mask(self, W: np.ndarray) -> int:
        if self.jump:
            self.kept = int(jump_mask(W, self.theta, self.mask))
        else:
            self.kept = int(topk_mask(W, self.k, self.mask, self.kth))
        return self.kept

    def gradient(self, W: np.ndarray, push: np.ndarray) -> None:
        """push = dL/dW / 4 of the reconstruction (module docstring) and, for JumpReLU,
        dtheta = dL/dphi (the L0 penalty's part included), at W."""
        self.update_mask(W)
        Z, RW, RtAT = self._Z, self._RW, self._RtAT
        sparse = self.kept < self.sparse_below * W.size
        if sparse:
            self.sparse_steps += 1
            _kept_gram(W, np.ascontiguousarray(W.T), self.mask, Z)
        else:
            np.multiply(W, self.mask, out=self._A)
            np.matmul(self._A, W.T, out=Z)
        _residuals(Z, self.interference)
        np.matmul(Z, W, out=RW)
        if sparse:
            _kept_decoder(W, self.mask, Z, RtAT)
        else:
            np.matmul(self._A.T, Z, out=RtAT)
        theta = self.theta
        _combine(W, self.mask, RW, RtAT, push, theta, self.dtheta, self.bandwidth, self.l0, self.jump)
        if self.jump and self.log_theta:
            self.dtheta *= theta  # d/dlog theta = theta d/dtheta

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

    @property
    def penalty(self) -> float:
        """C times the units kept (JumpReLU's L0 penalty; 0 for TopK), at the last mask."""
        return self.l0 * self.kept if self.jump else 0.0


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
