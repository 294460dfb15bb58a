"""A sweep: the product of lists of the interference model's options (m, l1, lr, the
optimizer, ...: core/interference/axes.py) times several seeds, each run trained to the end;
its rows count polysemantic neurons against the paper's n^2/(4m) (its count-against-m
figure) and keep the optimizer lab's readouts.

Qt-free. `SweepSpec.run` (core/grid.GridPlan.run) reports progress through a callback and
stops between chunks when asked, so both the CLI's progress bar and the GUI's cancel button
use it.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sparsity_gui.core.blas import limit_blas_threads, malloc_as_glibc_tunes_it
from sparsity_gui.core.cells import cell_stats
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.grid import MAX_RUNS, GridPlan
from sparsity_gui.core.interference.axes import (
    AXES,
    NEVER_SPARSE,
    READOUTS,
    readout_values,
    row_value,
    value_text,
)
from sparsity_gui.core.interference.kernels import ACTIVE_HI, ACTIVE_LO
from sparsity_gui.core.interference.params import (
    InterferenceParams,
    check_memory,
    check_training_work,
    predicted_polysemantic,
)
from sparsity_gui.core.interference.readouts import run_readouts, shrinkage
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

# the most that a sweep with overlap=True may keep of W(0) W(T)^T, n x n per run
OVERLAP_BYTES = 2**30

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
    # the run's other settings, as a sweep may vary them (axes.row_value): a row says which
    # run it is whatever was varied
    l1: float = math.nan
    lr: float = math.nan
    weight_decay: float = math.nan  # the one in force (0.01 for adamw unless given)
    sigma: float = math.nan
    noise: str = "none"
    noise_sigma: float = 0.0
    l1_warmup: int = 0
    l1_schedule: str = ""  # knots step:value as the option's text; '' without
    lr_warmup: int = 0
    lr_decay: str = "none"
    lr_decay_steps: int = 0
    lr_schedule: str = ""
    # the sparsity mechanism (core/interference/mechanisms.py; k 0: no TopK) and its readouts
    sparsity: str = "l1"
    k: int = 0
    l0: float = 0.0
    bandwidth: float = 1e-3
    threshold_init: float = 1e-3
    threshold_param: str = "plain"
    l0_warmup: int = 0
    l0_schedule: str = ""  # knots step:value as the option's text; '' without
    l0_per_input: float = math.nan  # units kept per input at the end (NaN under l1)
    threshold_rail_share: float = math.nan  # JumpReLU's (readouts.threshold_rail_share)
    dead_units: float = math.nan  # hidden units kept by no input at the end (NaN under l1)
    threshold_saturated: bool = False  # JumpReLU's verdict: the threshold rail share above 1/2
    # W(0) W(T)^T (n x n) of a sweep with overlap=True, averaged per cell when written; not
    # a column of sweep.csv (a resumed run's row has none)
    overlap: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def of(
        cls, run: InterferenceRun, seconds: float, before: Measurement | None = None, overlap: bool = False
    ) -> SweepRow:
        """The row of a finished run; ``before`` is its measurement SETTLE_SHARE of the steps
        before the end (None: settled by definition, e.g. a run too short to tell); with
        ``overlap``, W(0) W(T)^T too."""
        meas = run.measure(with_loss=False)
        counts = {name: getattr(meas, name) for name in COUNT_COLUMNS}
        a = np.abs(run.W)
        on_its_way = (a > 0).any(axis=1) & ~((a >= ACTIVE_LO) & (a <= ACTIVE_HI)).any(axis=1)
        unchanged = before is None or (before.polysemantic, before.active) == (meas.polysemantic, meas.active)
        settled = unchanged and not on_its_way.any()
        settings = {name: row_value(run.params, name) for name in ("seed", "n", *SETTING_AXES)}
        found = run_readouts(run).get("sparsity", {})
        return cls(
            l0_per_input=found.get("l0_per_input", math.nan),
            threshold_rail_share=_or_nan(found.get("threshold_rail_share")),
            dead_units=float(found.get("dead_units", math.nan)),
            threshold_saturated=found.get("threshold_saturation") is not None,
            **settings,
            **counts,
            steps=run.step,
            seconds=seconds,
            settled=settled,
            sum_w4=meas.sum_w4,
            steps_to_sparse=-1 if run.steps_to_sparse is None else run.steps_to_sparse,
            rail_share=run.rail_share_mean,
            shrinkage_ratio=shrinkage(run.W, run.params.l1)[2],
            overlap=np.asarray(run.w0, float) @ np.asarray(run.W, float).T if overlap else None,
        )


# the axes a row keeps from its run's parameters (all but steps: the steps it took)
SETTING_AXES = tuple(a for a in AXES if a != "steps")

# sweep.csv's columns: a SweepRow's fields (the settings a sweep may vary last: they came later)
ROW_COLUMNS = (
    *("m", "seed", "n", *COUNT_COLUMNS),
    *("steps", "optimizer", "settled", "seconds", "dtype", "sum_w4"),
    *("steps_to_sparse", "rail_share", "shrinkage_ratio"),
    *(a for a in SETTING_AXES if a not in ("m", "optimizer", "dtype")),
    *("l0_per_input", "threshold_rail_share", "dead_units", "threshold_saturated"),
)


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def train_run(
    p: InterferenceParams,
    stopping: Callable[[], bool] = lambda: False,
    on_steps: Callable[[int], None] | None = None,
    overlap: bool = False,
) -> SweepRow | None:
    """Train one run of a sweep to its end and return its row (with ``overlap``, W(0) W(T)^T
    in it); None when stopping() said so between two chunks. ``on_steps(taken)`` after
    every chunk. Raises InputError (naming the run) when the run diverges."""
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
    return SweepRow.of(run, seconds=time.perf_counter() - t0, before=before, overlap=overlap)


def sweep_task(job: tuple[InterferenceParams, bool]) -> SweepRow:
    """One run (and whether its row keeps W(0) W(T)^T) as a cluster task, in a worker
    process: the same kernels, one BLAS thread (as SweepSpec.run's threads have), so the row
    equals the local one digit for digit."""
    p, overlap = job
    limit_blas_threads(1)
    malloc_as_glibc_tunes_it()
    row = train_run(p, overlap=overlap)
    assert row is not None  # nothing stops it but a cancel, which discards the task
    return row


@dataclass(frozen=True)
class SweepSpec(GridPlan):
    """The runs of a sweep: every m in ``m_values`` times every combination of the lists in
    ``axes`` (the other options varied, axes.AXES but m: ``(("l1", (1e-3, 1e-2)), ...)``)
    times seeds seed0 .. seed0+seeds-1, each with ``base``'s other parameters. A list of
    l1 (lr) schedules sets each run's l1 (lr) to its schedule's last value."""

    base: InterferenceParams
    m_values: tuple[int, ...] = (64, 128, 256, 512, 1024)
    seeds: int = 4
    axes: tuple[tuple[str, tuple], ...] = ()
    overlap: bool = False  # each row keeps W(0) W(T)^T; sweep writes their mean per cell

    def __post_init__(self) -> None:
        if not isinstance(self.seeds, int) or isinstance(self.seeds, bool) or self.seeds < 1:
            raise InputError("seeds", f"must be a whole number of at least 1, got {self.seeds!r}")
        if self.base.seed + self.seeds - 1 >= 2**63:
            raise InputError(
                "seeds", f"seeds {self.base.seed} .. {self.base.seed + self.seeds - 1} go past 2^63-1"
            )
        if not self.m_values:
            raise InputError("m", "needs at least one value of m")
        ms = tuple(sorted({int(m) for m in self.m_values}))
        axes = tuple((name, tuple(values)) for name, values in self.axes)
        names = [name for name, _ in axes]
        if any(name not in AXES[1:] for name in names) or len(set(names)) != len(names):
            raise InputError("sweep", f"axes must be distinct options of {', '.join(AXES[1:])}, got {names}")
        if any(not values for _, values in axes):
            raise InputError("sweep", "every varied option needs at least one value")
        axes = tuple(sorted(axes, key=lambda a: AXES.index(a[0])))
        cells = len(ms) * math.prod(len(v) for _, v in axes)
        if cells * self.seeds > MAX_RUNS:
            sizes = " x ".join(
                [
                    f"{len(ms)} values of m",
                    *(f"{len(v)} of {name}" for name, v in axes),
                    f"{self.seeds} seeds",
                ]
            )
            raise InputError("seeds", f"{sizes} is {cells * self.seeds} runs, more than {MAX_RUNS} runs")
        object.__setattr__(self, "m_values", ms)
        object.__setattr__(self, "axes", axes)
        if not isinstance(self.overlap, bool):
            raise InputError("overlap", f"must be true or false, got {self.overlap!r}")
        kept = self.base.n**2 * 8 * cells * self.seeds
        if self.overlap and kept > OVERLAP_BYTES:
            raise InputError(
                "overlap",
                f"keeps an n x n matrix per run: {cells * self.seeds} runs of n = {self.base.n} "
                f"would hold {kept / 2**30:.1f} GB (at most {OVERLAP_BYTES / 2**30:g} GB); use fewer "
                "runs or a smaller n",
            )
        seen: dict[tuple, dict] = {}
        for cell in self.cells():  # every combination valid, each bad value named by its option
            key = self.run_key(self.run_of(cell, self.base.seed))
            if key in seen:
                raise InputError(
                    "sweep",
                    f"two combinations of the lists make the same run ({_cell_text(seen[key])} and "
                    f"{_cell_text(cell)}): drop the values that make no difference (a noise sigma "
                    "without noise, decay steps without a decay)",
                )
            seen[key] = cell

    # --- the grid's cells ----------------------------------------------------------------
    def cells(self) -> list[dict[str, Any]]:
        """Every combination of m and the lists, as {option: value}, m outermost."""
        names = ["m", *(name for name, _ in self.axes)]
        lists = [self.m_values, *(values for _, values in self.axes)]
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*lists)]

    def run_of(self, cell: dict[str, Any], seed: int) -> InterferenceParams:
        """The run of one cell with one seed: a schedule in the lists sets the l1 (lr) it
        ends at; noise "none" has no sigma, lr decay "none" no length."""
        changes = dict(cell, seed=seed)
        for name in ("l1", "lr"):
            knots = cell.get(f"{name}_schedule")
            if knots:
                changes[name] = knots[-1][1]
        for kind, size, zero in (("noise", "noise_sigma", 0.0), ("lr_decay", "lr_decay_steps", 0)):
            if kind in cell and cell[kind] == "none":
                changes[size] = zero
        return self.base.with_changes(**changes)

    @property
    def varied(self) -> tuple[str, ...]:
        """The options with more than one value, in axes.AXES order: the figures' axes."""
        return tuple(name for name, values in (("m", self.m_values), *self.axes) if len(values) > 1)

    def values_of(self, axis: str) -> tuple:
        """The values of ``axis`` as rows keep them (axes.row_value), in the plan's order."""
        seen = dict.fromkeys(row_value(self.run_of(c, self.base.seed), axis) for c in self.cells())
        return tuple(seen)

    def runs(self) -> list[InterferenceParams]:
        return [self.run_of(cell, self.base.seed + s) for cell in self.cells() for s in range(self.seeds)]

    def describe(self, p: InterferenceParams) -> str:
        """A run as the progress line names it: the varied options and the seed."""
        parts = [f"{name}={value_text(name, row_value(p, name))}" for name in self.varied or ("m",)]
        return " ".join([*parts, f"seed={p.seed}"])

    def describe_row(self, row: SweepRow) -> str:
        """A finished run as messages name it: the varied options and the seed."""
        parts = [f"{name}={value_text(name, getattr(row, name))}" for name in self.varied or ("m",)]
        return " ".join([*parts, f"seed={row.seed}"])

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
        """Refuse a sweep with a run past the limit of bounded work
        (params.check_training_work): every cell's, the largest m and most steps among them."""
        runs = [self.run_of(cell, self.base.seed) for cell in self.cells()]
        for p in sorted(runs, key=self.cost, reverse=True):  # the message names the largest
            check_training_work(p)

    def cost(self, p: InterferenceParams) -> float:
        """Relative cost of one run, in multiply-adds."""
        return step_work(p) * p.steps

    def largest(self) -> str:
        return f"n = {self.base.n}, m = {max(self.m_values)}"

    def run_key(self, run: InterferenceParams) -> tuple:
        return (run.seed, *(row_value(run, name) for name, _ in (("m", ()), *self.axes)))

    def row_key(self, row: SweepRow) -> tuple:
        return (row.seed, *(getattr(row, name) for name, _ in (("m", ()), *self.axes)))

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "m_values": list(self.m_values),
            "seeds": self.seeds,
            "base": self.base.as_dict(),
        }
        if self.axes:  # a sweep over m alone writes what it wrote before other lists existed
            d["axes"] = {name: [_json_value(name, v) for v in values] for name, values in self.axes}
        if self.overlap:
            d["overlap"] = True
        return d

    def train(self, run: InterferenceParams, book: GridBook) -> None:
        """One run to its row (train_run), its cost told step by step (GridPlan.run runs
        the sweep: on a 2-core machine two workers are about twice as fast as one)."""
        per_step = self.cost(run) / run.steps
        row = train_run(run, book.stopping, lambda taken: book.add_cost(taken * per_step, run), self.overlap)
        if row is not None:
            book.finished(run, row, counted=True)  # its cost came in step by step

    task = staticmethod(sweep_task)

    def task_args(self, run: InterferenceParams) -> tuple[InterferenceParams, bool]:
        return (run, self.overlap)


def _cell_text(cell: dict[str, Any]) -> str:
    return " ".join(f"{name}={value_text(name, v)}" for name, v in cell.items())


def _json_value(axis: str, value: Any) -> Any:
    return [list(k) for k in value] if axis.endswith("_schedule") else value


def rows_csv(rows: Sequence[SweepRow]) -> str:
    """A row per run, in ROW_COLUMNS order; floats as repr (they read back bit for bit),
    a cell with a comma (a schedule's knots) in quotes, and steps_to_sparse empty for a run
    that never became sparse (run.json's null: no number a table would average)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ROW_COLUMNS)
    for r in rows:
        vals = []
        for f in ROW_COLUMNS:
            v = getattr(r, f)
            if f == "steps_to_sparse" and v == NEVER_SPARSE:
                vals.append("")
            else:
                vals.append(repr(float(v)) if isinstance(v, float) else str(v))
        writer.writerow(vals)
    return out.getvalue()


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
    """The polysemantic count per m of ``rows`` (core/cells.cell_stats: the mean and the
    sample SD over seeds), which the live panel, the figure and sweep.json give."""
    ms = np.array(sorted({r.m for r in rows}), dtype=float)
    mean, std, count, pred = [], [], [], []
    for m in ms:
        vals = [r.polysemantic for r in rows if r.m == m]
        n = next(r.n for r in rows if r.m == m)
        stats = cell_stats(vals)
        mean.append(stats["mean"])
        std.append(stats["std"])
        count.append(len(vals))
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


def cell_summaries(spec: SweepSpec, rows: Sequence[SweepRow]) -> list[dict[str, Any]]:
    """Per cell of ``spec`` (its values of the varied options, in the plan's order): the
    runs finished, n^2/(4m), and each readout's median, 10/90 % quantiles, mean and SD over
    them (core/cells.cell_stats); sweep.json's groups."""
    varied = spec.varied
    by_key: dict[tuple, list[SweepRow]] = {}
    for r in rows:
        by_key.setdefault(tuple(getattr(r, a) for a in varied), []).append(r)
    out = []
    seen: set[tuple] = set()
    for cell in spec.cells():
        run = spec.run_of(cell, spec.base.seed)
        key = tuple(row_value(run, a) for a in varied)
        if key in seen:
            continue
        seen.add(key)
        members = by_key.get(key, [])
        out.append(
            {
                "params": dict(zip(varied, key, strict=True)),
                "runs": len(members),
                "predicted": predicted_polysemantic(run.n, run.m),
                **{name: cell_stats(readout_values(members, name)) for name in READOUTS},
            }
        )
    return out


def cell_overlaps(
    spec: SweepSpec, rows: Sequence[SweepRow]
) -> tuple[list[dict[str, Any]], np.ndarray, list[int]]:
    """Per cell of ``spec`` (its values of the varied options, as cell_summaries): the mean
    over its runs of W(0) W(T)^T, as an array cells x n x n (NaN where no run kept one), and
    how many runs each mean is over (a resumed sweep's earlier runs kept none)."""
    varied = spec.varied
    params, keys = [], []
    for cell in spec.cells():
        key = tuple(row_value(spec.run_of(cell, spec.base.seed), a) for a in varied)
        if key not in keys:
            keys.append(key)
            params.append(dict(zip(varied, key, strict=True)))
    n = spec.base.n
    total = np.zeros((len(keys), n, n))
    count = [0] * len(keys)
    index = {k: i for i, k in enumerate(keys)}
    for r in rows:
        if r.overlap is not None:
            i = index[tuple(getattr(r, a) for a in varied)]
            total[i] += r.overlap
            count[i] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / np.array(count, float)[:, None, None]
    return params, mean, count
