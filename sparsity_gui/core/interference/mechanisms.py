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
(`MechanismState.sparse_below`: TopK with K up to about m/4, a trained JumpReLU): the kept
units listed in the one pass over H that selects them (kept_selection.py), Z and R^T A over
them alone, R W only where the gradient uses it (the kept units and, for JumpReLU, the
kernel's band; kept_products.py), or, while R is mostly zero (RESIDUALS_BELOW: TopK once
trained), R W and R^T A as sums of the rows of W and A that R's nonzeros reach
(residual_products.py). The BLAS products do about twice l1's work (three
products where l1 has a symmetric one and one); docs/benchmarks.md has what each part costs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sparsity_gui.core.interference.kept_products import (
    PUSH_UNITS_A_TILE,
    kept_gram,
    kept_products,
    transpose_into,
)
from sparsity_gui.core.interference.kept_selection import by_unit, in_band, jump_mask, kept_lists, topk_mask
from sparsity_gui.core.interference.residual_products import (
    fill_activations,
    residual_lists,
    residual_products,
)

THRESHOLD_RAIL_DEFINITION = (
    "among the thresholds that moved at a step, the share whose stored parameter (theta, or "
    "log theta) moved by at least lr/2 (Adam at its usual largest rate); past the rail: by more than lr"
)
# the mask's share of kept units under which the products are loops over the kept units
# (the crossover measured at n = 256, m = 1024 by benchmarks/bench_interference.py's
# mechanisms section: between 0.25 and 0.35 kept, under load)
SPARSE_BELOW = 0.3
# the loops path's R W and R^T A run over R's nonzeros (residual_products.py) while
# nonzeros(R) m < RESIDUALS_BELOW (needed + kept) n, over the kept units (kept_products.py)
# otherwise: the work of each, weighted by its rate measured at n = 256, m = 1024 (rows of
# W and A summed from outside the cache run at about a third of the unit loops' rate per
# multiply-add; TopK K = 256 once trained, R 6 % nonzero: 2.4 against 6 ms, under load)
RESIDUALS_BELOW = 1.0 / 3.0


@njit(cache=True, nogil=True)
def _residuals(Z, interference):
    """Z -> R in place: R_ij = 2 (ReLU(z_ij) - delta_ij) 1[z_ij > 0], 0 off the diagonal
    without interference. Returns R's nonzeros."""
    n = Z.shape[0]
    nonzero = 0
    for i in range(n):
        for j in range(n):
            z = Z[i, j]
            if not (z > 0.0) or (i != j and not interference):
                Z[i, j] = 0.0
            else:
                Z[i, j] = 2.0 * (z - (1.0 if i == j else 0.0))
                nonzero += 1 if Z[i, j] != 0.0 else 0
    return nonzero


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
                if in_band(x, theta[k], eps):
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


# residual_products' scratch: A, a row of R W, residual_lists' six arrays and its counts
ResidualScratch = tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...], np.ndarray]


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
        self._loops: tuple[np.ndarray, ...] | None = None  # W^T and kept_lists' arrays
        self._residual: ResidualScratch | None = None
        self.sparse_below = SPARSE_BELOW
        self.residuals_below = RESIDUALS_BELOW
        self.sparse_steps = 0  # steps whose products were loops over the kept units
        self.residual_steps = 0  # ... of which R W and R^T A ran over R's nonzeros

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
        ``xi`` (the step's noise, sigma included) through the hidden layer H = W + xi. The
        path follows the units kept: TopK's n k, JumpReLU's at the last mask (the loops
        path counts them without writing ``mask``, which update_mask refreshes)."""
        H = W
        if xi is not None:
            if self._H is None:
                self._H = np.empty_like(W)
            H = np.add(W, xi.astype(W.dtype, copy=False)[None, :], out=self._H)
        theta = self.theta
        expected = self.kept if self.jump else W.shape[0] * self.k
        if expected < self.sparse_below * W.size:
            self.sparse_steps += 1
            self._dense = None  # one path's scratch at a time (about 4 n x m arrays each)
            self._loops_gradient(W, H, push, theta, l0)
        else:
            self._loops = self._residual = None
            self._dense_gradient(W, H, push, theta, l0)
        if self.jump and self.log_theta:
            self.dtheta *= theta  # d/dlog theta = theta d/dtheta

    def _dense_gradient(
        self, W: np.ndarray, H: np.ndarray, push: np.ndarray, theta: np.ndarray, l0: float
    ) -> None:
        """The gradient by three BLAS products over the whole mask."""
        self.update_mask(H)
        if self._dense is None:
            self._dense = (np.empty_like(W), np.empty_like(W), np.empty_like(W))
        A, RW, RtA = self._dense
        Z = self._Z
        np.multiply(H, self.mask, out=A)
        np.matmul(A, W.T, out=Z)
        _residuals(Z, self.interference)
        np.matmul(Z, W, out=RW)
        np.matmul(Z.T, A, out=RtA)
        dense_combine(H, self.mask, RW, RtA, push, theta, self.dtheta, self.bandwidth, l0, self.jump)

    def _loops_scratch(self, W: np.ndarray) -> tuple[np.ndarray, ...]:
        n, m = W.shape
        if self._loops is None:
            index = np.int32 if n * m < 2**31 else np.int64
            # TopK keeps every unit it needs: its kept lists are the first ones (none here)
            kept = n * m if self.jump else 0
            self._loops = (
                np.empty((m, n), dtype=W.dtype),  # W^T
                *(np.empty(n + 1, dtype=np.int64), np.empty(n * m, dtype=index)),  # by input
                *(np.empty(n + 1, dtype=np.int64), np.empty(kept, dtype=index)),  # kept, by input
                np.empty(n * m, dtype=W.dtype),  # H at the kept units
                *(np.empty(m + 1, dtype=np.int64), np.empty(n * m, dtype=index)),  # by unit
                *(np.empty(n * m, dtype=W.dtype), np.empty(n * m, dtype=np.int8)),  # H, kept there
                np.empty(m, dtype=np.int64),  # inputs that need each unit
                np.empty(m, dtype=W.dtype),  # TopK's selection
                np.empty(n, dtype=np.int64),  # kept_gram's place in each row
                np.empty((PUSH_UNITS_A_TILE, n), dtype=W.dtype),  # a tile of R^T A's columns
                np.empty(n, dtype=W.dtype),  # R W where needed, a unit's
            )
        return self._loops

    def _loops_gradient(
        self, W: np.ndarray, H: np.ndarray, push: np.ndarray, theta: np.ndarray, l0: float
    ) -> None:
        """The gradient by loops over the units where it needs R W (kept_selection.kept_lists,
        one pass over H); H is the hidden layer (W itself without noise)."""
        WT, rptr, rcol, kptr, kcol, kval, cptr, crow, cw, ckept, count, buf, cursor, tile, rws = (
            self._loops_scratch(W)
        )
        if not self.jump:
            kptr, kcol = rptr, rcol
        k, eps, jump = (0 if self.jump else self.k), self.bandwidth, self.jump
        self.kept = int(
            kept_lists(H, jump, k, theta, eps, self.kth, self.width, rptr, rcol, kptr, kcol, kval, count, buf)
        )
        transpose_into(W, WT, 1.0)
        kept_gram(WT, kptr, kcol, kval, self._Z, cursor)
        n, m = W.shape
        nonzero = _residuals(self._Z, self.interference)
        if nonzero * m < self.residuals_below * (rptr[n] + self.kept) * n:
            self.residual_steps += 1
            A, rw, R_lists, columns = self._residual_scratch(W)
            rowptr, rowcol, rowval, colptr, colrow, colval = R_lists
            residual_lists(self._Z, rowptr, rowcol, rowval, colptr, colrow, colval, columns)
            fill_activations(A, kptr, kcol, kval)
            residual_products(W, H, A, R_lists, rptr, rcol, push, rw, theta, self.dtheta, eps, l0, jump)
            return
        by_unit(H, jump, theta, rptr, rcol, count, cptr, crow, cw, ckept)
        kept_products(WT, self._Z, cptr, crow, cw, ckept, push, tile, rws, theta, self.dtheta, eps, l0, jump)

    def _residual_scratch(self, W: np.ndarray) -> ResidualScratch:
        """(A, a row of R W, residual_lists' six arrays, its count by column)."""
        if self._residual is None:
            n = W.shape[0]
            index = np.int32 if n * n < 2**31 else np.int64
            by_row = (np.empty(n + 1, dtype=np.int64), np.empty(n * n, dtype=index), np.empty(n * n, W.dtype))
            by_column = (
                np.empty(n + 1, dtype=np.int64),
                np.empty(n * n, dtype=index),
                np.empty(n * n, W.dtype),
            )
            columns = np.empty(n, dtype=np.int64)
            self._residual = (
                np.empty_like(W),
                np.empty(W.shape[1], dtype=W.dtype),
                (*by_row, *by_column),
                columns,
            )
        return self._residual

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
