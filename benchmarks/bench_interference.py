"""Benchmark of the n-encodings interference kernel against the same update written in numpy.

Run from the project root:

    .venv/bin/python benchmarks/bench_interference.py            # full run (about 4-5 minutes)
    .venv/bin/python benchmarks/bench_interference.py --quick    # short version (about 1 minute)
    .venv/bin/python benchmarks/bench_interference.py --sections 6,7,8   # issue 13's sections only

The kernel is ``sparsity_gui.core.interference.train_steps``, called through
``InterferenceRun.advance`` as the GUI worker and the sweep call it. The baseline is the same
step written the obvious numpy way (``NumpyRun`` below):

    G = W @ W.T;  zero the diagonal;  G = max(G, 0);  push = G @ W
    then the optimizer's elementwise update with np.where / np.sign.

It prints, from one run on one machine:

0. an agreement check: kernel and numpy run side by side on a small case for every optimizer
   (with weights reaching zero and leaving it under gd-zero), max |W difference| must be ~1e-10;
1. the GUI target n = 256, m = 1024: steps/s of the kernel next to numpy, goal >= 100 steps/s,
   with both OpenBLAS libraries at 1 thread (what the GUI sets) and at their default;
2. the sweep's sizes n = 64, m = 64 .. 1024: ms per step, kernel vs numpy, and the ratio;
3. n = 256, m = 4096 (skipped with --quick);
4. where the time goes at n = 256, m = 1024: the two matrix products against the elementwise pass;
5. a whole sweep with 1 worker and with one per core;
6. gd-zero on its nonzeros: the sparse step against the dense one by share of nonzeros (the
   crossover), numba against scipy.sparse on a 99.9 %-zero W, and the issue's command
   ``interference --n 256 --m 1024 --l1 0.2 --lr 0.05 --steps 2000`` as whole processes,
   ``--optimizer gd-zero`` against ``--optimizer gd`` (goal >= 5x);
7. float32 against float64: the products and whole AdamW steps at n = 256, m = 1024 and 4096;
8. ``sweep --paper`` projected: every m of 256:4096:256 timed with two runs side by side (the
   sweep's 2 jobs), in float64 and float32, times 16 seeds x 7500 steps (goal < 1 hour).
9. the sparsity mechanisms (issue 51): an AdamW step under TopK and JumpReLU beside the l1
   step at n = 256, m = 1024 (goal <= 1.5x), the cases' repeats taken in turn.

Every figure is the best of several repeats of many steps (time.perf_counter), after a
warm-up; kernel and numpy repeats alternate so both see the same background load. Both start
from the same W(0) and follow the same trajectory, so they are timed on the same states.
Nothing is asserted: the exit status is 0 either way.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import sys
import time
from pathlib import Path

import numba
import numpy as np

from sparsity_gui.core.interference import kernels as I
from sparsity_gui.core.interference.params import OPTIMIZERS, InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun, initial_weights

GOAL_STEPS_PER_S = 100.0  # GUI target at n = 256, m = 1024
GUI_N, GUI_M = 256, 1024
SWEEP_N, SWEEP_MS = 64, (64, 128, 256, 512, 1024)
BIG_N, BIG_M = 256, 4096
STEPS_MAX = 10**8


def now() -> float:
    return time.perf_counter()


# ---------------------------------------------------------------------------------------------
# the numpy baseline: the same update, written the obvious way


class NumpyRun:
    """The kernel's update in plain numpy (same formulas, same order of operations).

    ``count_revivals`` (check only) counts gd-zero weights that were exactly zero and were
    pushed out of zero by the interference, to show that branch of the rule is exercised."""

    def __init__(self, p: InterferenceParams, w0: np.ndarray, count_revivals: bool = False):
        self.p = p
        self.W = np.array(w0, dtype=np.float64, copy=True)
        self.m1 = np.zeros_like(self.W)
        self.m2 = np.zeros_like(self.W)
        self.norm2 = (self.W * self.W).sum(axis=1)
        self.step = 0
        self.stopped = False
        self.count_revivals = count_revivals
        self.revivals = 0

    def advance(self, n_steps: int) -> int:
        p = self.p
        W, m1, m2, norm2 = self.W, self.m1, self.m2, self.norm2
        n = W.shape[0]
        lr, l1 = p.lr, p.l1
        wd = p.effective_weight_decay
        b1, b2, eps = p.beta1, p.beta2, p.eps
        done = 0
        for _ in range(n_steps):
            if self.stopped:
                break
            if p.interference and n > 1:
                G = W @ W.T
                np.fill_diagonal(G, 0.0)
                G = np.maximum(G, 0.0)
                push = G @ W
            else:
                push = np.zeros_like(W)
            t = self.step + 1
            if p.optimizer in ("gd-zero", "gd"):
                eta = 4.0 * lr
                h = lr * l1
                g = 1.0 + eta * (1.0 - norm2)
                if p.optimizer == "gd-zero" and not np.all(g > 0.0):
                    self.stopped = True  # a step would flip a whole row: stop before it
                    break
                ip = eta * push
                v = W * g[:, None] - ip - h * np.sign(W)
                if p.optimizer == "gd-zero":
                    z = -ip  # a weight at zero: L1 subgradient holds it unless |push| > lam
                    at_zero = np.where(z > h, z - h, np.where(z < -h, z + h, 0.0))
                    v = np.where(W > 0.0, np.maximum(v, 0.0), np.where(W < 0.0, np.minimum(v, 0.0), at_zero))
                    alive_before = np.count_nonzero(W, axis=1)
                    if self.count_revivals:
                        self.revivals += int(np.count_nonzero((W == 0.0) & (v != 0.0)))
                W = v
            else:  # adam / adamw, torch's formulas
                bc1 = 1.0 - b1**t
                bc2 = math.sqrt(1.0 - b2**t)
                step_size = lr / bc1
                c = -4.0 * (1.0 - norm2)
                gr = c[:, None] * W + 4.0 * push + l1 * np.sign(W)
                if p.optimizer == "adam":
                    gr = gr + wd * W
                else:
                    W = W * (1.0 - lr * wd)
                m1 = b1 * m1 + (1.0 - b1) * gr
                m2 = b2 * m2 + (1.0 - b2) * gr * gr
                W = W - step_size * m1 / (np.sqrt(m2) / bc2 + eps)
            norm2 = (W * W).sum(axis=1)
            self.step += 1
            done += 1
            if p.optimizer == "gd-zero" and np.any((norm2 == 0.0) & (alive_before >= 2)):
                self.stopped = True  # one step wiped a whole row with 2+ live weights
            if not np.all(np.isfinite(norm2)):
                self.stopped = True
        self.W, self.m1, self.m2, self.norm2 = W, m1, m2, norm2
        return done


def kernel_run(p: InterferenceParams, w0: np.ndarray) -> InterferenceRun:
    return InterferenceRun(p, w0=w0, history_capacity=16)


# ---------------------------------------------------------------------------------------------
# BLAS threads (numpy's OpenBLAS and scipy's; both are loaded)


class OpenBlas:
    """The OpenBLAS libraries loaded in this process, with get/set of their thread count."""

    def __init__(self):
        self.libs: list[tuple[str, object, object]] = []  # (label, get, set)
        try:
            import ctypes

            with open("/proc/self/maps") as fh:
                files = {ln.split()[-1] for ln in fh if len(ln.split()) >= 6}
            for path in sorted(
                f for f in files if "openblas" in Path(f).name.lower() and ".so" in Path(f).name
            ):
                lib = ctypes.CDLL(path)
                for pre in ("scipy_openblas_", "openblas_"):
                    found = False
                    for suf in ("64_", ""):
                        gname, sname = f"{pre}get_num_threads{suf}", f"{pre}set_num_threads{suf}"
                        if hasattr(lib, gname) and hasattr(lib, sname):
                            label = (
                                "numpy"
                                if "numpy" in path
                                else "scipy"
                                if "scipy" in path
                                else Path(path).name
                            )
                            self.libs.append((label, getattr(lib, gname), getattr(lib, sname)))
                            found = True
                            break
                    if found:
                        break
        except Exception:  # no /proc or no OpenBLAS: leave BLAS alone
            self.libs = []

    def get(self) -> dict[str, int]:
        return {label: int(g()) for label, g, _ in self.libs}

    def set_all(self, n: int) -> None:
        for _, _, s in self.libs:
            s(int(n))

    def restore(self, counts: dict[str, int]) -> None:
        for label, _, s in self.libs:
            if label in counts:
                s(int(counts[label]))


# ---------------------------------------------------------------------------------------------
# timing


def time_per_step(run, target_s: float, reps: int) -> tuple[float, int]:
    """Best seconds per step over ``reps`` repeats of about ``target_s`` each; each repeat
    continues the trajectory."""
    steps = calibrate(run, target_s)
    best = math.inf
    for _ in range(reps):
        t0 = now()
        done = run.advance(steps)
        dt = now() - t0
        if done < steps:
            raise RuntimeError(f"run stopped after {done} of {steps} steps")
        best = min(best, dt / steps)
    return best, steps


class threads:
    """with threads(blas, n): both OpenBLAS libraries at n threads (None: leave as is)."""

    def __init__(self, blas: OpenBlas, n: int | None):
        self.blas, self.n, self.prev = blas, n, None

    def __enter__(self):
        if self.n is not None and self.blas.libs:
            self.prev = self.blas.get()
            self.blas.set_all(self.n)
        return self

    def __exit__(self, *exc):
        if self.prev is not None:
            self.blas.restore(self.prev)
        return False


def calibrate(run, target_s: float) -> int:
    """Steps per repeat for about ``target_s``, from a few first steps (also the warm-up)."""
    per = math.inf
    for k in (1, 2):
        t0 = now()
        run.advance(k)
        per = min(per, max((now() - t0) / k, 1e-7))
    return int(min(max(2, target_s / per), 100_000))


def compare(p: InterferenceParams, target_s: float, reps_k: int, reps_n: int) -> dict:
    """Kernel and numpy from the same W(0), repeats interleaved (kernel, numpy, kernel, ...)
    so both see the same background load; best seconds per step of each."""
    w0 = initial_weights(p)
    runs = {"kernel": kernel_run(p, w0), "numpy": NumpyRun(p, w0)}
    reps = {"kernel": reps_k, "numpy": reps_n}
    steps = {name: calibrate(run, target_s) for name, run in runs.items()}
    best = dict.fromkeys(runs, math.inf)
    for i in range(max(reps.values())):
        for name, run in runs.items():
            if i >= reps[name]:
                continue
            t0 = now()
            done = run.advance(steps[name])
            dt = now() - t0
            if done < steps[name]:
                raise RuntimeError(f"{name} run stopped after {done} of {steps[name]} steps ({p})")
            best[name] = min(best[name], dt / steps[name])
    return {
        "n": p.n,
        "m": p.m,
        "optimizer": p.optimizer,
        "kernel_s": best["kernel"],
        "numpy_s": best["numpy"],
        "kernel_steps": steps["kernel"],
        "numpy_steps": steps["numpy"],
        "reps_kernel": reps_k,
        "reps_numpy": reps_n,
        "ratio": best["numpy"] / best["kernel"],
    }


GUI_CAP = "1 (app)"


def thread_settings(blas: OpenBlas) -> list[tuple[str, int | None]]:
    """1 BLAS thread (what the GUI and the sweep set: core/blas.limit_blas_threads), then
    OpenBLAS's default when it is more. Only the default if threads can't be set."""
    d = blas.get()
    if not d:
        return [("default", None)]
    out = [(GUI_CAP, 1)]
    if any(v != 1 for v in d.values()):
        out.append(("default (" + "/".join(str(v) for v in d.values()) + ")", None))
    return out


def best_of(f, k: int, reps: int) -> float:
    f()
    best = math.inf
    for _ in range(reps):
        t0 = now()
        for _ in range(k):
            f()
        best = min(best, (now() - t0) / k)
    return best


# ---------------------------------------------------------------------------------------------
# printing


def md_table(header: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """A markdown table, columns padded so it also reads as plain text."""
    align = align or ("l" + "r" * (len(header) - 1))
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    widths = [max(w, 3) for w in widths]

    def line(cells):
        return (
            "| "
            + " | ".join(
                str(c).ljust(w) if a == "l" else str(c).rjust(w)
                for c, w, a in zip(cells, widths, align, strict=True)
            )
            + " |"
        )

    rule = (
        "|"
        + "|".join(
            (":" + "-" * (w + 1)) if a == "l" else ("-" * (w + 1) + ":")
            for w, a in zip(widths, align, strict=True)
        )
        + "|"
    )
    return "\n".join([line(header), rule] + [line(r) for r in rows])


def fmt_ms(s: float) -> str:
    ms = 1e3 * s
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def section(title: str) -> None:
    print()
    print(f"### {title}")
    print()


def cpu_model() -> str:
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                return ln.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# ---------------------------------------------------------------------------------------------
# sections


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernel and touch both BLAS libraries."""
    t0 = now()
    for opt in OPTIMIZERS:
        p = InterferenceParams(n=8, m=16, optimizer=opt, steps=STEPS_MAX)
        kernel_run(p, initial_weights(p)).advance(3)
        NumpyRun(p, initial_weights(p)).advance(3)
    return now() - t0


def check_agreement(steps: int) -> list[dict]:
    """Kernel vs numpy on a small case with a large step and L1, so weights hit zero."""
    out = []
    for opt in OPTIMIZERS:
        lr = 0.02 if opt in ("gd-zero", "gd") else 0.01
        p = InterferenceParams(n=24, m=40, optimizer=opt, lr=lr, l1=0.2, seed=3, steps=STEPS_MAX)
        w0 = initial_weights(p)
        k = kernel_run(p, w0)
        nr = NumpyRun(p, w0, count_revivals=True)
        dk = k.advance(steps)
        dn = nr.advance(steps)
        diff = float(np.max(np.abs(k.W - nr.W)))
        out.append(
            {
                "optimizer": opt,
                "steps": (dk, dn),
                "max_abs_diff": diff,
                "max_abs_w": float(np.max(np.abs(k.W))),
                "zeros": (int(np.count_nonzero(k.W == 0.0)), int(np.count_nonzero(nr.W == 0.0))),
                "zero_mismatch": int(np.count_nonzero((k.W == 0.0) != (nr.W == 0.0))),
                "revivals": nr.revivals if opt == "gd-zero" else None,
                "size": k.W.size,
            }
        )
    return out


def print_agreement(rows: list[dict], tol: float = 1e-10) -> bool:
    table = []
    ok_all = True
    for r in rows:
        ok = r["max_abs_diff"] <= tol and r["steps"][0] == r["steps"][1] and r["zero_mismatch"] == 0
        ok_all &= ok
        zeros = f"{r['zeros'][0]} / {r['zeros'][1]} of {r['size']}"
        if r["revivals"] is not None:
            zeros += f" ({r['revivals']} revivals from zero)"
        table.append(
            [
                r["optimizer"],
                f"{r['steps'][0]} / {r['steps'][1]}",
                f"{r['max_abs_diff']:.1e}",
                f"{r['max_abs_w']:.2f}",
                zeros,
                "ok" if ok else "DIFFERS",
            ]
        )
    print(
        md_table(
            [
                "optimizer",
                "steps kernel / numpy",
                "max abs diff W",
                "max abs W",
                "exact zeros kernel / numpy",
                f"<= {tol:g}",
            ],
            table,
            "lrrrrl",
        )
    )
    print()
    print("n = 24, m = 40, seed 3, l1 = 0.2, lr = 0.02 (GD) / 0.01 (Adam), interference on. The kernel's")
    print("fused passes round differently from numpy's separate ones, so last-bit differences are expected.")
    return ok_all


def bench_sizes(
    sizes: list[tuple[int, int]],
    target_s: float,
    reps_k: int,
    reps_n: int,
    blas: OpenBlas,
    settings: list[tuple[str, int | None]],
) -> list[dict]:
    """For each (n, m), optimizer and BLAS thread setting: kernel and numpy per step."""
    rows = []
    for n, m in sizes:
        for opt in OPTIMIZERS:
            p = InterferenceParams(n=n, m=m, optimizer=opt, steps=STEPS_MAX)
            row = {"n": n, "m": m, "optimizer": opt, "by_threads": {}}
            for label, nth in settings:
                with threads(blas, nth):
                    row["by_threads"][label] = compare(p, target_s, reps_k, reps_n)
            rows.append(row)
    return rows


def print_gui(rows: list[dict]) -> None:
    table = []
    for r in rows:
        for label, c in r["by_threads"].items():
            sps, nps = 1.0 / c["kernel_s"], 1.0 / c["numpy_s"]
            table.append(
                [
                    r["optimizer"],
                    label,
                    f"{sps:.0f}",
                    f"{nps:.0f}",
                    f"{c['ratio']:.2f}x",
                    f">= {GOAL_STEPS_PER_S:.0f}",
                    "PASS" if sps >= GOAL_STEPS_PER_S else "MISS",
                    fmt_ms(c["kernel_s"]),
                    fmt_ms(c["numpy_s"]),
                ]
            )
    print(
        md_table(
            [
                "optimizer",
                "BLAS threads",
                "kernel steps/s",
                "numpy steps/s",
                "speedup",
                "goal",
                "",
                "kernel ms/step",
                "numpy ms/step",
            ],
            table,
            "llrrrrlrr",
        )
    )
    c0 = next(iter(rows[0]["by_threads"].values()))
    print()
    print(
        "Default parameters (lr 1e-3, l1 1e-3, seed 0), from W(0); speedup = numpy time / kernel "
        "time. Best of "
        f"{c0['reps_kernel']} (kernel) / {c0['reps_numpy']} (numpy)"
    )
    print(
        f"repeats of ~{c0['kernel_steps']} / ~{c0['numpy_steps']} steps. 'BLAS threads' applies to "
        "both OpenBLAS "
        "libraries (numpy's and scipy's);"
    )
    print(
        f"'{GUI_CAP}' is the cap the app sets (core/blas.limit_blas_threads) for the GUI, the CLI and the "
        "sweep; the default is OpenBLAS's own."
    )


def print_compare(rows: list[dict]) -> None:
    labels = list(rows[0]["by_threads"])
    header = ["n", "m", "optimizer"]
    align = "rrl"
    for label in labels:
        t = f" ({label} thr)" if len(labels) > 1 else ""
        header += [f"kernel ms{t}", f"numpy ms{t}", "speedup"]
        align += "rrr"
    table = []
    for r in rows:
        line = [str(r["n"]), str(r["m"]), r["optimizer"]]
        for label in labels:
            c = r["by_threads"][label]
            line += [fmt_ms(c["kernel_s"]), fmt_ms(c["numpy_s"]), f"{c['ratio']:.2f}x"]
        table.append(line)
    print(md_table(header, table, align))
    print()
    print("ms per step, from W(0) with default parameters; speedup = numpy time / kernel time.")


def breakdown(target_s: float, reps: int) -> dict:
    """Per-step cost of the parts at n = 256, m = 1024 (from W(0))."""
    n, m = GUI_N, GUI_M
    p = InterferenceParams(n=n, m=m, optimizer="adamw", steps=STEPS_MAX)
    W = initial_weights(p)
    push = np.zeros_like(W)
    res: dict = {}
    k = max(3, int(target_s / 3e-3))
    res["kernel_push"] = best_of(lambda: I.interference_push(W, push), k, reps)
    G = W @ W.T
    res["np_gram"] = best_of(lambda: W @ W.T, k, reps)
    WT = np.ascontiguousarray(W.T)
    res["np_gram_gemm"] = best_of(lambda: W @ WT, k, reps)

    def relu():
        H = G.copy()
        np.fill_diagonal(H, 0.0)
        return np.maximum(H, 0.0)

    Gp = relu()
    res["np_relu"] = best_of(relu, k, reps)
    res["np_push"] = best_of(lambda: Gp @ W, k, reps)
    res["np_norm2"] = best_of(lambda: (W * W).sum(axis=1), k, reps)
    for opt in OPTIMIZERS:
        q = p.with_changes(optimizer=opt, interference=False)
        w0 = initial_weights(q)
        res[f"kernel_elem_{opt}"], _ = time_per_step(kernel_run(q, w0), target_s, reps)
        res[f"numpy_elem_{opt}"], _ = time_per_step(NumpyRun(q, w0), target_s, reps)
    return res


def print_breakdown(by_threads: dict[str, dict]) -> None:
    labels = list(by_threads)
    header = ["part of a step"]
    align = "l"
    for label in labels:
        t = f" ({label} thr)" if len(labels) > 1 else ""
        header += [f"kernel ms{t}", f"numpy ms{t}"]
        align += "rr"
    first = by_threads[labels[0]]
    rows = [
        ["products: G = W W^T, ReLU, G W"],
        ["  numpy: W @ W.T (symmetric: syrk)"],
        ["  numpy: W @ (copy of W.T) (general: gemm)"],
        ["  numpy: copy G, zero diagonal, max(G, 0)"],
        ["  numpy: G @ W"],
    ]
    for label in labels:
        r = by_threads[label]
        rows[0] += [fmt_ms(r["kernel_push"]), fmt_ms(r["np_gram"] + r["np_relu"] + r["np_push"])]
        rows[1] += ["", fmt_ms(r["np_gram"])]
        rows[2] += ["", fmt_ms(r["np_gram_gemm"])]
        rows[3] += ["", fmt_ms(r["np_relu"])]
        rows[4] += ["", fmt_ms(r["np_push"])]
    for opt in OPTIMIZERS:
        row = [f"elementwise pass, {opt}"]
        for label in labels:
            r = by_threads[label]
            row += [fmt_ms(r[f"kernel_elem_{opt}"]), fmt_ms(r[f"numpy_elem_{opt}"])]
        rows.append(row)
    print(md_table(header, rows, align))
    print()
    print(
        "From W(0). Products: the kernel's interference_push (numpy W @ W.T, a numba ReLU pass, G @ W) "
        "vs the numpy lines"
    )
    print("(numpy spots W @ W.T and calls the symmetric product, half the flops of the general one);")
    print(
        "each product is 2 n^2 m = %.0f MFLOP, so the kernel's pair runs at "
        % (2 * GUI_N * GUI_N * GUI_M / 1e6)
        + ", ".join(
            f"{4 * GUI_N * GUI_N * GUI_M / by_threads[lb]['kernel_push'] / 1e9:.0f} GFLOP/s ({lb} thr)"
            for lb in labels
        )
        + "."
    )
    print(
        "Elementwise pass: the whole step with interference off (kernel: push zeroed + update, "
        f"{1e9 * first['kernel_elem_adamw'] / (GUI_N * GUI_M):.1f} ns/weight for adamw;"
    )
    print("numpy: |W_i|^2, zeros for push, update).")


# ---------------------------------------------------------------------------------------------


def bench_sweep_workers(quick: bool) -> dict[int, float]:
    """Wall time of one small sweep (SweepSpec.run, the CLI's and the GUI's code path) with 1
    worker and with one per core, each worker at one BLAS thread; the rows must agree."""
    from sparsity_gui.core.interference.sweep import SweepSpec

    spec = SweepSpec(
        InterferenceParams(n=SWEEP_N, steps=300 if quick else 1000), m_values=(64, 128, 256, 512), seeds=2
    )
    counts = sorted({1, os.cpu_count() or 1})
    wall: dict[int, float] = {}
    rows_by: dict[int, list] = {}
    for w in counts + counts:  # twice, alternating, best of two
        t0 = now()
        rows = spec.run(workers=w)
        wall[w] = min(wall.get(w, math.inf), now() - t0)
        rows_by[w] = [(r.m, r.seed, r.polysemantic, r.active) for r in rows]
    same = all(rows_by[w] == rows_by[counts[0]] for w in counts)
    print(
        md_table(
            ["workers", "wall s", "speedup"],
            [[str(w), f"{wall[w]:.2f}", f"{wall[counts[0]] / wall[w]:.2f}x"] for w in counts],
            "rrr",
        )
    )
    print()
    print(
        f"n = {SWEEP_N}, m = 64, 128, 256, 512, 2 seeds, {spec.base.steps} steps, adamw; "
        f"identical rows with every worker count: {'yes' if same else 'NO'}"
    )
    return wall


# ---------------------------------------------------------------------------------------------
# 6. gd-zero on its nonzeros


def _sparse_state(n: int, m: int, share: float, seed: int) -> np.ndarray:
    """A random W with about ``share`` of its weights nonzero (rows of unit norm on average)."""
    rng = np.random.default_rng(seed)
    keep = rng.random((n, m)) < share
    return rng.standard_normal((n, m)) / math.sqrt(m * share) * keep


def _one_step_time(p: InterferenceParams, w: np.ndarray, sparse: bool, reps: int) -> float:
    """Best seconds of one step from state w, on the dense or the sparse path (a fresh run
    each repeat, so every repeat starts from the same state)."""
    best = math.inf
    for _ in range(reps):
        run = kernel_run(p, w)
        run.sparse_below = 2.0 if sparse else 0.0
        run.dense_above = 2.0
        if sparse:
            run._follow_nonzeros()  # the pattern is built once per switch, not per step
        t0 = now()
        run.advance(1)
        best = min(best, now() - t0)
    return best


def bench_crossover(quick: bool) -> list[dict]:
    n, m = GUI_N, GUI_M
    p = InterferenceParams(n=n, m=m, optimizer="gd-zero", l1=0.2, lr=0.05, steps=STEPS_MAX)
    rows = []
    for share in (0.001, 0.005, 0.01, 0.02, 0.03, 0.05):
        w = _sparse_state(n, m, share, 1)
        reps = 3 if quick else 5
        dense = _one_step_time(p, w, False, reps)
        sparse = _one_step_time(p, w, True, reps)
        rows.append({"share": share, "dense": dense, "sparse": sparse})
    return rows


def print_crossover(rows: list[dict]) -> None:
    from sparsity_gui.core.interference.run import DENSE_ABOVE, SPARSE_BELOW

    print(
        md_table(
            ["nonzero share of W", "dense step ms", "sparse step ms", "dense / sparse"],
            [
                [
                    f"{r['share']:.1%}",
                    fmt_ms(r["dense"]),
                    fmt_ms(r["sparse"]),
                    f"{r['dense'] / r['sparse']:.2f}x",
                ]
                for r in rows
            ],
            "lrrr",
        )
    )
    print()
    print(
        f"n = {GUI_N}, m = {GUI_M}, gd-zero, one step from a random W with that share of nonzeros "
        "(nonzeros spread at random:"
    )
    print(
        "the worst case for the sparse products; trained W puts one weight per feature). The run "
        f"switches to the sparse path below {SPARSE_BELOW:.0%} and back above {DENSE_ABOVE:.0%}."
    )


def bench_sparse_products(reps: int) -> dict:
    """The products on the state of the issue's gd-zero run after 300 steps (99.9 % zeros):
    dense BLAS, scipy.sparse CSR, and the numba sparse step (which also does the update)."""
    import scipy.sparse as sp

    p = InterferenceParams(n=GUI_N, m=GUI_M, optimizer="gd-zero", l1=0.2, lr=0.05, steps=STEPS_MAX)
    run = kernel_run(p, initial_weights(p))
    run.advance(300)
    W = run.W.copy()
    push = np.zeros_like(W)
    gram = np.empty((GUI_N, GUI_N))
    k = 20

    def scipy_products():
        S = sp.csr_matrix(W)
        G = (S @ S.T).tocsr()
        G.setdiag(0.0)
        G.data = np.maximum(G.data, 0.0)
        G.eliminate_zeros()
        return (G @ S).toarray()

    S0 = sp.csr_matrix(W)

    def scipy_products_only():  # W already in CSR, the push left sparse: the products alone
        G = (S0 @ S0.T).tocsr()
        G.setdiag(0.0)
        G.data = np.maximum(G.data, 0.0)
        G.eliminate_zeros()
        return G @ S0

    res = {
        "share": float(np.count_nonzero(W)) / W.size,
        "dense_products": best_of(lambda: I.interference_push(W, push, gram), k, reps),
        "scipy_products": best_of(scipy_products, k, reps),
        "scipy_products_only": best_of(scipy_products_only, k, reps),
    }
    # whole steps from here on, both paths continuing the same trajectory
    dense = kernel_run(p, W)
    dense.sparse_below = 0.0
    res["dense_step"], _ = time_per_step(dense, 0.1, reps)
    res["sparse_step"], res["sparse_steps"] = time_per_step(kernel_run(p, W), 0.05, reps)
    ref = push.copy()
    I.interference_push(W, ref, gram)
    res["scipy_max_diff"] = float(np.max(np.abs(scipy_products() - ref)))
    return res


def print_sparse_products(r: dict) -> None:
    print(
        md_table(
            ["at 99.9 % zeros", "ms", "against the dense products"],
            [
                ["dense products W W^T, ReLU, G W (BLAS)", fmt_ms(r["dense_products"]), "1.00x"],
                [
                    "scipy.sparse CSR products (W in CSR each step, dense push out)",
                    fmt_ms(r["scipy_products"]),
                    f"{r['dense_products'] / r['scipy_products']:.0f}x",
                ],
                [
                    "scipy.sparse CSR products alone (W given in CSR, push left sparse)",
                    fmt_ms(r["scipy_products_only"]),
                    f"{r['dense_products'] / r['scipy_products_only']:.0f}x",
                ],
                ["whole dense step (products + update)", fmt_ms(r["dense_step"]), ""],
                [
                    "whole sparse step (numba: products, update, pattern)",
                    fmt_ms(r["sparse_step"]),
                    f"{r['dense_step'] / r['sparse_step']:.0f}x the dense step",
                ],
            ],
            "lrl",
        )
    )
    print()
    print(
        f"State: the issue's run (n = {GUI_N}, m = {GUI_M}, l1 = 0.2, lr = 0.05) after 300 steps, "
        f"{r['share']:.2%} nonzero; scipy's push differs from BLAS's by {r['scipy_max_diff']:.1e}."
    )
    print(
        "Whole steps: best of repeats of many steps continuing the run from there "
        f"({r['sparse_steps']} a repeat on the sparse path)."
    )


def _cli_seconds(args: list[str]) -> float:
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        t0 = now()
        proc = subprocess.run(
            [sys.executable, "-m", "sparsity_gui", "interference", *args, "--out", str(Path(tmp) / "res")],
            capture_output=True,
            text=True,
        )
        dt = now() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return dt


def bench_gd_zero_command(quick: bool) -> dict:
    steps = 400 if quick else 2000
    base = ["--n", "256", "--m", "1024", "--l1", "0.2", "--lr", "0.05", "--steps", str(steps)]
    # warm-up: numba compiles (or loads from its cache) the sparse kernels once the run
    # has gone sparse, which takes a few dozen steps
    _cli_seconds([*base[:-1], "60", "--samples", "3", "--optimizer", "gd-zero"])
    wall = {"gd-zero": math.inf, "gd": math.inf}
    for _ in range(1 if quick else 2):  # alternating, best of each
        for opt in wall:
            wall[opt] = min(wall[opt], _cli_seconds([*base, "--optimizer", opt]))
    start = _cli_seconds([*base[:-1], "1", "--optimizer", "gd-zero"])
    return {"steps": steps, "wall": wall, "start": start, "command": " ".join(base)}


def print_gd_zero_command(r: dict) -> None:
    g0, g = r["wall"]["gd-zero"], r["wall"]["gd"]
    print(
        md_table(
            ["sparsity-gui interference ...", "wall s", "gd / gd-zero", "goal"],
            [
                [
                    "--optimizer gd-zero",
                    f"{g0:.2f}",
                    f"{g / g0:.1f}x",
                    ">= 5x " + ("PASS" if g / g0 >= 5 else "MISS"),
                ],
                ["--optimizer gd (baseline)", f"{g:.2f}", "", ""],
                ["the same with --steps 1 (start-up, files)", f"{r['start']:.2f}", "", ""],
            ],
            "lrrl",
        )
    )
    print()
    print(f"`{r['command']}` as a whole process each (best of the repeats, alternating).")


# ---------------------------------------------------------------------------------------------
# 7. float32 against float64


def bench_float32(quick: bool, blas: OpenBlas) -> list[dict]:
    rows = []
    target = 0.05 if quick else 0.15
    with threads(blas, 1):
        for m in (GUI_M, BIG_M):
            row = {"m": m}
            for dtype in ("float64", "float32"):
                p = InterferenceParams(n=GUI_N, m=m, steps=STEPS_MAX, dtype=dtype)
                W = initial_weights(p)
                push = np.zeros_like(W)
                gram = np.empty((GUI_N, GUI_N), dtype=W.dtype)
                k = max(2, int(target / (4e-3 * m / GUI_M)))
                row[f"products_{dtype}"] = best_of(lambda: I.interference_push(W, push, gram), k, 3)  # noqa: B023
                row[f"step_{dtype}"], _ = time_per_step(kernel_run(p, W), target, 3)
            rows.append(row)
    return rows


def print_float32(rows: list[dict]) -> None:
    table = []
    for r in rows:
        for part, label in (("products", "products"), ("step", "whole AdamW step")):
            a, b = r[f"{part}_float64"], r[f"{part}_float32"]
            table.append([f"n = {GUI_N}, m = {r['m']}: {label}", fmt_ms(b), fmt_ms(a), f"{a / b:.2f}x"])
    print(md_table(["", "float32 ms", "float64 ms (baseline)", "float32 speedup"], table, "lrrr"))
    print()
    print("One BLAS thread, from W(0); the products are numpy's syrk + gemm in each precision.")


# ---------------------------------------------------------------------------------------------
# 8. the paper's sweep, projected

PAPER_N, PAPER_MS, PAPER_SEEDS, PAPER_STEPS = 256, tuple(range(256, 4097, 256)), 16, 7500
PAPER_JOBS = 2
GOAL_PAPER_S = 3600.0


def _pair_step_time(p: InterferenceParams, steps: int) -> tuple[float, float]:
    """Seconds per step of each of PAPER_JOBS runs of p trained side by side in threads, as
    SweepSpec.run's workers do (each with one BLAS thread): the slower run's wall time, and its
    thread's CPU time (what the step costs a core of its own, whatever else runs)."""
    import threading

    runs = [
        kernel_run(p.with_changes(seed=s), initial_weights(p.with_changes(seed=s))) for s in range(PAPER_JOBS)
    ]
    for run in runs:
        run.advance(1)  # warm-up
    barrier = threading.Barrier(PAPER_JOBS)
    took = [0.0] * PAPER_JOBS
    cpu = [0.0] * PAPER_JOBS

    def go(k):
        barrier.wait()
        t0, c0 = now(), time.thread_time()
        runs[k].advance(steps)
        took[k], cpu[k] = now() - t0, time.thread_time() - c0

    ts = [threading.Thread(target=go, args=(k,)) for k in range(PAPER_JOBS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return max(took) / steps, max(cpu) / steps


def bench_paper_projection(quick: bool, blas: OpenBlas) -> dict:
    from sparsity_gui.cli.interference import PAPER

    steps = 3 if quick else 8
    per = {}
    with threads(blas, 1):
        for dtype in ("float64", "float32"):
            for m in PAPER_MS:
                p = InterferenceParams(
                    n=PAPER["n"],
                    m=m,
                    optimizer=PAPER["optimizer"],
                    l1=PAPER["l1"],
                    lr=PAPER["lr"],
                    steps=STEPS_MAX,
                    dtype=dtype,
                )
                per[(dtype, m)] = _pair_step_time(p, steps)
    total = {
        (dtype, k): sum(per[(dtype, m)][k] for m in PAPER_MS) * PAPER_SEEDS * PAPER_STEPS / PAPER_JOBS
        for dtype in ("float64", "float32")
        for k in (0, 1)
    }
    return {"per": per, "total": total, "steps": steps, "optimizer": PAPER["optimizer"]}


def print_paper_projection(r: dict) -> None:
    per = r["per"]
    table = []
    for m in PAPER_MS:
        (w64, c64), (w32, c32) = per[("float64", m)], per[("float32", m)]
        table.append([str(m), fmt_ms(w64), fmt_ms(w32), fmt_ms(c64), fmt_ms(c32), f"{c64 / c32:.2f}x"])
    header = ["m", "float64 wall ms", "float32 wall ms", "float64 CPU ms", "float32 CPU ms", "CPU ratio"]
    print(md_table(header, table, "rrrrrr"))
    print()
    print(
        f"Each figure: two runs of n = {PAPER_N}, {r['optimizer']} trained side by side in threads "
        f"(one BLAS thread each), {r['steps']} steps after one warm-up step, the slower run's time per"
    )
    print(
        "step: wall time, and CPU time of its thread (what a core of its own would take; wall time "
        "grows with whatever else the machine runs)."
    )
    print(
        f"Projection = sum over m of time per step x {PAPER_SEEDS} seeds x {PAPER_STEPS} steps "
        f"/ {PAPER_JOBS} jobs:"
    )
    print()
    t = r["total"]
    rows = []
    for dtype, label in (
        ("float64", "--dtype float64 (baseline, the default)"),
        ("float32", "--dtype float32"),
    ):
        wall, cpu = t[(dtype, 0)], t[(dtype, 1)]
        rows.append([label, format_hours(wall), format_hours(cpu), "PASS" if cpu < GOAL_PAPER_S else "MISS"])
    print(
        md_table(
            [
                "sweep --paper, 2 jobs",
                "from wall time (as loaded now)",
                "from CPU time (2 free cores)",
                "goal < 1 h",
            ],
            rows,
            "lrrl",
        )
    )
    # the arithmetic floor: the products are 3 n^2 m flops a step (syrk n^2 m, gemm 2 n^2 m)
    flops = sum(3.0 * PAPER_N**2 * m for m in PAPER_MS) * PAPER_SEEDS * PAPER_STEPS
    need = flops / GOAL_PAPER_S / PAPER_JOBS
    best32 = max(3.0 * PAPER_N**2 * m / per[("float32", m)][1] for m in PAPER_MS)
    print()
    print(
        f"The products alone are {flops:.2e} flops: under an hour on {PAPER_JOBS} cores needs "
        f"{need / 1e9:.0f} GFLOP/s per core;"
    )
    print(
        f"the best float32 rate measured above is {best32 / 1e9:.0f} GFLOP/s per core (products and "
        "update together, CPU time)."
    )


# ---------------------------------------------------------------------------------------------
# 9. the sparsity mechanisms (issue 51): a step under TopK and JumpReLU beside L1's

MECHANISM_GOAL = 1.5  # a TopK or JumpReLU step at most this many times an l1 step
MECHANISM_CASES = (
    ("l1 (the default)", {}),
    ("topk k = 1", dict(sparsity="topk", k=1, l1=0.0)),
    ("topk k = 16", dict(sparsity="topk", k=16, l1=0.0)),
    ("topk k = 256", dict(sparsity="topk", k=256, l1=0.0)),
    ("jumprelu theta0 = 1e-3", dict(sparsity="jumprelu", l0=1e-3)),
    ("jumprelu theta0 = 0.05", dict(sparsity="jumprelu", l0=1e-3, threshold_init=0.05)),
)


def bench_mechanisms(quick: bool) -> list[dict]:
    """CPU seconds per AdamW step (the thread's, one BLAS thread: what a step costs a core
    whatever else runs) at n = GUI_N, m = GUI_M, best of a few repeats, with the share of
    units the mechanism kept (which picks BLAS products or loops over the kept units). The
    cases take their repeats in turn (l1, topk, ..., then l1 again), so that every case,
    the l1 baseline included, sees the same background load."""
    steps, reps = (5, 2) if quick else (20, 4)
    runs = []
    for _, kw in MECHANISM_CASES:
        run = InterferenceRun(InterferenceParams(n=GUI_N, m=GUI_M, steps=10**6, **kw))
        run.advance(2)  # warm-up (numba's cache, numpy's first calls)
        runs.append(run)
    best = [math.inf] * len(runs)
    for _ in range(reps):
        for c, run in enumerate(runs):
            c0 = time.thread_time()
            run.advance(steps)
            best[c] = min(best[c], (time.thread_time() - c0) / steps)
    rows = []
    for (label, _), run, step_s in zip(MECHANISM_CASES, runs, best, strict=True):
        kept = run.mechanism.kept / run.W.size if run.mechanism is not None else 1.0
        rows.append(dict(label=label, step_s=step_s, kept=kept))
    return rows


def print_mechanisms(rows: list[dict]) -> None:
    base = rows[0]["step_s"]
    table = [
        [r["label"], fmt_ms(r["step_s"]), f"{r['step_s'] / base:.2f}x", f"{r['kept']:.3f}"] for r in rows
    ]
    print(md_table(["mechanism (AdamW)", "CPU per step", "vs l1", "units kept"], table, "lrrr"))


def format_hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h ({seconds / 60:.0f} min)"


def parse_args(argv) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run: fewer, shorter repeats; no m = 4096")
    ap.add_argument(
        "--sections",
        default="0,1,2,3,4,5,6,7,8,9",
        metavar="LIST",
        help="which sections to run, e.g. 6,7,8 for gd-zero's sparse path, float32 and the "
        "paper's sweep, 9 for the sparsity mechanisms (default: all)",
    )
    return ap.parse_args(argv)


def print_header(quick: bool, compile_s: float, blas: OpenBlas) -> None:
    print(
        "## interference kernel benchmark"
        + ("  [--quick: short repeats, figures indicative only]" if quick else "")
    )
    print()
    print(f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(
        f"- cpu: {cpu_model()} (nproc {os.cpu_count()}); load average {loadavg()} at start"
        + ("  -- other processes are busy: figures will be noisy" if _load1() > 0.5 else "")
    )
    print(
        f"- python {sys.version.split()[0]}, numpy {np.__version__}, numba {numba.__version__}; "
        f"OpenBLAS threads by default: " + (", ".join(f"{k} {v}" for k, v in blas.get().items()) or "unknown")
    )
    print(
        "- numba warm-up (compile or cache load of train_steps, and numpy's first calls): "
        f"{compile_s:.2f} s, "
        "excluded from the timings"
    )


def run_speed_sections(chosen: set[int], quick: bool, blas: OpenBlas, settings, times) -> dict:
    """Sections 0 to 4: agreement, the GUI's size, the sweep's sizes, a larger size, the
    time's breakdown. ``times``: (gui_t, sweep_t, reps_k, reps_n, check_steps)."""
    gui_t, sweep_t, reps_k, reps_n, check_steps = times
    found: dict = {}
    if 0 in chosen:
        section("0. agreement: kernel vs numpy, same update")
        found["ok"] = print_agreement(check_agreement(check_steps))
    if 1 in chosen:
        section(f"1. GUI target: n = {GUI_N}, m = {GUI_M}, goal >= {GOAL_STEPS_PER_S:.0f} steps/s")
        found["gui"] = bench_sizes([(GUI_N, GUI_M)], gui_t, reps_k, reps_n, blas, settings)
        print_gui(found["gui"])
    if 2 in chosen:
        section(f"2. the sweep's sizes: n = {SWEEP_N}, m = {', '.join(map(str, SWEEP_MS))}")
        found["sweep"] = bench_sizes(
            [(SWEEP_N, m) for m in SWEEP_MS], sweep_t, max(2, reps_k - 2), max(2, reps_n - 1), blas, settings
        )
        print_compare(found["sweep"])
    if 3 in chosen and not quick:
        section(f"3. larger: n = {BIG_N}, m = {BIG_M}")
        print_compare(bench_sizes([(BIG_N, BIG_M)], 0.15, 3, 2, blas, settings))
    if 4 in chosen:
        section(f"4. where the time goes (n = {GUI_N}, m = {GUI_M})")
        bd = {}
        for label, nth in settings:
            with threads(blas, nth):
                bd[label] = breakdown(gui_t * 0.4, 3 if quick else 5)
        print_breakdown(bd)
    return found


def run_other_sections(chosen: set[int], quick: bool, blas: OpenBlas) -> dict:
    """Sections 5 to 9: a whole sweep, gd-zero's sparse path, float32, the paper's sweep, the
    sparsity mechanisms."""
    found: dict = {}
    if 5 in chosen:
        section("5. a whole sweep: workers side by side")
        found["sweep_wall"] = bench_sweep_workers(quick)
    if 6 in chosen:
        section("6. gd-zero on its nonzeros")
        with threads(blas, 1):
            print_crossover(bench_crossover(quick))
            print()
            print_sparse_products(bench_sparse_products(3 if quick else 5))
            print()
            found["command"] = bench_gd_zero_command(quick)
        print_gd_zero_command(found["command"])
    if 7 in chosen:
        section("7. float32 against float64")
        found["f32"] = bench_float32(quick, blas)
        print_float32(found["f32"])
    if 8 in chosen:
        section("8. the paper's sweep (sweep --paper), projected from measured steps")
        found["paper"] = bench_paper_projection(quick, blas)
        print_paper_projection(found["paper"])
    if 9 in chosen:
        section(
            f"9. sparsity mechanisms: a step beside l1's (n = {GUI_N}, m = {GUI_M}, AdamW, one BLAS thread)"
        )
        with threads(blas, 1):
            found["mechanisms"] = bench_mechanisms(quick)
        print_mechanisms(found["mechanisms"])
    return found


def summary_speed(found: dict, settings, check_steps: int, quick: bool) -> None:
    if found.get("ok") is not None:
        print(
            f"- agreement kernel vs numpy (max |dW| <= 1e-10 after {check_steps} steps, all optimizers): "
            + ("PASS" if found["ok"] else "MISS")
        )
    gui = found.get("gui")
    for i, (label, _) in enumerate(settings if gui is not None else []):
        g = {r["optimizer"]: 1.0 / r["by_threads"][label]["kernel_s"] for r in gui}
        gn = {r["optimizer"]: 1.0 / r["by_threads"][label]["numpy_s"] for r in gui}
        worst = min(g, key=g.get)
        head = (
            f"- GUI target n={GUI_N}, m={GUI_M} >= {GOAL_STEPS_PER_S:.0f} steps/s, " if i == 0 else "  same "
        )
        print(
            head
            + f"with BLAS threads {label}: "
            + ("PASS" if g[worst] >= GOAL_STEPS_PER_S else "MISS")
            + f" (slowest optimizer {worst}: {g[worst]:.0f} steps/s; numpy {gn[worst]:.0f})"
            + ("  [quick setting]" if quick else "")
        )
    for label, _ in settings if found.get("sweep") is not None else []:
        ratios = [r["by_threads"][label]["ratio"] for r in found["sweep"]]
        print(
            f"- sweep sizes, BLAS threads {label}: kernel {min(ratios):.2f}x .. {max(ratios):.2f}x "
            "as fast as numpy"
        )


def summary_other(found: dict, quick: bool) -> None:
    sweep_wall, command, paper = found.get("sweep_wall"), found.get("command"), found.get("paper")
    if sweep_wall is not None:
        w1, wmax = sweep_wall[min(sweep_wall)], sweep_wall[max(sweep_wall)]
        print(f"- a whole sweep: {max(sweep_wall)} workers {w1 / wmax:.2f}x as fast as 1")
    if command is not None:
        g0, g = command["wall"]["gd-zero"], command["wall"]["gd"]
        print(
            f"- interference {command['command']}: gd-zero {g0:.2f} s, gd {g:.2f} s: {g / g0:.1f}x "
            f"(goal >= 5x): "
            + ("PASS" if g / g0 >= 5 else "MISS")
            + ("  [quick: fewer steps]" if quick else "")
        )
    for r in found.get("f32") or []:
        ratio_products = r["products_float64"] / r["products_float32"]
        print(
            f"- float32 at n = {GUI_N}, m = {r['m']}: products {ratio_products:.2f}x, "
            f"whole AdamW step {r['step_float64'] / r['step_float32']:.2f}x as fast as float64"
        )
    if paper is not None:
        t = paper["total"]
        print(
            "- sweep --paper projected with 2 jobs from CPU time: "
            f"float64 {format_hours(t[('float64', 1)])}, "
            f"float32 {format_hours(t[('float32', 1)])} (goal < 1 h): "
            + ("PASS" if t[("float32", 1)] < GOAL_PAPER_S else "MISS")
            + f"; from wall time under the present load: float64 {format_hours(t[('float64', 0)])}, "
            f"float32 {format_hours(t[('float32', 0)])}"
        )
    rows = found.get("mechanisms")
    if rows:
        worst = max(rows[1:], key=lambda r: r["step_s"])
        ratio = worst["step_s"] / rows[0]["step_s"]
        print(
            f"- a TopK or JumpReLU step at most {MECHANISM_GOAL:g}x an l1 step: "
            + ("PASS" if ratio <= MECHANISM_GOAL else "MISS")
            + f" (slowest {worst['label']}: {ratio:.2f}x)"
        )


def main(argv=None) -> int:
    args = parse_args(argv)
    quick = args.quick
    chosen = {int(x) for x in args.sections.split(",") if x.strip()}
    with contextlib.suppress(AttributeError):  # sections appear as they finish, also through a pipe
        sys.stdout.reconfigure(line_buffering=True)
    times = (0.04, 0.02, 3, 2, 100) if quick else (0.1, 0.03, 6, 4, 400)
    t_start = now()
    compile_s = warm_up()
    blas = OpenBlas()
    settings = thread_settings(blas)
    print_header(quick, compile_s, blas)
    found = run_speed_sections(chosen, quick, blas, settings, times)
    found.update(run_other_sections(chosen, quick, blas))
    section("summary")
    summary_speed(found, settings, times[-1], quick)
    summary_other(found, quick)
    print(f"- benchmark wall time {now() - t_start:.1f} s; load average at the end {loadavg()}")
    return 0


def _load1() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


if __name__ == "__main__":
    sys.exit(main())
