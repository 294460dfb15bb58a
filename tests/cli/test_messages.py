"""--verbose and --quiet on every command (cli/common.CleanParser): the user's summary on
stdout, warnings and errors on stderr, the developer's log only with --verbose (Dask's too),
nothing but errors with --quiet. Each command as a subprocess, its output read as text."""

from __future__ import annotations

import pytest
from helpers import cli

COMMANDS = ("run", "scaling", "interference", "sweep")
# a sweep of gd-zero runs: with 12 steps they stop before they settle and the command warns,
# with 600 they settle (as in tests/cli/test_cli_interference.py)
SWEEP = ["--n", "6", "--m", "16,24", "--seeds", "1", "--optimizer", "gd-zero", "--l1", "0.2", "--lr", "0.05"]
EARLY = [*SWEEP, "--steps", "12", "--no-figure"]
TINY = {
    "run": ["--m", "300", "--samples", "11"],
    "scaling": ["--m", "100,200", "--lam", "1e-2", "--seeds", "1", "--no-figure"],
    "interference": ["--n", "6", "--m", "8", "--steps", "40", "--samples", "4"],
    "sweep": [*SWEEP, "--steps", "600", "--no-figure"],
}
BOTH = "error: argument -q/--quiet: not allowed with argument -v/--verbose"


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_says_its_summary_and_quiet_says_nothing(tmp_path, command):
    said = cli([command, *TINY[command], "--out", "said"], cwd=tmp_path)
    assert said.returncode == 0, said.stderr
    assert said.stdout.startswith("wrote said") and said.stderr == ""
    quiet = cli([command, *TINY[command], "--out", "quiet", "--quiet"], cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "" and quiet.stderr == ""
    assert sorted(p.name for p in (tmp_path / "quiet").iterdir()) == sorted(
        p.name for p in (tmp_path / "said").iterdir()
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_verbose_adds_the_developers_log_on_stderr(tmp_path, command):
    out = cli([command, *TINY[command], "--out", "v", "-v"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("wrote v")  # the summary, as without -v
    lines = out.stderr.splitlines()
    assert any(line.startswith("debug sparsity_gui: command: ") and command in line for line in lines), lines
    assert any(line.startswith("info sparsity_gui: v written in ") for line in lines), lines
    assert not any(line.startswith(("warning", "error")) for line in lines), lines


def test_interference_logs_its_blas_cap_with_verbose(tmp_path):
    out = cli(["interference", *TINY["interference"], "--out", "v", "--verbose"], cwd=tmp_path)
    blas = [line for line in out.stderr.splitlines() if line.startswith("debug sparsity_gui.core.blas:")]
    assert len(blas) >= 1 and "BLAS at 1 thread(s)" in blas[0] and "openblas" in blas[0], out.stderr


def test_a_warning_is_kept_by_default_and_dropped_by_quiet(tmp_path):
    warned = cli(["sweep", *EARLY, "--out", "w"], cwd=tmp_path)
    assert warned.returncode == 0, warned.stderr
    lines = warned.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: 2 of 2 runs had not settled"), warned.stderr
    quiet = cli(["sweep", *EARLY, "--out", "q", "-q"], cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == "", quiet.stderr
    assert (tmp_path / "q" / "sweep.json").is_file()


@pytest.mark.parametrize("command", [*COMMANDS, None])
def test_verbose_and_quiet_together_are_one_error_line(tmp_path, command):
    args = [command, *TINY[command], "--out", "x"] if command else ["--paused"]
    out = cli([*args, "--verbose", "--quiet"], cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "error: argument -q/--quiet: not allowed with argument -v/--verbose"
    ]
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("command", [*COMMANDS, None])
def test_every_command_and_the_app_offer_both(tmp_path, command):
    out = cli([*([command] if command else []), "--help"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "-v, --verbose" in out.stdout and "-q, --quiet" in out.stdout


def test_a_bad_value_is_still_one_error_line_with_quiet(tmp_path):
    out = cli(["run", "--m", "0", "--out", "x", "-q"], cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), out.stderr


def test_dasks_log_shows_with_verbose_only(tmp_path):
    pytest.importorskip("distributed", reason="the `cluster` extra is not installed")
    args = ["sweep", *TINY["sweep"], "--scheduler", "local:1"]
    plain = cli([*args, "--out", "plain"], cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "distributed." not in plain.stderr
    verbose = cli([*args, "--out", "verbose", "-v"], cwd=tmp_path)
    assert verbose.returncode == 0, verbose.stderr
    dask_lines = [line for line in verbose.stderr.splitlines() if "distributed." in line and "INFO" in line]
    assert dask_lines, verbose.stderr
