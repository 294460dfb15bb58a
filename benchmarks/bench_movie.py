"""Benchmark of a movie of one panel (figures/note/movie.py), beside drawing the same frames
as PNG files in the same run.

Run from the project root (needs the [movie] extra, which `make` installs):

    .venv/bin/python benchmarks/bench_movie.py                       # m = 10^4, then 10^7
    .venv/bin/python benchmarks/bench_movie.py --big 0               # m = 10^4 only
    .venv/bin/python benchmarks/bench_movie.py --panel layout --seconds 5

Part 1, in this process at m = 10^4 (``--m``): the API's ``movie()`` of ``--panel`` (10 s at
30 fps: 300 frames, MP4, 150 dpi) timed against the baseline "PNG files": the same frames
(the same replay, the same figures) each saved as a PNG file by the figure layer
(figures/save.figure_bytes), what a user would do by hand before encoding them elsewhere.

Part 2, in child processes at m = 10^7 (``--big``): `sparsity-gui run --m M --no-weights
--movie PANEL` and, as its baseline, the same command without --movie: wall time and peak
RSS (getrusage(RUSAGE_CHILDREN).ru_maxrss of that child alone).

Goals (issue 24): the movie at m = 10^4 under 30 s; at m = 10^7 the peak RSS under 1.5 GB
(frames drawn from decimated curves and streamed to the encoder, one at a time). Nothing is
asserted: the exit status is 0 either way.
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
sys.path.insert(0, str(ROOT))

GOAL_WALL_S = 30.0
GOAL_RSS_GB = 1.5

_HELPER = r"""
import resource, subprocess, sys, time, json
t0 = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": rc, "wall": wall, "maxrss_kib": rss}))
"""


def run_child(cmd: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", _HELPER, *cmd], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def part_one(m: int, panel: str, seconds: float, fps: int) -> None:
    from sparsity_gui import api
    from sparsity_gui.figures.movie import frame_times
    from sparsity_gui.figures.note.movie import note_frames
    from sparsity_gui.figures.save import figure_bytes

    t0 = time.perf_counter()
    run = api.simulate(m=m, lam=1e-3)
    print(f"m = {m:,}: the run {time.perf_counter() - t0:.2f} s (t_end = {run.t_end:.4g})")
    run.movie(
        Path(tempfile.gettempdir()) / "bench-warm.mp4", panel=panel, seconds=0.2, fps=10
    )  # imports, JIT
    count = round(seconds * fps)
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        path = run.movie(Path(tmp) / f"{panel}.mp4", panel=panel, seconds=seconds, fps=fps)
        movie_s, movie_cpu = time.perf_counter() - t0, time.process_time() - c0
        size = path.stat().st_size
        script = run.run.sim.script(run.t_end, len(run.timeseries))
        times = frame_times(0.0, run.t_end, count, "linear")
        t0, c0 = time.perf_counter(), time.process_time()
        for k, frame in enumerate(note_frames(script, panel, times)):
            (Path(tmp) / f"frame{k:04d}.png").write_bytes(figure_bytes(frame.fig, "png", frame.style, 150))
        png_s, png_cpu = time.perf_counter() - t0, time.process_time() - c0
    verdict = "meets" if movie_s < GOAL_WALL_S else "misses"
    print(f"  load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    print(
        f"  movie  {panel}: {count} frames ({seconds:g} s at {fps} fps, MP4): "
        f"{movie_s:6.2f} s ({movie_cpu:6.2f} s process CPU, {movie_cpu / count:.3f} a frame), "
        f"{size / 1e6:.2f} MB"
    )
    print(
        f"  baseline, the same frames as PNG files:     {png_s:6.2f} s ({png_cpu:6.2f} s process CPU, "
        f"{png_cpu / count:.3f} a frame)"
    )
    print(f"  movie / PNG files: {movie_s / png_s:.2f}; goal < {GOAL_WALL_S:g} s: {verdict}")


def part_two(m: int, panel: str, seconds: float, fps: int) -> None:
    exe = str(Path(sys.executable).parent / "sparsity-gui")
    with tempfile.TemporaryDirectory() as tmp:
        base = [exe, "run", "--m", str(m), "--lam", "1e-3", "--no-weights"]
        plain = run_child([*base, "--out", str(Path(tmp) / "plain")])
        movie = run_child(
            [
                *base,
                "--movie",
                panel,
                "--movie-seconds",
                f"{seconds:g}",
                "--movie-fps",
                str(fps),
                "--out",
                str(Path(tmp) / "movie"),
            ]
        )
    for name, r in (("run alone (baseline)", plain), (f"run --movie {panel}", movie)):
        print(
            f"  m = {m:,} {name:28s} rc {r['rc']}  {r['wall']:7.2f} s  "
            f"peak RSS {r['maxrss_kib'] / 2**20:.2f} GiB"
        )
    verdict = "meets" if movie["maxrss_kib"] * 1024 < GOAL_RSS_GB * 1e9 else "misses"
    print(
        f"  the movie's frames: {movie['wall'] - plain['wall']:.2f} s more; "
        f"goal peak RSS < {GOAL_RSS_GB} GB: {verdict}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--m", type=int, default=10_000)
    p.add_argument("--big", type=int, default=10_000_000, help="m of part 2 (0: skip it)")
    p.add_argument("--panel", default="threshold_crossing")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--fps", type=int, default=30)
    args = p.parse_args()
    part_one(args.m, args.panel, args.seconds, args.fps)
    if args.big:
        part_two(args.big, args.panel, args.seconds, args.fps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
