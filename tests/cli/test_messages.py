"""--verbose and --quiet on every command (cli/common.CleanParser): the user's summary on
stdout, warnings and errors on stderr, the developer's log only with --verbose (Dask's too),
nothing but errors with --quiet. Each command runs in this process through __main__.main (the
same code as the entry point, whose subprocesses the other tests of tests/cli start), its
stdout and stderr read as text; Dask's log, which a LocalCluster's worker processes write, is
read from a real subprocess."""

from __future__ import annotations

import pytest
from helpers import cli, command_in_process

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


def here(args, tmp_path, monkeypatch, capsys) -> tuple[int, str, str]:
    return command_in_process(args, tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_says_its_summary_and_quiet_says_nothing(tmp_path, monkeypatch, capsys, command):
    code, out, err = here([command, *TINY[command], "--out", "said"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert out.startswith("wrote said") and err == ""
    code, out, err = here(
        [command, *TINY[command], "--out", "quiet", "--quiet"], tmp_path, monkeypatch, capsys
    )
    assert code == 0, err
    assert out == "" and err == ""
    assert sorted(p.name for p in (tmp_path / "quiet").iterdir()) == sorted(
        p.name for p in (tmp_path / "said").iterdir()
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_verbose_adds_the_developers_log_on_stderr(tmp_path, monkeypatch, capsys, command):
    code, out, err = here([command, *TINY[command], "--out", "v", "-v"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert out.startswith("wrote v")  # the summary, as without -v
    lines = err.splitlines()
    assert any(line.startswith("debug sparsity_gui: command: ") and command in line for line in lines), lines
    assert any(line.startswith("info sparsity_gui: v written in ") for line in lines), lines
    assert not any(line.startswith(("warning", "error")) for line in lines), lines


def test_interference_logs_its_blas_cap_with_verbose(tmp_path, monkeypatch, capsys):
    args = ["interference", *TINY["interference"], "--out", "v", "--verbose"]
    _code, _out, err = here(args, tmp_path, monkeypatch, capsys)
    blas = [line for line in err.splitlines() if line.startswith("debug sparsity_gui.core.blas:")]
    assert len(blas) >= 1 and "BLAS at 1 thread(s)" in blas[0] and "openblas" in blas[0], err


def test_a_warning_is_kept_by_default_and_dropped_by_quiet(tmp_path, monkeypatch, capsys):
    code, _out, err = here(["sweep", *EARLY, "--out", "w"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: 2 of 2 runs had not settled"), err
    code, out, err = here(["sweep", *EARLY, "--out", "q", "-q"], tmp_path, monkeypatch, capsys)
    assert code == 0 and err == "" and out == "", err
    assert (tmp_path / "q" / "sweep.json").is_file()


@pytest.mark.parametrize("command", [*COMMANDS, None])
def test_verbose_and_quiet_together_are_one_error_line(tmp_path, monkeypatch, capsys, command):
    args = [command, *TINY[command], "--out", "x"] if command else ["--paused"]
    code, out, err = here([*args, "--verbose", "--quiet"], tmp_path, monkeypatch, capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == ["error: argument -q/--quiet: not allowed with argument -v/--verbose"]
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("command", [*COMMANDS, None])
def test_every_command_and_the_app_offer_both(tmp_path, monkeypatch, capsys, command):
    code, out, err = here([*([command] if command else []), "--help"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert "-v, --verbose" in out and "-q, --quiet" in out


def test_a_bad_value_is_still_one_error_line_with_quiet(tmp_path, monkeypatch, capsys):
    code, out, err = here(["run", "--m", "0", "--out", "x", "-q"], tmp_path, monkeypatch, capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), err


def test_dasks_log_shows_with_verbose_only(tmp_path):
    pytest.importorskip("distributed", reason="the `cluster` extra is not installed")
    # the short sweep: Dask's log does not depend on the runs settling (its warning says so
    # on stderr, without "distributed.")
    args = ["sweep", *EARLY, "--scheduler", "local:1"]
    plain = cli([*args, "--out", "plain"], cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "distributed." not in plain.stderr
    verbose = cli([*args, "--out", "verbose", "-v"], cwd=tmp_path)
    assert verbose.returncode == 0, verbose.stderr
    dask_lines = [line for line in verbose.stderr.splitlines() if "distributed." in line and "INFO" in line]
    assert dask_lines, verbose.stderr
