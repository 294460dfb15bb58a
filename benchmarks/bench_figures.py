"""Figure benchmark: one panel's figure at m = 10^3, and Export all at m = 10^7 (seconds
and peak memory), each beside the Qt figures of an earlier commit measured in the same
run (its source taken with `git archive`, run with this venv).

    .venv/bin/python benchmarks/bench_figures.py [--m-all 10000000] [--baseline-ref d4ac4a3]

Goals (issue 21): a panel's figure in under 0.5 s; Export all at 10^7 no slower than the
Qt figures' and under 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the last commit whose note figures were drawn by Qt (plots/figures.py FigureSet)
QT_REF = "d4ac4a3"


def panel_child(engine: str, m: int) -> dict:
    """Seconds of the sorted-weights and threshold panels' figures of a run at m (the best
    of three): PNG at the engine's default resolution, SVG and PDF."""
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.core.note.sampled import simulate_samples

    run = simulate_samples(SimParams(m=m, lam=1e-3, seed=0), None, 501)
    out: dict = {"engine": engine, "m": m}
    if engine == "matplotlib":
        from sparsity_gui.figures.note.figures import (
            PANELS,
            fit_constants,
            panel_data,
            panel_size,
            run_snapshot,
        )
        from sparsity_gui.figures.save import figure_bytes, figure_of
        from sparsity_gui.figures.style import PAPER

        def make(name, fmt):
            data = panel_data(run_snapshot(run), fit=fit_constants(run))
            return figure_bytes(figure_of(PANELS[name], data[name], PAPER, panel_size("paper")), fmt, PAPER)
    else:
        from sparsity_gui.plots.figures import FigureSet, sampled_snapshot

        figs = FigureSet(sampled_snapshot(run))

        def make(name, fmt):
            panel = figs.panels[0 if name == "weights_sorted" else 1]
            return figs.render_panel(panel, fmt)

    for name in ("weights_sorted", "threshold_crossing"):
        for fmt in ("png", "svg", "pdf"):
            best = cpu = float("inf")
            for _ in range(3):
                start, start_cpu = time.perf_counter(), time.process_time()
                make(name, fmt)
                best = min(best, time.perf_counter() - start)
                cpu = min(cpu, time.process_time() - start_cpu)
            out[f"{name}.{fmt}"] = best
            out[f"cpu {name}.{fmt}"] = cpu
    if engine != "matplotlib":
        figs.close()  # a pyqtgraph widget alive at exit can crash the interpreter
    return out


def child(args: list[str], src: Path | None) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    if src is not None:  # the earlier commit's package ahead of this one
        env["PYTHONPATH"] = str(src)
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=1800, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m-panel", type=float, default=1e3)
    ap.add_argument("--m-all", type=float, default=1e7, help="m of the Export all case (0: skip it)")
    ap.add_argument("--baseline-ref", default=QT_REF)
    ap.add_argument("--panel-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.panel_child:
        print(json.dumps(panel_child(args.panel_child[0], int(float(args.panel_child[1])))))
        return
    with tempfile.TemporaryDirectory(prefix="bench-figures-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.baseline_ref, "sparsity_gui", "benchmarks"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        m = int(args.m_panel)
        new = child([__file__, "--panel-child", "matplotlib", str(m)], None)
        old = child([__file__, "--panel-child", "qt", str(m)], base)
        print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
        print(
            f"one panel's figure at m = {m} (best of 3, s; wall / process CPU): "
            f"matplotlib (300 dpi PNG) | Qt {args.baseline_ref}"
        )
        keys = [k for k in new if "." in k and not k.startswith("cpu ")]
        for key in keys:
            print(
                f"  {key:28s} {new[key]:6.3f} / {new['cpu ' + key]:6.3f} | "
                f"{old[key]:6.3f} / {old.get('cpu ' + key, float('nan')):6.3f}"
            )
        worst = max(new[k] for k in keys)
        print(f"  slowest {worst:.3f} s: goal < 0.5 s: {'PASS' if worst < 0.5 else 'MISS'}")
        if args.m_all:
            m = int(args.m_all)
            bench = "benchmarks/bench_gui.py"
            new = child([str(ROOT / bench), "--export-child", str(m)], None)
            old = child([str(base / bench), "--export-child", str(m)], base)
            print(f"Export all at m = {m} (a paused window): matplotlib | Qt {args.baseline_ref}")
            print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
            print(f"  seconds       {new['export_all_s']:8.2f} | {old['export_all_s']:8.2f}")
            print(f"  peak RSS MiB  {new['peak_after_mib']:8.0f} | {old['peak_after_mib']:8.0f}")
            ok = new["export_all_s"] <= old["export_all_s"] * 1.05 and new["peak_after_mib"] < 1536
            print(f"  goal: no slower than Qt's, under 1.5 GB: {'PASS' if ok else 'MISS'}")


if __name__ == "__main__":
    main()
