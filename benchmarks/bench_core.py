"""Benchmark of the core solvers: exact flow, its accuracy against plain Euler, and the GD kernel.

Run from the project root:

    .venv/bin/python benchmarks/bench_core.py            # full run (about 1-2 minutes)
    .venv/bin/python benchmarks/bench_core.py --quick    # smoke version (a few seconds)
    .venv/bin/python benchmarks/bench_core.py --json out.json

It prints one readable report from one run on one machine:

1. wall time for the exact solver to reach one surviving weight (m = 10^3, 10^5, 10^7),
   split into draw / sort+prefix sums / solve, with numba compile time reported apart;
2. the research note's own setting (m = 10^5, lam = 1e-5, sigma = 0.9), solved exactly and with
   the note's plain numpy Euler loop (step 0.5): wall times, speedup, and the Euler loop's
   errors against the exact answer, next to the exact solver's self-consistency;
3. the GD kernel's nanoseconds per weight-step against the plain numpy version of the rule.

Each goal ends in a PASS/MISS line. Nothing is asserted: the exit status is 0 either way.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the core's import is timed (numpy, numba and the kernels' module)
_T_IMPORT0 = time.perf_counter()
np = importlib.import_module("numpy")
numba = importlib.import_module("numba")
K = importlib.import_module("sparsity_gui.core.note.kernels")
draw_normal = importlib.import_module("sparsity_gui.core.note.initial").draw_normal
_solvers = importlib.import_module("sparsity_gui.core.note.solvers")
ExactSolver, GDSolver, InitialState = _solvers.ExactSolver, _solvers.GDSolver, _solvers.InitialState
lam_knots = _solvers.lam_knots
IMPORT_S = time.perf_counter() - _T_IMPORT0

SIGMA = 0.9
SEED = 0
ENV_PATTERN = re.compile(r"^(OPENBLAS|GOTO|OMP|MKL|BLIS|VECLIB|NVPL|NUMEXPR|NUMBA|KMP)_|_NUM_THREADS$")

# Goals (from the brief)
GOAL_EXACT_S = 5.0  # m = 10^7 to one weight, including the sort
GOAL_SPEEDUP = 100.0  # exact vs the note's numpy Euler loop
GOAL_NS = 1.0  # GD kernel, ns per weight-step
GOAL_GD_SPEEDUP = 5.0  # GD kernel vs numpy


# ---------------------------------------------------------------------------------------------
# small helpers


def now() -> float:
    return time.perf_counter()


def fmt_s(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    if x < 1e-3:
        return f"{x * 1e6:.0f} us"
    if x < 1.0:
        return f"{x * 1e3:.1f} ms"
    return f"{x:.2f} s"


def fmt_rel(x: float) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:+.2e}"


def minflt() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def table(rows: list[list[str]], header: list[str], align: str | None = None) -> str:
    cols = list(zip(header, *rows, strict=True))
    widths = [max(len(c) for c in col) for col in cols]
    align = align or ("l" + "r" * (len(header) - 1))

    def line(cells):
        return "  ".join(
            c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align, strict=True)
        )

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join("  " + s for s in out)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


class BlasThreads:
    """Read/set the OpenBLAS thread count numpy uses, through the library numpy loaded.

    Only used to time the numpy baselines both ways (default and 1 thread): on a busy
    machine a 2-thread BLAS dot product can wait milliseconds for its second thread."""

    def __init__(self):
        self._get = self._set = None
        self.library = None
        try:
            import ctypes

            with open("/proc/self/maps") as fh:
                files = {ln.split()[-1] for ln in fh if len(ln.split()) >= 6}
            paths = sorted(p for p in files if "openblas" in Path(p).name.lower() and ".so" in Path(p).name)
            for path in paths:
                lib = ctypes.CDLL(path)
                for pre in ("scipy_openblas_", "openblas_"):
                    for suf in ("64_", ""):
                        if hasattr(lib, f"{pre}set_num_threads{suf}") and hasattr(
                            lib, f"{pre}get_num_threads{suf}"
                        ):
                            self._set = getattr(lib, f"{pre}set_num_threads{suf}")
                            self._get = getattr(lib, f"{pre}get_num_threads{suf}")
                            self.library = Path(path).name
                            return
        except Exception:  # no /proc, no OpenBLAS: leave BLAS alone
            self._get = self._set = None

    @property
    def available(self) -> bool:
        return self._get is not None

    def get(self) -> int | None:
        return int(self._get()) if self._get else None

    def set(self, n: int) -> None:
        if self._set:
            self._set(int(n))


BLAS = BlasThreads()


class blas_threads:
    """with blas_threads(n): ... (None: leave as is). Restores the previous count."""

    def __init__(self, n: int | None):
        self.n = n
        self.prev = None

    def __enter__(self):
        if self.n is not None and BLAS.available:
            self.prev = BLAS.get()
            BLAS.set(self.n)
        return self

    def __exit__(self, *exc):
        if self.prev is not None:
            BLAS.set(self.prev)
        return False


def blas_settings() -> list[tuple[str, int | None]]:
    """The BLAS thread settings to time numpy with: the default, and 1 thread if different."""
    d = BLAS.get()
    if d is None:
        return [("default", None)]
    out = [(f"default ({d})", d)]
    if d != 1:
        out.append(("1", 1))
    return out


def _load1() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def kernel_dispatchers():
    return [v for v in vars(K).values() if isinstance(v, numba.core.registry.CPUDispatcher)]


def cache_stats() -> tuple[int, int]:
    hits = misses = 0
    for d in kernel_dispatchers():
        st = d.stats
        hits += sum(st.cache_hits.values())
        misses += sum(st.cache_misses.values())
    return hits, misses


# ---------------------------------------------------------------------------------------------
# header


def machine_info() -> dict:
    info: dict = {}
    info["nproc"] = os.cpu_count()
    try:
        info["nproc_usable"] = len(os.sched_getaffinity(0))
    except AttributeError:
        info["nproc_usable"] = os.cpu_count()
    model = cache = mhz = None
    flags = ""
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, val = ln.partition(":")
            key, val = key.strip(), val.strip()
            if key == "model name" and model is None:
                model = val
            elif key == "cache size" and cache is None:
                cache = val
            elif key == "cpu MHz" and mhz is None:
                mhz = val
            elif key == "flags" and not flags:
                flags = val
    except OSError:
        pass
    info["cpu_model"] = model or platform.processor() or "unknown"
    info["cpu_cache"] = cache
    info["cpu_mhz"] = mhz
    simd = [f for f in ("avx2", "fma", "avx512f") if f in flags.split()]
    info["cpu_simd"] = simd
    try:
        mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        info["mem_gib"] = round(mem_kb / 2**20, 1)
    except (OSError, AttributeError):
        info["mem_gib"] = None
    info["platform"] = platform.platform()
    info["python"] = sys.version.split()[0]
    info["numpy"] = np.__version__
    info["numba"] = numba.__version__
    try:
        import scipy

        info["scipy"] = scipy.__version__
    except ImportError:
        info["scipy"] = None
    blas = None
    try:
        cfg = np.show_config(mode="dicts")
        b = cfg["Build Dependencies"]["blas"]
        blas = f"{b.get('name')} {b.get('version')}"
    except Exception:  # older numpy: no dict mode
        pass
    info["numpy_blas"] = blas
    info["env"] = {k: v for k, v in sorted(os.environ.items()) if ENV_PATTERN.search(k)}
    info["numba_threads"] = numba.config.NUMBA_NUM_THREADS
    info["blas_threads"] = BLAS.get()
    info["blas_library"] = BLAS.library
    info["loadavg_start"] = loadavg()
    return info


def print_header(info: dict, quick: bool) -> None:
    print("=" * 100)
    print(
        "sparsity_gui core benchmark"
        + ("  [--quick: reduced sizes, figures are indicative only]" if quick else "")
    )
    print("=" * 100)
    print(f"  date       {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(
        f"  cpu        {info['cpu_model']}  (nproc {info['nproc']}, usable {info['nproc_usable']}, "
        f"{info['cpu_mhz']} MHz, cache {info['cpu_cache']}, simd {'/'.join(info['cpu_simd']) or '-'})"
    )
    print(f"  memory     {info['mem_gib']} GiB    platform {info['platform']}")
    print(
        f"  versions   python {info['python']}  numpy {info['numpy']}  numba {info['numba']}  "
        f"scipy {info['scipy']}  (numpy BLAS: {info['numpy_blas']})"
    )
    env = info["env"]
    print(
        "  env vars   "
        + ("  ".join(f"{k}={v}" for k, v in env.items()) if env else "(no BLAS/thread/numba vars set)")
    )
    print(
        f"  numba      NUMBA_NUM_THREADS={info['numba_threads']} (the kernels are serial); "
        f"cache dir {os.environ.get('NUMBA_CACHE_DIR', 'beside the source')}"
    )
    print(
        f"  BLAS       {info['blas_threads'] if info['blas_threads'] is not None else '?'} OpenBLAS "
        "threads by default "
        f"({info['blas_library'] or 'thread count not controllable'})"
    )
    print(f"  import     sparsity_gui.core + numpy + numba: {fmt_s(IMPORT_S)}")
    print(
        f"  load avg   {info['loadavg_start']} (1/5/15 min) at start"
        + (
            "  -- WARNING: other processes are using the CPUs; timings will be noisy"
            if _load1() > 0.5
            else ""
        )
    )


# ---------------------------------------------------------------------------------------------
# warm-up / compile time


def warm_up() -> None:
    """Touch every kernel the benchmark times, on small inputs."""
    w = draw_normal(1000, SIGMA, SEED)
    init = InitialState.from_weights(w)
    s = ExactSolver(init, 1e-3)
    s.advance_to(10.0)
    s.moments()
    s.abs_at_ranks(np.arange(5))
    s.advance_to(math.inf, stop_nonzero=1)
    g = GDSolver(init, 1e-3, 0.5)
    g.step(3)
    g.moments()
    deaths = np.zeros(init.m, dtype=np.int64)
    K.gd_run(np.array(init.u), init.m, 0.5, 2, 0.5, *lam_knots(1e-3), 0.0, 0, 0, deaths, -1)


def compile_probe() -> None:
    """Run in a subprocess with an empty NUMBA_CACHE_DIR: a true cold compile."""
    t0 = now()
    warm_up()
    t1 = now()
    hits, misses = cache_stats()
    print(json.dumps({"warmup_s": t1 - t0, "import_s": IMPORT_S, "cache_hits": hits, "cache_misses": misses}))


def measure_compile(quick: bool) -> dict:
    res: dict = {}
    h0, m0 = cache_stats()
    t0 = now()
    warm_up()
    res["first_call_s"] = now() - t0
    h1, m1 = cache_stats()
    res["first_call_cache_hits"] = h1 - h0
    res["first_call_cache_misses"] = m1 - m0
    t0 = now()
    warm_up()
    res["second_call_s"] = now() - t0
    if not quick:
        with tempfile.TemporaryDirectory(prefix="bench_numba_cache_") as tmp:
            env = dict(os.environ, NUMBA_CACHE_DIR=tmp)
            try:
                out = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--_compile-probe"],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=600,
                    cwd=str(ROOT),
                )
                probe = json.loads(out.stdout.strip().splitlines()[-1])
                res["cold_compile_s"] = probe["warmup_s"]
                res["cold_cache_misses"] = probe["cache_misses"]
            except Exception as exc:
                res["cold_compile_error"] = f"{type(exc).__name__}: {exc}"
    return res


def print_compile(res: dict) -> None:
    src = (
        "loaded from numba's on-disk cache"
        if res["first_call_cache_hits"] and not res["first_call_cache_misses"]
        else "compiled"
        if res["first_call_cache_misses"] and not res["first_call_cache_hits"]
        else f"cache hits {res['first_call_cache_hits']}, misses {res['first_call_cache_misses']}"
    )
    print("  numba warm-up (m=1000 exact + GD), excluded from every timing below:")
    print(f"     first call {fmt_s(res['first_call_s'])} ({src}); second call {fmt_s(res['second_call_s'])}")
    if "cold_compile_s" in res:
        print(
            f"     cold compile with an empty cache (fresh process): {fmt_s(res['cold_compile_s'])} "
            f"({res['cold_cache_misses']} kernel specialisations compiled)"
        )
    elif "cold_compile_error" in res:
        print(f"     cold compile probe failed: {res['cold_compile_error']}")


# ---------------------------------------------------------------------------------------------
# 1. exact solver to one weight


def exact_to_one(m: int, lam: float) -> dict:
    f0 = minflt()
    t0 = now()
    w = draw_normal(m, SIGMA, SEED)
    t1 = now()
    init = InitialState.from_weights(w)
    t2 = now()
    s = ExactSolver(init, lam)
    code = s.advance_to(math.inf, stop_nonzero=1)
    t3 = now()
    mom = s.moments()
    out = {
        "m": m,
        "lam": lam,
        "draw_s": t1 - t0,
        "sort_s": t2 - t1,
        "solve_s": t3 - t2,
        "total_s": t3 - t0,
        "sort_solve_s": t3 - t1,
        "steps": s.steps,
        "lam_t": lam * s.t,
        "t": s.t,
        "nonzero_end": mom.nonzero,
        "status": code,
        "minor_faults": minflt() - f0,
    }
    del s, init, w
    gc.collect()
    return out


def bench_exact(sizes: list[int], reps: dict[int, int], lam: float) -> dict:
    rows = []
    for m in sizes:
        runs = [exact_to_one(m, lam) for _ in range(reps[m])]
        best = min(runs, key=lambda r: r["total_s"])
        best = dict(
            best, reps=len(runs), first_total_s=runs[0]["total_s"], first_minor_faults=runs[0]["minor_faults"]
        )
        rows.append(best)
    return {"lam": lam, "sigma": SIGMA, "seed": SEED, "rows": rows}


def print_exact(res: dict, goal_m: int) -> None:
    hdr = [
        "m",
        "runs",
        "draw",
        "sort+prefix",
        "solve",
        "total",
        "total (1st run)",
        "solver steps",
        "ns/step",
        "lam*t end",
        "m' end",
    ]
    rows = []
    for r in res["rows"]:
        rows.append(
            [
                f"10^{round(math.log10(r['m']))}",
                str(r["reps"]),
                fmt_s(r["draw_s"]),
                fmt_s(r["sort_s"]),
                fmt_s(r["solve_s"]),
                fmt_s(r["total_s"]),
                fmt_s(r["first_total_s"]),
                f"{r['steps']:,}",
                f"{1e9 * r['solve_s'] / max(r['steps'], 1):.0f}",
                f"{r['lam_t']:.4f}",
                str(r["nonzero_end"]),
            ]
        )
    print(table(rows, hdr))
    print(
        "  total = draw + sort/prefix sums + solve; each row is the run with the fastest total (the "
        "1st run's total"
    )
    print(
        "  is shown too: that is what a single run sees, e.g. with fresh memory). ns/step = solve / "
        "solver steps."
    )
    g = [r for r in res["rows"] if r["m"] == goal_m]
    if g:
        r = g[0]
        print(
            f"  goal: m=10^{round(math.log10(goal_m))} to one weight under {GOAL_EXACT_S:g} s "
            "including the sort: "
            f"1st run {r['first_total_s']:.2f} s, best {r['total_s']:.2f} s "
            f"(sort+solve without the draw: {r['sort_solve_s']:.2f} s)"
        )


# ---------------------------------------------------------------------------------------------
# 2. the note's setting: exact vs the note's numpy Euler loop


class Euler:
    """The note's loop on a = |W|: n2 = a@a; a = a + eta*((1-n2)*a - lam); zero rule; dead stay dead.

    Written with in-place numpy operations (kinder to numpy than the literal loop, so the
    speedup it yields is a lower bound)."""

    def __init__(self, a0: np.ndarray, lam: float, eta: float):
        self.a = np.array(a0, dtype=np.float64)
        self.alive = self.a > 0.0
        self.mp = int(np.count_nonzero(self.alive))
        self.lam = lam
        self.eta = eta
        self.n = 0
        self.n_one = None  # step at which m' first reached <= 1
        self.samples: dict[int, tuple[float, float, int]] = {}

    def run(self, n_max: int, sample_steps: set[int], until: str) -> None:
        """Step until n_max steps, or until="one": m' <= 1; until="all": m' <= 1 seen and
        every sample step passed."""
        a, alive, eta, h = self.a, self.alive, self.eta, self.eta * self.lam
        n, mp = self.n, self.mp
        last_sample = max(sample_steps, default=0)
        while n < n_max:
            n2 = a @ a
            a *= 1.0 + eta * (1.0 - n2)  # a + eta*((1-n2)*a - lam) = a*(1 + eta*(1-n2)) - eta*lam
            a -= h
            np.maximum(a, 0.0, out=a)  # zero rule: a step that would cross zero lands on zero
            np.multiply(a, alive, out=a)  # dead weights stay dead
            np.greater(a, 0.0, out=alive)
            mp = int(np.count_nonzero(alive))
            n += 1
            if n in sample_steps:
                self.samples[n] = (float(a.sum()), float(a @ a), mp)
            if mp <= 1 and self.n_one is None:
                self.n_one = n
            if self.n_one is not None and (until == "one" or n >= last_sample):
                break
        self.n, self.mp = n, mp

    def compact(self) -> None:
        """Keep only the survivors (dead weights contribute nothing): for the untimed tail."""
        self.a = np.ascontiguousarray(self.a[self.alive])
        self.alive = self.a > 0.0


def exact_run(w: np.ndarray, lam: float, stops: list[float]) -> dict:
    t0 = now()
    init = InitialState.from_weights(w)
    t1 = now()
    s = ExactSolver(init, lam)
    at = {}
    for t in stops:
        code = s.advance_to(t)
        at[t] = (s.moments(), code)
    s.advance_to(math.inf, stop_nonzero=1)
    t2 = now()
    return {
        "sort_s": t1 - t0,
        "solve_s": t2 - t1,
        "wall_s": t2 - t0,
        "T": s.t,
        "steps": s.steps,
        "at": at,
        "death_t": s.death_t.copy(),
    }


def bench_note(m: int, lam: float, eta: float, fracs: list[float], n_probe: int) -> dict:
    w = draw_normal(m, SIGMA, SEED)
    a0 = np.abs(w)

    # exact, no stops: defines the time to one weight T and the sample times
    ex_a = exact_run(w, lam, [])
    T = ex_a["T"]
    sample_steps = [int(round(f * T / eta)) for f in fracs]
    sample_t = [n * eta for n in sample_steps]  # on the Euler grid; the exact solver lands on them exactly

    # exact with the sample stops: the answer Euler is compared with (and the timed exact run)
    ex_b = exact_run(w, lam, sample_t)
    # exact with many more stops (200 even + the samples): self-consistency of the sample values
    dense = sorted(set(list(np.linspace(0.0, T, 202)[1:-1]) + sample_t))
    ex_c = exact_run(w, lam, dense)

    # self-consistency
    sc_val = 0.0
    for t in sample_t:
        mb, mc = ex_b["at"][t][0], ex_c["at"][t][0]
        sc_val = max(sc_val, abs(mb.norm1 / mc.norm1 - 1), abs(mb.norm2_sq / mc.norm2_sq - 1))
    dead = np.isfinite(ex_a["death_t"]) & np.isfinite(ex_b["death_t"])
    sc_death = float(np.max(np.abs(ex_a["death_t"][dead] - ex_b["death_t"][dead]))) / T if dead.any() else 0.0
    sc_T = max(abs(ex_b["T"] / T - 1), abs(ex_c["T"] / T - 1))

    # Euler: timed up to one weight left or the exact time to one weight, whichever first.
    # The full loop runs with 1 BLAS thread (serial like the exact solver, and immune to a
    # busy machine stalling a 2-thread dot product); a short probe per BLAS setting gives the
    # per-step rates, and the speedup uses the fastest rate seen (conservative).
    n_T = int(round(T / eta))
    n_probe = min(n_probe, n_T)
    probe_us = {}
    for label, nth in blas_settings():
        with blas_threads(nth):
            pe = Euler(a0, lam, eta)
            t0 = now()
            pe.run(n_probe, set(), until="one")
            probe_us[label] = 1e6 * (now() - t0) / max(pe.n, 1)
    settings = dict(blas_settings())
    full_label = "1" if "1" in settings else next(iter(settings))
    eu = Euler(a0, lam, eta)
    with blas_threads(settings[full_label]):
        t0 = now()
        eu.run(n_T, set(sample_steps), until="one")
        euler_s = now() - t0
    euler_steps_timed = eu.n
    best_us = min([1e6 * euler_s / max(eu.n, 1)] + list(probe_us.values()))
    euler_conservative_s = best_us * 1e-6 * euler_steps_timed
    # untimed tail, on the survivors only: the samples not reached yet, and Euler's own time
    # to one weight (up to 5 T)
    tail_s = 0.0
    if eu.n_one is None or eu.n < max(sample_steps):
        eu.compact()
        t0 = now()
        eu.run(5 * n_T, set(sample_steps), until="all")
        tail_s = now() - t0

    samples = []
    for f, n, t in zip(fracs, sample_steps, sample_t, strict=True):
        mex = ex_b["at"][t][0]
        row = {
            "frac": f,
            "t": t,
            "lam_t": lam * t,
            "exact_norm1": mex.norm1,
            "exact_norm2": mex.norm2_sq,
            "exact_nonzero": mex.nonzero,
        }
        if n in eu.samples:
            l1, n2, mp = eu.samples[n]
            row.update(
                euler_norm1=l1,
                euler_norm2=n2,
                euler_nonzero=mp,
                rel_err_norm1=l1 / mex.norm1 - 1,
                rel_err_norm2=n2 / mex.norm2_sq - 1,
            )
        samples.append(row)
    T_euler = eu.n_one * eta if eu.n_one is not None else math.nan
    return {
        "m": m,
        "lam": lam,
        "sigma": SIGMA,
        "seed": SEED,
        "eta": eta,
        "T_exact": T,
        "lam_T_exact": lam * T,
        "exact_wall_s": ex_b["wall_s"],
        "exact_sort_s": ex_b["sort_s"],
        "exact_solve_s": ex_b["solve_s"],
        "exact_steps": ex_b["steps"],
        "exact_nostop_wall_s": ex_a["wall_s"],
        "euler_wall_s": euler_s,
        "euler_steps_timed": euler_steps_timed,
        "euler_blas_threads": full_label,
        "euler_probe_steps": n_probe,
        "euler_probe_us_per_step": probe_us,
        "euler_best_us_per_step": best_us,
        "euler_conservative_s": euler_conservative_s,
        "speedup_measured": euler_s / ex_b["wall_s"],
        "euler_us_per_step": 1e6 * euler_s / max(euler_steps_timed, 1),
        "euler_reached_one_in_timed_span": eu.n_one is not None and eu.n_one <= euler_steps_timed,
        "euler_tail_untimed_s": tail_s,
        "speedup": euler_conservative_s / ex_b["wall_s"],
        "T_euler": T_euler,
        "rel_err_T": T_euler / T - 1 if math.isfinite(T_euler) else math.nan,
        "samples": samples,
        "self_consistency": {
            "max_rel_diff_norms_at_samples": sc_val,
            "max_rel_diff_T": sc_T,
            "max_death_time_diff_over_T": sc_death,
            "dense_stops": len(dense),
        },
    }


def print_note(r: dict) -> None:
    print(
        f"  m = {r['m']:,}, lam = {r['lam']:g}, sigma = {r['sigma']}, seed {r['seed']}; Euler step eta "
        f"= {r['eta']}"
    )
    print(f"  exact time to one weight T = {r['T_exact']:.6g} (lam*T = {r['lam_T_exact']:.4f})")
    timed_span = (
        f"to one weight (step {r['euler_steps_timed']:,})"
        if r["euler_reached_one_in_timed_span"]
        else f"to t = T (step {r['euler_steps_timed']:,}, more than one weight still alive)"
    )
    rows = [
        [
            "exact (sort + solve, 3 sample stops)",
            fmt_s(r["exact_wall_s"]),
            f"sort {fmt_s(r['exact_sort_s'])} + solve {fmt_s(r['exact_solve_s'])}, "
            f"{r['exact_steps']:,} solver steps",
        ],
        [
            f"numpy Euler loop, eta = {r['eta']:g}",
            fmt_s(r["euler_wall_s"]),
            f"{timed_span}, {r['euler_us_per_step']:.0f} us/step, BLAS threads {r['euler_blas_threads']}",
        ],
    ]
    print(table(rows, ["method", "wall", "detail"], "lrl"))
    probe = ", ".join(f"{k}: {v:.0f}" for k, v in r["euler_probe_us_per_step"].items())
    print(
        f"  Euler us/step over its first {r['euler_probe_steps']:,} steps by BLAS threads -- {probe}; "
        "full loop "
        f"{r['euler_us_per_step']:.0f}"
    )
    print(
        f"  speedup exact vs Euler: {r['speedup']:,.0f}x with Euler at the fastest rate seen "
        f"({r['euler_best_us_per_step']:.0f} us/step -> {fmt_s(r['euler_conservative_s'])}); "
        f"{r['speedup_measured']:,.0f}x as measured   (goal >= {GOAL_SPEEDUP:g}x)"
    )
    print(
        "  (the loop is written in place, kinder to numpy than the literal a = a + ..., so both are "
        "lower bounds)"
    )
    print(
        "  (Euler needs T/eta ~ 1/lam steps of O(m) work each; the exact solver about one step per death plus"
    )
    print("   O(1) per time step, so the speedup grows roughly like 1/lam at fixed m)")
    if r["euler_tail_untimed_s"] > 0:
        print(
            f"  (Euler then continued, untimed and on survivors only, for {fmt_s(r['euler_tail_untimed_s'])} "
            f"to reach the remaining samples / its own time to one weight)"
        )
    hdr = [
        "t / T",
        "lam*t",
        "exact ||W||_1",
        "Euler rel err",
        "exact ||W||^2",
        "Euler rel err",
        "m' exact",
        "m' Euler",
    ]
    rows = []
    for s in r["samples"]:
        rows.append(
            [
                f"{s['frac']:.0%}",
                f"{s['lam_t']:.4f}",
                f"{s['exact_norm1']:.6g}",
                fmt_rel(s.get("rel_err_norm1")),
                f"{s['exact_norm2']:.6g}",
                fmt_rel(s.get("rel_err_norm2")),
                f"{s['exact_nonzero']:,}",
                f"{s['euler_nonzero']:,}" if "euler_nonzero" in s else "n/a",
            ]
        )
    print(table(rows, hdr))
    print(
        f"  time to one weight: exact {r['T_exact']:.6g}, Euler {r['T_euler']:.6g}  "
        f"(rel err {fmt_rel(r['rel_err_T'])})"
    )
    sc = r["self_consistency"]
    print("  exact solver self-consistency (the 'exact answer' against itself):")
    print(
        f"     ||W||_1, ||W||^2 at the samples, 3 stops vs {sc['dense_stops']} stops: max rel diff "
        f"{sc['max_rel_diff_norms_at_samples']:.1e}"
    )
    print(
        f"     time to one weight, no stops vs 3 / {sc['dense_stops']} stops: max rel diff "
        f"{sc['max_rel_diff_T']:.1e};"
        f"  death times, no stops vs 3 stops: max diff / T {sc['max_death_time_diff_over_T']:.1e}"
    )


# ---------------------------------------------------------------------------------------------
# 3. GD kernel vs numpy


def numpy_gd(w: np.ndarray, lam: float, eta: float, n_steps: int) -> np.ndarray:
    """The plain numpy rule on signed, unsorted W (exactly as a user would write it)."""
    W = w.copy()
    for _ in range(n_steps):
        n2 = W @ W
        Wn = W + eta * ((1 - n2) * W - lam * np.sign(W))
        Wn[np.sign(Wn) != np.sign(W)] = 0  # zero rule
        W = Wn
    return W


def bench_gd(m: int, lam: float, eta: float, n_steps: int, reps_kernel: int, reps_numpy: int) -> dict:
    w = draw_normal(m, SIGMA, SEED)
    init = InitialState.from_weights(w)

    # kernel through GDSolver.step (what the app calls)
    k_times = []
    for _ in range(reps_kernel):
        g = GDSolver(init, lam, eta)
        t0 = now()
        g.step(n_steps)
        k_times.append(now() - t0)
    death_step = np.where(np.isnan(g.death_t), n_steps, np.rint(np.nan_to_num(g.death_t) / eta)).astype(
        np.int64
    )
    weight_steps = int(np.minimum(death_step, n_steps).sum())  # sum over steps of survivors at its start
    survivors = g.mp
    kernel_norm2 = g.norm2

    # raw kernel call (no wrapper)
    raw_times = []
    for _ in range(reps_kernel):
        a = np.array(init.u)
        ds = np.zeros(m, dtype=np.int64)
        n2_0 = float(a @ a)
        t0 = now()
        K.gd_run(a, m, n2_0, n_steps, eta, *lam_knots(lam), 0.0, 0, 0, ds, -1)
        raw_times.append(now() - t0)

    # numpy, with each BLAS thread setting (W@W is the only BLAS call); the faster is the baseline
    n_by_setting = {}
    for label, nth in blas_settings():
        with blas_threads(nth):
            times = []
            for _ in range(reps_numpy):
                t0 = now()
                W = numpy_gd(w, lam, eta, n_steps)
                times.append(now() - t0)
        n_by_setting[label] = min(times)
    np_survivors = int(np.count_nonzero(W))
    np_norm2 = float(W @ W)
    n_times = list(n_by_setting.values())
    np_label = min(n_by_setting, key=n_by_setting.get)

    kt, rt, nt = min(k_times), min(raw_times), min(n_times)
    return {
        "m": m,
        "lam": lam,
        "eta": eta,
        "steps": n_steps,
        "weight_steps": weight_steps,
        "survivors_end": survivors,
        "survivor_fraction": survivors / m,
        "kernel_s": kt,
        "kernel_raw_s": rt,
        "numpy_s": nt,
        "kernel_ns": 1e9 * kt / weight_steps,
        "kernel_raw_ns": 1e9 * rt / weight_steps,
        "numpy_ns": 1e9 * nt / weight_steps,
        "numpy_ns_per_m_step": 1e9 * nt / (m * n_steps),
        "speedup": nt / kt,
        "reps_kernel": reps_kernel,
        "reps_numpy": reps_numpy,
        "numpy_blas_threads": np_label,
        "numpy_ns_by_blas_threads": {k: 1e9 * v / weight_steps for k, v in n_by_setting.items()},
        "numpy_survivors_end": np_survivors,
        "rel_diff_norm2": np_norm2 / kernel_norm2 - 1,
    }


def print_gd(r: dict) -> None:
    print(
        f"  m = {r['m']:,}, lam = {r['lam']:g}, eta = {r['eta']}, {r['steps']} steps; survivors at the end "
        f"{r['survivors_end']:,} ({r['survivor_fraction']:.1%}); weight-steps (sum of survivors) "
        f"{r['weight_steps']:,}"
    )
    rows = [
        [
            "GD kernel via GDSolver.step",
            fmt_s(r["kernel_s"]),
            f"{r['kernel_ns']:.3f}",
            f"best of {r['reps_kernel']}",
        ],
        [
            "GD kernel, raw gd_run call",
            fmt_s(r["kernel_raw_s"]),
            f"{r['kernel_raw_ns']:.3f}",
            f"best of {r['reps_kernel']}",
        ],
        [
            "numpy (signed, unsorted W)",
            fmt_s(r["numpy_s"]),
            f"{r['numpy_ns']:.3f}",
            f"best of {r['reps_numpy']}, BLAS threads {r['numpy_blas_threads']}; "
            f"{r['numpy_ns_per_m_step']:.3f} ns per m*steps",
        ],
    ]
    print(table(rows, ["method", "wall", "ns/weight-step", "note"], "lrrl"))
    print(
        f"  speedup kernel vs numpy: {r['speedup']:.1f}x   (goals: kernel <= {GOAL_NS:g} ns/weight-step, "
        f">= {GOAL_GD_SPEEDUP:g}x numpy)"
    )
    if len(r["numpy_ns_by_blas_threads"]) > 1:
        print(
            "  numpy ns/weight-step by BLAS threads: "
            + ", ".join(f"{k}: {v:.3f}" for k, v in r["numpy_ns_by_blas_threads"].items())
        )
    print(
        f"  agreement: survivors kernel {r['survivors_end']:,} vs numpy {r['numpy_survivors_end']:,}; "
        f"||W||^2 rel diff {r['rel_diff_norm2']:+.1e}"
    )


# ---------------------------------------------------------------------------------------------


def section(title: str) -> None:
    print()
    print("-" * 100)
    print(title)
    print("-" * 100)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fast smoke version (smaller sizes)")
    ap.add_argument("--json", metavar="FILE", help="also save the figures as JSON")
    ap.add_argument("--_compile-probe", dest="compile_probe", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.compile_probe:
        compile_probe()
        return 0
    quick = args.quick

    if quick:
        sizes, reps, goal_m = [10**3, 10**5, 10**6], {10**3: 3, 10**5: 2, 10**6: 1}, 10**6
        note = dict(m=10**5, lam=1e-3, eta=0.5, n_probe=500)
        gd = dict(m=10**5, lam=1e-6, eta=0.5, n_steps=50, reps_kernel=2, reps_numpy=1)
    else:
        sizes, reps, goal_m = [10**3, 10**5, 10**7], {10**3: 5, 10**5: 3, 10**7: 2}, 10**7
        note = dict(m=10**5, lam=1e-5, eta=0.5, n_probe=5000)
        gd = dict(m=10**6, lam=1e-6, eta=0.5, n_steps=200, reps_kernel=5, reps_numpy=3)

    t_start = now()
    results: dict = {"quick": quick, "machine": machine_info()}
    print_header(results["machine"], quick)

    section("0. numba compile time")
    try:
        results["compile"] = measure_compile(quick)
        print_compile(results["compile"])
    except Exception:
        traceback.print_exc(file=sys.stdout)
        results["compile"] = {"error": traceback.format_exc()}

    section(f"1. exact solver to one weight (lam = 1e-3, sigma = {SIGMA}, seed {SEED})")
    try:
        results["exact"] = bench_exact(sizes, reps, 1e-3)
        print_exact(results["exact"], goal_m)
    except Exception:
        traceback.print_exc(file=sys.stdout)
        results["exact"] = {"error": traceback.format_exc()}

    section("2. the note's setting: exact solver vs the note's numpy Euler loop")
    try:
        results["note"] = bench_note(fracs=[0.1, 0.5, 0.9], **note)
        print_note(results["note"])
    except Exception:
        traceback.print_exc(file=sys.stdout)
        results["note"] = {"error": traceback.format_exc()}

    section("3. gradient-descent kernel vs plain numpy")
    try:
        results["gd"] = bench_gd(**gd)
        print_gd(results["gd"])
    except Exception:
        traceback.print_exc(file=sys.stdout)
        results["gd"] = {"error": traceback.format_exc()}

    # summary
    section("summary" + ("  [--quick: reduced sizes, not the goals' settings]" if quick else ""))
    goals = []
    ex = results.get("exact", {})
    row = [r for r in ex.get("rows", []) if r["m"] == goal_m]
    if row:
        r = row[0]
        goals.append(
            (
                "exact",
                r["first_total_s"] < GOAL_EXACT_S,
                f"exact solver, m=10^{round(math.log10(goal_m))} to one weight incl. draw+sort < "
                f"{GOAL_EXACT_S:g} s: "
                f"{r['first_total_s']:.2f} s (1st run; best {r['total_s']:.2f} s)",
            )
        )
    nt = results.get("note", {})
    if "speedup" in nt:
        goals.append(
            (
                "speedup",
                nt["speedup"] >= GOAL_SPEEDUP,
                f"exact vs numpy Euler (m={nt['m']:,}, lam={nt['lam']:g}) >= {GOAL_SPEEDUP:g}x: "
                f"{nt['speedup']:,.0f}x ({fmt_s(nt['euler_conservative_s'])} vs {fmt_s(nt['exact_wall_s'])}; "
                f"{nt['speedup_measured']:,.0f}x as measured)",
            )
        )
    g = results.get("gd", {})
    if "kernel_ns" in g:
        goals.append(
            (
                "gd_ns",
                g["kernel_ns"] <= GOAL_NS,
                f"GD kernel <= {GOAL_NS:g} ns/weight-step (m={g['m']:,}): {g['kernel_ns']:.3f} ns",
            )
        )
        goals.append(
            (
                "gd_speedup",
                g["speedup"] >= GOAL_GD_SPEEDUP,
                f"GD kernel >= {GOAL_GD_SPEEDUP:g}x numpy (m={g['m']:,}): {g['speedup']:.1f}x",
            )
        )
    for _, ok, text in goals:
        print(f"  {verdict(ok)}  {text}" + ("  [quick setting, not the goal's]" if quick else ""))
    results["goals"] = {k: {"pass": ok, "text": text} for k, ok, text in goals}
    results["bench_wall_s"] = now() - t_start
    results["loadavg_end"] = loadavg()
    print(
        f"  (benchmark wall time {fmt_s(results['bench_wall_s'])}; load average at the end "
        f"{results['loadavg_end']})"
    )

    if args.json:
        try:
            Path(args.json).write_text(json.dumps(results, indent=2, default=_json_default))
            print(f"  figures saved to {args.json}")
        except OSError as exc:
            print(f"  could not save {args.json}: {exc}")
    return 0


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


if __name__ == "__main__":
    sys.exit(main())
