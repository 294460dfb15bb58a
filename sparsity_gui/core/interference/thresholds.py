"""The threshold each sparsity mechanism applies, over a run: what the window's Thresholds
panel draws and what its figure draws (one computation for both; issue 51).

A run records the threshold's summary at its history's steps (the median and 10-90 %
band over features, units or inputs, and one tracked): under l1 the note's
theta_i = (l1/4)/(1 - |W_i|^2) (readouts.note_thresholds, run.note_threshold_history),
under TopK and JumpReLU the rows of mechanisms.SPARSITY_COLUMNS (run.sparsity_history).
`threshold_curves` turns either into the curves, with JumpReLU's rail
theta_k(0) +- sum lr_t beside them and how many threshold steps went past it. Qt-free.
"""

from __future__ import annotations

import numpy as np

from sparsity_gui.core.interference.mechanisms import SPARSITY_COLUMNS
from sparsity_gui.core.interference.schedules import lr_sum

CURVES = ("median", "p10", "p90", "tracked")
_SUMMARY = ("threshold_median", "threshold_p10", "threshold_p90", "threshold_tracked")
_S = {name: i for i, name in enumerate(SPARSITY_COLUMNS)}
TRACKED = {"l1": "feature 0", "jumprelu": "unit 0", "topk": "input 0"}  # the tracked one's name


def threshold_rail(params, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """JumpReLU's rail theta_k(0) +- sum lr_t at ``steps`` (of the run started with
    ``params``): Adam's usual largest move of the stored parameter (theta, or log theta)
    per step, summed; not a strict bound."""
    moved = np.array([lr_sum(params, 0, int(s)) for s in np.asarray(steps)], dtype=float)
    if params.threshold_param == "log":
        return params.threshold_init * np.exp(-moved), params.threshold_init * np.exp(moved)
    return params.threshold_init - moved, params.threshold_init + moved


def threshold_curves(params, note_rows: np.ndarray, sparsity_rows: np.ndarray, initial=None) -> dict:
    """The Thresholds panel's data of a run with ``params`` (``initial``: the parameters it
    started with, for the rail; default ``params``): "sparsity", "k", "step" and CURVES
    (arrays over the recorded steps); under JumpReLU also "rail_lo", "rail_hi" and the
    threshold steps so far that "moved" and went "past" the rail (a move > lr).
    ``note_rows``: readouts.NOTE_THRESHOLD_COLUMNS rows (an l1 run's), ``sparsity_rows``:
    SPARSITY_COLUMNS rows (a TopK or JumpReLU run's)."""
    kind = params.sparsity
    if kind == "l1":
        rows = np.asarray(note_rows, float).reshape(-1, 1 + len(CURVES))
    else:
        rows = np.asarray(sparsity_rows, float).reshape(-1, len(SPARSITY_COLUMNS))
        rows = rows[:, [_S[c] for c in ("step", *_SUMMARY)]]
    data: dict = {"sparsity": kind, "k": params.k, "step": rows[:, 0]}  # k: None but under TopK
    data.update({name: rows[:, 1 + i] for i, name in enumerate(CURVES)})
    if kind == "jumprelu":
        data["rail_lo"], data["rail_hi"] = threshold_rail(initial or params, rows[:, 0])
        last = np.asarray(sparsity_rows, float).reshape(-1, len(SPARSITY_COLUMNS))[-1:]
        counts = last[:, [_S["thresholds_moved"], _S["thresholds_past_rail"]]].ravel()
        data["moved"], data["past"] = (int(v) for v in counts) if counts.size else (0, 0)
    return data


def run_threshold_curves(run) -> dict:
    """threshold_curves of an InterferenceRun (run.py), at the steps it recorded."""
    note = run.note_threshold_history
    record = run.sparsity_history
    return threshold_curves(
        run.params,
        note.array() if note is not None else np.zeros((0, 1 + len(CURVES))),
        record.rows.array() if record is not None else np.zeros((0, len(SPARSITY_COLUMNS))),
    )


def snapshot_threshold_curves(snap) -> dict:
    """threshold_curves of an InterferenceSnapshot (worker.py): the window's run."""
    return threshold_curves(snap.params, snap.note_thresholds, snap.sparsity_rows, snap.initial_params)


def threshold_note(data: dict) -> str:
    """The line under the thresholds: what the l1 threshold is exact for, TopK's K, or how
    many of JumpReLU's threshold steps went past the rail."""
    kind = data["sparsity"]
    if kind == "l1":
        return "λ = l1/4; exact for a row no interference acts on"
    if kind == "topk":
        return f"K = {data['k']}: each input keeps the units at or above it"
    moved, past = data["moved"], data["past"]
    share = f"{past / moved:.1%}" if moved else "none"
    return f"steps past the rail (a move > lr): {past:,} of {moved:,} ({share})"
