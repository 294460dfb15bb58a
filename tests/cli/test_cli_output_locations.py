"""Where `run`, `interference` and `sweep` write, as real subprocesses (the modes, one of
the unusable locations and the full disk) and through the same entry point in this process
(__main__.main: the other unusable locations, each a refusal before any work).

- The files and folders they make get the mode a plain open()/mkdir() gives under the
  user's umask (0666/0777 less the umask), with and without figures.
- An output location that cannot be used is one `error:` line naming the path and the
  reason, exit status 2, no traceback, and nothing left behind (no DIR, no temporary
  folder or file): a path on a pseudo-filesystem (/proc, /sys), a file where a folder is
  expected (DIR itself, its parent, a grandparent), a missing parent (refused, not
  created), a folder that cannot be written, a name that is not a folder of its own ('.'),
  a name too long for the filesystem, and a disk that fills while a large file is written.

The tests run as root in CI, where chmod 0555 does not stop writes: a folder that cannot
be written is /proc/sys (read-only to root too), and the chmod 0555 case runs only when
the tests run as a user the mode applies to. A full disk is a file size limit
(RLIMIT_FSIZE, with SIGXFSZ ignored so that the write fails with EFBIG, as on a full disk,
instead of killing the process).
"""

from __future__ import annotations

import os
import re
import resource
import signal
import stat
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import cli

COMMANDS = {
    "run": ["run", "--m", "50", "--samples", "5"],
    "interference": ["interference", "--n", "4", "--m", "8", "--steps", "20", "--samples", "5"],
    "sweep": ["sweep", "--n", "4", "--m", "8", "--seeds", "1", "--steps", "20", "--jobs", "1", "--no-figure"],
}


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
# run's eight figures under umask 077 only (their files and folder written by the same
# atomic helpers as the others; 077 is the umask no default mode matches), as PNGs at 50
# dpi (every format is written by the same helper: the SVG and PDF added 9 s of CPU). The
# sweep's figure, in its three formats, under both.
MODE_RUNS = {
    "run": [*COMMANDS["run"], "--figures", "--formats", "png", "--dpi", "50"],
    "interference": COMMANDS["interference"],
    "sweep": [c for c in COMMANDS["sweep"] if c != "--no-figure"],
}
UMASKS = (0o022, 0o077)
WITH_FIGURES = 0o077


def mode_run_args(command: str, mask: int) -> list[str]:
    return COMMANDS["run"] if command == "run" and mask != WITH_FIGURES else MODE_RUNS[command]


@pytest.fixture(scope="module")
def mode_runs(tmp_path_factory):
    """Each command under umask 022 and 077 (set by sh, as a login shell would), two at a time."""
    jobs = {}
    for mask in UMASKS:
        for name in MODE_RUNS:
            args = mode_run_args(name, mask)
            d = tmp_path_factory.mktemp(f"{name}{mask:03o}")
            prefix = ("sh", "-c", 'umask "$0" && exec "$@"', f"{mask:03o}")
            jobs[(name, mask)] = (d, [*args, "--out", "res"], prefix)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(cli, args, d, prefix=prefix) for key, (d, args, prefix) in jobs.items()}
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
    if command == "run" and mask == WITH_FIGURES:
        assert (
            "res/figures" in folders
            and "res/figures/layout.png" in files
            and "res/figures/threshold_crossing.py" in files
            and "res/figures/threshold_crossing.json" in files
        )
    if command == "sweep":
        assert "res/figures/sweep.png" in files and "res/figures/sweep.py" in files
    assert {p: found[p] for p in files} == dict.fromkeys(files, 0o666 & ~mask)
    assert {p: found[p] for p in folders} == dict.fromkeys(folders, 0o777 & ~mask)
    assert sorted(p.name for p in d.iterdir()) == ["res"]  # no temporary folder left


# --- locations that cannot be used ------------------------------------------------------------
ON_LINUX = Path("/proc/self").is_dir()
PSEUDO_FS_OK = ON_LINUX and Path("/sys/kernel").is_dir() and not os.access("/proc/sys", os.W_OK)

# name: (DIR, what the message must say); {tmp} is the test's folder
LOCATIONS = {
    "proc_new_dir": ("/proc/sparsity_test_out", "cannot create /proc/sparsity_test_out: "),
    "proc_missing_parent": ("/proc/sparsity_test/out", "/proc/sparsity_test does not exist"),
    "sys_new_dir": ("/sys/kernel/sparsity_test_out", "cannot create /sys/kernel/sparsity_test_out: "),
    "proc_sys_not_writable": ("/proc/sys/sparsity_test_out", "cannot write in /proc/sys (permission denied)"),
    "out_is_a_file": ("{tmp}/a_file", "{tmp}/a_file exists and is not a folder"),
    "parent_is_a_file": ("{tmp}/a_file/out", "{tmp}/a_file is not a folder"),
    "grandparent_is_a_file": ("{tmp}/a_file/sub/out", "{tmp}/a_file is not a folder"),
    "parent_missing": ("{tmp}/no/such/out", "{tmp}/no/such does not exist"),
    "current_folder": (".", "'.' is not a folder name"),
    "name_too_long": ("{tmp}/" + "x" * 300, "File name too long"),
}
PSEUDO = {"proc_new_dir", "proc_missing_parent", "sys_new_dir", "proc_sys_not_writable"}
# run as a real subprocess for each command (the exit status and stderr of the process
# itself, nothing left at its exit); the others, the pseudo-filesystems too, through
# __main__.main in this process: the same code from the same entry point, without starting
# Python and numpy 27 more times
IN_A_SUBPROCESS = ("out_is_a_file",)


def _prepare(tmp: Path) -> Path:
    """The test's folder: a file in the way and an empty folder to run '.' from."""
    (tmp / "a_file").write_text("keep")
    (tmp / "empty").mkdir()
    return tmp / "empty"


def _location_args(command: str, name: str, tmp: Path) -> list[str]:
    return [*COMMANDS[command], "--out", LOCATIONS[name][0].replace("{tmp}", str(tmp))]


@pytest.fixture(scope="module")
def location_runs(tmp_path_factory):
    """The IN_A_SUBPROCESS cases of every command, two at a time."""
    jobs = {}
    for command in COMMANDS:
        for name in IN_A_SUBPROCESS:
            if name in PSEUDO and not PSEUDO_FS_OK:
                continue
            tmp = tmp_path_factory.mktemp(f"{command}-{name}")
            cwd = _prepare(tmp)
            jobs[(command, name)] = (tmp, cwd, _location_args(command, name, tmp))
    before = {key: listing(tmp) for key, (tmp, _c, _a) in jobs.items()}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(cli, args, cwd) for key, (_t, cwd, args) in jobs.items()}
        results = {key: f.result() for key, f in futures.items()}
    return {key: (results[key], jobs[key][0], before[key]) for key in jobs}


def run_in_process(args: list[str], cwd: Path, monkeypatch, capfd) -> subprocess.CompletedProcess:
    """`sparsity-gui ARGS` in ``cwd`` through __main__.main in this process (the same code
    the subprocess runs), as a finished process: its status, stdout and stderr."""
    from sparsity_gui.__main__ import main

    monkeypatch.chdir(cwd)
    capfd.readouterr()
    try:
        status = main(args)
    except SystemExit as exc:
        status = exc.code
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(args, status, out, err)


@pytest.mark.parametrize("name", list(LOCATIONS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_unusable_location_is_one_error_and_leaves_nothing(
    request, tmp_path, monkeypatch, capfd, command, name
):
    if name in PSEUDO and not PSEUDO_FS_OK:
        pytest.skip("needs Linux's /proc and /sys, read-only to this user")
    if name in IN_A_SUBPROCESS:
        proc, tmp, before = request.getfixturevalue("location_runs")[(command, name)]
    else:
        tmp = tmp_path
        cwd = _prepare(tmp)
        before = listing(tmp)
        proc = run_in_process(_location_args(command, name, tmp), cwd, monkeypatch, capfd)
    line = assert_one_clean_error(proc, "error: out: ", LOCATIONS[name][1].replace("{tmp}", str(tmp)))
    assert re.search(r"[A-Za-z)]$", line), "ends with the reason in words"
    assert listing(tmp) == before, "nothing created, removed or changed"
    if name in PSEUDO:
        assert not [
            p for p in (*Path("/proc").iterdir(), *Path("/sys/kernel").iterdir()) if "sparsity_test" in p.name
        ]


@pytest.mark.skipif(
    os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root writes through chmod 0555"
)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_folder_without_write_permission(tmp_path, command):
    """Covered as root by proc_sys_not_writable above; this runs as an ordinary user."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        before = listing(tmp_path)
        proc = cli([*COMMANDS[command], "--out", str(ro / "out")], tmp_path)
        assert_one_clean_error(proc, f"cannot write in {ro} (permission denied)")
        assert listing(tmp_path) == before
    finally:
        ro.chmod(0o755)


# --- a disk that fills while a large file is written ------------------------------------------
def _file_size_limit(limit: int):
    def limit_writes() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death by signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_writes


# (arguments, the limit in bytes, the file that cannot be written whole). The limits leave
# room for numba's cache files (about 120 kB at most) where a run may still compile; the
# sweep's files are small, so its limit is lower and the same sweep runs once beforehand.
FULL = {
    # weights.csv of 20000 weights: about 900 kB
    "run": (["run", "--m", "20000", "--samples", "5"], 256 * 1024, "weights.csv"),
    # w0.npy of 64 x 1024 doubles: 512 kB
    "interference": (
        ["interference", "--n", "64", "--m", "1024", "--steps", "20", "--samples", "5"],
        256 * 1024,
        "w0.npy",
    ),
    # figures/sweep.png: about 60 kB
    "sweep": (
        ["sweep", "--n", "4", "--m", "8", "--seeds", "1", "--steps", "20", "--jobs", "1"],
        20_000,
        "figures/sweep.png",
    ),
}


@pytest.fixture(scope="module")
def sweep_warmed(tmp_path_factory) -> None:
    """The sweep of FULL run once without a limit, for both of its tests: numba's cache and
    the figure's fonts ready before the limit, and its figure larger than the limit."""
    args, limit, victim = FULL["sweep"]
    where = tmp_path_factory.mktemp("sweep-warm")
    warm = cli([*args, "--out", str(where / "warm")], where)
    assert warm.returncode == 0, warm.stderr
    assert (where / "warm" / victim).stat().st_size > limit


@pytest.mark.parametrize("force", [False, True], ids=["new", "force"])
@pytest.mark.parametrize("command", list(FULL))
def test_a_disk_that_fills_mid_write(request, tmp_path, command, force):
    args, limit, victim = FULL[command]
    if command == "sweep":  # numba's cache and the figure's fonts ready before the limit
        request.getfixturevalue("sweep_warmed")
    out = tmp_path / "res"
    if force:  # an earlier result, which must survive the failed replacement
        out.mkdir()
        (out / "earlier.txt").write_text("earlier result")
    before = listing(tmp_path)
    proc = cli(
        [*args, "--out", "res", *(["--force"] if force else [])], tmp_path, preexec_fn=_file_size_limit(limit)
    )
    assert_one_clean_error(
        proc, f"cannot write {Path('res') / victim}: File too large", "nothing was written"
    )
    assert listing(tmp_path) == before, "no DIR, no temporary folder; an earlier DIR untouched"
