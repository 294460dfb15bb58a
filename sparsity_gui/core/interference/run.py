"""One training run of the interference model: W, the optimizer's state and a bounded
history of measurements (`InterferenceRun`), and what is measured at each row
(`Measurement`, `HISTORY_COLUMNS`). See docs/theory.md §5."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.history import History
from sparsity_gui.core.interference.kernels import (
    OPT_CODE,
    STOP_DENSE,
    STOP_GAIN,
    STOP_NONE,
    STOP_NONFINITE,
    STOP_ROOM,
    STOP_WIPED,
    interference_push,
    measure,
    noisy_train_steps,
    optimizer_step,
    row_norms2,
    train_steps,
)
from sparsity_gui.core.interference.mechanisms import MechanismState, SparsityHistory
from sparsity_gui.core.interference.noise import NoiseStream, noisy_gradient_numpy
from sparsity_gui.core.interference.params import (
    GD_OPTIMIZERS,
    InterferenceParams,
    check_memory,
    step_multiply_adds,
)
from sparsity_gui.core.interference.readouts import (
    check_period,
    is_sparse,
    note_thresholds,
    rail_share,
    threshold_summary,
)
from sparsity_gui.core.interference.schedules import (
    has_lr_schedule,
    l0_in_force,
    l0_values,
    l1_values,
    lr_values,
    values_in_force,
)
from sparsity_gui.core.interference.sparse_kernels import (
    gd_zero_sparse_steps,
    nonzero_pattern,
    positive_overlaps_squared,
)

# gd-zero with interference follows W's nonzeros (sparse_kernels.gd_zero_sparse_steps) once they
# are fewer than SPARSE_BELOW of W, and goes back to the dense products above DENSE_ABOVE
# (apart, so that a run near the crossover does not switch every step). The crossover is
# measured by benchmarks/bench_interference.py (section "gd-zero on its nonzeros").
SPARSE_BELOW = 0.02
DENSE_ABOVE = 0.03
# with noise, each step's gradient by numba loops up to this n^2 m, by BLAS products above
NOISY_LOOPS_UP_TO = 2**20


def initial_weights(p: InterferenceParams) -> np.ndarray:
    """W(0) ~ normal(0, sigma / sqrt(m)), n x m, as the paper initialises it; drawn in
    float64 and then rounded to the run's dtype (so a seed starts from the same W(0))."""
    rng = np.random.default_rng(p.seed)
    w0 = rng.standard_normal((p.n, p.m)) * (p.sigma / math.sqrt(p.m))
    return w0.astype(p.dtype, copy=False)


def step_work(p: InterferenceParams) -> float:
    """Multiply-adds of one training step of ``p`` (params.step_multiply_adds)."""
    return step_multiply_adds(p.n, p.m)


def chunk_steps(p: InterferenceParams, work: float, most: int) -> int:
    """Steps in a chunk of about ``work`` multiply-adds (at least 1, at most ``most``)."""
    return int(min(max(1.0, work // step_work(p)), most))


@dataclass(frozen=True)
class Counts:
    """What a measurement counts in W (kernels.measure), and what a sweep keeps of a run's
    last one (sweep.SweepRow)."""

    polysemantic: int
    predicted: float
    active: int
    opposite_pairs: int
    same_pairs: int
    kept_share: float
    nonzero: int


COUNT_COLUMNS = tuple(f.name for f in fields(Counts))


@dataclass(frozen=True)
class Measurement(Counts):
    step: int
    t: float  # the note's time for GD, summed as 4 lr per step; NaN for Adam (no such time)
    norm1: float
    mean_norm2: float
    loss: float
    l1: float  # the l1 and lr in force (schedules.values_in_force)
    lr: float
    sum_w4: float  # the mean over features of sum_k W_ik^4 (1 for one weight of size 1)
    rail_share: float  # at the last check step (readouts.RAIL_DEFINITION); NaN before one
    # JumpReLU's L0 coefficient C in force (schedules.l0_in_force), NaN under l1 and TopK;
    # no history column: a JumpReLU run keeps it beside its history (InterferenceRun.l0_history)
    l0: float = math.nan

    def row(self) -> np.ndarray:
        return np.array([getattr(self, c) for c in HISTORY_COLUMNS], dtype=float)


# the history's columns: a Measurement's, in this order
HISTORY_COLUMNS = (
    *("step", "t", *COUNT_COLUMNS, "norm1", "mean_norm2", "loss"),
    *("l1", "lr", "sum_w4", "rail_share"),
)


def mean_sum_w4(W: np.ndarray) -> float:
    """The mean over features of sum_k W_ik^4: 1 for rows with one weight of size 1, about
    3 sigma^4 / m for a spread normal row (the paper's measure of sparsity under noise)."""
    W = np.asarray(W, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverged W's is inf, not a warning
        return float(np.mean(np.sum((W * W) ** 2, axis=1)))


def network_loss(params: InterferenceParams, W: np.ndarray) -> float:
    """The loss of W, computed whole (one W W^T): what `InterferenceRun.loss` gives for
    the same W, for a W that a window shows."""
    with np.errstate(all="ignore"):  # a diverged run's loss is inf, not a warning
        norm2 = np.einsum("ij,ij->i", W, W)
        own = float(np.sum((1.0 - norm2) ** 2))
        cross = 0.0
        if params.n > 1 and params.interference:
            G = W @ W.T
            np.fill_diagonal(G, 0.0)
            cross = float(np.sum(np.maximum(G, 0.0) ** 2))
        return own + cross + params.l1 * float(np.abs(W).sum())


# the kernels' leading arguments (W, its row norms, the push, Adam's moments, the optimizer's
# code) and trailing ones (weight decay, beta1, beta2, eps): train_steps's signature
KernelArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]
OptimizerConstants = tuple[float, float, float, float]


class InterferenceRun:
    """W, the optimizer state and a bounded history of measurements. Not thread-safe:
    one thread owns it (the worker, or the CLI)."""

    def __init__(
        self, params: InterferenceParams, w0: np.ndarray | None = None, history_capacity: int = 4096
    ):
        self.params = params
        # where W(0) came from, for run.json: a normal draw, or a caller's matrix (a file)
        self.w0_source: dict = {"source": "normal" if w0 is None else "given"}
        if w0 is None:
            check_memory(params.n, params.m, params.dtype)
            w0 = initial_weights(params)
        dtype = np.dtype(params.dtype)
        w0 = np.array(w0, dtype=dtype, order="C", copy=True)
        if w0.shape != (params.n, params.m):
            raise InputError("w0", f"must be {params.n} x {params.m}, got {w0.shape}")
        if not np.all(np.isfinite(w0)):
            raise InputError("w0", "contains a value that is not finite")
        self.w0 = w0
        # W(0) as snapshots share it: never written after this, so a read-only view
        self.w0_shared = w0.view()
        self.w0_shared.flags.writeable = False
        self.W = w0.copy()
        self.first_neuron = np.argmax(np.abs(w0), axis=1).astype(np.int64)
        self.norm2 = row_norms2(self.W)
        self._push = np.zeros_like(self.W)
        self._gram = np.empty((params.n, params.n), dtype=dtype)
        adam = params.optimizer in ("adam", "adamw")
        self._mom1 = np.zeros_like(self.W) if adam else np.zeros((1, 1), dtype=dtype)
        self._mom2 = np.zeros_like(self.W) if adam else np.zeros((1, 1), dtype=dtype)
        # gd-zero's sparse path: the share of nonzeros under which it starts and over which
        # it stops (tests move them to force either path), its arrays while it is on
        # (rptr, rcol, work, pcol, pval: see gd_zero_sparse_steps), and its step count
        self.sparse_below = SPARSE_BELOW
        self.dense_above = DENSE_ABOVE
        # gd-zero's sparse path: W's nonzeros (rptr, rcol) and the kernel's work arrays
        self._pattern: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.sparse_steps = 0
        self.pattern_grown = 0  # times the sparse path's arrays had to grow
        self.counts = np.zeros(params.m, dtype=np.int64)
        # the optimizer lab's readouts (readouts.py): the first check step at which the run
        # is sparse (0: W(0) already is), the last rail share and the sum over the checks
        # up to and including the first sparse one
        self.steps_to_sparse: int | None = 0 if is_sparse(self.W) else None
        self.rail_now = math.nan
        self._rail_sum = 0.0
        self._rail_count = 0
        self._noise = NoiseStream(params.noise, params.seed) if params.noise != "none" else None
        # TopK's or JumpReLU's state (mechanisms.py); TopK keeping every unit is the identity,
        # trained by the l1 model's own steps (at l1 = 0)
        self.mechanism = MechanismState(params, dtype) if params.sparsity != "l1" else None
        self._identity = params.sparsity == "topk" and params.k == params.m
        self.step = 0
        # the note's time, summed step by step (lr may change live): t = sum of 4 lr
        self.t = 0.0
        self.failure: str | None = None
        self.history = History(len(HISTORY_COLUMNS), history_capacity)
        first = self.measure()
        self.history.append(first.row())
        # JumpReLU's: (step, the l0 in force) at the history's steps, as l1 is in the history
        # (history.csv's l0 column; l1 and TopK runs have no l0)
        self.l0_history = History(2, history_capacity) if params.sparsity == "jumprelu" else None
        self._record_l0(first)
        self.sparsity_history = SparsityHistory(self, history_capacity) if self.mechanism else None
        # under l1: the note's threshold of each feature summarised at the history's steps
        # (readouts.NOTE_THRESHOLD_COLUMNS; the Thresholds panel draws it), in no file
        self.note_threshold_history = None if self.mechanism else History(5, history_capacity)
        self._record_note_thresholds()

    @property
    def finished(self) -> bool:
        return self.step >= self.params.steps or self.failure is not None

    def advance(self, n_steps: int) -> int:
        """Up to n_steps more steps (never past params.steps); returns steps taken.
        Sets ``failure`` (and stops) when the run diverges. The step that lands on a
        multiple of readouts.check_period is taken alone, the readouts checked after it."""
        # a diverging run's overflow (W W^T, the noise's products) is its failure, said once
        # (the kernels stop at a non-finite W), not numpy's RuntimeWarning before it
        with np.errstate(over="ignore", invalid="ignore"):
            return self._advance_checked(n_steps)

    def _advance_checked(self, n_steps: int) -> int:
        p = self.params
        n_steps = max(0, min(int(n_steps), p.steps - self.step))
        done = 0
        while done < n_steps and self.failure is None:
            period = check_period(p.steps)
            to_check = period - self.step % period
            if to_check > 1:
                done += self._advance(min(n_steps - done, to_check - 1))
                continue
            before = self.W.copy()
            taken = self._advance(1)
            done += taken
            if taken:
                self._check(before, values_in_force(p, self.step)[1])
        return done

    def _check(self, before: np.ndarray, lr: float) -> None:
        """The readouts at a check step: the rail share of the step just taken (summed while
        the run is not yet sparse), and whether the run is sparse now."""
        self.rail_now = rail_share(before, self.W, lr)
        if self.steps_to_sparse is None:
            if math.isfinite(self.rail_now):
                self._rail_sum += self.rail_now
                self._rail_count += 1
            if is_sparse(self.W):
                self.steps_to_sparse = self.step

    @property
    def rail_share_mean(self) -> float:
        """The mean rail share over the sparsification phase (the checks up to and including
        the one at which the run became sparse; all of them if it never did); NaN when
        nothing shrank."""
        return self._rail_sum / self._rail_count if self._rail_count else math.nan

    def _advance(self, n_steps: int) -> int:
        p = self.params
        if n_steps == 0 or self.failure is not None:
            return 0
        args: KernelArrays = (self.W, self.norm2, self._push, self._mom1, self._mom2, OPT_CODE[p.optimizer])
        lrs = lr_values(p, self.step, n_steps)
        l1s = l1_values(p, self.step, n_steps)
        rest: OptimizerConstants = (p.effective_weight_decay, p.beta1, p.beta2, p.eps)
        if self.mechanism is not None and not self._identity:
            done, stop = self._mechanism_steps(n_steps, args, lrs, l1s, rest)
        elif p.noise != "none":
            done, stop = self._noisy_steps(n_steps, args, lrs, l1s, rest)
        elif p.interference and p.n > 1:
            done, stop = 0, STOP_NONE
            may_follow = p.optimizer == "gd-zero"
            while done < n_steps and stop == STOP_NONE:
                if (
                    self._pattern is None
                    and may_follow
                    and np.count_nonzero(self.W) < self.sparse_below * self.W.size
                ):
                    self._follow_nonzeros()
                if self._pattern is not None:
                    taken, stop = self._sparse_steps(n_steps - done, lrs[done:], l1s[done:])
                else:
                    interference_push(self.W, self._push, self._gram)
                    one = slice(done, done + 1)
                    taken, stop = train_steps(*args, 1, self.step + done, lrs[one], l1s[one], *rest)
                done += taken
        else:
            self._pattern = None  # the dense kernel moves W: the pattern would go stale
            self._push.fill(0.0)
            done, stop = train_steps(*args, n_steps, self.step, lrs, l1s, *rest)
        self.step += done
        # t = sum of 4 lr; a constant lr keeps the product (the digits before schedules)
        self.t += 4.0 * float(np.sum(lrs[:done])) if has_lr_schedule(p) else p.eta * done
        if stop == STOP_NONFINITE:
            self.failure = f"diverged at step {self.step}: the weights overflowed; lower lr (now {p.lr:g})"
        elif stop == STOP_GAIN:
            self.failure = (
                f"unstable at step {self.step + 1}: 1 + 4 lr (1 - |W_i|^2) <= 0 flips "
                f"a whole row; lower lr (now {p.lr:g}; GD is stable near balance "
                f"for lr < 0.25)"
            )
        elif stop == STOP_WIPED:
            rows = [int(i) for i in np.flatnonzero(self.norm2 == 0.0)]
            self.failure = (
                f"unstable at step {self.step}: one step set every weight of "
                f"feature {rows[0]}{' and others' if len(rows) > 1 else ''} to zero "
                f"(the interference push overshoots); lower lr (now {p.lr:g})"
            )
        return done

    def _mechanism_steps(
        self, n_steps: int, args: KernelArrays, lrs: np.ndarray, l1s: np.ndarray, rest: OptimizerConstants
    ) -> tuple[int, int]:
        """Steps under TopK or JumpReLU: the whole gradient of each step at the W before it
        (mechanisms.MechanismState.gradient) with the step's l0 and noise, W and the
        thresholds stepped from it."""
        p = self.params
        mechanism = self.mechanism
        assert mechanism is not None  # only a run with a mechanism takes these steps
        self._pattern = None
        _, beta1, beta2, eps = rest
        l0s = l0_values(p, self.step, n_steps)
        xis = self._noise.draw(n_steps, p.m) if self._noise is not None else None
        for s in range(n_steps):
            xi = None if xis is None else p.noise_sigma * xis[s]
            mechanism.gradient(self.W, self._push, float(l0s[s]), xi)
            t = self.step + s + 1
            stop = optimizer_step(*args, t, lrs[s], l1s[s], *rest, True)
            mechanism.threshold_step(args[-1], t, float(lrs[s]), beta1, beta2, eps)
            if stop != STOP_NONE:
                return s + 1, stop
        return n_steps, STOP_NONE

    def _noisy_steps(
        self, n_steps: int, args: KernelArrays, lrs: np.ndarray, l1s: np.ndarray, rest: OptimizerConstants
    ) -> tuple[int, int]:
        """Steps with noise in the hidden layer: numba loops over each step's gradient at
        small sizes (the noise experiments'), BLAS products above NOISY_LOOPS_UP_TO."""
        p = self.params
        self._pattern = None
        assert self._noise is not None  # a run with noise has its stream
        xis = self._noise.draw(n_steps, p.m)
        inter = p.interference and p.n > 1
        if p.n * p.n * p.m <= NOISY_LOOPS_UP_TO:
            return noisy_train_steps(*args, n_steps, self.step, lrs, l1s, *rest, xis, p.noise_sigma, inter)
        for s in range(n_steps):
            xi = p.noise_sigma * xis[s]
            grad = noisy_gradient_numpy(self.W.astype(float), xi, inter)
            self._push[:] = (grad + 4.0 * (1.0 - self.norm2)[:, None] * self.W) / 4.0
            one = slice(s, s + 1)
            taken, stop = train_steps(*args, 1, self.step + s, lrs[one], l1s[one], *rest)
            if stop != STOP_NONE:
                return s + taken, stop
        return n_steps, STOP_NONE

    @property
    def sparse(self) -> bool:
        """True while gd-zero follows W's nonzeros."""
        return self._pattern is not None

    def _follow_nonzeros(self, least_room: int = 0) -> None:
        """Switch to the sparse path: W's pattern, with room for it to grow to the point
        where the dense path takes over again (more when a step asked for it)."""
        n, m = self.W.shape
        size = n * m
        nnz = int(np.count_nonzero(self.W))
        room = min(size, max(2 * int(self.dense_above * size), 2 * nnz, least_room, 64))
        rptr = np.zeros(n + 1, dtype=np.int64)
        rcol = np.empty(room, dtype=np.int64)
        nonzero_pattern(self.W, rptr, rcol)
        work = np.empty(3 * n + 3 * m + 2 + room, dtype=np.int64)
        pcol = np.empty(room, dtype=np.int64)
        pval = np.empty(room)
        self._pattern = (rptr, rcol, work, pcol, pval)

    def _sparse_steps(self, n_steps: int, lrs: np.ndarray, l1s: np.ndarray) -> tuple[int, int]:
        most = int(self.dense_above * self.W.size)
        pattern = self._pattern
        assert pattern is not None  # the sparse path follows a pattern
        taken, stop, _ = gd_zero_sparse_steps(self.W, self.norm2, *pattern, n_steps, lrs, l1s, most)
        self.sparse_steps += taken
        if stop == STOP_ROOM:  # grow, from W as it is now, and go on
            self.pattern_grown += 1
            self._follow_nonzeros(least_room=2 * pattern[1].shape[0])
            stop = STOP_NONE
        elif stop == STOP_DENSE:
            self._pattern = None
            stop = STOP_NONE
        return taken, stop

    def measure(self, with_loss: bool = True) -> Measurement:
        """The current counts (also refreshes ``counts``); the loss costs one W W^T, so
        ``with_loss=False`` leaves it NaN."""
        p = self.params
        pattern = self._pattern[:2] if self._pattern is not None else ()  # (rptr, rcol)
        poly, active, opp, same, kept, nonzero, norm1 = measure(
            self.W, self.first_neuron, self.counts, *pattern
        )
        l1_now, lr_now = values_in_force(p, self.step)
        return Measurement(
            step=self.step,
            t=self.t if p.optimizer in GD_OPTIMIZERS else math.nan,
            polysemantic=int(poly),
            predicted=p.prediction,
            active=int(active),
            opposite_pairs=int(opp),
            same_pairs=int(same),
            kept_share=kept / p.n,
            nonzero=int(nonzero),
            norm1=float(norm1),
            mean_norm2=float(np.mean(self.norm2)),
            loss=self.loss(norm1) if with_loss else float("nan"),
            l1=l1_now,
            lr=lr_now,
            sum_w4=mean_sum_w4(self.W),
            rail_share=self.rail_now,
            l0=l0_in_force(p, self.step) if p.sparsity == "jumprelu" else math.nan,
        )

    def loss(self, norm1: float | None = None) -> float:
        """The network's loss: sum_i (1-|W_i|^2)^2 + sum_{i!=j} ReLU(W_i.W_j)^2 + l1 |W|_1
        (without the middle term when interference is off: the loss being trained); under
        TopK or JumpReLU the same with a(W_i) for the hidden layer, and C L0 for JumpReLU (C
        in force at this step; without the noise, as for L1)."""
        W = self.W
        l1_now = values_in_force(self.params, self.step)[0]
        with np.errstate(all="ignore"):  # a diverged run's loss is inf, not a warning
            if norm1 is None:
                norm1 = float(np.abs(W).sum())
            if self.mechanism is not None and not self._identity:  # through a(W_i), and the L0 penalty
                reconstruction = self.mechanism.reconstruction_loss(W)  # (the mask the penalty counts)
                penalty = self.mechanism.penalty(l0_in_force(self.params, self.step))
                return reconstruction + penalty + l1_now * norm1
            own = float(np.sum((1.0 - self.norm2) ** 2))
            cross = 0.0
            if self.params.n > 1 and self.params.interference and self._pattern is not None:
                cross = positive_overlaps_squared(W, *self._pattern[:2])
            elif self.params.n > 1 and self.params.interference:
                G = W @ W.T
                np.fill_diagonal(G, 0.0)
                cross = float(np.sum(np.maximum(G, 0.0) ** 2))
            return own + cross + l1_now * norm1

    def record(self) -> Measurement:
        meas = self.measure()
        last = self.history.last()
        if last is None or int(last[0]) != self.step:
            self.history.append(meas.row())
            self._record_l0(meas)
            if self.sparsity_history is not None:
                self.sparsity_history.append()
            self._record_note_thresholds()
        return meas

    def _record_l0(self, meas: Measurement) -> None:
        if self.l0_history is not None:
            self.l0_history.append(np.array([float(meas.step), meas.l0]))

    def _record_note_thresholds(self) -> None:
        if self.note_threshold_history is not None:
            last = self.history.last()
            assert last is not None  # the history's row of this step came first
            l1 = float(last[HISTORY_COLUMNS.index("l1")])
            summary = threshold_summary(note_thresholds(self.W, l1))
            self.note_threshold_history.append(np.array([float(self.step), *summary]))

    def history_array(self) -> np.ndarray:
        return self.history.array()
