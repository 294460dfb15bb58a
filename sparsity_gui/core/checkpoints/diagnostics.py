"""Diagnostics of a series of snapshots that hold for any trainer (a SAELens or
dictionary_learning SAE as much as the paper's toy model): computed from the snapshots
alone, with or without a model that predicts them.

- **The rail share** (per pair of consecutive snapshots): the share of weights whose move
  |w(s1) - w(s0)| lies within RAIL_BAND (25 %) of lr (s1 - s0), the most Adam moves a weight
  in that many steps. Adam's step is lr m/(sqrt(v) + eps): for a gradient of steady sign,
  m/sqrt(v) is the gradient's size over its root mean square across the second moment's
  memory (1/(1 - beta2) = 1000 steps), 1 when the size holds, so a weight the L1 term drives
  to zero moves by about lr a step whatever the coefficient: only the gradient's direction
  counts (SAELens #719). The size drifts as the weights change: in torch's Adam on the
  paper's loss the shrinking weights of a saturated run move at 0.7 to 1.0 lr a step
  (tests/core/test_diagnostics.py). Within 25 % of lr, no coefficient could make a weight
  shrink more than 4/3 as fast; a weight that turns or stops inside the pair moves well
  below. From the snapshots the share counts the net move; the per-step truth is the path
  (the sum of each step's move): they differ only for a weight that turns inside the pair.
- **The saturation verdict** (Adam, AdamW, signSGD): over the last SATURATION_TAIL of the steps, the
  share K of the shrinking weights (|w| smaller at the pair's end, above the zero tolerance at
  its start) that moved on the rail; from SATURATION_SHARE on, "a larger coefficient will not
  sparsify faster": the weights already shrink as fast as lr lets them.
- **Deaths over training**: per snapshot, the share of weights within the zero tolerance,
  and, for SAELens checkpoints, the share of latents that never fired in the window its
  ``sparsity.safetensors`` covers (log10 frequency <= NEVER_FIRES_LOG10: SAELens stores
  log10(frequency + 1e-10), so -10 is "never"); the step at which deaths begin (the first
  snapshot where a weight alive at the first is dead; a latent firing at the first that
  never fires).
- **A death forecast** from the first snapshot, where a model applies: for one row under
  plain SGD the note's exact flow (lam = l1/4, t = 4 lr (step - step0): weight k dies when
  C(t) reaches |w_k|), under Adam, AdamW or signSGD the rail bound step0 + |w_k|/lr (the earliest a
  weight can reach zero, moving lr a step); against each weight's observed death step (the
  first snapshot from which it stays within the tolerance), with Spearman's rank
  correlation over the weights alive at the first snapshot that die in either (a weight
  that does not die within the series ranks after every death).

Qt-free; the tracker reads each snapshot once, as core/checkpoints/compare.py hands it over."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.series import SAE_WEIGHTS

RAIL_BAND = 0.25
RAIL_OPTIMIZERS = ("adam", "adamw", "signsgd")  # signsgd: every step is lr exactly
FLOW_OPTIMIZERS = ("sgd", "gd", "gd-zero")
SATURATION_TAIL = 0.2
SATURATION_SHARE = 0.5
SPARSITY_FILE = "sparsity.safetensors"
SPARSITY_TENSOR = "sparsity"
NEVER_FIRES_LOG10 = -9.5  # stored log10(f + 1e-10): -10 never fired; one firing in 3e9 is -9.5

COLUMNS = ("rail_share", "rail_share_shrinking", "dead_share", "dead_latent_share", "dead_share_forecast")
DEATH_COLUMNS = ("weight", "w_first", "forecast_step", "observed_step", "observed_after")

RAIL_STATEMENT = (
    f"a weight is on the rail between two snapshots when its move |dw| is within {RAIL_BAND:.0%} "
    "of lr x (steps between them): Adam's most, a step of lr per step whatever the gradient's size"
)


@dataclass
class DeathForecast:
    """Each weight's forecast and observed death step (NaN: not within the series), from the
    first snapshot. ``kind``: "flow" (the note's exact flow), "rail" (|w|/lr steps) or ""
    (no model applies: ``note`` says why)."""

    kind: str
    note: str
    w_first: np.ndarray
    forecast: np.ndarray
    observed: np.ndarray
    observed_after: np.ndarray  # the snapshot before the observed one: the death lies between
    alive_first: np.ndarray  # bool: above the tolerance at the first snapshot
    spearman: float
    compared: int  # weights in the rank correlation

    def rows(self) -> np.ndarray:
        """deaths.csv's rows (DEATH_COLUMNS): one per weight."""
        k = np.arange(self.w_first.size, dtype=np.float64)
        return np.column_stack([k, self.w_first, self.forecast, self.observed, self.observed_after])


@dataclass
class Diagnostics:
    """The diagnostics of a series (see the module): per snapshot in ``table`` (COLUMNS),
    the verdict's share and text, the steps deaths begin at and the death forecast."""

    steps: np.ndarray
    table: np.ndarray
    optimizer: str
    lr: float
    zero_tol: float
    saturation_share: float  # K over the last SATURATION_TAIL (NaN: no shrinking weight)
    saturation_from: int  # the first step of the pairs K counts
    saturated: bool | None  # None: not Adam (no rail)
    verdict: str
    deaths_begin: int | None
    latent_deaths_begin: int | None
    latents_read: bool
    forecast: DeathForecast
    notes: list[str] = field(default_factory=list)

    def column(self, name: str) -> np.ndarray:
        return self.table[:, COLUMNS.index(name)]

    def summary(self) -> dict:
        """run.json's "diagnostics"."""
        f = self.forecast
        return {
            "rail": RAIL_STATEMENT,
            "rail_band": RAIL_BAND,
            "saturation": {
                "share": self.saturation_share,
                "from_step": self.saturation_from,
                "threshold": SATURATION_SHARE,
                "saturated": self.saturated,
                "verdict": self.verdict,
            },
            "deaths_begin": self.deaths_begin,
            "latent_deaths_begin": self.latent_deaths_begin,
            "death_forecast": {
                "kind": f.kind,
                "note": f.note,
                "spearman": f.spearman,
                "weights_compared": f.compared,
            },
            "notes": self.notes,
        }

    def lines(self) -> list[str]:
        """The diagnostics in words, one line each: the command's summary and the dock's."""
        out = [self.verdict]
        dead = self.column("dead_share")
        begin = (
            "no weight dies" if self.deaths_begin is None else f"deaths begin at step {self.deaths_begin:,}"
        )
        out.append(
            f"deaths: {dead[0]:.0%} of the weights dead at the first snapshot, {dead[-1]:.0%} at the "
            f"last; {begin}"
        )
        if self.latents_read:
            lat = self.column("dead_latent_share")
            begin = (
                "none stops firing"
                if self.latent_deaths_begin is None
                else f"latent deaths begin at step {self.latent_deaths_begin:,}"
            )
            out.append(
                f"latents never firing ({SPARSITY_FILE}): {_pct(lat[0])} at the first snapshot, "
                f"{_pct(lat[-1])} at the last; {begin}"
            )
        f = self.forecast
        if f.kind:
            what = "the note's flow" if f.kind == "flow" else "the rail bound |w|/lr (the earliest death)"
            rho = "n/a (fewer than 3 weights die)" if math.isnan(f.spearman) else f"{f.spearman:.3f}"
            out.append(
                f"death forecast by {what}: Spearman rank correlation with the observed deaths "
                f"{rho} ({f.compared} weights)"
            )
        else:
            out.append(f"death forecast: {f.note}")
        return out


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.0%}"


def rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (ties share their mean rank); NaN under 3 values or
    when either is constant."""
    from scipy.stats import rankdata

    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 3:
        return math.nan
    ra, rb = rankdata(a), rankdata(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = math.sqrt(float(ra @ ra) * float(rb @ rb))
    return float(ra @ rb) / den if den > 0 else math.nan


def read_log_sparsity(weights_file: Path) -> np.ndarray | None:
    """SAELens' log10 latent frequencies beside a checkpoint's weights (None: no such file)."""
    from sparsity_gui.core.weights_files import list_arrays, read_array

    path = Path(weights_file).parent / SPARSITY_FILE
    if not path.is_file():
        return None
    _, infos = list_arrays(path, "checkpoints")
    names = [i.name for i in infos]
    name = SPARSITY_TENSOR if SPARSITY_TENSOR in names else (names[0] if len(names) == 1 else None)
    if name is None:
        raise InputError(
            "checkpoints", f"{path}: no tensor {SPARSITY_TENSOR!r} (it holds {', '.join(map(str, names))})"
        )
    values, _ = read_array(path, name, field="checkpoints")
    return np.asarray(values, dtype=np.float64).reshape(-1)


class DiagnosticsTracker:
    """Fed each snapshot once, in order (``add``); ``finish`` gives the Diagnostics."""

    def __init__(self, series, *, l1: float, lr: float, optimizer: str, zero_tol: float):
        self.series = series
        self.steps = series.steps
        self.l1, self.lr, self.optimizer, self.tol = l1, lr, optimizer, zero_tol
        n = len(self.steps)
        self.table = np.full((n, len(COLUMNS)), np.nan)
        self.shrinking = np.zeros(n, dtype=np.int64)
        self.shrinking_on_rail = np.zeros(n, dtype=np.int64)
        self.prev: np.ndarray | None = None
        self.first: np.ndarray | None = None
        self.dead_since: np.ndarray | None = None  # index of the snapshot a dead run began; -1 alive
        self.latents_first: np.ndarray | None = None
        self.latent_deaths_begin: int | None = None
        self.latents_read = False
        self.notes: list[str] = []
        # SAELens writes sparsity.safetensors beside each checkpoint's weights (any layout)
        self.sparsity_files = series.snapshots[0].path.name == SAE_WEIGHTS

    def add(self, i: int, w: np.ndarray) -> None:
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        a = np.abs(w)
        dead = a <= self.tol
        row = self.table[i]
        if i == 0:
            self.first = w.copy()
            self.dead_since = np.where(dead, 0, -1)
        else:
            assert self.prev is not None and self.dead_since is not None
            rate = self.lr * float(self.steps[i] - self.steps[i - 1])
            move = np.abs(w - self.prev)
            on_rail = np.abs(move - rate) <= RAIL_BAND * rate
            row[COLUMNS.index("rail_share")] = float(np.mean(on_rail))
            prev_abs = np.abs(self.prev)
            shrinking = (a < prev_abs) & (prev_abs > self.tol)
            self.shrinking[i] = int(np.count_nonzero(shrinking))
            self.shrinking_on_rail[i] = int(np.count_nonzero(shrinking & on_rail))
            if self.shrinking[i]:
                row[COLUMNS.index("rail_share_shrinking")] = self.shrinking_on_rail[i] / self.shrinking[i]
            self.dead_since = np.where(dead, np.where(self.dead_since < 0, i, self.dead_since), -1)
        row[COLUMNS.index("dead_share")] = float(np.mean(dead))
        if self.sparsity_files:
            self._add_latents(i)
        self.prev = w.copy()

    def _add_latents(self, i: int) -> None:
        log_f = read_log_sparsity(self.series.snapshots[i].path)
        if log_f is None:
            if self.latents_read or i == 0:
                self.notes.append(f"no {SPARSITY_FILE} beside the checkpoint at step {int(self.steps[i]):,}")
            return
        ok = np.isfinite(log_f)
        never = ok & (log_f <= NEVER_FIRES_LOG10)
        if ok.any():
            self.table[i, COLUMNS.index("dead_latent_share")] = float(np.count_nonzero(never)) / float(
                np.count_nonzero(ok)
            )
        self.latents_read = True
        if self.latents_first is None:
            self.latents_first = ok & ~never
        elif self.latent_deaths_begin is None and (never & self.latents_first).any():
            self.latent_deaths_begin = int(self.steps[i])

    # --- at the end -------------------------------------------------------------------------
    def finish(self, matrix: bool) -> Diagnostics:
        assert self.first is not None and self.dead_since is not None
        steps = self.steps
        share, start = self._saturation()
        if self.optimizer in RAIL_OPTIMIZERS:
            saturated = bool(share >= SATURATION_SHARE) if not math.isnan(share) else False
            k = "no weight shrank" if math.isnan(share) else f"{share:.0%}"
            if saturated:
                verdict = (
                    f"saturated: over the last {SATURATION_TAIL:.0%} of the steps (from step {start:,}), "
                    f"{k} of the shrinking weights moved at the learning rate: a larger coefficient "
                    "will not sparsify faster"
                )
            else:
                verdict = (
                    f"not saturated: over the last {SATURATION_TAIL:.0%} of the steps (from step "
                    f"{start:,}), {k} of the shrinking weights moved at the learning rate (saturated "
                    f"from {SATURATION_SHARE:.0%})"
                )
        else:
            saturated = None
            verdict = (
                f"no rail under {self.optimizer}: a step is lr times the gradient, so a larger "
                "coefficient shrinks weights faster (the rail share is shown, not judged)"
            )
        dead_first = self.dead_since == 0
        deaths_begin = None
        died = self.dead_since[self.dead_since > 0]
        if died.size:
            deaths_begin = int(steps[int(died.min())])
        forecast = self._forecast(matrix)
        self.table[:, COLUMNS.index("dead_share_forecast")] = [
            float(np.mean(dead_first | (forecast.forecast <= s))) for s in steps
        ]
        return Diagnostics(
            steps=steps,
            table=self.table,
            optimizer=self.optimizer,
            lr=self.lr,
            zero_tol=self.tol,
            saturation_share=share,
            saturation_from=start,
            saturated=saturated,
            verdict=verdict,
            deaths_begin=deaths_begin,
            latent_deaths_begin=self.latent_deaths_begin,
            latents_read=self.latents_read,
            forecast=forecast,
            notes=self.notes,
        )

    def _saturation(self) -> tuple[float, int]:
        """K over the pairs that start within the last SATURATION_TAIL of the steps (the
        last pair when none does), and the first step they cover."""
        steps = self.steps
        cut = steps[-1] - SATURATION_TAIL * (steps[-1] - steps[0])
        pairs = [i for i in range(1, len(steps)) if steps[i - 1] >= cut] or [len(steps) - 1]
        shrinking = int(self.shrinking[pairs].sum())
        share = self.shrinking_on_rail[pairs].sum() / shrinking if shrinking else math.nan
        return float(share), int(steps[pairs[0] - 1])

    def _forecast(self, matrix: bool) -> DeathForecast:
        assert self.first is not None and self.dead_since is not None
        steps = self.steps
        s0, last = float(steps[0]), float(steps[-1])
        w = self.first
        alive = np.abs(w) > self.tol
        died = self.dead_since > 0
        observed = np.where(died, steps[np.maximum(self.dead_since, 0)], np.nan).astype(float)
        after = np.where(died, steps[np.maximum(self.dead_since - 1, 0)], np.nan).astype(float)
        forecast = np.full(w.size, np.nan)
        kind, note = "", ""
        if self.optimizer in RAIL_OPTIMIZERS:
            kind = "rail"
            note = "the rail bound: step0 + |w|/lr, the earliest a weight moving lr a step reaches zero"
            with np.errstate(divide="ignore"):
                forecast = s0 + np.abs(w) / self.lr
        elif self.optimizer in FLOW_OPTIMIZERS and not matrix:
            kind = "flow"
            note = "the note's exact flow from the first snapshot: lam = l1/4, t = 4 lr (step - step0)"
            forecast = s0 + _flow_death_times(w, self.l1 / 4.0, 4.0 * self.lr * (last - s0)) / (4.0 * self.lr)
        elif matrix:
            note = "none: the note's flow is for one row, and no rail bounds plain SGD"
        else:
            note = f"none under {self.optimizer}: neither the note's flow nor a rail applies"
        forecast = np.where(forecast <= last, forecast, np.nan)  # after the series: not forecast in it
        forecast[~alive] = np.nan
        observed[~alive] = np.nan
        after[~alive] = np.nan
        rho, compared = math.nan, 0
        if kind:
            either = alive & (np.isfinite(forecast) | np.isfinite(observed))
            compared = int(np.count_nonzero(either))
            beyond = last + 1.0  # a death outside the series ranks after every one inside it
            rho = rank_correlation(
                np.where(np.isfinite(forecast), forecast, beyond)[either],
                np.where(np.isfinite(observed), observed, beyond)[either],
            )
        return DeathForecast(kind, note, w.copy(), forecast, observed, after, alive, rho, compared)


def _flow_death_times(w0: np.ndarray, lam: float, t_end: float) -> np.ndarray:
    """Each weight's death time in the note's exact flow from ``w0`` up to ``t_end`` (NaN:
    alive then, or zero at the start)."""
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.core.note.simulation import Simulation

    w0 = np.asarray(w0, dtype=np.float64)
    if not np.any(w0):
        return np.full(w0.size, np.nan)
    sim = Simulation(SimParams(m=int(w0.size), lam=float(lam), method="exact"), w0=w0, record=False)
    sim.advance(float(t_end))
    return sim.solver.death_times()
