"""The interference model's numba kernels: one step of each integrator over every row, the
interference push as two matrix products, and the counts (active weights, polysemantic
neurons, colliding pairs). Formulas: docs/theory.md §5.

Integrators (``optimizer``):
  gd-zero  W <- W + eta [(1 - |W_i|^2) W - I - lam sign W], and a weight whose step would
           cross zero is set to zero (the note's 1[W != 0] rule). A weight at zero feels
           the L1 subgradient: it leaves zero only when the interference push exceeds lam.
           With n = 1, or interference off, this is exactly the core's GD step.
  gd       the same step with sign(0) = 0 and no zero rule (weights chatter around zero).
  adam     torch.optim.Adam on the network loss's gradient (L2 weight decay, default 0).
  adamw    torch.optim.AdamW (decoupled weight decay, torch's default 0.01): the paper's.
  ista     proximal gradient: the gradient step on the smooth loss, then soft-thresholding
           by lr l1 (a weight whose smooth step crosses zero may land on the other side,
           where gd-zero stops it at zero).
  signsgd  W <- W - lr sign(gradient) (signum without momentum), sign(0) = 0.

"Active" and "polysemantic" follow the paper's code: a weight is active when
0.8 <= |w| <= 1.2; a neuron is polysemantic when more than one feature is active on it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sparsity_gui.core.interference.params import OPTIMIZERS

OPT_CODE = {name: code for code, name in enumerate(OPTIMIZERS)}
ACTIVE_LO = 0.8
ACTIVE_HI = 1.2


STOP_NONE, STOP_GAIN, STOP_WIPED, STOP_NONFINITE = 0, 1, 2, 3
# the sparse kernel's own reasons to hand back before a step (W untouched by that step)
STOP_DENSE, STOP_ROOM = 4, 5

# --- kernels -------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def row_norms2(W):
    """|W_i|^2 per row, summed in index order (the order the step kernel uses)."""
    n, m = W.shape
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for k in range(m):
            acc += W[i, k] * W[i, k]
        out[i] = acc
    return out


@njit(cache=True, nogil=True)
def _relu_off_diagonal(G):
    n = G.shape[0]
    for i in range(n):
        for j in range(n):
            if i == j or not (G[i, j] > 0.0):
                G[i, j] = 0.0


def interference_push(W: np.ndarray, out: np.ndarray, gram: np.ndarray | None = None) -> None:
    """out = sum_{j != i} ReLU(W_i . W_j) W_j, as two matrix products. numpy computes
    W @ W.T as a symmetric product (BLAS syrk, half the work of the gemm numba's np.dot
    would call: 12-15 % of a whole step at n = 256, m = 1024, measured); both products
    release the GIL. ``gram`` is optional n x n scratch."""
    n = W.shape[0]
    G = np.empty((n, n), dtype=W.dtype) if gram is None else gram
    np.matmul(W, W.T, out=G)
    _relu_off_diagonal(G)
    np.matmul(G, W, out=out)


# The per-row passes are branch-free loops over contiguous rows so that LLVM vectorises
# them (error_model="numpy": no zero-division check in the way); |W_i|^2 is summed in a
# separate loop, in index order, so results do not depend on the vector width.
@njit(cache=True, nogil=True, error_model="numpy")
def _sum_squares(w):
    acc = 0.0
    for k in range(w.shape[0]):
        acc += w[k] * w[k]
    return acc


@njit(cache=True, nogil=True, error_model="numpy")
def _gd_zero_row(w, p, g, eta, h):
    """v = w g - eta p, then the L1 step of size h towards zero, stopping at zero. A weight
    at zero takes the sign of its push: it leaves zero only if |eta p| > h (subgradient).
    Returns how many nonzero weights the push alone carried across zero (s v < 0), which
    L1, stopping at zero, never does."""
    crossed = 0
    for k in range(w.shape[0]):
        x = w[k]
        v = x * g - eta * p[k]
        sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
        sv = (1.0 if v > 0.0 else 0.0) - (1.0 if v < 0.0 else 0.0)
        s = sx if x != 0.0 else sv
        crossed += 1 if s * v < 0.0 else 0
        w[k] = s * max(s * v - h, 0.0) + 0.0  # + 0.0: no negative zeros
    return crossed


@njit(cache=True, nogil=True, error_model="numpy")
def _gd_row(w, p, g, eta, h):
    for k in range(w.shape[0]):
        x = w[k]
        sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
        w[k] = x * g - eta * p[k] - h * sx


@njit(cache=True, nogil=True, error_model="numpy")
def _ista_row(w, p, g, eta, h):
    """The smooth step v = w g - eta p, then soft-thresholding: sign(v) max(|v| - h, 0)."""
    for k in range(w.shape[0]):
        v = w[k] * g - eta * p[k]
        sv = (1.0 if v > 0.0 else 0.0) - (1.0 if v < 0.0 else 0.0)
        w[k] = sv * max(sv * v - h, 0.0) + 0.0  # + 0.0: no negative zeros


@njit(cache=True, nogil=True, error_model="numpy")
def _signsgd_row(w, p, c, l1, lr):
    """w - lr sign(gradient), the gradient 4 [-(1 - |W_i|^2) W_i + push_i] + l1 sign(W_i)."""
    for k in range(w.shape[0]):
        x = w[k]
        sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
        gr = c * x + 4.0 * p[k] + l1 * sx
        sg = (1.0 if gr > 0.0 else 0.0) - (1.0 if gr < 0.0 else 0.0)
        w[k] = x - lr * sg


@njit(cache=True, nogil=True, error_model="numpy")
def _adam_row(w, p, m1, m2, c, l1, factor, decoupled, beta1, beta2, step_size, bc2, eps):
    """torch.optim.Adam (decoupled=False: L2 decay factor * w added to the gradient) or
    AdamW (w scaled by factor = 1 - lr wd first) on one row; the gradient is the network
    loss's, 4 [-(1 - |W_i|^2) W_i + push_i] + l1 sign(W_i), taken before the decay."""
    for k in range(w.shape[0]):
        x = w[k]
        sx = (1.0 if x > 0.0 else 0.0) - (1.0 if x < 0.0 else 0.0)
        gr = c * x + 4.0 * p[k] + l1 * sx
        if decoupled:
            x = x * factor
        else:
            gr = gr + factor * x
        a = beta1 * m1[k] + (1.0 - beta1) * gr
        b = beta2 * m2[k] + (1.0 - beta2) * gr * gr
        m1[k] = a
        m2[k] = b
        w[k] = x - step_size * a / (math.sqrt(b) / bc2 + eps)


@njit(cache=True, nogil=True)
def _gd_rows(W, norm2, push, opt_code, eta, h, whole):
    """One step of gd-zero, gd or ISTA over every row; True when a gd-zero step wiped a row
    whose weights the push carried across zero (train_steps' STOP_WIPED)."""
    wiped = False
    for i in range(W.shape[0]):
        g = 1.0 if whole else 1.0 + eta * (1.0 - norm2[i])
        crossed = 0
        if opt_code == 0:
            crossed = _gd_zero_row(W[i], push[i], g, eta, h)
        elif opt_code == 1:
            _gd_row(W[i], push[i], g, eta, h)
        else:
            _ista_row(W[i], push[i], g, eta, h)
        norm2[i] = _sum_squares(W[i])
        if crossed > 0 and norm2[i] == 0.0:
            wiped = True
    return wiped


@njit(cache=True, nogil=True)
def _adam_rows(W, norm2, push, mom1, mom2, decoupled, t, lr, l1, wd, beta1, beta2, eps, whole):
    """One step of Adam / AdamW (torch's formulas) over every row."""
    bc1 = 1.0 - beta1**t
    bc2 = math.sqrt(1.0 - beta2**t)
    step_size = lr / bc1
    factor = (1.0 - lr * wd) if decoupled else wd
    for i in range(W.shape[0]):
        c = 0.0 if whole else -4.0 * (1.0 - norm2[i])
        _adam_row(
            W[i], push[i], mom1[i], mom2[i], c, l1, factor, decoupled, beta1, beta2, step_size, bc2, eps
        )
        norm2[i] = _sum_squares(W[i])


@njit(cache=True, nogil=True)
def optimizer_step(W, norm2, push, mom1, mom2, opt_code, t, lr, l1, wd, beta1, beta2, eps, whole):
    """Step t (1-based) of the chosen integrator over W, in place. Without ``whole`` the
    gradient is the identity model's, c_i W_i + 4 push_i + l1 sign W_i with c_i =
    -4 (1 - |W_i|^2) (gd-zero, gd and ISTA as the note's flow: W_i g - eta push_i, g = 1 +
    eta (1 - |W_i|^2)); with ``whole``, push is the whole smooth gradient divided by 4
    (c = 0, g = 1: the sparsity mechanisms, core/interference/mechanisms.py). Returns
    STOP_NONE, STOP_GAIN (W untouched), STOP_WIPED or STOP_NONFINITE (train_steps)."""
    eta = 4.0 * lr
    h = lr * l1  # eta * lam
    n = W.shape[0]
    if opt_code == 0 and not whole:
        for i in range(n):
            if not (1.0 + eta * (1.0 - norm2[i]) > 0.0):
                return STOP_GAIN  # before touching any row: W stays the last good state
    wiped = False
    if opt_code <= 1 or opt_code == 4:  # gradient descent (and ISTA), in the note's units
        wiped = _gd_rows(W, norm2, push, opt_code, eta, h, whole)
    elif opt_code == 5:  # signSGD
        for i in range(n):
            _signsgd_row(W[i], push[i], 0.0 if whole else -4.0 * (1.0 - norm2[i]), l1, lr)
            norm2[i] = _sum_squares(W[i])
    else:  # Adam / AdamW on the network loss's gradient
        _adam_rows(W, norm2, push, mom1, mom2, opt_code == 3, t, lr, l1, wd, beta1, beta2, eps, whole)
    if wiped:
        return STOP_WIPED
    for i in range(n):
        if not math.isfinite(norm2[i]):
            return STOP_NONFINITE
    return STOP_NONE


@njit(cache=True, nogil=True)
def train_steps(W, norm2, push, mom1, mom2, opt_code, n_steps, step0, lrs, l1s, wd, beta1, beta2, eps):
    """n_steps of the chosen integrator, in place, with the interference term ``push``
    held fixed (zeros without interference; with it, the caller recomputes push and calls
    one step at a time). Step s (0-based) uses lr = lrs[s] and l1 = l1s[s] (their
    schedules: core/interference/schedules.py). ``norm2`` holds |W_i|^2 and is kept
    current. Returns (steps taken, stop):
    stop is STOP_NONE, or why the run stopped early: STOP_GAIN (a gd-zero step would flip
    a whole row, 1 + eta (1 - |W_i|^2) <= 0; W is left at the last good state),
    STOP_WIPED (a gd-zero step zeroed a whole row and the interference push, not L1,
    carried some of its weights across zero: an overshoot; L1 deaths, even of a whole row
    at once, are the note's dynamics and go on; W shows the step),
    STOP_NONFINITE (the weights overflowed)."""
    for s in range(n_steps):
        t = step0 + s + 1
        stop = optimizer_step(
            W, norm2, push, mom1, mom2, opt_code, t, lrs[s], l1s[s], wd, beta1, beta2, eps, False
        )
        if stop == STOP_GAIN:
            return s, stop
        if stop != STOP_NONE:
            return s + 1, stop
    return n_steps, STOP_NONE


@njit(cache=True, nogil=True)
def noisy_push(W, xi, norm2, interference, out):
    """``out`` such that train_steps takes the gradient of the loss with noise ``xi`` in the
    hidden layer, sum_ij (ReLU(a_ij) - delta_ij)^2 + l1 |W|_1 with a_ij = (W_i + xi) . W_j:
    train_steps computes c_i W_i + 4 out_i (+ l1 sign) with c_i = -4 (1 - |W_i|^2), so
    out = (grad - c W) / 4, grad = (R + R^T) W + (column sums of R) xi^T and
    R_ij = 2 (a_ij - delta_ij) 1[a_ij > 0] (off the diagonal 0 without interference).
    Loops, for the small n of the noise experiments (docs/theory.md §8)."""
    n, m = W.shape
    c = np.zeros(n)
    for j in range(n):
        acc = 0.0
        for k in range(m):
            acc += W[j, k] * xi[k]
        c[j] = acc
    R = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j and not interference:
                continue
            g = 0.0
            for k in range(m):
                g += W[i, k] * W[j, k]
            a = g + c[j]
            if a > 0.0:
                R[i, j] = 2.0 * (a - (1.0 if i == j else 0.0))
    for i in range(n):
        colsum = 0.0
        for j in range(n):
            colsum += R[j, i]
        ci = -4.0 * (1.0 - norm2[i])
        for k in range(m):
            acc = 0.0
            for j in range(n):
                acc += (R[i, j] + R[j, i]) * W[j, k]
            out[i, k] = (acc + colsum * xi[k] - ci * W[i, k]) / 4.0


@njit(cache=True, nogil=True)
def noisy_train_steps(
    W, norm2, push, mom1, mom2, opt_code, n_steps, step0, lrs, l1s, wd, beta1, beta2, eps, xis, sigma, inter
):
    """n_steps of train_steps, each with the noise sigma * xis[s] in the hidden layer
    (noisy_push); returns (steps taken, stop) as train_steps."""
    xi = np.empty(W.shape[1])
    for s in range(n_steps):
        for k in range(xi.shape[0]):
            xi[k] = sigma * xis[s, k]
        noisy_push(W, xi, norm2, inter, push)
        one = slice(s, s + 1)
        taken, stop = train_steps(
            W, norm2, push, mom1, mom2, opt_code, 1, step0 + s, lrs[one], l1s[one], wd, beta1, beta2, eps
        )
        if stop != STOP_NONE:
            return s + taken, stop
    return n_steps, STOP_NONE


@njit(cache=True, nogil=True)
def _tally_row(W, i, cols, first_neuron, counts, positive, l1):
    """Row i of W over its columns ``cols`` (increasing): counts[k] and positive[k] gain its
    active weight on neuron k (positive: > 0). Returns (l1 plus its |w|, summed in order so
    that both measures give the same sum, its active weights, its nonzero weights, whether
    its largest |w| is on its initial largest neuron)."""
    active = 0
    nonzero = 0
    best = -1.0
    arg = -1
    for k in cols:
        a = abs(W[i, k])
        l1 += a
        if a != 0.0:
            nonzero += 1
        if a >= ACTIVE_LO and a <= ACTIVE_HI:
            counts[k] += 1
            active += 1
            if W[i, k] > 0.0:
                positive[k] += 1
        if a > best:
            best = a
            arg = k
    return l1, active, nonzero, best > 0.0 and arg == first_neuron[i]  # a dead feature: no neuron


@njit(cache=True, nogil=True)
def _collisions(counts, positive):
    """(polysemantic neurons, colliding pairs of opposite sign, of equal sign) from the
    active features on each neuron and how many of them are positive."""
    poly = 0
    opposite = 0
    same = 0
    for k in range(counts.shape[0]):
        c = counts[k]
        if c > 1:
            poly += 1
            pos = positive[k]
            neg = c - pos
            opposite += pos * neg
            same += pos * (pos - 1) // 2 + neg * (neg - 1) // 2
    return poly, opposite, same


@njit(cache=True, nogil=True)
def measure(W, first_neuron, counts, rptr=None, rcol=None):
    """One pass over W, or with W's pattern (rptr, rcol: sparse_kernels.nonzero_pattern) over its nonzeros
    alone (the zeros are never active and add nothing to |W|_1; rows are walked in the same
    order, so the sums are the same). Fills counts[k] (active features on neuron k) and
    returns (polysemantic neurons, active weights, colliding pairs of opposite sign, of
    equal sign, features whose largest |w| is on their initial largest neuron, nonzero
    weights, |W|_1)."""
    n, m = W.shape
    counts[:] = 0
    positive = np.zeros(m, dtype=np.int64)
    active = 0
    nonzero = 0
    kept = 0
    l1 = 0.0
    for i in range(n):
        if rptr is None:
            tally = _tally_row(W, i, range(m), first_neuron, counts, positive, l1)
        else:
            tally = _tally_row(W, i, rcol[rptr[i] : rptr[i + 1]], first_neuron, counts, positive, l1)
        l1, row_active, row_nonzero, on_first = tally
        active += row_active
        nonzero += row_nonzero
        kept += on_first
    if rptr is not None:
        nonzero = rptr[n]  # the pattern is W's nonzeros
    poly, opposite, same = _collisions(counts, positive)
    return poly, active, opposite, same, kept, nonzero, l1
