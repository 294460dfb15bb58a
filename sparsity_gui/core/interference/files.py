"""Result files of the interference model: a sweep (sweep.csv, sweep.json, sweep.png,
sweep.svg) and a single training run (history.csv, w0.npy, w_final.npy,
neuron_counts.csv, run.json).

Used by `sparsity-gui sweep` / `sparsity-gui interference` (into a ResultDir, committed
atomically by the caller) and by the GUI's "save" actions (into a plain folder: each file
is written atomically). The sweep's figure is drawn by the caller (plots.figures) and
handed in as bytes: nothing here imports Qt.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sparsity_gui import __version__
from sparsity_gui.core.checks import input_text, parse_json_text, read_input_bytes
from sparsity_gui.core.cluster import Scheduler
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import ResultDir, csv_text, json_text, write_result_files
from sparsity_gui.core.interference.axes import NEVER_SPARSE, READOUTS, row_value
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.readouts import readouts, run_readouts
from sparsity_gui.core.interference.run import HISTORY_COLUMNS, InterferenceRun, Measurement, network_loss
from sparsity_gui.core.interference.schedules import lr_sum
from sparsity_gui.core.interference.sweep import (
    BARS,
    PREDICTED_SLOPE,
    ROW_COLUMNS,
    SETTING_AXES,
    SETTLED_DEFINITION,
    SweepRow,
    SweepSpec,
    cell_overlaps,
    cell_summaries,
    rows_csv,
    summarize,
)
from sparsity_gui.core.versions import platform_versions

SWEEP_CSV = "sweep.csv"
SWEEP_JSON = "sweep.json"
HISTORY_INT_COLUMNS = ("step", "polysemantic", "active", "opposite_pairs", "same_pairs", "nonzero")


def note_units(p: InterferenceParams, steps: int, t: float = math.nan) -> dict:
    """The research note's units for these network units (exact for plain GD); ``t``: the
    time the run summed over its ``steps`` (a live change of lr included), else 4·Σ lr of
    ``p``'s schedule."""
    return {
        "lam": p.lam,
        "eta": p.eta,
        "t_end": float(t) if math.isfinite(t) else 4.0 * lr_sum(p, 0, steps),
        "relation": "lam = l1/4, eta = 4 lr, t = 4 × the sum of lr over the steps (plain gradient descent)",
    }


# --- a sweep -------------------------------------------------------------------------------
def sweep_metadata(
    spec: SweepSpec,
    rows: Sequence[SweepRow],
    command_line: str | None = None,
    scheduler: Scheduler | None = None,
) -> dict:
    s = summarize(rows) if rows else None
    per_m = []
    if s is not None:
        for i, m in enumerate(s.m):
            per_m.append(
                {
                    "m": int(m),
                    "runs": int(s.runs[i]),
                    "mean": float(s.mean[i]),
                    "std": float(s.std[i]),
                    "predicted": float(s.predicted[i]),
                }
            )
    total_runs = len(spec.runs())
    m_with_runs = sorted({int(r.m) for r in rows})
    only_m = set(spec.varied) <= {"m"}
    extra = {} if only_m else {"summary": None, "summary_note": "per cell: see groups (more than m varied)"}
    return {
        "program": "sparsity-gui",
        "version": __version__,
        "model": "interference",
        "command_line": command_line,
        "spec": spec.as_dict(),
        "note_units": note_units(spec.base, spec.base.steps),
        # where the runs ran: a cluster's address or local:N, null for this machine's threads
        "scheduler": str(scheduler) if scheduler is not None else None,
        "runs_done": len(rows),
        "runs_planned": total_runs,
        "complete": len(rows) == total_runs,
        # a cancelled sweep: the m values the summary (and the fitted slope) cover
        "m_with_runs": m_with_runs,
        "m_without_runs": [int(m) for m in spec.m_values if int(m) not in m_with_runs],
        "prediction": "n^2 / (4 m) polysemantic neurons (Lecomte et al. 2023)",
        "bars": BARS,
        "summary": per_m,
        "fitted_loglog_slope": _json_number(s.slope) if s is not None else None,
        "fitted_slope_over": (
            f"least squares of log10(mean) on log10(m) over the {s.slope_points} m with mean > 0"
            if s is not None
            else None
        ),
        "predicted_loglog_slope": PREDICTED_SLOPE,
        "unsettled_runs": [[r.m, r.seed] for r in rows if not r.settled],
        "settled_definition": SETTLED_DEFINITION,
        "opposite_pairs": int(s.opposite_pairs) if s is not None else 0,
        "same_pairs": int(s.same_pairs) if s is not None else 0,
        "run_seconds": float(sum(r.seconds for r in rows)),
        # every cell of the grid (its values of the varied options) with each readout's
        # median, 10 and 90 % quantiles, mean and sample SD over its seeds
        "varied": list(spec.varied),
        "groups": cell_summaries(spec, rows),
        "readouts": READOUTS,
        "steps_to_sparse_without": "a run never sparse has an empty steps_to_sparse in sweep.csv; "
        "the groups count only the runs with a value",
        **({"overlap": overlap_metadata(spec, rows)} if spec.overlap else {}),
        **extra,
        "platform": platform_versions(),
    }


def _json_number(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None  # JSON has no NaN


def sweep_texts(
    spec: SweepSpec, rows: Sequence[SweepRow], command_line: str | None = None, scheduler=None
) -> dict[str, str]:
    """sweep.csv (a row per run) and sweep.json (the spec, the summary per m, the version)."""
    metadata = sweep_metadata(spec, rows, command_line, scheduler)
    return {SWEEP_CSV: rows_csv(rows), SWEEP_JSON: json_text(metadata)}


def write_sweep(
    target: ResultDir | str | Path,
    spec: SweepSpec,
    rows: Sequence[SweepRow],
    command_line: str | None = None,
    scheduler: Scheduler | None = None,
):
    """Write sweep.csv and sweep.json (into a ResultDir or a folder: write_result_files;
    the figures are figures/interference/sweep.py's). ``rows`` may be fewer than the spec's runs (a
    cancelled sweep: sweep.json says so). Returns the paths written (for a ResultDir:
    where they will be after commit)."""
    texts = sweep_texts(spec, rows, command_line, scheduler)
    files = {name: text.encode("utf-8") for name, text in texts.items()}
    if spec.overlap:
        files[OVERLAP_NPY] = _npy_bytes(cell_overlaps(spec, rows)[1])
    return write_result_files(target, files)


OVERLAP_NPY = "overlap.npy"


def overlap_metadata(spec: SweepSpec, rows: Sequence[SweepRow]) -> dict:
    """sweep.json's description of overlap.npy: its cells in order, the runs each mean is over."""
    params, _, count = cell_overlaps(spec, rows)
    return {
        "file": OVERLAP_NPY,
        "definition": "per cell, the mean over its runs of W(0) W(T)^T (n x n: row i feature i at the "
        "start, column j feature j at the end); NaN for a cell without runs",
        "shape": [len(params), spec.base.n, spec.base.n],
        "cells": params,
        "runs": count,
    }


MAX_CELL = 200  # characters of one cell of sweep.csv: its longest, a float's repr, is 24
MAX_SWEEP_BYTES = 16 * 2**20  # MAX_RUNS rows of about 150 bytes, with room to spare


def rows_from_csv(text: str) -> list[SweepRow]:
    """The rows of a sweep.csv (rows_csv's format) back as SweepRows. Anything else (other
    columns, a row with more or fewer cells, a cell too long or of the wrong type, a NUL)
    raises InputError naming the line."""
    reader = csv.reader(io.StringIO(text, newline=""))
    types = {f.name: f.type for f in dataclasses.fields(SweepRow)}
    rows = []
    try:
        header = next(reader, None)
        if tuple(header or ()) != ROW_COLUMNS:
            raise InputError("sweep", f"not a sweep.csv: expected the columns {','.join(ROW_COLUMNS)}")
        for cells in reader:
            if not cells:
                continue
            if len(cells) != len(ROW_COLUMNS):
                raise ValueError(f"{len(cells)} cells, the header has {len(ROW_COLUMNS)} columns")
            vals: dict[str, Any] = {}  # a row's cells, each of its column's type
            for name, value in zip(ROW_COLUMNS, cells, strict=True):
                if len(value) > MAX_CELL:
                    raise ValueError(f"{name} has {len(value)} characters, at most {MAX_CELL}")
                t = types[name]
                if t in (bool, "bool"):
                    if value not in ("True", "False"):
                        raise ValueError(f"{name} must be True or False, got {value!r}")
                    vals[name] = value == "True"
                elif name == "steps_to_sparse" and value in ("", str(NEVER_SPARSE)):
                    vals[name] = NEVER_SPARSE  # empty: never sparse (-1 in files before 46)
                elif t in (int, "int"):
                    vals[name] = int(value)
                elif t in (float, "float"):
                    vals[name] = float(value)
                else:
                    vals[name] = value
            rows.append(SweepRow(**vals))
    except csv.Error as exc:  # a NUL, a cell past csv's own size limit, an unclosed quote
        raise InputError("sweep", f"line {reader.line_num} of sweep.csv: not CSV ({exc})") from None
    except (TypeError, ValueError) as exc:
        raise InputError("sweep", f"line {reader.line_num} of sweep.csv: {exc}") from None
    return rows


def resumed_rows(folder: str | Path, spec: SweepSpec) -> tuple[list[SweepRow], int]:
    """The finished runs of an earlier, interrupted sweep of ``spec`` in ``folder`` (its
    sweep.json and sweep.csv), and how many of its rows were dropped because this sweep
    could not have written them (row_problem: trained again). Every problem of the files
    is an InputError naming resume: a file missing, not a regular file, too large, not
    UTF-8, not JSON or nested too deeply, sweep.json not an object or of other settings,
    sweep.csv malformed or holding a run twice."""
    folder = Path(folder)
    if folder.is_dir():
        # --resume writes the folder anew (ResultDir): what the sweep did not write would be lost
        for entry in sorted(os.listdir(folder)):
            if entry not in (SWEEP_JSON, SWEEP_CSV, OVERLAP_NPY, "figures"):
                raise InputError(
                    "resume",
                    f"{folder} holds {entry!r}, which the sweep did not write; --resume writes the folder "
                    "anew: move it out first",
                )
    texts = {}
    for name in (SWEEP_JSON, SWEEP_CSV):
        path = folder / name
        if not os.path.lexists(path):
            raise InputError("resume", f"{folder} holds no sweep to resume ({name} is missing)")
        data = read_input_bytes(path, "resume", MAX_SWEEP_BYTES, name)
        texts[name] = input_text(data, path, "resume", name)
    meta = parse_json_text(texts[SWEEP_JSON], str(folder / SWEEP_JSON), "resume", "sweep.json")
    if not isinstance(meta, dict):
        raise InputError("resume", f"{folder / SWEEP_JSON}: not a sweep.json (expected a JSON object)")
    if meta.get("spec") != json.loads(json.dumps(spec.as_dict())):
        command = meta.get("command_line")
        raise InputError(
            "resume",
            f"the sweep in {folder} ({SWEEP_JSON}) was run with other settings; give the same options as its "
            f"command: {command if isinstance(command, str) else '?'}",
        )
    try:
        rows = rows_from_csv(texts[SWEEP_CSV])
    except InputError as exc:
        raise InputError("resume", f"{folder / SWEEP_CSV}: {exc.message}") from None
    planned = {spec.run_key(p): p for p in spec.runs()}
    seen: set[tuple] = set()
    kept = []
    for r in rows:
        key = spec.row_key(r)
        if key in seen:
            raise InputError("resume", f"{folder / SWEEP_CSV} holds the run m = {r.m}, seed {r.seed} twice")
        seen.add(key)
        if key in planned and row_problem(r, planned[key]) is None:
            kept.append(r)
    return kept, len(rows) - len(kept)


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def row_problem(row: SweepRow, p: InterferenceParams) -> str | None:
    """Why ``row`` is not a row the run ``p`` could have written (None: it could): a setting
    not p's, or a measured value out of its range (a count below 0 or past its most, a
    share outside [0, 1], sum_w4 or the seconds not finite)."""
    for name in ("seed", "n", *SETTING_AXES):
        if not _same(getattr(row, name), row_value(p, name)):
            return f"{name} = {getattr(row, name)!r}, not the run's {row_value(p, name)!r}"
    if row.steps != p.steps:
        return f"steps = {row.steps}, not the run's {p.steps}"
    most = {
        "polysemantic": p.m,
        "active": p.n * p.m,
        "nonzero": p.n * p.m,
        "opposite_pairs": p.m * p.n * p.n,
        "same_pairs": p.m * p.n * p.n,
        "steps_to_sparse": p.steps,
    }
    for name, top in most.items():
        low = -1 if name == "steps_to_sparse" else 0
        if not low <= getattr(row, name) <= top:
            return f"{name} = {getattr(row, name)} is outside {low} to {top}"
    for name in ("predicted", "seconds", "sum_w4"):
        if not 0.0 <= getattr(row, name) < math.inf:
            return f"{name} = {getattr(row, name)} is not a finite number >= 0"
    for name in ("kept_share", "rail_share", "threshold_rail_share"):
        if not (0.0 <= getattr(row, name) <= 1.0 or math.isnan(getattr(row, name))):
            return f"{name} = {getattr(row, name)} is outside 0 to 1"
    for name in ("l0_per_input", "dead_units"):  # NaN: no mechanism beside L1
        if not (0.0 <= getattr(row, name) <= p.m or math.isnan(getattr(row, name))):
            return f"{name} = {getattr(row, name)} is outside 0 to {p.m}"
    if math.isinf(row.shrinkage_ratio) or row.shrinkage_ratio < 0.0:
        return f"shrinkage_ratio = {row.shrinkage_ratio} is not a finite number >= 0"
    return None


# --- a single run -------------------------------------------------------------------------
def history_table(
    history: np.ndarray, l0_rows: np.ndarray | None = None
) -> tuple[tuple[str, ...], np.ndarray]:
    """history.csv's columns and rows: HISTORY_COLUMNS, and for a JumpReLU run the L0
    coefficient in force (``l0_rows``: InterferenceRun.l0_history's (step, l0) at the same
    steps) as ``l0`` after ``l1``."""
    history = np.asarray(history, dtype=float)
    if l0_rows is None:
        return tuple(HISTORY_COLUMNS), history
    l0_rows = np.asarray(l0_rows, dtype=float)
    assert np.array_equal(l0_rows[:, 0], history[:, 0]), "the l0 record is not at the history's steps"
    at = HISTORY_COLUMNS.index("l1") + 1
    columns = (*HISTORY_COLUMNS[:at], "l0", *HISTORY_COLUMNS[at:])
    return columns, np.insert(history, at, l0_rows[:, 1], axis=1)


def run_history(run: InterferenceRun) -> tuple[tuple[str, ...], np.ndarray]:
    """history.csv's columns and rows of ``run`` (history_table)."""
    return history_table(run.history_array(), run.l0_history.array() if run.l0_history is not None else None)


def history_csv(history: np.ndarray, l0_rows: np.ndarray | None = None) -> str:
    columns, table = history_table(history, l0_rows)
    return csv_text(columns, table, int_cols=[columns.index(c) for c in HISTORY_INT_COLUMNS])


def neuron_counts_csv(counts: np.ndarray) -> str:
    """neuron,active_features,polysemantic (1 when more than one feature is active on it)."""
    counts = np.asarray(counts)
    table = np.column_stack([np.arange(counts.size), counts, counts > 1]).astype(float)
    return csv_text(("neuron", "active_features", "polysemantic"), table, int_cols=[0, 1, 2])


def _npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def run_metadata(
    run: InterferenceRun, command_line: str | None = None, wall_seconds: float | None = None
) -> dict:
    """run.json of a run trained here (measure() also refreshes run.counts)."""
    meas = run.measure()
    found = run_readouts(run)
    return metadata(
        run.params,
        meas,
        run.step,
        len(run.history),
        run.w0_source,
        run.failure,
        command_line,
        wall_seconds,
        found,
    )


def metadata(
    p: InterferenceParams,
    meas: Measurement,
    step: int,
    samples: int,
    w0_source: dict,
    failure: str | None,
    command_line: str | None = None,
    wall_seconds: float | None = None,
    found: dict | None = None,
) -> dict:
    """run.json: the parameters, where W(0) came from, the final counts (``meas``), the
    note's units, the prediction, the optimizer lab's readouts (``found``) and the
    platform."""
    parameters = p.as_dict()
    if w0_source.get("source") != "normal":
        # W(0) came from a file or an array: seed and sigma drew nothing (as the note's run.json)
        for name in ("seed", "sigma"):
            parameters.pop(name)
    return {
        "program": "sparsity-gui",
        "version": __version__,
        "model": "interference",
        "command_line": command_line,
        "parameters": parameters,
        "w0": w0_source,
        "note_units": note_units(p, step, meas.t),
        "steps_done": int(step),
        "failure": failure,
        "samples": int(samples),
        "final": dataclasses.asdict(meas),
        "polysemantic": int(meas.polysemantic),
        "prediction": p.prediction,
        "prediction_formula": "n^2 / (4 m)",
        "readouts": found,
        "active_definition": "0.8 <= |W[i, k]| <= 1.2; a neuron is polysemantic with more than "
        "one active feature",
        "wall_seconds": wall_seconds,
        "platform": platform_versions(),
    }


def files_of(
    meta: dict,
    history: np.ndarray,
    w0: np.ndarray,
    W: np.ndarray,
    counts: np.ndarray,
    l0_rows: np.ndarray | None = None,
) -> dict[str, bytes]:
    """A run's files as {name: bytes}, the same whichever front end writes them (the
    `interference` command, the API's save, the window's Export data and Export all);
    ``l0_rows``: a JumpReLU run's l0 in force (history_table)."""
    return {
        "history.csv": history_csv(history, l0_rows).encode("utf-8"),
        "w0.npy": _npy_bytes(w0),
        "w_final.npy": _npy_bytes(W),
        "neuron_counts.csv": neuron_counts_csv(counts).encode("utf-8"),
        "run.json": json_text(meta).encode("utf-8"),
    }


def run_files(
    run: InterferenceRun, command_line: str | None = None, wall_seconds: float | None = None
) -> dict[str, bytes]:
    """The files of one run as {name: bytes}; the history is what the run recorded."""
    meta = run_metadata(run, command_line, wall_seconds)  # measure() also refreshes run.counts
    l0_rows = run.l0_history.array() if run.l0_history is not None else None
    files = files_of(meta, run.history_array(), run.w0, run.W, run.counts, l0_rows)
    if run.sparsity_history is not None:
        files.update(sparsity_files(run))
    return files


def sparsity_files(run: InterferenceRun) -> dict[str, bytes]:
    """A TopK or JumpReLU run's sparsity.csv (mechanisms.SPARSITY_COLUMNS at the history's
    steps) and thresholds.csv (step, then every threshold: JumpReLU's theta per unit, TopK's
    k-th largest |h| per input)."""
    from sparsity_gui.core.interference.mechanisms import SPARSITY_COLUMNS

    record = run.sparsity_history
    assert record is not None  # a run with a mechanism keeps one
    thresholds = record.thresholds.array()
    jump = run.mechanism is not None and run.mechanism.jump
    names = [f"theta_{k}" if jump else f"kth_abs_h_{k}" for k in range(thresholds.shape[1] - 1)]
    ints = [0, 2, 7, 8, 9]
    return {
        "sparsity.csv": csv_text(SPARSITY_COLUMNS, record.rows.array(), int_cols=ints).encode("utf-8"),
        "thresholds.csv": csv_text(("step", *names), thresholds, int_cols=[0]).encode("utf-8"),
    }


def snapshot_files(snap, w0_source: dict, command_line: str | None = None) -> dict[str, bytes]:
    """The files of the run a window shows (an InterferenceSnapshot, with W(0) and where it
    came from), as `run_files` makes them: the history is what the window recorded, the
    final loss computed from the snapshot's W."""
    final = dataclasses.replace(snap.latest, loss=network_loss(snap.params, snap.W))
    failure = snap.message if snap.state == "error" else None
    found = readouts(snap.params.l1, snap.W, snap.steps_to_sparse, snap.rail_share_mean)
    meta = metadata(
        snap.params, final, snap.step, len(snap.history), w0_source, failure, command_line, None, found
    )
    return files_of(meta, snap.history, snap.w0, snap.W, snap.counts, snap.l0_rows)


def write_interference_run(
    target: ResultDir | str | Path,
    run: InterferenceRun,
    command_line: str | None = None,
    wall_seconds: float | None = None,
) -> list[Path]:
    """history.csv, w0.npy, w_final.npy (n x m), neuron_counts.csv and run.json."""
    return write_result_files(target, run_files(run, command_line, wall_seconds))
