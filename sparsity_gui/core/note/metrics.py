"""What every solver reports about its current instant (`Moments`), the recorded columns
(`COLUMNS`), and the quantities derived from them: the sparsity force, the fitted decay
constant c and the last weight's fixed point (docs/theory.md §1, §4)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparsity_gui.core.note.schedule import lowers_lam
from sparsity_gui.core.note.settings import NOTE_SETTINGS

# Columns of the time series, in the order of the `run` command's timeseries.csv.
# The first ten are fixed by the spec; the rest add what the panels need.
COLUMNS = (
    "t",
    "norm2_sq",
    "norm1",
    "nonzero",
    "theta",
    "feature_push",
    "reg_push",
    "rel_var",
    "rel_var_lo",
    "rel_var_hi",
    "rel_var_ideal_lo",
    "rel_var_ideal_hi",
    "lam",
    "s",
    "w",
    "lam_t",
)
COL = {name: i for i, name in enumerate(COLUMNS)}
# Rows of an exported time series, evenly spaced in t; the window fits c to its history
# at the same instants, so the c on screen is the c exported.
DEFAULT_SAMPLES = 501


@dataclass(frozen=True)
class Moments:
    """The three sums every metric is built from, at time t."""

    t: float
    lam: float
    nonzero: int
    norm1: float
    norm2_sq: float

    @property
    def s(self) -> float:
        """1 - ||W||^2: strength of the feature-benefit push."""
        return 1.0 - self.norm2_sq

    @property
    def theta(self) -> float:
        """lam / s, or +inf when feature benefit no longer pushes up."""
        s = self.s
        return self.lam / s if s > 0.0 else math.inf

    @property
    def rel_var(self) -> float:
        """Var[X]/E[X]^2 for X a uniformly drawn nonzero |W_k|."""
        if self.nonzero == 0:
            return math.nan
        if self.nonzero == 1 or self.norm1 <= 0.0:
            return 0.0
        return max(self.nonzero * (self.norm2_sq / self.norm1) / self.norm1 - 1.0, 0.0)


def sparsity_force(abs_w: np.ndarray, s: float, lam: float) -> np.ndarray:
    """d|W_k|/dt = s*|W_k| - lam = s*(|W_k| - theta) for nonzero weights, 0 for dead
    ones (eq. 1). Written without theta so that s <= 0 (theta = inf) needs no case."""
    abs_w = np.asarray(abs_w, dtype=np.float64)
    return np.where(abs_w > 0.0, s * abs_w - lam, 0.0)


def falls_below(y, theta, tol=1e-5):
    """Where a weight y falls below the threshold theta (rows along axis 0; a 2-D y holds
    one weight a column): the rows where it is below theta, still alive (y > 0), having
    been above it on its last row clear of theta. Every downward crossing, also of a
    weight that started below theta and rose above it. "Clear": more than `tol` of
    theta away, so a lone weight resting at theta (its fixed point, up to rounding)
    marks nothing. Row indices of a 1-D y, (rows, columns) of a 2-D one. The threshold
    panel's triangles, on screen and in a figure (numpy only: the script beside an
    exported figure carries its source)."""
    y, theta = np.asarray(y, float), np.asarray(theta, float)
    if y.ndim == 2:
        theta = theta[:, None]
    with np.errstate(invalid="ignore"):
        band = tol * np.abs(theta)
        side = np.where(y > theta + band, 1, np.where(y < theta - band, -1, 0))  # NaN: 0
    # each row's side, or the last clear one before it
    rows = np.arange(y.shape[0]).reshape((-1,) + (1,) * (y.ndim - 1))
    last = np.maximum.accumulate(np.where(side != 0, rows, 0) + 0 * side, axis=0)
    held = np.take_along_axis(side, last, axis=0)
    falls = np.zeros(y.shape, bool)
    falls[1:] = (held[:-1] == 1) & (side[1:] == -1) & (y[1:] > 0)
    return np.nonzero(falls) if y.ndim == 2 else np.flatnonzero(falls)


def tied_group_dies(k: int, a: float, lam: float) -> bool:
    """Whether k equal weights a, alone, reach 0: da/dt = f(a) = (1 - k a^2) a - lam, with
    f increasing below its peak at 1/sqrt(3k); they die iff f < 0 on all of (0, a]."""
    peak = 1.0 / math.sqrt(3.0 * k)
    f_peak = (1.0 - k * peak * peak) * peak - lam
    return f_peak < 0.0 or (a < peak and (1.0 - k * a * a) * a - lam < 0.0)


# (1 - ||W||^2)||W||^2 <= 1/4 for every W, so the balance (1 - ||W||^2)||W||^2 = lam ||W||_1
# can hold only while lam ||W||_1 <= 1/4: the note's premise, checked at t = 0 and at each
# live change of lam. The scaling figures draw a point filled (in the regime) by this too.
BALANCE_LIMIT = 0.25
FIT_NONZERO_MIN = 2  # fitted_c: the rows with m' >= 2 (the spec's fit)
BULK_NONZERO_MIN = 10  # fitted_c_bulk: the rows with m' >= 10, the bulk decay the note describes


# theta moves by ~1e-12 relative from rounding where the last weight sits at its fixed point:
# a fall of theta counts from THETA_RTOL of it on
THETA_RTOL = 1e-9


def theta_rise_condition(norm1: float, norm2: float, lam: float) -> bool:
    """Whether (1 - ||W||^2)||W||^2 >= lam ||W||_1 with ||W||^2 < 1: the feature push on ||W||^2
    at least the regularization push. d||W||^2/dt = 2[(1 - ||W||^2)||W||^2 - lam ||W||_1] and
    theta = lam/(1 - ||W||^2), so theta falls exactly while this fails; and (Cauchy-Schwarz,
    ||W||_1^2 <= m' ||W||^2) the flow never leaves the set where it holds while lam stays:
    holding at t = 0 and after each live raise of lam, with lam never lowered, it is
    sufficient for theta never to fall (docs/theory.md §4)."""
    return bool(norm2 < 1.0 and (1.0 - norm2) * norm2 >= lam * norm1)


def theta_fall(t, theta, rtol: float = THETA_RTOL) -> dict | None:
    """The largest relative fall of theta over the instants ``t`` (ascending): from its
    highest value so far (``t_from``, ``theta_from``; null when that was +inf, ||W||^2 >= 1)
    down to ``theta_to`` at ``t_to``, ``fall`` = (theta_from - theta_to) / theta_from (1 from
    +inf). None when theta never fell by more than ``rtol`` of itself: theta rose (or stayed)."""
    t = np.asarray(t, dtype=np.float64)
    th = np.asarray(theta, dtype=np.float64)
    keep = ~np.isnan(th)
    t, th = t[keep], th[keep]
    if th.size < 2:
        return None
    top = np.maximum.accumulate(th)
    with np.errstate(invalid="ignore", divide="ignore"):
        fall = np.where(
            np.isinf(top),
            np.where(np.isinf(th), 0.0, 1.0),
            np.where(top > 0.0, (top - th) / top, 0.0),
        )
    i = int(np.argmax(fall))
    if not fall[i] > rtol:
        return None
    j = int(np.flatnonzero(th[: i + 1] == top[i])[0])
    return {
        "t_from": float(t[j]),
        "theta_from": float(th[j]) if math.isfinite(th[j]) else None,
        "t_to": float(t[i]),
        "theta_to": float(th[i]),
        "fall": float(fall[i]),
    }


def regime_of(
    norm1_w0: float, norm2_w0: float, lam0: float, lam_states=(), *, fall: dict | None, schedule=()
) -> dict:
    """Whether the note's premise holds: the balance is possible (lam ||W(0)||_1 <= 1/4) and
    theta rises. ``theta_rises`` is what the run did: ``fall`` (theta_fall of theta measured on
    the run) is None; ``theta_fall`` is that fall. ``theta_rise_condition`` is the sufficient
    condition (theta_rise_condition at t = 0 and after every live change of lam, lam never
    lowered). ``lam_states`` holds, for each live change of lam, (t, lam before, lam after,
    ||W||_1, ||W||^2) at that instant; the values there are under "at_changes".

    Under a λ schedule (``schedule``: its knots (t, λ)) the start is judged with the
    largest λ it reaches, and the sufficient condition fails where it lowers λ (θ may
    then fall: "lam_schedule" says so); where λ(t) varies without being lowered the
    condition, which applies to a constant λ, is not judged (None); whether θ rose is
    measured all the same."""
    lam_most = max([float(lam0), *(float(v) for _t, v in schedule)])
    lowered = lowers_lam(schedule)
    lam_l1 = lam_most * float(norm1_w0)
    at_changes = [
        {
            "t": float(t),
            "lam": float(after),
            "lam_l1": float(after) * float(n1),
            "balance_possible": bool(float(after) * float(n1) <= BALANCE_LIMIT),
            "norm2": float(n2),
            "lam_lowered": bool(after < before),
            "theta_rise_condition": bool(after >= before and theta_rise_condition(n1, n2, after)),
        }
        for t, before, after, n1, n2 in lam_states
    ]
    condition: bool | None = bool(
        theta_rise_condition(norm1_w0, norm2_w0, lam_most)
        and not lowered
        and all(c["theta_rise_condition"] for c in at_changes)
    )
    if condition and len({float(v) for _t, v in schedule}) > 1:
        # the condition keeps holding while λ stays; a λ(t) that rises can break it after
        # t = 0 (θ fell 1.7 % under a warm-up that it held for): not judged, null
        condition = None
    out: dict[str, Any] = {
        "lam_l1_w0": lam_l1,
        "balance_possible": bool(lam_l1 <= BALANCE_LIMIT),
        "norm2_w0": float(norm2_w0),
        "theta_rise_condition": condition,
        "theta_rises": fall is None,
        "theta_fall": fall,
    }
    if at_changes:
        out["at_changes"] = at_changes
    if schedule:
        out["lam_schedule"] = {"lam_max": lam_most, "lam_lowered": lowered}
    return out


def regime_holds(regime: dict) -> bool:
    """The note's premise holds: a balance is possible at t = 0 and at every live change of
    lam, and theta never fell on the run."""
    return bool(
        regime["balance_possible"]
        and regime["theta_rises"]
        and all(c["balance_possible"] for c in regime.get("at_changes", ()))
    )


def regime_failures(regime: dict, short: bool = False) -> list[str]:
    """Why the note's premise fails, in words (empty when it holds); ``short``: the brief
    form a figure's caveat prints (the same reasons, without their explanations)."""
    why: list[tuple[str | None, str]] = []  # (short form or None: said by another, long form)
    schedule = regime.get("lam_schedule")
    if not regime["balance_possible"]:
        lam_l1 = f"λ‖W(0)‖₁ = {regime['lam_l1_w0']:.3g} > 1/4"
        if schedule is not None:  # judged at the largest λ of λ(t), not at λ(0)
            lam_max = NOTE_SETTINGS["lam"].text(schedule["lam_max"])
            why.append(
                (
                    f"no balance at {lam_max}: {lam_l1}",
                    f"at the largest λ of the schedule, {lam_max}, {lam_l1}: no "
                    "balance is possible once λ gets there ((1−‖W‖²)‖W‖² ≤ 1/4 cannot match λ‖W‖₁)",
                )
            )
        else:
            why.append(
                (
                    f"{lam_l1}, no balance",
                    f"{lam_l1}, so no balance is possible at the start "
                    "((1−‖W‖²)‖W‖² ≤ 1/4 cannot match λ‖W‖₁)",
                )
            )
    fall = regime.get("theta_fall")
    if fall is not None:
        start = "∞" if fall["theta_from"] is None else f"{fall['theta_from']:.3g}"
        why.append(
            (
                f"θ fell {100 * fall['fall']:.3g} % by t = {fall['t_to']:.3g}",  # 100 %, not 1e+02
                f"θ fell from {start} at t = {fall['t_from']:.3g} to {fall['theta_to']:.3g} at "
                f"t = {fall['t_to']:.3g}, so weights below θ could grow again",
            )
        )
    n2 = regime["norm2_w0"]
    if n2 >= 1.0:
        why.append(
            (
                f"‖W(0)‖² = {n2:.3g} ≥ 1",
                f"‖W(0)‖² = {n2:.3g} ≥ 1: feature benefit starts by shrinking every weight",
            )
        )
    elif fall is not None and fall["t_from"] == 0.0:
        why.append(
            (
                None,
                f"(1−‖W(0)‖²)‖W(0)‖² = {(1.0 - n2) * n2:.3g} < λ‖W(0)‖₁ = {regime['lam_l1_w0']:.3g}: "
                "‖W‖² falls first, and θ with it",
            )
        )
    for c in regime.get("at_changes", ()):
        at = f"t = {c['t']:.4g}"
        if c["lam_lowered"]:
            why.append(
                (f"λ lowered at {at}", f"λ lowered at {at}: θ falls, so weights below it can grow again")
            )
        elif not c["theta_rise_condition"]:
            why.append(
                (
                    None,
                    f"after the change at {at}, λ‖W‖₁ = {c['lam_l1']:.3g} > (1−‖W‖²)‖W‖²: "
                    "θ falls until ‖W‖² recovers",
                )
            )
        if not c["balance_possible"]:
            text = f"λ‖W‖₁ = {c['lam_l1']:.3g} > 1/4 after the change at {at}"
            why.append((text, text))
    return [brief for brief, _ in why if brief is not None] if short else [whole for _, whole in why]


@dataclass(frozen=True)
class DecayFit:
    """The law ||W||_1 ~ 1/(w(0) + c lam t) fitted to a run: c over the rows with m' >= 2
    (``c``), over the rows with m' >= 10 (``c_bulk``), and how far the law with ``c`` is from
    ||W||_1 on c's rows (``max_rel_dev``). NaN where there is no c; ``flags`` say why, or what
    is wrong with a c there is."""

    c: float = math.nan
    c_bulk: float = math.nan
    max_rel_dev: float = math.nan
    flags: tuple[str, ...] = ()

    def fields(self) -> dict:
        """The fit's entries of run.json, scaling.json, sessions and the API's results (null
        for NaN)."""

        def num(x: float):
            return float(x) if math.isfinite(x) else None

        return {
            "fitted_c": num(self.c),
            "fitted_c_bulk": num(self.c_bulk),
            "fit_max_rel_dev": num(self.max_rel_dev),
            "fit_flags": list(self.flags),
        }

    def flag_text(self) -> str:
        return "; ".join(self.flags)


# flags of a DecayFit
NO_C_DIVERGED = "no c: gradient descent diverged"
NO_C_ZERO_LAM = "no c: lam = 0 (nothing decays)"
NO_C_ROWS = "no c: fewer than two rows with m' >= 2"
NO_C_BULK_ROWS = "no bulk c: fewer than two rows with m' >= 10"
NEGATIVE_C = "c < 0: w = 1/||W||_1 fell, the law does not describe this run"
NEGATIVE_C_BULK = "bulk c < 0"
OUT_OF_REGIME = "outside the note's regime (see regime): c is a fit, not the note's Theta(1)"


def _fit_through_origin(x: np.ndarray, y: np.ndarray) -> float:
    den = float(np.dot(x, x))
    if x.shape[0] < 2 or den <= 0.0:
        return math.nan
    return float(np.dot(x, y) / den)


def fit_decay(
    rows: np.ndarray,
    samples: int | None = None,
    death_t: np.ndarray | None = None,
    *,
    regime: dict | None = None,
    diverged: bool = False,
) -> DecayFit:
    """fitted_c, fitted_c_bulk and fit_max_rel_dev of a run: least squares of w - w(0)
    against the integral of lam dt (lam*t for constant lam), through the origin so that w(0)
    is the run's own, over the rows with m' >= 2 (c) and m' >= 10 (c_bulk); then
    max |1/(w(0) + c lam t) - ||W||_1| / ||W||_1 over c's rows.

    The rows are the run's instants evenly spaced in t (an exported time series), and the fit
    weighs each alike: c is dominated by the few-survivor phase (most of a run's time), c_bulk
    by the bulk decay up to m' = 10. With ``samples``, the rows (a window's history, spaced by
    the wall clock) are first resampled at that many instants evenly spaced from the first
    row's t to the last's (w and lam t linearly between rows), the instants an exported time
    series has; an instant counts as m' >= k when the row at or before it had and it is
    before death_t[k - 1] (the exact time m' went below k; death_t by rank). Exported rows are
    fitted as they are."""
    flags: list[str] = []
    if diverged:
        return DecayFit(flags=(NO_C_DIVERGED,))
    if rows.shape[0] < 2:
        return DecayFit(flags=(NO_C_ROWS,))
    w = rows[:, COL["w"]]
    x = rows[:, COL["lam_t"]]
    nonzero = rows[:, COL["nonzero"]]
    if not (np.any(rows[:, COL["lam"]] > 0.0) or np.any(x > 0.0)):
        return DecayFit(flags=(NO_C_ZERO_LAM,))
    at = rows[:, COL["t"]]
    if samples is not None:
        t = rows[:, COL["t"]]
        at = np.linspace(t[0], t[-1], int(samples))
        before = np.maximum(np.searchsorted(t, at, side="right") - 1, 0)
        nonzero = nonzero[before]
        finite = np.isfinite(w)  # (w = inf once every weight is dead: m' = 0 there)
        w = np.interp(at, t[finite], w[finite]) if finite.any() else np.full(at.shape, math.nan)
        x = np.interp(at, t, x)

    def use(k: int) -> np.ndarray:
        mask = (nonzero >= k) & np.isfinite(w)
        if samples is not None and death_t is not None and death_t.shape[0] >= k:
            end = death_t[k - 1]
            if np.isfinite(end):
                mask &= at < end
        return mask

    w0 = w[0]
    main = use(FIT_NONZERO_MIN)
    bulk = use(BULK_NONZERO_MIN)
    c = _fit_through_origin(x[main], w[main] - w0)
    c_bulk = _fit_through_origin(x[bulk], w[bulk] - w0)
    dev = math.nan
    if math.isfinite(c):
        with np.errstate(divide="ignore", invalid="ignore"):
            law = w0 + c * x[main]
            rel = np.where(law > 0.0, np.abs(w[main] / law - 1.0), math.inf)
        dev = float(rel.max())
    else:
        flags.append(NO_C_ROWS)
    if not math.isfinite(c_bulk):
        flags.append(NO_C_BULK_ROWS)
    if c < 0.0:
        flags.append(NEGATIVE_C)
    if c_bulk < 0.0:
        flags.append(NEGATIVE_C_BULK)
    if regime is not None and not regime_holds(regime) and (math.isfinite(c) or math.isfinite(c_bulk)):
        flags.append(OUT_OF_REGIME)
    return DecayFit(c, c_bulk, dev, tuple(flags))


def results_entry(regime: dict | None, fit: DecayFit) -> dict:
    """The regime and the fit, as sessions and the API's results carry them."""
    return {"regime": regime, **fit.fields()}


def fit_decay_constant(rows: np.ndarray, samples: int | None = None, one_left_at: float = math.inf) -> float:
    """fitted_c alone (fit_decay's c), the time m' reached 1 given as ``one_left_at``."""
    death_t = None if not math.isfinite(one_left_at) else np.array([math.inf, one_left_at])
    return fit_decay(rows, samples, death_t).c


def last_weight_fixed_point(lam: float) -> float:
    """The stable root of (1 - w^2) w = lam near 1 (nan when lam > 2/(3*sqrt 3)): the
    largest root of w^3 - w + lam = 0, in its trigonometric form, polished by Newton's
    method. (Not scipy's brentq: importing scipy.optimize held the GUI thread for
    0.2-0.4 s at the argument dock's first update.)"""
    if lam <= 0:
        return 1.0
    top = 1 / math.sqrt(3)
    if lam >= (1 - top * top) * top:
        return math.nan
    w = 2 * top * math.cos(math.acos(-1.5 * math.sqrt(3) * lam) / 3)
    # Newton where the root is simple; near the double root at lam = 2/(3 sqrt 3) the
    # closed form is the better of the two
    for _ in range(4):
        slope = 1 - 3 * w * w
        if abs(slope) < 1e-4:
            break
        step = ((1 - w * w) * w - lam) / slope
        w -= step
        if abs(step) <= 4e-16 * w:
            break
    return w
