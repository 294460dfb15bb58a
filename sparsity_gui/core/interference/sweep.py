"""A sweep over m for fixed n: several seeds per m, each trained to the end, counting
polysemantic neurons against the paper's n^2/(4m) (its count-against-m figure).

Qt-free. `SweepSpec.run` (core/grid.GridPlan.run) reports progress through a callback and
stops between chunks when asked, so both the CLI's progress bar and the GUI's cancel button
use it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparsity_gui.core.blas import limit_blas_threads
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.grid import MAX_RUNS, GridPlan
from sparsity_gui.core.interference.kernels import ACTIVE_HI, ACTIVE_LO
from sparsity_gui.core.interference.params import (
    InterferenceParams,
    check_memory,
    check_training_work,
    predicted_polysemantic,
)
from sparsity_gui.core.interference.readouts import shrinkage
from sparsity_gui.core.interference.run import (
    COUNT_COLUMNS,
    Counts,
    InterferenceRun,
    Measurement,
    chunk_steps,
    step_work,
)
from sparsity_gui.core.threads import GridBook

# work between progress reports and cancel checks (~10-20 ms): cancel answers quickly at
# any size (one step per chunk at n = 256, m = 4096)
CHUNK_WORK = 1e8

# A run has settled when every feature still alive has an active weight and its counts
# (polysemantic neurons, active weights) did not change over the last SETTLE_SHARE of its
# steps; one that has not was stopped too early.
SETTLE_SHARE = 0.1
SETTLED_DEFINITION = (
    f"every feature still alive has an active weight, and the counts (polysemantic neurons, "
    f"active weights) did not change over the last {SETTLE_SHARE:.0%} of the steps"
)


@dataclass(frozen=True)
class SweepRow(Counts):
    """One finished run of a sweep: its settings and its final Measurement's counts."""

    m: int
    seed: int
    n: int
    steps: int
    optimizer: str
    settled: bool  # see SETTLED_DEFINITION
    seconds: float
    dtype: str = "float64"  # the run's precision (InterferenceParams.dtype)
    sum_w4: float = math.nan  # the mean over features of sum_k W_ik^4 (run.mean_sum_w4)
    steps_to_sparse: int = -1  # the optimizer lab's readouts (readouts.py); -1: never sparse
    rail_share: float = math.nan
    shrinkage_ratio: float = math.nan

    @classmethod
    def of(cls, run: InterferenceRun, seconds: float, before: Measurement | None = None) -> SweepRow:
        """The row of a finished run; ``before`` is its measurement SETTLE_SHARE of the steps
        before the end (None: settled by definition, e.g. a run too short to tell)."""
        meas = run.measure(with_loss=False)
        counts = {name: getattr(meas, name) for name in COUNT_COLUMNS}
        a = np.abs(run.W)
        on_its_way = (a > 0).any(axis=1) & ~((a >= ACTIVE_LO) & (a <= ACTIVE_HI)).any(axis=1)
        unchanged = before is None or (before.polysemantic, before.active) == (meas.polysemantic, meas.active)
        settled = unchanged and not on_its_way.any()
        settings = {name: getattr(run.params, name) for name in ("m", "seed", "n", "optimizer", "dtype")}
        return cls(
            **settings,
            **counts,
            steps=run.step,
            seconds=seconds,
            settled=settled,
            sum_w4=meas.sum_w4,
            steps_to_sparse=-1 if run.steps_to_sparse is None else run.steps_to_sparse,
            rail_share=run.rail_share_mean,
            shrinkage_ratio=shrinkage(run.W, run.params.l1)[2],
        )


# sweep.csv's columns: a SweepRow's fields, the run's settings before its counts
ROW_COLUMNS = (
    *("m", "seed", "n", *COUNT_COLUMNS),
    *("steps", "optimizer", "settled", "seconds", "dtype", "sum_w4"),
    *("steps_to_sparse", "rail_share", "shrinkage_ratio"),
)


def train_run(
    p: InterferenceParams,
    stopping: Callable[[], bool] = lambda: False,
    on_steps: Callable[[int], None] | None = None,
) -> SweepRow | None:
    """Train one run of a sweep to its end and return its row; None when stopping() said
    so between two chunks. ``on_steps(taken)`` after every chunk. Raises InputError (naming
    the run) when the run diverges."""
    run = InterferenceRun(p)
    t0 = time.perf_counter()
    chunk = chunk_steps(p, CHUNK_WORK, 1000)
    mark = p.steps - int(SETTLE_SHARE * p.steps)  # the counts here are compared with the end's
    before = None
    while not run.finished:
        if stopping():
            return None
        if before is None and run.step == mark and mark < p.steps:
            before = run.measure(with_loss=False)
        taken = run.advance(min(chunk, mark - run.step) if run.step < mark else chunk)
        if on_steps is not None:
            on_steps(taken)
    if run.failure is not None:
        raise InputError("lr", f"run m={p.m} seed={p.seed}: {run.failure}")
    return SweepRow.of(run, seconds=time.perf_counter() - t0, before=before)


def sweep_task(p: InterferenceParams) -> SweepRow:
    """One run as a cluster task, in a worker process: the same kernels, one BLAS thread
    (as SweepSpec.run's threads have), so the row equals the local one digit for digit."""
    limit_blas_threads(1)
    row = train_run(p)
    assert row is not None  # nothing stops it but a cancel, which discards the task
    return row


@dataclass(frozen=True)
class SweepSpec(GridPlan):
    """The runs of a sweep: every m in ``m_values`` times seeds seed0 .. seed0+seeds-1,
    each with ``base``'s other parameters."""

    base: InterferenceParams
    m_values: tuple[int, ...] = (64, 128, 256, 512, 1024)
    seeds: int = 4

    def __post_init__(self) -> None:
        if not isinstance(self.seeds, int) or isinstance(self.seeds, bool) or self.seeds < 1:
            raise InputError("seeds", f"must be a whole number of at least 1, got {self.seeds!r}")
        if self.base.seed + self.seeds - 1 >= 2**63:
            raise InputError(
                "seeds", f"seeds {self.base.seed} .. {self.base.seed + self.seeds - 1} go past 2^63-1"
            )
        if not self.m_values:
            raise InputError("m", "needs at least one value of m")
        ms = tuple(sorted(set(int(m) for m in self.m_values)))
        if len(ms) * self.seeds > MAX_RUNS:
            raise InputError(
                "seeds", f"{len(ms)} values of m x {self.seeds} seeds is more than {MAX_RUNS} runs"
            )
        for m in ms:
            self.base.with_changes(m=m)  # validates m
        object.__setattr__(self, "m_values", ms)

    def runs(self) -> list[InterferenceParams]:
        return [
            self.base.with_changes(m=m, seed=self.base.seed + s)
            for m in self.m_values
            for s in range(self.seeds)
        ]

    what, work, doing, label, one_blas_thread = "a sweep", "train", "training", "sweep", True

    def check_memory(self, workers: int = 1) -> None:
        """Refuse a sweep whose ``workers`` largest runs side by side cannot fit."""
        m = max(self.m_values)
        try:
            check_memory(self.base.n * workers, m)  # each job holds its own n x m and n x n arrays
        except InputError:
            if workers == 1:
                check_memory(self.base.n, m)  # its own message: this one run is too big
            raise InputError(
                "jobs",
                f"{workers} runs of n = {self.base.n}, m = {m} side by side "
                f"do not fit in the memory available; use fewer jobs",
            ) from None

    def check_work(self) -> None:
        """Refuse a sweep whose longest run (the largest m) would pass the limit of bounded
        work (params.check_training_work)."""
        check_training_work(self.base.with_changes(m=max(self.m_values)))

    def cost(self, p: InterferenceParams) -> float:
        """Relative cost of one run, in multiply-adds."""
        return step_work(p) * p.steps

    def largest(self) -> str:
        return f"n = {self.base.n}, m = {max(self.m_values)}"

    def run_key(self, run: InterferenceParams) -> tuple[int, int]:
        return (run.m, run.seed)

    def row_key(self, row: SweepRow) -> tuple[int, int]:
        return (row.m, row.seed)

    def as_dict(self) -> dict[str, Any]:
        return {"m_values": list(self.m_values), "seeds": self.seeds, "base": self.base.as_dict()}

    def train(self, run: InterferenceParams, book: GridBook) -> None:
        """One run to its row (train_run), its cost told step by step (GridPlan.run runs
        the sweep: on a 2-core machine two workers are about twice as fast as one)."""
        per_step = self.cost(run) / run.steps
        row = train_run(run, book.stopping, lambda taken: book.add_cost(taken * per_step, run))
        if row is not None:
            book.finished(run, row, counted=True)  # its cost came in step by step

    task = staticmethod(sweep_task)


def rows_csv(rows: Sequence[SweepRow]) -> str:
    """A row per run, in ROW_COLUMNS order."""
    lines = [",".join(ROW_COLUMNS)]
    for r in rows:
        vals = []
        for f in ROW_COLUMNS:
            v = getattr(r, f)
            vals.append(repr(float(v)) if isinstance(v, float) else str(v))
        lines.append(",".join(vals))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SweepSummary:
    """Per m: mean and standard deviation of the polysemantic count over seeds; and the
    log-log slope of the means against m (n^2/(4m) predicts -1)."""

    m: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    runs: np.ndarray
    predicted: np.ndarray
    opposite_pairs: int
    same_pairs: int
    slope: float = math.nan  # see loglog_slope
    slope_points: int = 0  # the m values it was fitted over


# The prediction n^2/(4m) is a line of this slope on log-log axes.
PREDICTED_SLOPE = -1.0
BARS = "± 1 sample SD over seeds (divisor: seeds − 1)"


def loglog_slope(m: np.ndarray, mean: np.ndarray) -> tuple[float, int]:
    """Least-squares slope of log10(mean) against log10(m) over the m whose mean is > 0
    (a zero mean has no logarithm), and how many m that is; NaN with fewer than two."""
    keep = (np.asarray(mean) > 0) & (np.asarray(m) > 0)
    x, y = np.log10(np.asarray(m, float)[keep]), np.log10(np.asarray(mean, float)[keep])
    if x.size < 2 or np.ptp(x) == 0:
        return math.nan, int(x.size)
    dx = x - x.mean()
    return float(np.dot(dx, y - y.mean()) / np.dot(dx, dx)), int(x.size)


def summarize(rows: Sequence[SweepRow]) -> SweepSummary:
    ms = np.array(sorted({r.m for r in rows}), dtype=float)
    mean, std, count, pred = [], [], [], []
    for m in ms:
        vals = np.array([r.polysemantic for r in rows if r.m == m], dtype=float)
        n = next(r.n for r in rows if r.m == m)
        mean.append(vals.mean())
        std.append(vals.std(ddof=1) if vals.size > 1 else 0.0)  # the sample std over seeds
        count.append(vals.size)
        pred.append(predicted_polysemantic(n, int(m)))
    slope, points = loglog_slope(ms, np.array(mean))
    return SweepSummary(
        ms,
        np.array(mean),
        np.array(std),
        np.array(count),
        np.array(pred),
        sum(r.opposite_pairs for r in rows),
        sum(r.same_pairs for r in rows),
        slope,
        points,
    )
