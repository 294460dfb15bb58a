"""The note model's result files: of a run, timeseries.csv, weights.csv, deaths.csv,
tracked.csv and run.json, as texts or streamed pieces (weights and deaths have a row per
weight: up to 10^8), and `write_results` into a ResultDir; of a scaling grid, scaling.csv
and scaling.json (`write_scaling`, as core/interference/files.py writes a sweep's). Every
float is written so that it reads back bit for bit."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from sparsity_gui import __version__
from sparsity_gui.core.cluster import Scheduler
from sparsity_gui.core.files import (
    Payload,
    ResultDir,
    Streamed,
    WrittenBy,
    csv_text,
    iter_csv_columns,
    json_text,
    write_result_files,
)
from sparsity_gui.core.note.headless import resolved_format
from sparsity_gui.core.note.metrics import COL, COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import SampledRun
from sparsity_gui.core.note.scaling import (
    SAMPLES,
    T_TRANSIENT,
    ScalingGrid,
    ScalingRow,
    rows_csv,
    summarize,
)
from sparsity_gui.core.versions import platform_versions


def timeseries_csv(rows: np.ndarray) -> str:
    return csv_text(COLUMNS, rows[:, : len(COLUMNS)], int_cols=[COLUMNS.index("nonzero")])


def iter_weights_csv(w0: np.ndarray, w_now: np.ndarray, now_name: str = "w_final") -> Iterator[str]:
    """k,w0,<now_name>: a row per weight, signed, k the 0-based input index (in pieces)."""
    k = np.arange(w0.shape[0], dtype=np.int64)
    return iter_csv_columns(("k", "w0", now_name), [k, w0, w_now], int_cols=[0])


def weights_csv(w0: np.ndarray, w_now: np.ndarray, now_name: str = "w_final") -> str:
    """k,w0,<now_name>: a row per weight, signed, k the 0-based input index."""
    return "".join(iter_weights_csv(w0, w_now, now_name))


def death_columns(sim) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, u, t_death) of each weight of the Simulation `sim` that died, in order of death
    (ties by input index). The smallest weights die first, so this is usually the rank
    order reversed, read straight off the sorted |W(0)| and the solver's death times by
    rank (no gather over m: 1 s less at m = 10^7); checked (death times finite and strictly
    increasing, so no tie to break), and sorted otherwise. The columns may be read-only
    views of the run's arrays: copy them to keep or change them."""
    t_ranked = sim.solver.death_t
    dead_n = int(np.count_nonzero(np.isfinite(t_ranked)))
    t = t_ranked[::-1][:dead_n]
    if np.all(np.isfinite(t)) and np.all(t[1:] > t[:-1]):
        cols = (sim.init.order[::-1][:dead_n], sim.init.u[::-1][:dead_n], t)
        for col in cols:
            col.flags.writeable = False  # a view: never written through
        return cols
    death_t = sim.solver.death_times()  # input order
    dead = np.flatnonzero(np.isfinite(death_t))
    order = dead[np.argsort(death_t[dead], kind="stable")]
    return order, np.abs(sim.init.w0[order]), death_t[order]


def iter_deaths_csv(sim) -> Iterator[str]:
    """k,u,t_death for each weight that died, in order of death (in pieces)."""
    return iter_csv_columns(DEATH_NAMES, death_columns(sim), int_cols=[0])


DEATH_NAMES = ("k", "u", "t_death")


def npz_writer(arrays: dict[str, np.ndarray | Callable[[], np.ndarray]]) -> Callable[[BinaryIO], None]:
    """Writes an uncompressed .npz (what np.savez writes) into an open file: the arrays,
    named like the CSV columns, exact by construction. An array given as a function is made
    only when its turn comes and dropped after it is written, so a file of several arrays
    of 10^7 never holds them all at once (np.savez needs them all first)."""

    def write(f: BinaryIO) -> None:
        import zipfile

        with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, make in arrays.items():
                array = np.asanyarray(make() if callable(make) else make)
                with zf.open(name + ".npy", "w", force_zip64=True) as out:
                    np.lib.format.write_array(out, array, allow_pickle=False)
                del array

    return write


def weights_npz(
    w0: np.ndarray, w_now: Callable[[], np.ndarray], now_name: str = "w_final"
) -> Callable[[BinaryIO], None]:
    """weights.npz: k (int64), w0 and <now_name> (W now, made when written), the columns
    of weights.csv."""
    return npz_writer({"k": lambda: np.arange(w0.shape[0], dtype=np.int64), "w0": w0, now_name: w_now})


def deaths_npz(sim) -> Callable[[BinaryIO], None]:
    """deaths.npz: k, u and t_death, the columns of deaths.csv, in order of death."""
    return npz_writer(dict(zip(DEATH_NAMES, death_columns(sim), strict=True)))


def w0_entry(w0, source=None, params: SimParams | None = None) -> dict:
    """Where W(0) came from, for run.json: a normal draw (sigma, seed) or a file (its path,
    tensor or array, row, and the SHA-256 of the weights as float64 little-endian)."""
    from sparsity_gui.core.note.session import W0Source
    from sparsity_gui.core.session_fields import weights_sha256

    if source is None:
        path = params.w0_path if params is not None else None
        source = W0Source("file", path) if path is not None else W0Source("normal")
    if source.kind == "normal":
        entry: dict[str, Any] = {"source": "normal"}
        if params is not None:
            entry.update({"sigma": params.sigma, "seed": params.seed})
        return entry
    return {
        "source": source.kind,  # "file", or "array" (a numpy array given to api.simulate)
        "path": source.path,
        "tensor": source.array,
        "row": source.row,
        "m": int(w0.shape[0]),
        "sha256": weights_sha256(w0),
    }


def run_metadata(run: SampledRun, params: SimParams, command_line: str, source=None) -> dict:
    """run.json. ``source`` (a session.W0Source) says where W(0) came from; without it, a
    file when params.w0_path is set. A W(0) from a file has no sigma or seed (they made
    nothing): its "w0" entry names the file, tensor, row and hash instead."""

    w0 = w0_entry(run.sim.init.w0, source, params)
    parameters = {**params.as_dict(), "m": run.sim.m}
    if w0["source"] != "normal":
        for name in ("sigma", "seed"):
            parameters.pop(name, None)
    return {
        "program": "sparsity-gui",
        "version": __version__,
        "command_line": command_line,
        "parameters": parameters,
        "w0": w0,
        "t_end": run.t_end,
        "t_one_weight_left": run.t_one,
        "samples": int(run.rows.shape[0]),
        **run.fit.fields(),
        "regime": run.regime,
        "nonzero_final": run.nonzero_final,
        "solver_wall_seconds": run.wall_seconds,
        "solver_steps": int(getattr(run.sim.solver, "steps", 0)),
        "lam_changes": [[c.t, c.lam] for c in run.sim.lam_changes],
        "live_changes": [[c.t, c.name, c.value] for c in run.sim.changes],
        "platform": platform_versions(),
        **run.extra,
    }


def run_files(
    run: SampledRun,
    params: SimParams,
    command_line: str,
    source=None,
    fmt: str = "auto",
    include_weights: bool = True,
) -> dict[str, Payload]:
    """A run's files, the same whichever front end writes them (`run`, the API's save, the
    window's Export data and Export all): timeseries.csv, weights and deaths (.csv streamed
    in pieces, or .npz with ``fmt`` "npz"; "auto" picks by m, resolved_format), run.json."""
    sim = run.sim
    fmt = resolved_format(fmt, sim.m)
    w0 = sim.init.w0
    files: dict[str, Payload] = {"timeseries.csv": timeseries_csv(run.rows)}
    if include_weights:
        if fmt == "npz":
            files["weights.npz"] = WrittenBy(weights_npz(w0, sim.solver.weights))
        else:
            files["weights.csv"] = Streamed(lambda: iter_weights_csv(w0, sim.solver.weights()))
    if fmt == "npz":
        files["deaths.npz"] = WrittenBy(lambda f: deaths_npz(sim)(f))  # its columns made when written
    else:
        files["deaths.csv"] = Streamed(lambda: iter_deaths_csv(sim))
    meta = run_metadata(run, params, command_line, source)
    meta["format"] = fmt
    files["run.json"] = json_text(meta)
    return files


def write_results(
    out: ResultDir,
    run: SampledRun,
    params: SimParams,
    include_weights: bool,
    command_line: str,
    fmt: str = "auto",
    source=None,
) -> None:
    """The run's files (`run_files`) into `out`."""
    for name, payload in run_files(run, params, command_line, source, fmt, include_weights).items():
        out.write(name, payload)


def tracked_csv(run, shown: int | None = None) -> str:
    """|W_k|(t) of the tracked weights (the threshold panel's curves): t, then a column
    per weight named by its input index; with ``shown``, only the weights a panel showing
    that many of them draws (simulation.shown_tracked)."""
    from sparsity_gui.core.note.simulation import shown_tracked

    sim = run.sim
    cols = np.arange(len(sim.tracked)) if shown is None else shown_tracked(len(sim.tracked), shown)
    ks = sim.init.order[sim.tracked[cols]]
    rows = run.rows
    table = np.column_stack([rows[:, COL["t"]], rows[:, len(COLUMNS) + cols]])
    return csv_text(["t", *[f"w{int(k)}" for k in ks]], table)


# --- a scaling grid ---------------------------------------------------------------------------
def scaling_metadata(
    grid: ScalingGrid,
    rows: Sequence[ScalingRow],
    command_line: str | None = None,
    scheduler: Scheduler | None = None,
) -> dict:

    total = len(grid.runs())
    return {
        "program": "sparsity-gui",
        "version": __version__,
        "model": "note",
        "command_line": command_line,
        "settings": grid.as_dict(),
        # where the runs ran: a cluster's address or local:N, null for this machine's threads
        "scheduler": str(scheduler) if scheduler is not None else None,
        "runs_done": len(rows),
        "runs_planned": total,
        "complete": len(rows) == total,
        "definitions": {
            "t_one": "time at which one weight is left (run.json's t_one_weight_left)",
            "lam_t_one": "lam * t_one; the note: full sparsity takes Theta(1/lam)",
            "fitted_c": "c in 1/||W||_1 ~ 1/||W(0)||_1 + c lam t, least squares through the origin "
            "of w - w(0) on lam t over the rows with m' >= 2 (run.json's fitted_c); the rows are "
            "evenly spaced in t, so the few-survivor phase (most of the run's time) dominates it",
            "fitted_c_bulk": "the same fit over the rows with m' >= 10: the bulk decay the note "
            "describes (||W||_1 = 1/Theta(1/sqrt(m) + lam t)), the constant to quote",
            "fit_max_rel_dev": "max |1/(w(0) + fitted_c lam t) - ||W||_1| / ||W||_1 over the rows "
            "with m' >= 2: how far the law with fitted_c is from the run",
            "norm2_w0": "||W(0)||^2; balance_possible: lam ||W(0)||_1 <= 1/4",
            "theta_rises": "theta = lam/(1-||W||^2) never fell on the run (the note's premise that "
            "theta rises as W gets sparser), measured on its rows and on its start (run.json's regime); "
            "theta_fall: its largest relative fall (0 if none), theta_fall_t: when theta was lowest in it",
            "theta_rise_condition": "(1-||W(0)||^2)||W(0)||^2 >= lam ||W(0)||_1: the feature push on "
            "||W||^2 at least the regularization push at t = 0, sufficient for theta_rises (and, lam "
            "constant, necessary: otherwise ||W||^2 and theta fall first)",
            "rel_var": "Var[X]/E[X]^2 of the nonzero |W_k|, over the rows with m' >= 2",
            "balance_ratio": f"(1-||W||^2)||W||^2 / (lam ||W||_1), mean over the rows with m' >= 2 "
            f"and t >= {T_TRANSIENT:g}",
            "w_last": "the last weight at t_end = 1.1 t_one; w_last_root: the stable root of (1-w^2)w = lam",
            "lam_norm1_0": "lam ||W(0)||_1. The balance (1-||W||^2)||W||^2 = lam ||W||_1 needs "
            "lam ||W||_1 <= 1/4; above that ||W|| first collapses and many weights die at once "
            "(the figures draw the means at lam ||W(0)||_1 > 1/4 hollow: outside the note's regime)",
            "rows": f"{SAMPLES} samples evenly spaced from t = 0 to t_end, as the run command",
        },
        "summary": [
            {"m": c.m, "lam": c.lam, "runs": c.runs, "mean": c.mean, "std": c.std} for c in summarize(rows)
        ],
        "run_seconds": float(sum(r.seconds for r in rows)),
        "platform": platform_versions(),
    }


def scaling_files(grid: ScalingGrid, rows: Sequence[ScalingRow], command_line=None, scheduler=None):
    """{name: bytes}: scaling.csv and scaling.json (the figures are figures/note/scaling.py's)."""
    metadata = scaling_metadata(grid, rows, command_line, scheduler)
    return {
        "scaling.csv": rows_csv(rows).encode("utf-8"),
        "scaling.json": json_text(metadata).encode("utf-8"),
    }


def write_scaling(target: ResultDir | str | Path, grid: ScalingGrid, rows, command_line=None, scheduler=None):
    """scaling_files into a ResultDir or a folder (write_result_files). Returns the paths
    written (for a ResultDir: where they will be after commit)."""
    return write_result_files(target, scaling_files(grid, rows, command_line, scheduler))
