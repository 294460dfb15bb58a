"""The note model's result files: timeseries.csv, weights.csv, deaths.csv, tracked.csv and
run.json, as texts or streamed pieces (weights and deaths have a row per weight: up to
10^8), and `write_results` into a ResultDir. Every float is written so that it reads back
bit for bit."""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterator

import numpy as np

from sparsity_gui import __version__
from sparsity_gui.core.files import ResultDir, csv_text, iter_csv_columns, json_text
from sparsity_gui.core.note.metrics import COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import SampledRun


def timeseries_csv(rows: np.ndarray) -> str:
    return csv_text(COLUMNS, rows[:, : len(COLUMNS)], int_cols=[COLUMNS.index("nonzero")])


def iter_weights_csv(w0: np.ndarray, w_now: np.ndarray, now_name: str = "w_final") -> Iterator[str]:
    """k,w0,<now_name>: a row per weight, signed, k the 0-based input index (in pieces)."""
    k = np.arange(w0.shape[0], dtype=np.int64)
    return iter_csv_columns(("k", "w0", now_name), [k, w0, w_now], int_cols=[0])


def weights_csv(w0: np.ndarray, w_now: np.ndarray, now_name: str = "w_final") -> str:
    """k,w0,<now_name>: a row per weight, signed, k the 0-based input index."""
    return "".join(iter_weights_csv(w0, w_now, now_name))


def death_columns(
    u_input_order: np.ndarray, death_t_input_order: np.ndarray, rank_order: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, u, t_death) of each weight that died, in order of death (ties by input index).
    With `rank_order` (InitialState.order: the input index of each rank of sorted |W(0)|),
    the smallest weights die first, so the order is usually that order reversed: checked
    (death times strictly increasing, so no tie to break) instead of a sort of m values."""
    if rank_order is not None:
        dead_n = int(np.count_nonzero(np.isfinite(death_t_input_order)))
        order = rank_order[::-1][:dead_n]
        t = death_t_input_order[order]
        if np.all(np.isfinite(t)) and np.all(t[1:] > t[:-1]):
            return order, u_input_order[order], t
    dead = np.flatnonzero(np.isfinite(death_t_input_order))
    order = dead[np.argsort(death_t_input_order[dead], kind="stable")]
    return order, u_input_order[order], death_t_input_order[order]


def iter_deaths_csv(u_input_order: np.ndarray, death_t_input_order: np.ndarray) -> Iterator[str]:
    """k,u,t_death for each weight that died, in order of death (in pieces)."""
    return iter_csv_columns(DEATH_NAMES, death_columns(u_input_order, death_t_input_order), int_cols=[0])


def deaths_csv(u_input_order: np.ndarray, death_t_input_order: np.ndarray) -> str:
    return "".join(iter_deaths_csv(u_input_order, death_t_input_order))


DEATH_NAMES = ("k", "u", "t_death")
FORMATS = ("csv", "npz")


def _write_npz(out: ResultDir, name: str, arrays: dict[str, np.ndarray]) -> None:
    """An uncompressed .npz (np.savez): the arrays, named like the CSV columns, exact by
    construction; zipfile streams each array to the file."""
    out.write_with(name, lambda f: np.savez(f, **arrays))


def run_metadata(run: SampledRun, params: SimParams, command_line: str) -> dict:
    import numba
    import scipy

    return {
        "program": "sparsity-gui",
        "version": __version__,
        "command_line": command_line,
        "parameters": {**params.as_dict(), "m": run.sim.m},
        "t_end": run.t_end,
        "t_one_weight_left": run.t_one,
        "samples": int(run.rows.shape[0]),
        "fitted_c": run.fitted_c,
        "nonzero_final": run.nonzero_final,
        "solver_wall_seconds": run.wall_seconds,
        "solver_steps": int(getattr(run.sim.solver, "steps", 0)),
        "lam_changes": [[c.t, c.lam] for c in run.sim.lam_changes],
        "live_changes": [[c.t, c.name, c.value] for c in run.sim.changes],
        "platform": {
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "numba": numba.__version__,
            "scipy": scipy.__version__,
            "machine": platform.machine(),
        },
        **run.extra,
    }


def write_results(
    out: ResultDir,
    run: SampledRun,
    params: SimParams,
    include_weights: bool,
    command_line: str,
    fmt: str = "csv",
) -> None:
    """timeseries.csv, weights and deaths (.csv streamed in pieces, or .npz with `fmt`
    "npz"), run.json into `out`."""
    sim = run.sim
    out.write_text("timeseries.csv", timeseries_csv(run.rows))
    w0 = sim.init.w0
    if include_weights:
        w_final = sim.solver.weights()
        if fmt == "npz":
            k = np.arange(w0.shape[0], dtype=np.int64)
            _write_npz(out, "weights.npz", {"k": k, "w0": w0, "w_final": w_final})
        else:
            out.write_chunks("weights.csv", iter_weights_csv(w0, w_final))
        del w_final
    cols = death_columns(np.abs(w0), sim.solver.death_times(), sim.init.order)
    if fmt == "npz":
        _write_npz(out, "deaths.npz", dict(zip(DEATH_NAMES, cols, strict=True)))
    else:
        out.write_chunks("deaths.csv", iter_csv_columns(DEATH_NAMES, cols, int_cols=[0]))
    del cols
    meta = run_metadata(run, params, command_line)
    meta["format"] = fmt
    out.write_text("run.json", json_text(meta))


def tracked_csv(run, shown: int | None = None) -> str:
    """|W_k|(t) of the tracked weights (the threshold panel's curves): t, then a column
    per weight named by its input index; with ``shown``, only the weights a panel showing
    that many of them draws (simulation.shown_tracked)."""
    from sparsity_gui.core.files import csv_text
    from sparsity_gui.core.note.metrics import COL, COLUMNS
    from sparsity_gui.core.note.simulation import shown_tracked

    sim = run.sim
    cols = np.arange(len(sim.tracked)) if shown is None else shown_tracked(len(sim.tracked), shown)
    ks = sim.init.order[sim.tracked[cols]]
    rows = run.rows
    table = np.column_stack([rows[:, COL["t"]], rows[:, len(COLUMNS) + cols]])
    return csv_text(["t", *[f"w{int(k)}" for k in ks]], table)
