"""Every kind of bad input to the `run` command: one `error:` line, exit status 2, no
traceback, and the output folder neither created nor changed. Each case runs in this process
through __main__.main (the entry point's code); one case, and the memory limit, run as the
real command in a subprocess."""

import resource
import subprocess
import sys

import numpy as np
import pytest
from helpers import cli, command_in_process


def _files(tmp):
    """Bad W(0) files, made fresh for each test."""
    (tmp / "empty.csv").write_text("")
    # the same bytes every run: random ones look like another format (byte 8 '{' is a
    # safetensors header) about one run in 256
    (tmp / "garbage.npy").write_bytes(np.random.default_rng(20261202).bytes(300))
    good = tmp / "good.npy"
    np.save(good, np.linspace(-1, 1, 1000))
    data = good.read_bytes()
    (tmp / "truncated.npy").write_bytes(data[: len(data) // 2])
    (tmp / "matrix.csv").write_text("1,2,3,4\n5,6,7,8\n9,10,11,12\n")
    (tmp / "nan.csv").write_text("w\n0.1\nnan\n0.3\n")
    np.save(tmp / "inf.npy", np.array([0.1, np.inf, 0.2]))
    (tmp / "words.txt").write_text("0.1\n0.2\nhello\n")
    (tmp / "strings.npy").write_bytes(b"")
    np.save(tmp / "strings.npy", np.array(["a", "b"]))
    np.save(tmp / "cube.npy", np.zeros((2, 2, 2)))
    (tmp / "folder.npy").mkdir()
    (tmp / "a_file").write_text("x")
    full = tmp / "full_dir"
    full.mkdir()
    (full / "keep.txt").write_text("earlier result")


BAD = [
    # (arguments, words the message must contain)
    (["--lam", "-1"], "lam"),
    (["--lam", "nan"], "lam"),
    (["--lam", "inf"], "lam"),
    (["--lam", "1e9"], "lam"),
    (["--lam", "abc"], "not a number"),
    (["--m", "0"], "m"),
    (["--m", "-5"], "m"),
    (["--m", "1.5"], "whole number"),
    (["--m", "1e12"], "m"),
    (["--sigma", "0"], "sigma"),
    (["--sigma", "-1"], "sigma"),
    (["--sigma", "nan"], "sigma"),
    (["--eta", "0"], "eta"),
    (["--eta", "-0.1"], "eta"),
    (["--eta", "50"], "eta"),
    (["--t-end", "0"], "t_end"),
    (["--t-end", "-5"], "t_end"),
    (["--t-end", "nan"], "t_end"),
    (["--samples", "1"], "samples"),
    (["--samples", "0"], "samples"),
    (["--method", "rk4"], "method"),
    (["--seed", "-1"], "seed"),
    (["--lam", "0"], "t-end"),
    (["--frobnicate"], "unrecognized"),
    (["--w0", "{tmp}/empty.csv"], "no weights"),
    (["--w0", "{tmp}/garbage.npy"], "not a valid .npy"),
    (["--w0", "{tmp}/truncated.npy"], "not a valid .npy"),
    (["--w0", "{tmp}/matrix.csv"], "single row or column"),
    (["--w0", "{tmp}/nan.csv"], "finite"),
    (["--w0", "{tmp}/inf.npy"], "finite"),
    (["--w0", "{tmp}/words.txt"], "line 3"),
    (["--w0", "{tmp}/strings.npy"], "expected numbers"),
    (["--w0", "{tmp}/cube.npy"], "dimensions"),
    (["--w0", "{tmp}/missing.npy"], "no such file"),
    (["--w0", "{tmp}/folder.npy"], "folder"),
    (["--out", "{tmp}/no/such/parent/out"], "does not exist"),
    (["--out", "{tmp}/a_file/out"], "a_file is not a folder"),
    (["--out", "{tmp}/a_file"], "not a folder"),
    (["--out", "{tmp}/full_dir"], "not empty"),
]


def check_refused(tmp_path, args, needle, run) -> None:
    """``run(argv) -> (status, stdout, stderr)`` refuses `run ARGS` as the module says."""
    _files(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    out_dir = tmp_path / "out"
    if "--out" not in args:
        args += ["--out", str(out_dir)]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, out, err = run(["run", *args])
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and needle in lines[0], lines[0]
    assert "Traceback" not in err and out == ""
    assert sorted(p.name for p in tmp_path.rglob("*")) == before, "nothing created or removed"
    assert (tmp_path / "full_dir" / "keep.txt").read_text() == "earlier result"


@pytest.mark.parametrize("args, needle", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_clear_error(tmp_path, monkeypatch, capsys, args, needle):
    check_refused(
        tmp_path, args, needle, lambda argv: command_in_process(argv, tmp_path, monkeypatch, capsys)
    )


def test_the_command_itself_refuses_a_bad_file(tmp_path):
    def run(argv):
        proc = cli(argv, tmp_path, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr

    check_refused(tmp_path, ["--w0", "{tmp}/garbage.npy"], "not a valid .npy", run)


def test_m_too_large_for_memory_is_refused_before_allocating(tmp_path):
    """Under a 3 GiB address-space limit, m = 10^8 (about 16 GB of arrays) is refused
    up front instead of dying in an allocation."""
    limit = 3 * 2**30

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.run(
        [sys.executable, "-m", "sparsity_gui", "run", "--m", "100000000", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=cap,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: m: m = 100000000 needs about") and "GiB" in proc.stderr
    assert not (tmp_path / "out").exists()
