"""A sweep over m for fixed n: several seeds per m, each trained to the end, counting
polysemantic neurons against the paper's n^2/(4m) (its count-against-m figure).

Qt-free. `run_sweep` reports progress through a callback and stops between chunks when
asked, so both the CLI's progress bar and the GUI's cancel button use it.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np

from .errors import InputError
from .interference import InterferenceParams, InterferenceRun, check_memory

CHUNK_STEPS = 250  # steps between progress reports and cancel checks
MAX_RUNS = 10_000

ROW_COLUMNS = ("m", "seed", "n", "polysemantic", "predicted", "active", "opposite_pairs",
               "same_pairs", "kept_share", "nonzero", "steps", "optimizer", "seconds")


def parse_m_values(text: str) -> tuple[int, ...]:
    """'64,128,256' or a range 'start:stop:step' (stop included), e.g. '256:4096:256'."""
    text = text.strip()
    try:
        if ":" in text:
            parts = [int(float(x)) for x in text.split(":")]
            if len(parts) != 3 or parts[2] <= 0:
                raise ValueError
            start, stop, step = parts
            values = list(range(start, stop + 1, step))
        else:
            values = [int(float(x)) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise InputError("m", f"expected a list like 64,128,256 or a range start:stop:step, "
                         f"got {text!r}") from None
    if not values:
        raise InputError("m", f"no values of m in {text!r}")
    return tuple(values)


@dataclass(frozen=True)
class SweepSpec:
    """The runs of a sweep: every m in ``m_values`` times seeds seed0 .. seed0+seeds-1,
    each with ``base``'s other parameters."""

    base: InterferenceParams
    m_values: tuple[int, ...] = (64, 128, 256, 512, 1024)
    seeds: int = 4

    def __post_init__(self) -> None:
        if not isinstance(self.seeds, int) or isinstance(self.seeds, bool) or self.seeds < 1:
            raise InputError("seeds", f"must be a whole number of at least 1, got {self.seeds!r}")
        if not self.m_values:
            raise InputError("m", "needs at least one value of m")
        ms = tuple(sorted(set(int(m) for m in self.m_values)))
        if len(ms) * self.seeds > MAX_RUNS:
            raise InputError("seeds", f"{len(ms)} values of m x {self.seeds} seeds is more "
                             f"than {MAX_RUNS} runs")
        for m in ms:
            self.base.with_changes(m=m)  # validates m
        object.__setattr__(self, "m_values", ms)

    def runs(self) -> list[InterferenceParams]:
        return [self.base.with_changes(m=m, seed=self.base.seed + s)
                for m in self.m_values for s in range(self.seeds)]

    def check_memory(self) -> None:
        check_memory(self.base.n, max(self.m_values))

    def cost(self, p: InterferenceParams) -> float:
        """Relative cost of one run: the two matrix products per step, n^2 m each."""
        return float(p.n) * p.n * p.m * p.steps + float(p.n) * p.m * p.steps

    def total_cost(self) -> float:
        return sum(self.cost(p) for p in self.runs())

    def with_changes(self, **changes: Any) -> "SweepSpec":
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return {"m_values": list(self.m_values), "seeds": self.seeds,
                "base": self.base.as_dict()}


@dataclass(frozen=True)
class SweepRow:
    m: int
    seed: int
    n: int
    polysemantic: int
    predicted: float
    active: int
    opposite_pairs: int
    same_pairs: int
    kept_share: float
    nonzero: int
    steps: int
    optimizer: str
    seconds: float


@dataclass(frozen=True)
class SweepProgress:
    done_runs: int
    total_runs: int
    fraction: float  # of the total cost
    elapsed: float
    eta_seconds: float  # estimated time left (NaN until there is a rate)
    current: InterferenceParams | None
    row: SweepRow | None = None  # set when a run has just finished


class SweepCancelled(Exception):
    pass


def run_sweep(spec: SweepSpec,
              on_progress: Callable[[SweepProgress], None] | None = None,
              should_stop: Callable[[], bool] | None = None,
              done_rows: Sequence[SweepRow] = ()) -> list[SweepRow]:
    """Train every run of ``spec`` in turn and return a row per run. Raises
    SweepCancelled (with the rows so far in ``args[0]``) when should_stop() says so, and
    InputError when a run diverges (naming the run)."""
    spec.check_memory()
    runs = spec.runs()
    total = spec.total_cost()
    rows: list[SweepRow] = list(done_rows)
    done_cost = sum(spec.cost(p) for p in runs[:len(rows)])
    started = time.perf_counter()
    cost_at_start = done_cost

    def report(current, row=None):
        if on_progress is None:
            return
        elapsed = time.perf_counter() - started
        worked = done_cost - cost_at_start
        eta = (total - done_cost) * elapsed / worked if worked > 0 and elapsed > 0 else math.nan
        on_progress(SweepProgress(len(rows), len(runs), done_cost / total if total else 1.0,
                                  elapsed, eta, current, row))

    for p in runs[len(rows):]:
        report(p)
        run = InterferenceRun(p)
        t0 = time.perf_counter()
        per_step = spec.cost(p) / p.steps
        while not run.finished:
            if should_stop is not None and should_stop():
                raise SweepCancelled(rows)
            done_cost += run.advance(CHUNK_STEPS) * per_step
            report(p)
        if run.failure is not None:
            raise InputError("lr", f"run m={p.m} seed={p.seed}: {run.failure}")
        meas = run.measure(with_loss=False)
        row = SweepRow(m=p.m, seed=p.seed, n=p.n, polysemantic=meas.polysemantic,
                       predicted=meas.predicted, active=meas.active,
                       opposite_pairs=meas.opposite_pairs, same_pairs=meas.same_pairs,
                       kept_share=meas.kept_share, nonzero=meas.nonzero, steps=run.step,
                       optimizer=p.optimizer, seconds=time.perf_counter() - t0)
        rows.append(row)
        report(None, row)
    return rows


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
    """Per m: mean and standard deviation of the polysemantic count over seeds."""

    m: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    runs: np.ndarray
    predicted: np.ndarray
    opposite_pairs: int
    same_pairs: int


def summarize(rows: Sequence[SweepRow]) -> SweepSummary:
    ms = np.array(sorted({r.m for r in rows}), dtype=float)
    mean, std, count, pred = [], [], [], []
    for m in ms:
        vals = np.array([r.polysemantic for r in rows if r.m == m], dtype=float)
        n = next(r.n for r in rows if r.m == m)
        mean.append(vals.mean())
        std.append(vals.std())
        count.append(vals.size)
        pred.append(n * n / (4.0 * m))
    return SweepSummary(ms, np.array(mean), np.array(std), np.array(count), np.array(pred),
                        sum(r.opposite_pairs for r in rows), sum(r.same_pairs for r in rows))

