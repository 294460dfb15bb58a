"""The note model's result files: timeseries.csv, weights.csv, deaths.csv, tracked.csv and
run.json, as texts or streamed pieces (weights and deaths have a row per weight: up to
10^8), and `write_results` into a ResultDir. Every float is written so that it reads back
bit for bit."""

from __future__ import annotations

import io
import platform
import sys
from collections.abc import Iterator

import numpy as np

from sparsity_gui import __version__
from sparsity_gui.core.files import CHUNK_ROWS, ResultDir, csv_text, iter_csv, json_text
from sparsity_gui.core.note.metrics import COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import SampledRun


def timeseries_csv(rows: np.ndarray) -> str:
    return csv_text(COLUMNS, rows[:, : len(COLUMNS)], int_cols=[COLUMNS.index("nonzero")])


def iter_weights_csv(w0: np.ndarray, w_now: np.ndarray, now_name: str = "w_final") -> Iterator[str]:
    """k,w0,<now_name>: a row per weight, signed, k the 0-based input index (in pieces)."""
    yield f"k,w0,{now_name}\n"
    # '%.17g' round-trips every double; savetxt is vectorised enough for m = 10^7
    for start in range(0, w0.shape[0], CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, w0.shape[0])
        out = io.StringIO()
        table = np.column_stack([np.arange(start, stop, dtype=np.float64), w0[start:stop], w_now[start:stop]])
        np.savetxt(out, table, fmt=("%d", "%.17g", "%.17g"), delimiter=",")
        yield out.getvalue()


def weights_csv(w0: np.ndarray, w_now: np.ndarray, now_name: str = "w_final") -> str:
    """k,w0,<now_name>: a row per weight, signed, k the 0-based input index."""
    return "".join(iter_weights_csv(w0, w_now, now_name))


def _death_rows(u_input_order: np.ndarray, death_t_input_order: np.ndarray) -> np.ndarray:
    dead = np.flatnonzero(np.isfinite(death_t_input_order))
    order = dead[np.argsort(death_t_input_order[dead], kind="stable")]
    return np.column_stack([order, u_input_order[order], death_t_input_order[order]])


def iter_deaths_csv(u_input_order: np.ndarray, death_t_input_order: np.ndarray) -> Iterator[str]:
    """k,u,t_death for each weight that died, in order of death (in pieces)."""
    return iter_csv(("k", "u", "t_death"), _death_rows(u_input_order, death_t_input_order), int_cols=[0])


def deaths_csv(u_input_order: np.ndarray, death_t_input_order: np.ndarray) -> str:
    return "".join(iter_deaths_csv(u_input_order, death_t_input_order))


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


def result_texts(
    run: SampledRun, params: SimParams, include_weights: bool, command_line: str, now_name: str = "w_final"
) -> dict[str, str]:
    """The result files (name -> text): timeseries.csv, weights.csv, deaths.csv, run.json."""
    sim = run.sim
    texts = {"timeseries.csv": timeseries_csv(run.rows)}
    if include_weights:
        texts["weights.csv"] = weights_csv(sim.init.w0, sim.solver.weights(), now_name)
    texts["deaths.csv"] = deaths_csv(np.abs(sim.init.w0), sim.solver.death_times())
    texts["run.json"] = json_text(run_metadata(run, params, command_line))
    return texts


def write_results(
    out: ResultDir, run: SampledRun, params: SimParams, include_weights: bool, command_line: str
) -> None:
    for name, text in result_texts(run, params, include_weights, command_line).items():
        out.write_text(name, text)


def tracked_csv(run) -> str:
    """|W_k|(t) of the tracked weights (the threshold panel's curves): t, then a column
    per weight named by its input index."""
    from sparsity_gui.core.files import csv_text
    from sparsity_gui.core.note.metrics import COL, COLUMNS

    sim = run.sim
    ks = sim.init.order[sim.tracked]
    rows = run.rows
    table = np.column_stack([rows[:, COL["t"]], rows[:, len(COLUMNS) : len(COLUMNS) + len(ks)]])
    return csv_text(["t", *[f"w{int(k)}" for k in ks]], table)
