"""The note's constants across m and lam: the exact solver run for every (m, lam, seed) of a
grid, each run reduced to one `ScalingRow` (time to one weight, lam*T, the fitted decay
constant c, the relative variance while two or more weights live, the balance of the two
pushes, the last weight against its fixed point).

The note says ||W||_1 = 1/Theta(1/sqrt(m) + lam t) and that full sparsity takes
Theta(1/lam); a grid over six decades of m shows the constants behind those Thetas.

`scaling_row` is one run: a top-level pure function of plain arguments (picklable, so a
process pool or a cluster can call it), the same computation as the `run` command of the
same settings (`simulate_samples`), so its t_one and fitted c are the `run` command's to
the last digit. `ScalingGrid.run` (core/grid.GridPlan.run) runs a grid with a pool of
threads (the numba kernels, the sort and the normal draw release the GIL), or as tasks on a
dask cluster (core/cluster.py), with a stop flag and a callback per finished row. Qt-free.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from sparsity_gui.core.blas import malloc_as_glibc_tunes_it
from sparsity_gui.core.cells import CellTable, cell_stats
from sparsity_gui.core.checks import available_memory
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.grid import MAX_RUNS, GridPlan
from sparsity_gui.core.note.metrics import BALANCE_LIMIT, COL, last_weight_fixed_point
from sparsity_gui.core.note.params import (
    BYTES_PER_WEIGHT,
    SimParams,
    check_grid_lam,
    check_memory,
    check_run_work,
)
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.threads import GridBook

SAMPLES = 501  # the `run` command's default: fitted c is a fit over these rows
# ||W||^2 relaxes onto its balance at rate ~2 (docs/theory.md §4): after t = 10 the start's
# imbalance has decayed by e^-20, and what is left is the quasi-static lag of the balance.
T_TRANSIENT = 10.0


@dataclass(frozen=True)
class ScalingRow:
    """One run of the grid. Times are the flow's; the rows it is measured on are the `run`
    command's: SAMPLES evenly spaced from t = 0 to 1.1 * t_one."""

    m: int
    lam: float
    seed: int
    t_one: float  # when one weight is left (run.json's t_one_weight_left)
    lam_t_one: float  # lam * t_one: Theta(1) by the note
    fitted_c: float  # w = 1/||W||_1 ~ w(0) + c lam t over the rows with m' >= 2 (run.json's fitted_c)
    fitted_c_bulk: float  # the same over the rows with m' >= 10: the bulk decay (run.json's)
    fit_max_rel_dev: float  # max |1/(w(0) + c lam t) - ||W||_1| / ||W||_1 over fitted_c's rows
    rel_var_mean: float  # Var[X]/E[X]^2 of the nonzero |W_k|, over the rows with m' >= 2
    rel_var_min: float
    rel_var_max: float
    balance_ratio: float  # feature push / regularization push, mean over m' >= 2, t >= T_TRANSIENT
    w_last: float  # the last weight at the end (1.1 * t_one)
    w_last_root: float  # the stable root of (1 - w^2) w = lam
    lam_norm1_0: float  # lam ||W(0)||_1: a balance needs lam ||W||_1 = (1-||W||^2)||W||^2 <= 1/4
    norm2_w0: float  # ||W(0)||^2
    balance_possible: bool  # lam ||W(0)||_1 <= 1/4 (run.json's regime)
    theta_rises: bool  # theta never fell on the run (run.json's regime)
    theta_rise_condition: bool  # (1 - ||W(0)||^2)||W(0)||^2 >= lam ||W(0)||_1: sufficient for theta_rises
    theta_fall: float  # theta's largest relative fall (0 when theta rose throughout)
    theta_fall_t: float  # when theta was lowest in that fall (NaN when theta rose throughout)
    sigma: float
    t_end: float
    seconds: float  # wall time of this run


# scaling.csv's columns: a ScalingRow's fields, in order
ROW_COLUMNS = tuple(f.name for f in fields(ScalingRow))
INT_COLUMNS = (
    "m",
    "seed",
    "balance_possible",
    "theta_rises",
    "theta_rise_condition",
)  # written as whole numbers (0/1)
# what the summary gives mean and standard deviation of, per (m, lam)
SUMMARY_COLUMNS = (
    "t_one",
    "lam_t_one",
    "fitted_c",
    "fitted_c_bulk",
    "fit_max_rel_dev",
    "rel_var_mean",
    "rel_var_min",
    "rel_var_max",
    "balance_ratio",
    "w_last",
    "w_last_root",
    "lam_norm1_0",
    "norm2_w0",
)


def in_regime(cell: ScalingCell) -> bool:
    """Whether a (m, lam) cell is in the note's regime (drawn filled): its mean lam ||W(0)||_1
    at most BALANCE_LIMIT = 1/4, so the balance is possible from the start."""
    return bool(cell.mean["lam_norm1_0"] <= BALANCE_LIMIT)


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


def scaling_row(
    m: int,
    lam: float,
    seed: int,
    sigma: float = 0.9,
    should_stop: Callable[[], bool] | None = None,
) -> ScalingRow:
    """One run of the grid: `sparsity-gui run --m m --lam lam --seed seed --sigma sigma`
    (exact method, default end, SAMPLES rows), reduced to its row. Raises ReplayStopped
    when should_stop() says so (checked between pieces of the solve)."""
    # numba and scipy load here, not with the module: a grid is checked without them
    from sparsity_gui.core.note.sampled import simulate_samples
    from sparsity_gui.core.note.simulation import ReplayStopped

    started = time.perf_counter()
    params = SimParams(m=int(m), lam=float(lam), sigma=float(sigma), seed=int(seed))
    if should_stop is not None and should_stop():
        raise ReplayStopped  # before drawing W(0): a second at m = 10^7, the one uninterruptible part
    run = simulate_samples(params, None, SAMPLES, should_stop=should_stop)
    rows = run.rows
    live = rows[:, COL["nonzero"]] >= 2
    rel_var = rows[live, COL["rel_var"]]
    balanced = live & (rows[:, COL["t"]] >= T_TRANSIENT)
    ratio = rows[balanced, COL["feature_push"]] / rows[balanced, COL["reg_push"]]
    last = rows[-1]
    regime = run.regime
    fall = regime["theta_fall"]
    return ScalingRow(
        **{name: getattr(params, name) for name in ("m", "lam", "seed", "sigma")},
        **{
            name: regime[name]
            for name in ("norm2_w0", "balance_possible", "theta_rises", "theta_rise_condition")
        },
        theta_fall=0.0 if fall is None else fall["fall"],
        theta_fall_t=math.nan if fall is None else fall["t_to"],
        t_one=run.t_one,
        lam_t_one=params.lam * run.t_one,
        fitted_c=run.fitted_c,
        fitted_c_bulk=run.fit.c_bulk,
        fit_max_rel_dev=run.fit.max_rel_dev,
        rel_var_mean=_mean(rel_var),
        rel_var_min=float(rel_var.min()) if rel_var.size else math.nan,
        rel_var_max=float(rel_var.max()) if rel_var.size else math.nan,
        balance_ratio=_mean(ratio),
        w_last=float(last[COL["norm1"]]) if last[COL["nonzero"]] == 1 else math.nan,
        w_last_root=last_weight_fixed_point(params.lam),
        lam_norm1_0=params.lam * float(rows[0, COL["norm1"]]),
        t_end=run.t_end,
        seconds=time.perf_counter() - started,
    )


def scaling_task(run: tuple[int, float, int, float]) -> ScalingRow:
    """One run as a cluster task, in a worker process: ``run`` is (m, lam, seed, sigma)."""
    m, lam, seed, sigma = run
    malloc_as_glibc_tunes_it()
    return scaling_row(m, lam, seed, sigma)


@dataclass(frozen=True)
class ScalingGrid(GridPlan):
    """Every m of ``m_values`` times every lam of ``lam_values`` times the seeds
    seed .. seed+seeds-1, W(0) ~ normal(0, sigma/sqrt(m)). The same seeds serve every
    (m, lam): at one m, the lam values share their W(0)."""

    m_values: tuple[int, ...]
    lam_values: tuple[float, ...]
    seeds: int = 3
    seed: int = 0
    sigma: float = 0.9

    def __post_init__(self) -> None:
        if not self.m_values:
            raise InputError("m", "needs at least one value of m")
        if not self.lam_values:
            raise InputError("lam", "needs at least one value of lam")
        if isinstance(self.seeds, bool) or not isinstance(self.seeds, int) or self.seeds < 1:
            raise InputError("seeds", f"must be a whole number of at least 1, got {self.seeds!r}")
        object.__setattr__(self, "seed", NOTE_SETTINGS.check("seed", self.seed))  # before seed + seeds
        for lam in self.lam_values:
            check_grid_lam(lam)
        for m in self.m_values:
            if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
                raise InputError("m", f"every m must be a whole number of at least 1, got {m!r}")
        ms = tuple(sorted({int(m) for m in self.m_values}))
        lams = tuple(sorted({float(lam) for lam in self.lam_values}))
        if len(ms) * len(lams) * self.seeds > MAX_RUNS:
            raise InputError(
                "seeds",
                f"{len(ms)} values of m x {len(lams)} of lam x {self.seeds} seeds "
                f"is more than {MAX_RUNS} runs",
            )
        if self.seed + self.seeds - 1 >= 2**63:
            raise InputError("seeds", f"seeds {self.seed} .. {self.seed + self.seeds - 1} go past 2^63-1")
        for m in ms:
            SimParams(m=m, lam=lams[0], sigma=self.sigma, seed=self.seed)  # m, sigma and seed in range
        object.__setattr__(self, "m_values", ms)
        object.__setattr__(self, "lam_values", lams)
        object.__setattr__(self, "sigma", float(self.sigma))

    def runs(self) -> list[tuple[int, float, int]]:
        """(m, lam, seed) of every run, in the order of scaling.csv."""
        return [
            (m, lam, self.seed + s)
            for m in self.m_values
            for lam in self.lam_values
            for s in range(self.seeds)
        ]

    what, work, doing, label = "a grid", "solve", "running", "scaling"

    def cost(self, run: tuple[int, float, int]) -> float:
        """Relative cost of a run (m, lam, seed): a sort of m weights and about one solver
        step per death."""
        m = run[0]
        return m * (math.log2(m + 1) + 8.0) + 5e4

    def largest(self) -> str:
        return f"m = {max(self.m_values)}"

    def run_key(self, run: tuple[int, float, int]) -> tuple[int, float, int]:
        return run

    def row_key(self, row: ScalingRow) -> tuple[int, float, int]:
        return (row.m, row.lam, row.seed)

    def check_memory(self, workers: int = 1) -> None:
        """Refuse a grid whose largest run, or ``workers`` of its largest runs side by side,
        cannot fit in the memory available now."""
        largest = max(self.m_values)
        check_memory(largest)  # its own message: this one run is too big
        need = BYTES_PER_WEIGHT * largest * workers
        avail = available_memory()
        if workers > 1 and avail is not None and need > avail:
            raise InputError(
                "jobs",
                f"{workers} runs of m = {largest} side by side need about {need / 2**30:.1f} GiB, "
                f"only {avail / 2**30:.1f} GiB is available; use fewer jobs",
            )

    def check_work(self) -> None:
        """Refuse a grid whose longest run (the largest m at the smallest lam, to one weight
        left) would pass the limit of bounded work (params.check_run_work)."""
        check_run_work(SimParams(m=max(self.m_values), lam=min(self.lam_values), sigma=self.sigma))

    def row(self, run: tuple[int, float, int], should_stop: Callable[[], bool]) -> ScalingRow:
        """The row of the run (m, lam, seed): scaling_row."""
        return scaling_row(*run, self.sigma, should_stop=should_stop)

    def train(self, run: tuple[int, float, int], book: GridBook) -> None:
        """One run to its row (GridPlan.run runs the grid); a stop ends it within a few
        milliseconds."""
        from sparsity_gui.core.note.simulation import ReplayStopped

        try:
            row = self.row(run, book.stopping)
        except ReplayStopped:
            return
        except InputError as exc:  # naming the run
            m, lam, seed = run
            raise InputError(exc.field, f"run m={m} lam={lam:g} seed={seed}: {exc.message}") from None
        book.finished(run, row)

    task = staticmethod(scaling_task)

    def task_args(self, run: tuple[int, float, int]) -> tuple[int, float, int, float]:
        return (*run, self.sigma)

    def as_dict(self) -> dict[str, Any]:
        return {
            "m_values": list(self.m_values),
            "lam_values": list(self.lam_values),
            "seeds": self.seeds,
            "seed": self.seed,
            "sigma": self.sigma,
            "method": "exact",
            "samples": SAMPLES,
        }


# --- files and summaries ---------------------------------------------------------------------
def rows_csv(rows: Sequence[ScalingRow]) -> str:
    """scaling.csv: a row per run, ROW_COLUMNS; floats as repr (they read back bit for bit)."""
    lines = [",".join(ROW_COLUMNS)]
    for r in rows:
        lines.append(
            ",".join(
                str(int(getattr(r, f))) if f in INT_COLUMNS else repr(float(getattr(r, f)))
                for f in ROW_COLUMNS
            )
        )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ScalingCell:
    """Mean and sample standard deviation over the seeds of one (m, lam), per column;
    NaN values (a run too short to have them) are left out."""

    m: int
    lam: float
    runs: int
    mean: dict[str, float]
    std: dict[str, float]
    theta_fell: int = 0  # runs on which theta fell (theta_rises false)


def summarize(rows: Sequence[ScalingRow]) -> list[ScalingCell]:
    """A cell per (m, lam) present in ``rows``, ordered by m, then lam (core/cells.cell_stats
    of each column, NaN for its None)."""
    cells = []
    for m, lam in sorted({(r.m, r.lam) for r in rows}):
        group = [r for r in rows if r.m == m and r.lam == lam]
        stats = {name: cell_stats([getattr(r, name) for r in group]) for name in SUMMARY_COLUMNS}
        mean = {name: math.nan if st["mean"] is None else st["mean"] for name, st in stats.items()}
        std = {name: math.nan if st["std"] is None else st["std"] for name, st in stats.items()}
        cells.append(ScalingCell(m, lam, len(group), mean, std, sum(1 for r in group if not r.theta_rises)))
    return cells


@dataclass(frozen=True)
class ScalingCells:
    """One column of the rows per cell of the grid, as its live panels and its exported
    figures draw it: lam down (a curve each), m across, each cell's mean and SD over seeds
    (``table``, core/cells.CellTable), and whether the cell is in the note's regime
    (``regime``: its mean lam ||W(0)||_1 at most BALANCE_LIMIT; drawn filled)."""

    m_values: tuple[int, ...]
    lam_values: tuple[float, ...]
    table: CellTable
    regime: np.ndarray  # bools, (lam, m)


def scaling_cells(
    rows: Sequence[ScalingRow], column: str, m_values: Sequence[int] = (), lam_values: Sequence[float] = ()
) -> ScalingCells:
    """``column`` of ``rows`` per cell of the grid whose plan is ``m_values`` by
    ``lam_values`` (and any other m or lam the rows hold)."""
    ms = tuple(sorted({int(m) for m in m_values} | {int(r.m) for r in rows}))
    lams = tuple(sorted({float(lam) for lam in lam_values} | {float(r.lam) for r in rows}))
    m_index = {m: i for i, m in enumerate(ms)}
    lam_index = {lam: i for i, lam in enumerate(lams)}
    places = [(lam_index[float(r.lam)], m_index[int(r.m)]) for r in rows]
    shape = (len(lams), len(ms))
    table = CellTable.of(places, [getattr(r, column) for r in rows], shape)
    start = CellTable.of(places, [r.lam_norm1_0 for r in rows], shape)
    return ScalingCells(ms, lams, table, start.mean <= BALANCE_LIMIT)
