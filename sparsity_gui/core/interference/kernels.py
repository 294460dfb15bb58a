"""The second model: n encodings with interference (incidental polysemanticity).

Lecomte et al. (2023) train a tied-weight autoencoder y = ReLU(W W^T x) on the n basis
vectors, with loss  sum_i (1 - |W_i|^2)^2 + sum_{i != j} ReLU(W_i . W_j)^2 + l1 |W|_1.
Its gradient, divided by 4, is the note's flow plus interference (MATH.md, "Relation to
network training"):

    dW_i/dt = (1 - |W_i|^2) W_i - sum_{j != i} ReLU(W_i . W_j) W_j - lam sign(W_i),

with lam = l1/4 and, for plain gradient descent, t = 4 * lr * steps. W is n x m
(features by neurons, as in the paper's code). Parameters are in the network's units
(l1, lr, steps) because Adam and the paper use them; ``lam``/``eta``/``t`` give the note's.

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
import operator
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from numba import njit

from sparsity_gui.core import numba_env  # noqa: F401  (sets NUMBA_CACHE_DIR before numba compiles)
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.history import History
from sparsity_gui.core.note.params import _available_memory, _finite

OPTIMIZERS = ("gd-zero", "gd", "adam", "adamw")
OPTIMIZER_LABELS = {
    "gd-zero": "GD with zero rule",
    "gd": "plain GD",
    "adam": "Adam",
    "adamw": "AdamW (paper)",
}
_OPT_CODE = {name: code for code, name in enumerate(OPTIMIZERS)}
GD_OPTIMIZERS = ("gd-zero", "gd")  # those whose steps are the note's flow, at t = 4 lr steps
ACTIVE_LO = 0.8
ACTIVE_HI = 1.2
N_MAX = 4096
M_MAX = 65536
STEPS_MAX = 10**8
# float64 arrays held per weight: W, W(0), two Adam moments, interference, headroom.
BYTES_PER_WEIGHT = 8 * 8


def _whole(value: Any) -> int | None:
    """A Python int from an int or numpy integer (bools refused), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def predicted_polysemantic(n: int, m: int) -> float:
    """The paper's estimate of polysemantic neurons after training: n^2 / (4 m)."""
    return n * n / (4.0 * m)


@dataclass(frozen=True)
class InterferenceParams:
    """One training run of the n-encoding model. Invalid values raise InputError."""

    n: int = 256
    m: int = 1024
    l1: float = 1e-3
    lr: float = 1e-3
    optimizer: str = "adamw"
    steps: int = 7500
    seed: int = 0
    sigma: float = 1.0  # W(0) ~ normal(0, sigma / sqrt(m)); the paper's is sigma = 1
    interference: bool = True
    weight_decay: float | None = None  # None: 0.01 for adamw, 0 otherwise (torch defaults)
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def __post_init__(self) -> None:
        for name, lo, hi, text in (("n", 1, N_MAX, str(N_MAX)), ("m", 1, M_MAX, str(M_MAX)),
                                   ("steps", 1, STEPS_MAX, f"{STEPS_MAX:.0e}"),
                                   ("seed", 0, 2**63 - 1, "2^63-1")):
            v = _whole(getattr(self, name))
            if v is None or not lo <= v <= hi:
                raise InputError(name, f"must be a whole number from {lo} to {text}, "
                                 f"got {getattr(self, name)!r}")
            object.__setattr__(self, name, v)
        if self.optimizer not in OPTIMIZERS:
            raise InputError("optimizer", f"must be one of {', '.join(OPTIMIZERS)}, got {self.optimizer!r}")
        l1 = _finite("l1", self.l1)
        if not 0.0 <= l1 <= 4.0:
            raise InputError("l1", f"must be from 0 to 4 (lam = l1/4 at most 1), got {self.l1}")
        lr = _finite("lr", self.lr)
        if not 0.0 < lr <= 1.0:
            raise InputError("lr", f"must be > 0 and at most 1, got {self.lr}")
        sigma = _finite("sigma", self.sigma)
        if not 0.0 < sigma <= 1e3:
            raise InputError("sigma", f"must be > 0 and at most 1000, got {self.sigma}")
        if not isinstance(self.interference, bool):
            raise InputError("interference", f"must be true or false, got {self.interference!r}")
        wd = None
        if self.weight_decay is not None:
            wd = _finite("weight_decay", self.weight_decay)
            if not 0.0 <= wd * lr < 1.0:
                raise InputError("weight_decay", f"must be >= 0 with weight_decay * lr < 1, got {self.weight_decay}")
        b1 = _finite("beta1", self.beta1)
        b2 = _finite("beta2", self.beta2)
        for name, b in (("beta1", b1), ("beta2", b2)):
            if not 0.0 <= b < 1.0:
                raise InputError(name, f"must be from 0 to below 1, got {b}")
        eps = _finite("eps", self.eps)
        if not eps > 0.0:
            raise InputError("eps", f"must be > 0, got {self.eps}")
        for name, v in (("l1", l1), ("lr", lr), ("sigma", sigma), ("weight_decay", wd),
                        ("beta1", b1), ("beta2", b2), ("eps", eps)):
            object.__setattr__(self, name, v)

    # --- the note's units ---------------------------------------------------------------
    @property
    def lam(self) -> float:
        """The note's L1 strength: lam = l1 / 4."""
        return self.l1 / 4.0

    @property
    def eta(self) -> float:
        """The note's step for plain GD: eta = 4 * lr (so t = 4 * lr * steps)."""
        return 4.0 * self.lr

    def time_of(self, steps: int | float | np.ndarray) -> Any:
        """The note's time after ``steps`` steps of plain GD: t = 4 * lr * steps."""
        return self.eta * steps

    @property
    def effective_weight_decay(self) -> float:
        if self.weight_decay is not None:
            return self.weight_decay
        return 0.01 if self.optimizer == "adamw" else 0.0

    @property
    def prediction(self) -> float:
        return predicted_polysemantic(self.n, self.m)

    def with_changes(self, **changes: Any) -> "InterferenceParams":
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["weight_decay"] = self.effective_weight_decay
        return d


# Starting points of the window's Presets menu: (name, what it shows, parameters)
PRESETS: tuple[tuple[str, str, InterferenceParams], ...] = (
    ("The paper's setting", "n = 256, m = 1024, AdamW, l1 = lr = 1e-3, 7500 steps: about "
     "16 polysemantic neurons predicted", InterferenceParams()),
    ("Quick demo", "n = 64, m = 256, AdamW at lr = 3e-3: settles in a few seconds",
     InterferenceParams(n=64, m=256, lr=3e-3, steps=4000)),
    ("The note's flow, with interference", "n = 48, m = 128, GD with the zero rule at "
     "lam = 0.05 (l1 = 0.2), eta = 0.2 (lr = 0.05): one weight per feature, collisions of "
     "opposite sign only", InterferenceParams(n=48, m=128, optimizer="gd-zero", l1=0.2, lr=0.05,
                                              steps=2000)),
    ("Control: no interference", "the same, every feature alone (the note's model n times "
     "over): each keeps its initial largest neuron, collisions of both signs",
     InterferenceParams(n=48, m=128, optimizer="gd-zero", l1=0.2, lr=0.05, steps=2000,
                        interference=False)),
    ("Adam at the same size", "n = 48, m = 128, Adam at lr = 3e-3: per-coordinate steps, "
     "few features end on their initial largest neuron",
     InterferenceParams(n=48, m=128, optimizer="adam", lr=3e-3, steps=4000)),
)


def check_memory(n: int, m: int) -> None:
    need = n * m * BYTES_PER_WEIGHT + 3 * n * n * 8
    avail = _available_memory()
    if avail is not None and need > avail:
        raise InputError("m", f"n = {n}, m = {m} needs about {need / 2**30:.1f} GiB of memory, "
                         f"only {avail / 2**30:.1f} GiB is available")


def initial_weights(p: InterferenceParams) -> np.ndarray:
    """W(0) ~ normal(0, sigma / sqrt(m)), n x m, as the paper initialises it."""
    rng = np.random.default_rng(p.seed)
    return rng.standard_normal((p.n, p.m)) * (p.sigma / math.sqrt(p.m))


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
def train_steps(W, norm2, push, mom1, mom2, opt_code, n_steps, step0, lr, l1,
                wd, beta1, beta2, eps):
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
            bc1 = 1.0 - beta1 ** t
            bc2 = math.sqrt(1.0 - beta2 ** t)
            step_size = lr / bc1
            decoupled = opt_code == 3
            factor = (1.0 - lr * wd) if decoupled else wd
            for i in range(n):
                c = -4.0 * (1.0 - norm2[i])
                _adam_row(W[i], push[i], mom1[i], mom2[i], c, l1, factor, decoupled,
                          beta1, beta2, step_size, bc2, eps)
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

HISTORY_COLUMNS = ("step", "t", "polysemantic", "predicted", "active", "opposite_pairs",
                   "same_pairs", "kept_share", "nonzero", "norm1", "mean_norm2", "loss")


@dataclass(frozen=True)
class Measurement:
    step: int
    t: float  # the note's time for GD, summed as 4 lr per step; NaN for Adam (no such time)
    polysemantic: int
    predicted: float
    active: int
    opposite_pairs: int
    same_pairs: int
    kept_share: float
    nonzero: int
    norm1: float
    mean_norm2: float
    loss: float

    def row(self) -> np.ndarray:
        return np.array([getattr(self, c) for c in HISTORY_COLUMNS], dtype=float)


class InterferenceRun:
    """W, the optimizer state and a bounded history of measurements. Not thread-safe:
    one thread owns it (the worker, or the CLI)."""

    def __init__(self, params: InterferenceParams, w0: np.ndarray | None = None,
                 history_capacity: int = 4096):
        self.params = params
        if w0 is None:
            check_memory(params.n, params.m)
            w0 = initial_weights(params)
        w0 = np.array(w0, dtype=np.float64, order="C", copy=True)
        if w0.shape != (params.n, params.m):
            raise InputError("w0", f"must be {params.n} x {params.m}, got {w0.shape}")
        if not np.all(np.isfinite(w0)):
            raise InputError("w0", "contains a value that is not finite")
        self.w0 = w0
        self.W = w0.copy()
        self.first_neuron = np.argmax(np.abs(w0), axis=1).astype(np.int64)
        self.norm2 = row_norms2(self.W)
        self._push = np.zeros_like(self.W)
        self._gram = np.empty((params.n, params.n))
        adam = params.optimizer in ("adam", "adamw")
        self._mom1 = np.zeros_like(self.W) if adam else np.zeros((1, 1))
        self._mom2 = np.zeros_like(self.W) if adam else np.zeros((1, 1))
        self.counts = np.zeros(params.m, dtype=np.int64)
        self.step = 0
        # the note's time, summed step by step (lr may change live): t = sum of 4 lr
        self.t = 0.0
        self.failure: str | None = None
        self.history = History(len(HISTORY_COLUMNS), history_capacity)
        self.history.append(self.measure().row())

    @property
    def finished(self) -> bool:
        return self.step >= self.params.steps or self.failure is not None

    def advance(self, n_steps: int) -> int:
        """Up to n_steps more steps (never past params.steps); returns steps taken.
        Sets ``failure`` (and stops) when the run diverges."""
        p = self.params
        n_steps = max(0, min(int(n_steps), p.steps - self.step))
        if n_steps == 0 or self.failure is not None:
            return 0
        args = (self.W, self.norm2, self._push, self._mom1, self._mom2, _OPT_CODE[p.optimizer])
        hyper = (p.lr, p.l1, p.effective_weight_decay, p.beta1, p.beta2, p.eps)
        if p.interference and p.n > 1:
            done, stop = 0, STOP_NONE
            while done < n_steps and stop == STOP_NONE:
                interference_push(self.W, self._push, self._gram)
                taken, stop = train_steps(*args, 1, self.step + done, *hyper)
                done += taken
        else:
            self._push.fill(0.0)
            done, stop = train_steps(*args, n_steps, self.step, *hyper)
        self.step += done
        self.t += p.eta * done
        if stop == STOP_NONFINITE:
            self.failure = (f"diverged at step {self.step}: the weights overflowed; "
                            f"lower lr (now {p.lr:g})")
        elif stop == STOP_GAIN:
            self.failure = (f"unstable at step {self.step + 1}: 1 + 4 lr (1 - |W_i|^2) <= 0 flips "
                            f"a whole row; lower lr (now {p.lr:g}; GD is stable near balance "
                            f"for lr < 0.25)")
        elif stop == STOP_WIPED:
            rows = [int(i) for i in np.flatnonzero(self.norm2 == 0.0)]
            self.failure = (f"unstable at step {self.step}: one step set every weight of "
                            f"feature {rows[0]}{' and others' if len(rows) > 1 else ''} to zero "
                            f"(the interference push overshoots); lower lr (now {p.lr:g})")
        return done

    def measure(self, with_loss: bool = True) -> Measurement:
        """The current counts (also refreshes ``counts``); the loss costs one W W^T, so
        ``with_loss=False`` leaves it NaN."""
        p = self.params
        poly, active, opp, same, kept, nonzero, norm1 = measure(self.W, self.first_neuron, self.counts)
        return Measurement(
            step=self.step, t=self.t if p.optimizer in GD_OPTIMIZERS else math.nan,
            polysemantic=int(poly),
            predicted=p.prediction, active=int(active), opposite_pairs=int(opp),
            same_pairs=int(same), kept_share=kept / p.n, nonzero=int(nonzero),
            norm1=float(norm1), mean_norm2=float(np.mean(self.norm2)),
            loss=self.loss(norm1) if with_loss else float("nan"))

    def loss(self, norm1: float | None = None) -> float:
        """The network's loss: sum_i (1-|W_i|^2)^2 + sum_{i!=j} ReLU(W_i.W_j)^2 + l1 |W|_1
        (without the middle term when interference is off: the loss being trained)."""
        W = self.W
        with np.errstate(all="ignore"):  # a diverged run's loss is inf, not a warning
            if norm1 is None:
                norm1 = float(np.abs(W).sum())
            own = float(np.sum((1.0 - self.norm2) ** 2))
            cross = 0.0
            if self.params.n > 1 and self.params.interference:
                G = W @ W.T
                np.fill_diagonal(G, 0.0)
                cross = float(np.sum(np.maximum(G, 0.0) ** 2))
            return own + cross + self.params.l1 * norm1

    def record(self) -> Measurement:
        meas = self.measure()
        last = self.history.last()
        if last is None or int(last[0]) != self.step:
            self.history.append(meas.row())
        return meas

    def history_array(self) -> np.ndarray:
        return self.history.array()
