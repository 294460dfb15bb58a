"""One run: W(0), the active solver, the lam schedule and the recorded history.

Synchronous and Qt-free: the CLI calls it directly, the GUI's worker thread hosts the
same object and steps it in bounded chunks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from sparsity_gui.core.history import History
from sparsity_gui.core.note import kernels as K
from sparsity_gui.core.note.changes import LamChange, LiveChange, RunScript, lam_schedule
from sparsity_gui.core.note.initial import initial_weights
from sparsity_gui.core.note.metrics import (
    COL,
    COLUMNS,
    DEFAULT_SAMPLES,
    DecayFit,
    Moments,
    fit_decay,
    regime_of,
    theta_fall,
    tied_group_dies,
)
from sparsity_gui.core.note.params import SimParams, needs_restart
from sparsity_gui.core.note.schedule import Knots, lam_integral
from sparsity_gui.core.note.solvers import (
    ExactSolver,
    GDSolver,
    InitialState,
    LamKnots,
    Solver,
    lam_knots_of,
)
from sparsity_gui.core.note.theta_probe import theta_at_start

N_TRACKED_MAX = 16
# The history keeps a row at every time 10^(k/ROWS_PER_DECADE) a run passes, however long
# the worker's chunk that passed it: consecutive rows are at most 2.3 % apart in t, on
# the log-time panels and the linear ones alike.
ROWS_PER_DECADE = 100
HISTORY_CAPACITY = 4096  # 40 decades of grid rows before the oldest are thinned
# From this m on, a run built to be shown (defer_ideal) leaves the idealized bounds out
# of its first rows and computes them once its first frame is up (2-4 s of quantiles at
# m = 10^7, otherwise spent before the first frame), then fills them in: they depend on m'
# alone.
DEFER_IDEAL_M = 1_000_000
# The solver's work between two looks at a should_stop() (max_work: weight-steps of gradient
# descent, steps of the exact flow): a few milliseconds of kernel, so that a stop request
# (a signal, a window closing) acts at once. Chunking changes no result: a kernel's next
# step depends only on the state it hands back.
STOP_CHECK_WORK = {"gd": 1 << 24, "exact": 1 << 16}


def tracked_ranks(nonzero: int, count: int = N_TRACKED_MAX) -> np.ndarray:
    """Ranks (in sorted |W(0)|) spread log-uniformly from the largest to the smallest
    nonzero weight: the winner, a few near the top, and some that die early."""
    if nonzero <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.round(np.geomspace(1, nonzero, min(count, nonzero))).astype(np.int64) - 1)


def shown_tracked(recorded: int, shown: int) -> np.ndarray:
    """Which of the ``recorded`` tracked weights a view of ``shown`` of them draws (the
    threshold panel, tracked.csv): indices spread evenly over them, the first (the
    largest weight) always among them."""
    k = min(int(shown), int(recorded))
    if k <= 0:
        return np.zeros(0, dtype=int)
    return np.unique(np.round(np.linspace(0, recorded - 1, k)).astype(int))


class ReplayStopped(Exception):
    """A replay was abandoned because its caller is shutting down."""


def _advance_stoppable(solver: Solver, t_target: float, should_stop, stop_nonzero: int = -1) -> None:
    if solver.diverged:
        return
    if should_stop is None:
        solver.advance_to(t_target, stop_nonzero)
        return
    work = STOP_CHECK_WORK[solver.method]
    while solver.advance_to(t_target, stop_nonzero, work) == K.REACHED_MAX_STEPS:
        if solver.diverged:
            return
        if should_stop():
            raise ReplayStopped


class Simulation:
    def __init__(
        self,
        params: SimParams,
        w0: np.ndarray | None = None,
        history_capacity: int = HISTORY_CAPACITY,
        *,
        record: bool = True,
        defer_ideal: bool = False,
    ):
        self.params = params
        self.initial_params = params  # lam, eta and method at t = 0 (self.params follows changes)
        w0 = initial_weights(params) if w0 is None else np.asarray(w0, dtype=np.float64)
        self.init = InitialState.from_weights(w0)
        self.ideal_pending = defer_ideal and self.init.m >= DEFER_IDEAL_M
        self.changes: list[LiveChange] = []  # every live change of lam, eta and method, in order
        # (t, lam before, lam after, ||W||_1, ||W||^2) at each live change of lam: the regime there
        self.lam_states: list[tuple[float, float, float, float, float]] = []
        self._change_rows_at: float | None = None  # apply_live's rows of this instant are open
        # λ(t)'s knots while the schedule is in force (a live change of λ ends it)
        self._schedule: Knots | None = params.lam_schedule or None
        self.solver: Solver = self._new_solver(params.method)
        self.tracked = tracked_ranks(self.init.nonzero0)
        self.history = History(len(COLUMNS) + N_TRACKED_MAX, history_capacity)
        self._lam_t = 0.0  # integral of lam dt up to the last record
        self._lam_t_at = 0.0
        # the grid starts two decades before the fastest initial rate |1 - ||W(0)||^2|
        # acts, and three before the median weight would die under lam alone
        rate = max(abs(1.0 - float(self.init.p2[-1])), 1.0)
        start = 1e-2 / rate
        lam_most = max([params.lam, *(v for _t, v in params.lam_schedule)])
        if lam_most > 0 and self.init.nonzero0 > 0:
            start = min(start, 1e-3 * float(self.init.u[self.init.nonzero0 // 2]) / lam_most)
        # the next grid time is grid_time(_grid_k)
        self._grid_k = math.floor(ROWS_PER_DECADE * math.log10(max(start, 1e-300)))
        self._probe_start = start
        self._theta_start: tuple[np.ndarray, np.ndarray] | None = None  # _theta_at_start's
        # (t, theta) of the run's own solve at its snapshots (note_snapshots)
        self._theta_seen: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))
        if record:
            self.record()

    @classmethod
    def from_script(
        cls,
        script: RunScript,
        history_capacity: int = HISTORY_CAPACITY,
        should_stop: Callable[[], bool] | None = None,
    ) -> Simulation:
        """The run replayed to ``script.t``, its history holding the sampled rows."""
        sim = cls(script.params, script.w0, history_capacity, record=False)
        sim.replay(script.changes, script.sample_times(), record=True, should_stop=should_stop)
        sim._theta_at_start(True)  # the history's rows are evenly spaced: measure theta's start
        return sim

    # --- construction ---------------------------------------------------------------
    def _new_solver(self, method: str, start: Solver | None = None) -> Solver:
        """A solver of ``method`` from W(0), or going on from ``start``'s state."""
        lam = self._lam_now_on()
        if method == "exact":
            return ExactSolver(self.init, lam, start)
        return GDSolver(self.init, lam, self.params.eta, start)

    @property
    def m(self) -> int:
        return self.init.m

    @property
    def t(self) -> float:
        return self.solver.t

    @property
    def lam(self) -> float:
        return self.solver.lam

    @property
    def method(self) -> str:
        return self.solver.method

    @property
    def lam_changes(self) -> tuple[LamChange, ...]:
        return lam_schedule(self.initial_params.lam, self.changes, self.initial_params.lam_schedule)

    def _lam_now_on(self) -> float | LamKnots:
        """λ from now on, as a solver takes it: the schedule's knots while it is in force,
        else the constant λ."""
        if self._schedule is None:
            return self.params.lam
        return lam_knots_of(self._schedule)

    # --- live changes (no reset) ----------------------------------------------------
    def _log_change(self, name: str, value: float | str) -> None:
        """Remember a live change (a later change of the same field at the same instant
        replaces it: only the last value at an instant matters)."""
        t = self.t
        for i in range(len(self.changes) - 1, -1, -1):
            c = self.changes[i]
            if c.t != t:
                break
            if c.name == name:
                self.changes[i] = LiveChange(t, name, value)
                return
        self.changes.append(LiveChange(t, name, value))

    def set_lam(self, lam: float) -> None:
        """A live change of λ: constant from now (it ends a schedule in force)."""
        if lam == self.solver.lam and self._schedule is None:
            return
        self._accumulate_lam_t()
        mo = self.solver.moments()
        # the last value at an instant counts
        before = self.lam_states.pop()[1] if self.lam_states and self.lam_states[-1][0] == mo.t else mo.lam
        if lam != before:
            self.lam_states.append((mo.t, before, float(lam), mo.norm1, mo.norm2_sq))
        self.solver.set_lam(lam)
        self._schedule = None
        self.params = self.params.with_changes(lam=lam, lam_schedule=())
        self._log_change("lam", float(lam))

    def set_eta(self, eta: float) -> None:
        if eta == self.params.eta:
            return  # (re-anchoring GD's step grid on a no-op would change t in the last digit)
        self.params = self.params.with_changes(eta=eta)
        if isinstance(self.solver, GDSolver):
            self.solver.set_eta(eta)
        self._log_change("eta", float(eta))

    def set_method(self, method: str) -> None:
        """Switch solver, continuing from the current W(t)."""
        if method == self.solver.method:
            return
        self.params = self.params.with_changes(method=method)
        self.solver = self._new_solver(method, self.solver)
        self._log_change("method", method)

    def apply_change(self, change: LiveChange) -> None:
        if change.name == "lam":
            self.set_lam(float(change.value))
        elif change.name == "eta":
            self.set_eta(float(change.value))
        elif change.name == "method":
            self.set_method(str(change.value))
        else:
            raise ValueError(f"not a live parameter: {change.name!r}")

    def script(self, t: float | None = None, samples: int = DEFAULT_SAMPLES) -> RunScript:
        """This run as a RunScript up to time t (default: now). Safe to call from another
        thread while the run goes on (it only copies immutable pieces)."""
        t = self.t if t is None else float(t)
        changes = tuple(c for c in tuple(self.changes) if c.t <= t)
        return RunScript(
            self.initial_params.with_changes(t_end=self.params.t_end), self.init.w0, changes, t, samples
        )

    def apply(self, params: SimParams) -> bool:
        """Apply a new parameter snapshot. Returns False when it needs a new run
        (m, sigma, seed or the initial condition changed): the caller rebuilds."""
        if needs_restart(self.params, params):
            return False
        self.set_method(params.method)
        self.set_eta(params.eta)
        if self._schedule is None or params.lam_schedule != self.params.lam_schedule:
            self.set_lam(params.lam)  # (a schedule in force goes on while the window's λ is its own)
        self.params = params
        return True

    def apply_live(self, params: SimParams) -> bool:
        """`apply` while the run is on screen. The history keeps a row of this instant
        under the old parameters and one under the new, so that a quantity that jumps here
        (θ = λ/(1-‖W‖²), λ‖W‖₁) is broken at the change in every panel, whenever the next
        frame is painted and even if the run is paused at once. Further changes at the same
        instant (a λ drag while paused) replace the second row."""
        before = self.metrics_row()
        changes = list(self.changes)
        if not self.apply(params):
            return False
        if self.changes == changes:
            return True  # nothing a row shows has changed
        if self._change_rows_at != self.t:
            self.history.keep_last()
            last = self.history.last()
            if last is None or last[COL["t"]] < self.t:
                self.history.append(before)
        self.history.append(self.metrics_row(), provisional=True)
        self._change_rows_at = self.t
        return True

    # --- stepping -------------------------------------------------------------------
    def advance(self, t_target: float, stop_nonzero: int = -1, max_work: int = 2**62) -> int:
        if self.solver.diverged:
            return K.REACHED_TARGET
        status = self.solver.advance_to(t_target, stop_nonzero, max_work)
        if self._change_rows_at is not None and self.t > self._change_rows_at:
            self.history.keep_last()  # the run has left the change's instant: its row stays
            self._change_rows_at = None
        return status

    def advance_recording(
        self, t_target: float, stop_nonzero: int = -1, max_work: int = 2**62, max_rows: int = ROWS_PER_DECADE
    ) -> int:
        """`advance`, keeping a history row at each time of the recording grid on the way
        (the solver lands on each exactly), then the instant reached as a provisional row
        (replaced by the next). At most ``max_rows`` grid rows per call: a stretch with
        nothing left to compute (every weight dead) still returns. Returns a
        kernels.REACHED_* code; REACHED_MAX_STEPS when the work or the rows ran out first."""
        work0 = self._work()
        status = K.REACHED_TARGET
        rows = 0
        while not self.solver.diverged:
            left = max_work - (self._work() - work0)
            if left <= 0 or rows >= max_rows:
                status = K.REACHED_MAX_STEPS
                break
            g = self._next_grid_time()
            if g > t_target:
                status = self.advance(t_target, stop_nonzero, left)
                break
            status = self.advance(g, stop_nonzero, left)
            if status != K.REACHED_TARGET:
                break
            self._grid_k += 1
            if self._keep_row():
                rows += 1
        last = self.history.last()
        if last is None or self.history.provisional or last[COL["t"]] < self.t:
            self.record(provisional=True)
        return status

    def grid_time(self, k: int) -> float:
        return 10.0 ** (k / ROWS_PER_DECADE)

    def _next_grid_time(self) -> float:
        """The first grid time after now (the index catches up after a jump: a replay, a
        single step)."""
        t = self.t
        if not t < 1e300:
            return math.inf  # (every weight dead and no end: t ran away)
        if self.grid_time(self._grid_k) <= t:
            self._grid_k = max(self._grid_k, math.floor(ROWS_PER_DECADE * math.log10(t)) - 1)
            while self.grid_time(self._grid_k) <= t:
                self._grid_k += 1
        return self.grid_time(self._grid_k)

    def _keep_row(self) -> bool:
        """A row of now, unless one is kept at this instant already (a GD step coarser
        than the grid lands on the same step again)."""
        last = self.history.last()
        if last is not None and not self.history.provisional and last[COL["t"]] >= self.t:
            return False
        self.history.append(self.metrics_row())
        return True

    def _work(self) -> int:
        """The solver's work so far in the units of its max_work."""
        solver = self.solver
        if isinstance(solver, GDSolver):
            return int(solver.weight_steps)
        assert isinstance(solver, ExactSolver)  # the two methods
        return int(solver.steps)

    def replay(
        self,
        changes: Sequence[LiveChange],
        times: np.ndarray,
        *,
        record: bool = False,
        on_sample: Callable[[int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> np.ndarray:
        """From the current instant, advance stopping exactly at each change time (to apply
        the change) and at each sample time (to take a row; changes at a sample's time
        come first, except for the first row of an instant given twice: the row before
        them, see with_change_instants). Returns the rows (also appended to the history with record=True).
        The rows depend only on the start, the changes and the times."""
        times = np.asarray(times, dtype=np.float64)
        changes = sorted(changes, key=lambda c: c.t)  # stable: same-time order is kept
        rows = np.empty((times.shape[0], self.history._data.shape[1]))
        ci = 0
        for i, t in enumerate(times):
            if should_stop is not None and should_stop():
                raise ReplayStopped  # the window is closing: do not finish a long replay
            # the first of a repeated instant is the row just before its changes
            before = i + 1 < times.shape[0] and times[i + 1] == t
            while ci < len(changes) and (changes[ci].t < t or (changes[ci].t == t and not before)):
                self.advance_stoppable(changes[ci].t, should_stop)
                self.apply_change(changes[ci])
                ci += 1
            self.advance_stoppable(t, should_stop)
            rows[i] = self.metrics_row()
            if record:
                self.history.append(rows[i])
            if on_sample is not None:
                on_sample(i)
        return rows

    def advance_stoppable(
        self, t_target: float, should_stop: Callable[[], bool] | None, stop_nonzero: int = -1
    ) -> None:
        """advance(t_target, stop_nonzero) in chunks of STOP_CHECK_WORK, raising ReplayStopped
        between two when should_stop() says so (in one go without should_stop)."""
        _advance_stoppable(self.solver, t_target, should_stop, stop_nonzero)

    def time_to_nonzero(self, nonzero: int = 1, should_stop: Callable[[], bool] | None = None) -> float:
        """The time at which m' first reaches `nonzero`, from a separate exact run of the
        same W(0) and current lam (inf when lam = 0 and it never happens); should_stop as
        in advance_stoppable."""
        if self.init.nonzero0 <= nonzero:
            return 0.0
        # under the schedule in force (from t = 0), else the current λ
        lam: float | LamKnots = self.lam
        t_limit = math.inf  # after it λ = 0: no weight dies any more
        if self._schedule is not None:
            lam = lam_knots_of(self._schedule)
            if self._schedule[-1][1] <= 0.0:
                t_limit = self._schedule[-1][0]
        elif self.lam <= 0.0:
            return math.inf
        probe = ExactSolver(self.init, lam)
        # Tied top weights move as one and die together or never: with more of them than
        # `nonzero`, run until they are alone and stop if they settle (else this never ends).
        u = self.init.u
        ties = int(np.count_nonzero(u == u[0]))
        if ties > nonzero:
            _advance_stoppable(probe, t_limit, should_stop, ties)
            mo = probe.moments()
            if mo.nonzero == ties and not tied_group_dies(ties, mo.norm1 / ties, probe.lam):
                return math.inf
        _advance_stoppable(probe, t_limit, should_stop, nonzero)
        return probe.t if probe.moments().nonzero <= nonzero else math.inf

    # --- what is shown and saved ----------------------------------------------------
    def _accumulate_lam_t(self) -> None:
        t = self.t
        if self._schedule is not None:  # Λ(t) = ∫ λ exactly over the schedule's pieces
            self._lam_t += lam_integral(self._schedule, self._lam_t_at, t)
        else:
            self._lam_t += self.solver.lam * (t - self._lam_t_at)
        self._lam_t_at = t

    def moments(self) -> Moments:
        return self.solver.moments()

    def metrics_row(self) -> np.ndarray:
        """The COLUMNS of the current instant (plus tracked |W_k|)."""
        mo = self.solver.moments()
        self._accumulate_lam_t()
        row = np.full(len(COLUMNS) + N_TRACKED_MAX, np.nan)
        lo, hi = self.init.rel_var_bounds(mo.nonzero)
        if self.ideal_pending:
            ilo = ihi = np.full(1, np.nan)  # filled in by complete_ideal_bounds
        else:
            ilo, ihi = self.init.rel_var_ideal_bounds(mo.nonzero)
        row[COL["t"]] = mo.t
        row[COL["norm2_sq"]] = mo.norm2_sq
        row[COL["norm1"]] = mo.norm1
        row[COL["nonzero"]] = mo.nonzero
        row[COL["theta"]] = mo.theta
        row[COL["feature_push"]] = mo.s * mo.norm2_sq
        row[COL["reg_push"]] = mo.lam * mo.norm1
        row[COL["rel_var"]] = mo.rel_var
        row[COL["rel_var_lo"]] = lo[0]
        row[COL["rel_var_hi"]] = hi[0]
        row[COL["rel_var_ideal_lo"]] = ilo[0]
        row[COL["rel_var_ideal_hi"]] = ihi[0]
        row[COL["lam"]] = mo.lam
        row[COL["s"]] = mo.s
        row[COL["w"]] = 1.0 / mo.norm1 if mo.norm1 > 0 else math.inf
        row[COL["lam_t"]] = self._lam_t
        if self.tracked.size:
            row[len(COLUMNS) : len(COLUMNS) + self.tracked.size] = self.solver.abs_at_ranks(self.tracked)
        return row

    def complete_ideal_bounds(self) -> None:
        """Compute the idealized W(0) left out so far and fill its bounds into every row
        kept (from each row's m')."""
        if not self.ideal_pending:
            return
        cols = [COL["rel_var_ideal_lo"], COL["rel_var_ideal_hi"]]
        rows = self.history.array()
        lo, hi = self.init.rel_var_ideal_bounds(rows[:, COL["nonzero"]].astype(np.int64))
        self.history.set_columns(cols, np.column_stack([lo, hi]))
        self.ideal_pending = False

    def record(self, provisional: bool = False) -> np.ndarray:
        """A row of now into the history (provisional: replaced by the next row)."""
        row = self.metrics_row()
        self.history.append(row, provisional=provisional)
        return row

    def note_snapshots(self, snap_t, snaps) -> None:
        """Keep theta of an exact solve's snapshots ((fs, ist) copies at times snap_t) of
        this run's own trajectory: what regime() measures theta on besides the rows."""
        theta = np.empty(len(snaps))
        for i, (fs, ist) in enumerate(snaps):
            _mp, _l1, n2 = K.exact_moments(fs, ist)
            theta[i] = Moments(0.0, float(K.lam_now(fs, fs[K.F_T])), 0, 0.0, float(n2)).theta
        t = np.asarray(snap_t, dtype=np.float64)
        self._theta_seen = (
            np.concatenate([self._theta_seen[0], t]),
            np.concatenate([self._theta_seen[1], theta]),
        )

    def _theta_at_start(self, compute: bool) -> tuple[np.ndarray, np.ndarray]:
        """(t, theta) of this run from t = 0 until theta can no longer fall
        (theta_probe.theta_at_start), computed once (with ``compute``) where cheap and
        needed; else empty."""
        empty = (np.zeros(0), np.zeros(0))
        if self._theta_start is not None or not compute:
            return self._theta_start or empty
        have_snapshots = self._theta_seen[0].size > 0
        self._theta_start = theta_at_start(self.init, self.initial_params, self._probe_start, have_snapshots)
        return self._theta_start

    def regime(self, rows: np.ndarray | None = None, *, probe: bool = False) -> dict:
        """The note's premise for this run (metrics.regime_of): from W(0), at each live
        change of lam so far, and theta as the run went: on ``rows`` of it (by default its
        history), on its snapshots (note_snapshots) and, up to its first live change, on
        _theta_at_start (computed with ``probe``: for rows evenly spaced, an export's)."""
        rows = self.history.array() if rows is None else rows
        until = min([self.t, *(c.t for c in self.changes)])
        parts = [self._theta_at_start(probe), self._theta_seen]
        t = np.concatenate([*(pt[pt <= until] for pt, _ in parts), rows[:, COL["t"]]])
        theta = np.concatenate([*(th[pt <= until] for pt, th in parts), rows[:, COL["theta"]]])
        order = np.argsort(t, kind="stable")
        return regime_of(
            float(self.init.p1[-1]),
            float(self.init.p2[-1]),
            self.initial_params.lam,
            tuple(self.lam_states),
            fall=theta_fall(t[order], theta[order]),
            schedule=self.initial_params.lam_schedule,
        )

    def decay_fit(self, rows: np.ndarray | None = None, *, exported: bool = False) -> DecayFit:
        """fitted_c, fitted_c_bulk and fit_max_rel_dev (metrics.fit_decay) of the history (or
        ``rows`` of it) at the instants an export samples, from the rows on screen; with
        ``exported``, of exported rows (evenly spaced already) as they are."""
        rows = self.history.array() if rows is None else rows
        diverged = bool(self.solver.diverged)
        if exported:
            return fit_decay(rows, regime=self.regime(rows, probe=True), diverged=diverged)
        return fit_decay(
            rows,
            samples=DEFAULT_SAMPLES,
            death_t=self.solver.death_t,
            regime=self.regime(rows),
            diverged=diverged,
        )

    def fitted_c(self, rows: np.ndarray | None = None) -> float:
        """c fitted to the history (or ``rows`` of it) at the instants an export samples:
        the exported run's c, from the rows on screen."""
        return self.decay_fit(rows).c

    def weights_at_or_above(self, x: float) -> int:
        """How many weights have |W_k| >= x > 0 now, from the solver's state: the survivors
        are a prefix of the ranks and |W| falls with rank, so by bisection over ranks."""
        nonzero = self.solver.moments().nonzero
        if not x > 0.0:
            return nonzero  # (lam = 0: theta = 0, every survivor grows)
        lo, hi = 0, nonzero  # answer in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            if float(self.solver.abs_at_ranks(np.array([mid], dtype=np.int64))[0]) >= x:
                lo = mid + 1
            else:
                hi = mid
        return lo
