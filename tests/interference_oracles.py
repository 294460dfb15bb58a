"""Slow, independent references for the n-encoding (interference) model.

Nothing here imports sparsity_gui: every function is written from the model's definition
alone (Lecomte et al. 2023; docs/theory.md §5), in plain
numpy/scipy, so that a test comparing the package against it compares two independent
computations.

The network: W is n x m (features by neurons), a tied autoencoder y = ReLU(W W^T x) trained
on the n basis vectors x = e_i with a summed squared error plus l1 |W|_1. The note's flow
(the loss gradient divided by 4, lam = l1/4, t = 4 lr steps) is

    dW_i/dt = (1 - |W_i|^2) W_i - sum_{j != i} ReLU(W_i . W_j) W_j - lam sign(W_i).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

# ----------------------------------------------------------------------------------
# The network's loss, as a forward pass, and its gradient


def relu(z):
    return np.maximum(z, 0.0)


def network_loss(W, l1: float) -> float:
    """sum over the n basis inputs x = e_i of |ReLU(W W^T x) - x|^2, plus l1 |W|_1: the
    forward pass of the tied autoencoder, one input at a time (mse with reduction 'sum')."""
    W = np.asarray(W, dtype=np.float64)
    n = W.shape[0]
    total = 0.0
    for i in range(n):
        x = np.zeros(n)
        x[i] = 1.0
        hidden = W.T @ x  # m neurons
        y = relu(W @ hidden)  # n outputs
        total += float(np.sum((y - x) ** 2))
    return total + l1 * float(np.sum(np.abs(W)))


def network_grad_fd(W, l1: float, h: float = 1e-5) -> np.ndarray:
    """Central finite differences of network_loss, one weight at a time (valid where no
    weight is within h of zero and no W_i . W_j is within ~h of zero)."""
    W = np.array(W, dtype=np.float64)
    g = np.zeros_like(W)
    for idx in np.ndindex(*W.shape):
        old = W[idx]
        W[idx] = old + h
        up = network_loss(W, l1)
        W[idx] = old - h
        down = network_loss(W, l1)
        W[idx] = old
        g[idx] = (up - down) / (2.0 * h)
    return g


def network_grad_backprop(W, l1: float, interference: bool = True) -> np.ndarray:
    """The loss gradient by the chain rule through the forward pass (torch's conventions:
    ReLU'(0) = 0, |.|'(0) = 0). For input x: h = W^T x, z = W h, y = ReLU(z),
    dL/dz = 2 (y - x) 1[z > 0], and dL/dW = (dL/dz) h^T + x (dL/dz)^T W.
    interference=False drops the outputs j != i (the model without interference)."""
    W = np.asarray(W, dtype=np.float64)
    n = W.shape[0]
    g = np.zeros_like(W)
    for i in range(n):
        x = np.zeros(n)
        x[i] = 1.0
        h = W.T @ x
        z = W @ h
        y = relu(z)
        dz = 2.0 * (y - x) * (z > 0.0)
        if not interference:
            keep = np.zeros(n)
            keep[i] = 1.0
            dz = dz * keep
        g += np.outer(dz, h) + np.outer(x, dz @ W)
    return g + l1 * np.sign(W)


# ----------------------------------------------------------------------------------
# The interference term and the flow


def interference_push_loops(W) -> np.ndarray:
    """out[i] = sum_{j != i} ReLU(W_i . W_j) W_j by a double loop over (i, j) with the dot
    products written out element by element."""
    W = np.asarray(W, dtype=np.float64)
    n, m = W.shape
    out = np.zeros((n, m))
    for i in range(n):
        for j in range(n):
            if j == i:
                continue
            dot = 0.0
            for k in range(m):
                dot += float(W[i, k]) * float(W[j, k])
            if dot > 0.0:
                for k in range(m):
                    out[i, k] += dot * float(W[j, k])
    return out


def flow_rhs(W, lam: float, sign: np.ndarray) -> np.ndarray:
    """The note's flow with interference, sign(W) given (fixed while no weight crosses 0)."""
    n2 = np.sum(W * W, axis=1)
    return (1.0 - n2)[:, None] * W - interference_push_loops(W) - lam * sign


def interference_flow(W0, lam: float, T: float, rtol: float = 1e-12, atol: float = 1e-15) -> np.ndarray:
    """W(T) of the full n x m flow by scipy's DOP853 at rtol 1e-12. The L1 force uses
    sign(W0); a terminal event fires if any weight reaches zero, and that is an error
    (the reference is only valid on horizons without a crossing)."""
    W0 = np.asarray(W0, dtype=np.float64)
    assert np.all(W0 != 0.0)
    shape = W0.shape
    sign = np.sign(W0)

    def rhs(_t, y):
        return flow_rhs(y.reshape(shape), lam, sign).ravel()

    def crossing(_t, y):
        return float(np.min(y * sign.ravel()))

    crossing.terminal = True
    crossing.direction = -1
    sol = solve_ivp(rhs, (0.0, T), W0.ravel(), method="DOP853", rtol=rtol, atol=atol, events=crossing)
    assert sol.success, sol.message
    assert sol.t_events[0].size == 0, "a weight reached zero: the reference does not apply"
    return sol.y[:, -1].reshape(shape)


# ----------------------------------------------------------------------------------
# Optimizers on the network loss


def gd_on_network(W0, lr: float, steps: int, grad_fn) -> list[np.ndarray]:
    """Plain gradient descent W <- W - lr * grad(W); returns [W(0), W(1), ..., W(steps)]."""
    W = np.array(W0, dtype=np.float64)
    path = [W.copy()]
    for _ in range(steps):
        W = W - lr * grad_fn(W)
        path.append(W.copy())
    return path


def gd_zero_reference(W0, lr: float, l1: float, steps: int, interference: bool = True):
    """The note's GD with the zero rule on all n rows, written from the rule: with
    eta = 4 lr and lam = l1/4, a live weight moves by eta [(1 - |W_i|^2) W - push - lam sign W]
    and is set to zero if that step would cross (or land on) zero; a weight at zero feels the
    L1 subgradient, so it moves to -eta push -/+ eta lam only when |push| > lam, else stays.
    Returns (W, steps done, unstable) where unstable means a row had 1 + eta(1 - |W_i|^2)
    <= 0 at the start of the next step, which is then not taken."""
    W = np.array(W0, dtype=np.float64)
    eta = 4.0 * lr
    lam = l1 / 4.0
    for s in range(steps):
        n2 = np.sum(W * W, axis=1)
        if np.any(1.0 + eta * (1.0 - n2) <= 0.0):
            return W, s, True
        push = interference_push_loops(W) if interference else np.zeros_like(W)
        new = W + eta * ((1.0 - n2)[:, None] * W - push - lam * np.sign(W))
        live = W != 0.0
        crossed = live & (np.sign(new) != np.sign(W))
        new[crossed] = 0.0
        at_zero = ~live
        p = -eta * push[at_zero]
        new[at_zero] = np.sign(p) * np.maximum(np.abs(p) - eta * lam, 0.0)
        W = new
    return W, steps, False


def adam_reference(
    W0,
    grad_fn,
    steps: int,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    decoupled: bool = False,
) -> np.ndarray:
    """torch.optim.Adam (decoupled=False) / AdamW (decoupled=True), from the pseudo-code of
    the torch documentation (amsgrad, maximize, foreach etc. off):

        g_t = grad(theta_{t-1})
        Adam:  g_t <- g_t + weight_decay * theta_{t-1}              (L2)
        AdamW: theta_{t-1} <- theta_{t-1} - lr * weight_decay * theta_{t-1}   (decoupled)
        m_t = beta1 m_{t-1} + (1 - beta1) g_t
        v_t = beta2 v_{t-1} + (1 - beta2) g_t^2
        m_hat = m_t / (1 - beta1^t),  v_hat = v_t / (1 - beta2^t)
        theta_t = theta_{t-1} - lr m_hat / (sqrt(v_hat) + eps)
    """
    theta = np.array(W0, dtype=np.float64)
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    for t in range(1, steps + 1):
        g = grad_fn(theta)
        if decoupled:
            theta = theta - lr * weight_decay * theta
        elif weight_decay != 0.0:
            g = g + weight_decay * theta
        m = beta1 * m + (1.0 - beta1) * g
        v = beta2 * v + (1.0 - beta2) * g * g
        m_hat = m / (1.0 - beta1**t)
        v_hat = v / (1.0 - beta2**t)
        theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
    return theta


# ----------------------------------------------------------------------------------
# The paper's counts


def active_counts(W) -> np.ndarray:
    """Active features per neuron, the paper's way: 0.8 <= |w| <= 1.2, summed over features."""
    a = np.abs(np.asarray(W, dtype=np.float64))
    return ((a >= 0.8) & (a <= 1.2)).sum(axis=0)


def colliding_pairs(W) -> tuple[int, int]:
    """(pairs of opposite sign, pairs of equal sign) among the active weights of each
    neuron, by enumerating every pair of features on every neuron."""
    W = np.asarray(W, dtype=np.float64)
    n, m = W.shape
    opposite = same = 0
    for k in range(m):
        act = [i for i in range(n) if 0.8 <= abs(W[i, k]) <= 1.2]
        for a in range(len(act)):
            for b in range(a + 1, len(act)):
                if (W[act[a], k] > 0) == (W[act[b], k] > 0):
                    same += 1
                else:
                    opposite += 1
    return opposite, same


def fixed_point_single_weight(lam: float) -> float:
    """The stable root of (1 - w^2) w = lam by bisection on [1/sqrt 3, 1]: a feature that
    keeps one weight and feels no interference ends there."""
    lo, hi = 1.0 / math.sqrt(3.0), 1.0

    def f(w):  # decreasing on [1/sqrt 3, 1]
        return (1.0 - w * w) * w - lam

    assert f(lo) >= 0.0 >= f(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def gd_zero_row_sequential(w0, lr: float, l1: float, steps: int) -> np.ndarray:
    """One row (n = 1) of the note's GD with the zero rule, in scalar Python floats with a
    fixed operation order and one rounding per operation (no fused multiply-add):
    eta = 4 lr, h = eta (l1/4), s = sum_k w_k^2 summed in index order, g = 1 + eta (1 - s),
    then each weight v = |w| g - h, set to 0 if v <= 0, sign of w kept."""
    w = [float(x) for x in np.asarray(w0, dtype=np.float64)]
    eta = 4.0 * lr
    h = eta * (l1 / 4.0)
    s = 0.0
    for x in w:
        s += x * x
    for _ in range(steps):
        g = 1.0 + eta * (1.0 - s)
        s = 0.0
        for k, x in enumerate(w):
            if x == 0.0:
                continue
            v = abs(x) * g - h
            v = max(v, 0.0)
            w[k] = math.copysign(v, x) if v > 0.0 else 0.0
            s += v * v
    return np.array(w)
