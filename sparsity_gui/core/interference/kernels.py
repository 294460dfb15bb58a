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
    G = np.empty((n, n)) if gram is None else gram
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
def train_steps(W, norm2, push, mom1, mom2, opt_code, n_steps, step0, lr, l1, wd, beta1, beta2, eps):
    """n_steps of the chosen integrator, in place, with the interference term ``push``
    held fixed (zeros without interference; with it, the caller recomputes push and calls
    one step at a time). ``norm2`` holds |W_i|^2 and is kept current. Returns (steps
    taken, stop):
    stop is STOP_NONE, or why the run stopped early: STOP_GAIN (a gd-zero step would flip
    a whole row, 1 + eta (1 - |W_i|^2) <= 0; W is left at the last good state),
    STOP_WIPED (a gd-zero step zeroed a whole row and the interference push, not L1,
    carried some of its weights across zero: an overshoot; L1 deaths, even of a whole row
    at once, are the note's dynamics and go on; W shows the step),
    STOP_NONFINITE (the weights overflowed)."""
    n = W.shape[0]
    eta = 4.0 * lr
    h = lr * l1  # eta * lam
    for s in range(n_steps):
        if opt_code == 0:
            for i in range(n):
                if not (1.0 + eta * (1.0 - norm2[i]) > 0.0):
                    return s, STOP_GAIN  # before touching any row: W stays the last good state
        t = step0 + s + 1
        wiped = False
        if opt_code <= 1:  # gradient descent, in the note's units
            for i in range(n):
                g = 1.0 + eta * (1.0 - norm2[i])
                crossed = 0
                if opt_code == 0:
                    crossed = _gd_zero_row(W[i], push[i], g, eta, h)
                else:
                    _gd_row(W[i], push[i], g, eta, h)
                norm2[i] = _sum_squares(W[i])
                if crossed > 0 and norm2[i] == 0.0:
                    wiped = True
        else:  # Adam / AdamW on the network loss's gradient (torch's formulas)
            bc1 = 1.0 - beta1**t
            bc2 = math.sqrt(1.0 - beta2**t)
            step_size = lr / bc1
            decoupled = opt_code == 3
            factor = (1.0 - lr * wd) if decoupled else wd
            for i in range(n):
                c = -4.0 * (1.0 - norm2[i])
                _adam_row(
                    W[i],
                    push[i],
                    mom1[i],
                    mom2[i],
                    c,
                    l1,
                    factor,
                    decoupled,
                    beta1,
                    beta2,
                    step_size,
                    bc2,
                    eps,
                )
                norm2[i] = _sum_squares(W[i])
        if wiped:
            return s + 1, STOP_WIPED
        for i in range(n):
            if not math.isfinite(norm2[i]):
                return s + 1, STOP_NONFINITE
    return n_steps, STOP_NONE


@njit(cache=True, nogil=True)
def measure(W, first_neuron, counts):
    """One pass over W. Fills counts[k] (active features on neuron k) and returns
    (polysemantic neurons, active weights, colliding pairs of opposite sign, of equal sign,
    features whose largest |w| is on their initial largest neuron, nonzero weights, |W|_1)."""
    n, m = W.shape
    for k in range(m):
        counts[k] = 0
    active = 0
    nonzero = 0
    l1 = 0.0
    kept = 0
    for i in range(n):
        best = -1.0
        arg = -1
        for k in range(m):
            a = abs(W[i, k])
            l1 += a
            if a != 0.0:
                nonzero += 1
            if a >= ACTIVE_LO and a <= ACTIVE_HI:
                counts[k] += 1
                active += 1
            if a > best:
                best = a
                arg = k
        if best > 0.0 and arg == first_neuron[i]:  # a dead feature sits on no neuron
            kept += 1
    poly = 0
    opposite = 0
    same = 0
    for k in range(m):
        c = counts[k]
        if c > 1:
            poly += 1
            pos = 0
            for i in range(n):
                a = abs(W[i, k])
                if a >= ACTIVE_LO and a <= ACTIVE_HI and W[i, k] > 0.0:
                    pos += 1
            neg = c - pos
            opposite += pos * neg
            same += pos * (pos - 1) // 2 + neg * (neg - 1) // 2
    return poly, active, opposite, same, kept, nonzero, l1


# --- a run ---------------------------------------------------------------------------------
