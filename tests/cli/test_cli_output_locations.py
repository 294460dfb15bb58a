"""Where `run`, `interference` and `sweep` write, as real subprocesses: the files and folders
they make get the mode a plain open()/mkdir() gives under the user's umask (0666/0777 less
the umask), with and without figures.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

COMMANDS = {
    "run": ["run", "--m", "50", "--samples", "5"],
    "interference": ["interference", "--n", "4", "--m", "8", "--steps", "20", "--samples", "5"],
    "sweep": ["sweep", "--n", "4", "--m", "8", "--seeds", "1", "--steps", "20", "--jobs", "1", "--no-figure"],
}
ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen")


def cli(args, cwd, prefix=(), **kw):
    return subprocess.run(
        [*prefix, sys.executable, "-m", "sparsity_gui", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env=ENV,
        **kw,
    )


def listing(folder: Path) -> dict[str, bytes]:
    """Every file and folder under folder (hidden ones too) with its content."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(folder.rglob("*"))
    }


def assert_one_clean_error(proc, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert proc.stdout == ""
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# --- modes ------------------------------------------------------------------------------------
MODE_RUNS = {
    "run": [*COMMANDS["run"], "--figures"],
    "interference": COMMANDS["interference"],
    "sweep": [c for c in COMMANDS["sweep"] if c != "--no-figure"],
}
UMASKS = (0o022, 0o077)


@pytest.fixture(scope="module")
def mode_runs(tmp_path_factory):
    """Each command under umask 022 and 077 (set by sh, as a login shell would), two at a time."""
    jobs = {}
    for mask in UMASKS:
        for name, args in MODE_RUNS.items():
            d = tmp_path_factory.mktemp(f"{name}{mask:03o}")
            prefix = ("sh", "-c", 'umask "$0" && exec "$@"', f"{mask:03o}")
            jobs[(name, mask)] = (d, [*args, "--out", "res"], prefix)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(cli, args, d, prefix) for key, (d, args, prefix) in jobs.items()}
        return {key: (f.result(), jobs[key][0]) for key, f in futures.items()}


@pytest.mark.parametrize("mask", UMASKS, ids=[f"umask{m:03o}" for m in UMASKS])
@pytest.mark.parametrize("command", list(MODE_RUNS))
def test_every_file_and_folder_gets_the_umask_mode(mode_runs, command, mask):
    proc, d = mode_runs[(command, mask)]
    assert proc.returncode == 0, proc.stderr
    res = d / "res"
    found = {str(p.relative_to(d)): stat.S_IMODE(p.lstat().st_mode) for p in [res, *res.rglob("*")]}
    files = [p for p in found if (d / p).is_file()]
    folders = [p for p in found if (d / p).is_dir()]
    assert len(files) >= 4 and "res" in folders
    if command == "run":
        assert (
            "res/figures" in folders
            and "res/figures/layout.png" in files
            and "res/figures/tracked.csv" in files
        )
    if command == "sweep":
        assert "res/sweep.png" in files and "res/sweep.svg" in files
    assert {p: found[p] for p in files} == {p: 0o666 & ~mask for p in files}
    assert {p: found[p] for p in folders} == {p: 0o777 & ~mask for p in folders}
    assert sorted(p.name for p in d.iterdir()) == ["res"]  # no temporary folder left
