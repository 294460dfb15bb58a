"""A series of snapshots from training (core/series.py) against the theory, for both
models: each snapshot beside the interference model trained from the first snapshot with
the same optimizer (exact in the discrete steps), and, for one row trained by plain SGD,
beside the note's exact flow at t = 4 lr (step - step0) with lam = l1/4 (the continuum
limit: off by O(lr)). Under Adam no time maps steps to the flow: the flow's columns are
then empty and ``flow_note`` says why, unless a time scale is fitted (``fit_time_scale``:
the t per step that best fits the snapshots' |W|_1, labelled as fitted everywhere it is
written). Qt-free."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sparsity_gui.core.checkpoints import diagnostics as diag
from sparsity_gui.core.checkpoints.reference import Reference, reference_of
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.compare import polysemantic, trained_at
from sparsity_gui.core.interference.params import OPTIMIZERS, check_steps_work
from sparsity_gui.core.note.compare import fit_time_per_step, flow_at
from sparsity_gui.core.series import Series

# torch.optim.SGD on the paper's loss is the model's plain "gd" (sign(0) = 0, no zero rule)
OPTIMIZER_ALIASES = {"sgd": "gd"}
COMPARE_OPTIMIZERS = ("sgd", *OPTIMIZERS)
FLOW_OPTIMIZERS = ("gd", "gd-zero")

MEASURES = ("norm1", "norm2", "nonzero", "theta", "polysemantic")
COLUMNS = (
    "optimizer_step",
    "t",
    *[f"{name}{suffix}" for name in MEASURES for suffix in ("", "_pred", "_flow")],
    "max_abs_diff",
    "max_abs_diff_alive",
    "max_abs_diff_flow",
    "rel_diff_norm1",
    "rel_diff_norm2",
    "rel_diff_norm1_flow",
    "rel_diff_norm2_flow",
    *diag.COLUMNS,  # any trainer's diagnostics (core/checkpoints/diagnostics.py)
)

FITTED_LABEL = (
    "fitted: the t per step that best fits the snapshots' |W|_1 by the note's flow "
    "(t = value x (step - step0)); not a prediction"
)

# the predictions between the snapshots, for the figures' curves
CURVE_POINTS = 401
CURVE_COLUMNS = ("step", "t", *[f"{n}_pred" for n in MEASURES], *[f"{n}_flow" for n in MEASURES])


@dataclass
class Comparison:
    """The table of compare.csv (``rows``, in ``COLUMNS``' order) and what it was made with."""

    series: Series
    optimizer: str
    l1: float
    lr: float
    weight_decay: float | None
    zero_tol: float
    rows: np.ndarray
    curve: np.ndarray  # CURVE_COLUMNS at the snapshots' steps and CURVE_POINTS between
    flow_note: str = ""
    settings: dict = field(default_factory=dict)
    time_per_step: float | None = None  # t = time_per_step * (step - step0); None: no flow
    time_fitted: bool = False  # time_per_step was fitted to the snapshots, not predicted
    diagnostics: diag.Diagnostics | None = None  # the rail, saturation and death diagnostics
    # what the curves are when the series is not the paper's model, said once, plainly
    # (model_statements); the zero tolerance and why
    statements: tuple[str, ...] = ()
    zero_tol_note: str = ""
    reference: Reference = field(default_factory=Reference)  # the reference curves' mechanism

    def column(self, name: str) -> np.ndarray:
        return self.rows[:, COLUMNS.index(name)]


ADAM_OPTIMIZERS = ("adam", "adamw")


def default_zero_tol(l1: float, lr: float, optimizer: str = "sgd") -> float:
    """A weight counts as zero when |w| <= 2 lr l1 under SGD: a dead weight keeps crossing
    zero by up to one L1 step, lr l1. Under Adam/AdamW when |w| <= 2 lr: a step moves a
    weight by about lr whatever its gradient, so a dead weight chatters by about lr. With
    no scale (l1 = 0 under SGD), a fixed 1e-12."""
    if optimizer in ADAM_OPTIMIZERS:
        return 2.0 * lr if lr > 0 else 1e-12
    return 2.0 * lr * l1 if l1 > 0 else 1e-12


def zero_tol_text(tol: float, given: bool, optimizer: str) -> str:
    """run.json's, the figures' and the dock's words for the zero tolerance."""
    if given:
        why = "given"
    elif optimizer in ADAM_OPTIMIZERS:
        why = f"2 lr: under {optimizer} a dead weight chatters by about lr a step"
    else:
        why = "2 lr l1: under SGD a dead weight crosses zero by up to one L1 step, lr l1"
    return f"a weight counts as zero when |w| <= {tol:g} ({why})"


def reference_words(reference: Reference) -> str:
    """What the curves are for an SAE: the paper's toy model with the reference's mechanism."""
    if reference.sparsity == "l1":
        how = "L1 on its weights"
    else:
        how = f"{reference.name} ({reference.settings_text}) on its hidden layer, the SAE's own mechanism"
    return (
        f"the curves are what the paper's toy model (a tied autoencoder on basis vectors, {how}) "
        "would do from this initialisation: a reference, not a prediction of this run"
    )


ARCHITECTURE_NAMES = {"standard": "standard", "topk": "TopK", "jumprelu": "JumpReLU", "gated": "gated"}


def model_statements(series: Series, l1: float, reference: Reference | None = None) -> tuple[str, ...]:
    """What the comparison is, from what the series' files say the model is: for an SAE
    (SAELens, dictionary_learning) that the curves are the paper's model's, a reference,
    and why; the reference's mechanism (the SAE's TopK or JumpReLU, or L1 and why); that a
    TopK or JumpReLU SAE has no L1 coefficient; a ``l1`` that is not the file's own
    coefficient. Weights alone (the model unknown) say nothing."""
    model = series.model
    if not model:
        return ()
    reference = reference_of(series) if reference is None else reference
    arch = str(model.get("architecture", "unknown"))
    name = ARCHITECTURE_NAMES.get(arch, arch)
    if model.get("library") == "dictionary_learning":
        what = f"a dictionary_learning SAE ({name}, trained by {model.get('trainer', 'unknown')})"
    else:
        what = f"a {model.get('library', '')} {name} SAE".replace("  ", " ")
    sparsity = "its penalty acts" if arch not in ("topk", "jumprelu", "batchtopk") else "its sparsity acts"
    out = [
        f"this series is {what}, not the paper's model: it has a separate decoder and biases, is "
        f"trained on other data than basis vectors, and {sparsity} on the activations"
        + (" (l1 · sum f·|W_dec|)" if sparsity == "its penalty acts" else "")
        + ", not on the encoder's weights; "
        + reference_words(reference)
    ]
    coefficient = model.get("l1_coefficient")
    if reference.sparsity != "l1":
        out.append(reference.text(l1))
    elif arch in ("topk", "jumprelu", "batchtopk") or (coefficient is None and arch != "unknown"):
        if reference.reason:
            out.append(reference.reason)
        out.append(
            f"a {name} SAE has no L1 coefficient to borrow (its sparsity is not an L1 term): "
            f"--l1 {l1:g} is only the reference's setting"
        )
    elif coefficient is not None and not math.isclose(coefficient, l1, rel_tol=1e-9, abs_tol=0.0):
        out.append(
            f"--l1 {l1:g} is not the run's own coefficient: its files say {coefficient:g} "
            "(the reference uses --l1)"
        )
    return tuple(out)


def _latent_word(series: Series) -> str:
    if series.layout == "saelens" and series.pick == "column":
        return f"latent {series.index}"
    if series.layout == "dictionary_learning" and series.pick == "row":
        return f"latent {series.index}"
    return "the vector" if series.index is None else f"{series.pick} {series.index}"


def _measures(w: np.ndarray, lam: float, zero_tol: float, matrix: bool) -> tuple[float, ...]:
    """(|W|_1, |W|^2 (mean over rows for a matrix), weights above the tolerance, theta
    (a row's), polysemantic neurons (a matrix's))."""
    if not np.all(np.isfinite(w)):
        return (math.nan,) * 5
    # sums in float64 whatever the snapshot's dtype (a float32 series is read as stored)
    norm1 = float(np.abs(w).sum(dtype=np.float64))
    norm2 = float(np.mean(np.sum(np.square(np.atleast_2d(w), dtype=np.float64), axis=1)))
    nonzero = float(np.count_nonzero(np.abs(w) > zero_tol))
    theta = math.nan if matrix or norm2 >= 1.0 else lam / (1.0 - norm2)
    poly = float(polysemantic(w)) if matrix else math.nan
    return norm1, norm2, nonzero, theta, poly


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b != 0 and math.isfinite(b) else math.nan


def _flow_time(
    series: Series,
    first: np.ndarray,
    lam: float,
    lr: float,
    optimizer: str,
    fit: bool,
    should_stop,
) -> tuple[float | None, str]:
    """The note's flow's time per step (None: no flow) and what flow_note says of it: plain
    SGD's 4 lr; a time fitted to the snapshots' |W|_1 (``fit``: one row, the
    series read once more first); none for a matrix or under another optimizer."""
    model_optimizer = OPTIMIZER_ALIASES.get(optimizer, optimizer)
    matrix = series.pick == "matrix"
    if fit:
        if matrix:
            raise InputError(
                "fit-time-scale",
                "the note's flow is for one row: fit a time scale to a row or a latent, not the matrix",
            )
        time_per_step = _fitted_time(series, first, lam, should_stop)
        if model_optimizer in FLOW_OPTIMIZERS:
            own = f" (plain SGD's own: 4 lr = {4.0 * lr:.6g})"
        else:
            own = f" (under {optimizer} no time maps steps to the flow)"
        return time_per_step, (
            f"FITTED time scale: the note's flow at t = {time_per_step:.6g} x (step - step0), the "
            f"factor that best fits the snapshots' |W|_1 (least squares of the relative differences)"
            f"{own}; fitted, not predicted"
        )
    if matrix:
        return None, "the note's flow is for one row; a matrix is compared with the trained model only"
    if model_optimizer not in FLOW_OPTIMIZERS:
        return None, (
            f"under {optimizer} no time maps steps to the note's flow (a step's size is not "
            "4 lr times the gradient): the flow's columns are empty"
            + ("" if series.model else "; the trained model's are exact")
        )
    return 4.0 * lr, ""


def _fitted_time(series: Series, first: np.ndarray, lam: float, should_stop) -> float:
    """The t per step by which the note's flow best fits the snapshots' |W|_1."""
    steps = series.steps
    measured = np.empty(len(steps))
    for i in range(len(steps)):
        if should_stop is not None and should_stop():
            raise KeyboardInterrupt
        w = first if i == 0 else series.read(i)
        measured[i] = float(np.abs(w).sum(dtype=np.float64))
    return fit_time_per_step(first, lam, steps - steps[0], measured, should_stop)


def _row(step: float, t: float, w, pred, flow, got, want, along, tol: float) -> list[float]:
    """A snapshot's row of compare.csv: its measures ``got`` beside the trained model's
    (``want``, from its weights ``pred``) and the flow's (``along``, from ``flow``; None:
    no flow), and the differences."""
    row = dict(optimizer_step=step, t=t)
    for k, name in enumerate(MEASURES):
        row[name], row[f"{name}_pred"], row[f"{name}_flow"] = got[k], want[k], along[k]
    row["max_abs_diff"] = float(np.max(np.abs(w - pred)))
    # the weights alive in both: a dead weight under plain SGD chatters within lr l1 of
    # zero, and a rounding difference can flip its sign at a step (off by 2 lr l1 at most)
    alive = (np.abs(w) > tol) & (np.abs(pred) > tol)
    row["max_abs_diff_alive"] = float(np.max(np.abs(w - pred)[alive])) if alive.any() else 0.0
    row["rel_diff_norm1"] = _rel(got[0], want[0])
    row["rel_diff_norm2"] = _rel(got[1], want[1])
    if flow is not None:
        row["max_abs_diff_flow"] = float(np.max(np.abs(w - flow)))
        row["rel_diff_norm1_flow"] = _rel(got[0], along[0])
        row["rel_diff_norm2_flow"] = _rel(got[1], along[1])
    return [row.get(c, math.nan) for c in COLUMNS]


def _dead_latents(series: Series, changed: np.ndarray | None, count: int) -> list[str]:
    """A row or latent that never changes over the ``count`` snapshots is refused (a dead
    latent: nothing to compare); an SAE's matrix with dead latents says how many."""
    matrix = series.pick == "matrix"
    if changed is not None and not matrix and not changed.any():
        raise InputError(
            "checkpoints",
            f"{series.label}: {_latent_word(series)} never changes over the {count} snapshots (a dead "
            "latent: no gradient reached it); there is nothing to compare: choose another",
        )
    if changed is not None and matrix and series.model and not changed.all():
        return [
            f"{int((~changed).sum())} of {changed.size} latents never change over the snapshots (dead: no "
            "gradient reached them); their weights only repeat their start"
        ]
    return []


def compare(
    series: Series,
    *,
    l1: float,
    lr: float,
    optimizer: str,
    weight_decay: float | None = None,
    zero_tol: float | None = None,
    should_stop=None,
    fit_time_scale: bool = False,
    on_snapshot=None,
) -> Comparison:
    """Every snapshot of ``series`` against the predictions from its first snapshot.
    ``fit_time_scale``: the note's flow (one row) at t = tau (step - step0) with tau fitted
    to the snapshots' |W|_1 (any optimizer; the series' rows are read once more first).
    ``on_snapshot(i, w)`` is called with each snapshot as it is read (in order)."""
    if optimizer not in COMPARE_OPTIMIZERS:
        raise InputError("optimizer", f"must be one of {', '.join(COMPARE_OPTIMIZERS)}, got {optimizer!r}")
    model_optimizer = OPTIMIZER_ALIASES.get(optimizer, optimizer)
    tol = default_zero_tol(l1, lr, optimizer) if zero_tol is None else float(zero_tol)
    if not (math.isfinite(tol) and tol >= 0.0):
        raise InputError("zero-tol", f"must be a finite number >= 0, got {zero_tol}")
    steps = series.steps
    offsets = steps - steps[0]
    matrix = series.pick == "matrix"
    # the training to the last snapshot, refused up front as `interference` refuses it
    n, m = series.shape[-2:] if matrix else (1, series.shape[-1])
    check_steps_work(n, m, int(offsets[-1]))
    first = np.asarray(series.read(0), dtype=np.float64)  # every prediction starts from it
    lam = l1 / 4.0
    # the predictions at the snapshots and between them (the figures' curves)
    grid = np.unique(np.r_[offsets, np.round(np.linspace(0, offsets[-1], CURVE_POINTS))]).astype(np.int64)
    reference = reference_of(series)  # the SAE's own mechanism where its files give it
    # checks the hyperparameters (InputError naming each) before any work
    predicted = trained_at(
        first, grid, lr=lr, optimizer=model_optimizer, weight_decay=weight_decay, **reference.params(l1)
    )
    if reference.sparsity == "l1":
        time_per_step, flow_note = _flow_time(series, first, lam, lr, optimizer, fit_time_scale, should_stop)
    elif fit_time_scale:
        raise InputError(
            "fit-time-scale",
            f"the note's flow is the L1 model's; this series' reference is {reference.name}, the SAE's own "
            "mechanism: no flow to fit",
        )
    else:
        time_per_step, flow_note = (
            None,
            (
                f"the note's flow is the L1 model's; the reference is {reference.name}, the SAE's own "
                "mechanism: the flow's columns are empty"
            ),
        )
    flows = None
    if time_per_step is not None:
        flows = flow_at(first, lam, time_per_step * grid)
    rows = np.full((len(steps), len(COLUMNS)), np.nan)
    changed = None if len(steps) < 2 else np.zeros(_latents(first, series), dtype=bool)
    tracker = diag.DiagnosticsTracker(series, l1=l1, lr=lr, optimizer=optimizer, zero_tol=tol)
    curve = np.full((len(grid), len(CURVE_COLUMNS)), np.nan)
    i = 0
    for g, offset in enumerate(grid):
        if should_stop is not None and should_stop():
            raise KeyboardInterrupt
        pred = next(predicted)
        pred = pred[0] if not matrix else pred
        flow = next(flows) if flows is not None else None
        t = time_per_step * offset if time_per_step is not None else math.nan
        want = _measures(pred, lam, tol, matrix)
        along = _measures(flow, lam, tol, matrix) if flow is not None else (math.nan,) * 5
        curve[g] = [steps[0] + offset, t, *want, *along]
        if offset != offsets[i]:
            continue
        w = first if i == 0 else series.read(i)
        if on_snapshot is not None:
            on_snapshot(i, w)
        tracker.add(i, w)
        if i > 0 and changed is not None:
            changed |= _moved(w, first, series)
        rows[i] = _row(float(steps[i]), t, w, pred, flow, _measures(w, lam, tol, matrix), want, along, tol)
        i += 1
    statements = [*model_statements(series, l1, reference), *_dead_latents(series, changed, len(steps))]
    diagnostics = tracker.finish(matrix)
    rows[:, [COLUMNS.index(c) for c in diag.COLUMNS]] = diagnostics.table
    settings = dict(
        l1=l1,
        lr=lr,
        optimizer=optimizer,
        model_optimizer=model_optimizer,
        weight_decay=weight_decay,
        zero_tol=tol,
        lam=lam,
    )
    if reference.sparsity != "l1":  # the reference's mechanism (a run without one: as before)
        settings["reference"] = {"sparsity": reference.sparsity, **reference.settings, "l1": 0.0}
    if fit_time_scale:
        settings["fit_time_scale"] = True
    return Comparison(
        series, optimizer, l1, lr, weight_decay, tol, rows, curve, flow_note, settings,
        time_per_step, bool(fit_time_scale), diagnostics, tuple(statements),
        zero_tol_text(tol, zero_tol is not None, optimizer), reference,
    )  # fmt: skip


def _latents(first: np.ndarray, series: Series) -> int:
    """How many latents a snapshot holds: 1 for a vector, else its rows (columns in
    SAELens' W_enc, where a latent is a column)."""
    if first.ndim == 1:
        return 1
    return first.shape[1] if series.layout == "saelens" else first.shape[0]


def _moved(w: np.ndarray, first: np.ndarray, series: Series) -> np.ndarray:
    """Per latent: whether any of its weights differs from the first snapshot's."""
    diff = w != first
    if diff.ndim == 1:
        return np.array([diff.any()])
    return diff.any(axis=0) if series.layout == "saelens" else diff.any(axis=1)


def finite_max(values: np.ndarray) -> float | None:
    """The largest finite value, or None when there is none (an empty flow column)."""
    values = values[np.isfinite(values)]
    return float(values.max()) if values.size else None


def fitted_entry(result: Comparison) -> dict:
    """run.json's "fitted_time_per_step": the value and its label (fitted, not predicted)."""
    return {"value": result.time_per_step, "label": FITTED_LABEL}


def write_comparison(result_dir, result: Comparison, path, command_line: str, wall_seconds: float) -> None:
    """compare.csv and run.json of ``result`` into a ResultDir: what `checkpoints` and the
    API's save() write, byte for byte alike."""
    from sparsity_gui.core.files import csv_text, json_text

    series = result.series
    int_cols = [COLUMNS.index("optimizer_step")]
    result_dir.write_text("compare.csv", csv_text(COLUMNS, result.rows, int_cols))
    if result.diagnostics is not None:
        rows = result.diagnostics.forecast.rows()
        result_dir.write_text("deaths.csv", csv_text(diag.DEATH_COLUMNS, rows, [0]))
    meta = {
        "program": "sparsity-gui",
        "command_line": command_line,
        "series": {
            "path": str(path),
            "layout": series.layout,
            "tensor": series.snapshots[0].tensor,
            "pick": series.pick,
            "index": series.index,
            "shape": list(series.shape),
            "snapshots": len(series.snapshots),
            "first_step": int(series.steps[0]),
            "last_step": int(series.steps[-1]),
            "steps": series.step_note or "each snapshot's step as its file or name gives it",
            "model": series.model or "unknown: weights alone do not say what trained them",
        },
        "x_axis": "optimizer step",
        **({"what_the_curves_are": list(result.statements)} if result.statements else {}),
        "settings": result.settings,
        "zero_tolerance": result.zero_tol_note or f"a weight counts as zero when |w| <= {result.zero_tol:g}",
        "flow": result.flow_note or "the note's exact flow at t = 4 lr (step - step0), lam = l1/4",
        **({"fitted_time_per_step": fitted_entry(result)} if result.time_fitted else {}),
        **({"diagnostics": result.diagnostics.summary()} if result.diagnostics is not None else {}),
        "columns": list(COLUMNS),
        "largest": {
            "max_abs_diff": finite_max(result.column("max_abs_diff")),
            "max_abs_diff_flow": finite_max(result.column("max_abs_diff_flow")),
        },
        "wall_seconds": wall_seconds,
    }
    result_dir.write_text("run.json", json_text(meta))
