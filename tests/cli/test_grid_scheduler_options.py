"""The scheduler options that `scaling` and `sweep` share, in each command: a bad
--scheduler, --jobs beside one, and --scheduler without the extra installed are one
`error:` line, exit status 2 and nothing written (a grid on a real cluster:
tests/cli/test_scaling_cluster.py, tests/cli/test_sweep_cluster.py)."""

from __future__ import annotations

import sys

import pytest
from cluster_cli import BAD_SCHEDULERS, NO_EXTRA, check_bad_scheduler_refused, main_in_process

# a few quick runs of each grid
GRIDS = {
    "scaling": ["--m", "100,1000", "--lam", "1e-2,1e-1", "--seeds", "2", "--no-figure"],
    "sweep": ["--n", "8", "--m", "8,16", "--seeds", "2", "--steps", "100", "--no-figure"],
}


@pytest.mark.parametrize("command", list(GRIDS))
@pytest.mark.parametrize("option, message", BAD_SCHEDULERS)
def test_bad_scheduler_is_one_error_line_and_nothing_written(
    tmp_path, monkeypatch, capsys, command, option, message
):
    check_bad_scheduler_refused(command, GRIDS[command], option, message, tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize("command", list(GRIDS))
def test_jobs_with_a_scheduler_is_refused(tmp_path, monkeypatch, capsys, command):
    args = [*GRIDS[command], "--scheduler", "local:2", "--jobs", "2", "--out", "res"]
    code, out, err = main_in_process(command, args, tmp_path, monkeypatch, capsys)
    assert code == 2 and err.startswith("error: jobs: ") and len(err.splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", list(GRIDS))
def test_without_the_extra_one_error_line_and_the_local_grid_unchanged(
    tmp_path, monkeypatch, capsys, command
):
    """With distributed unimportable (None in sys.modules: `import distributed` raises
    ImportError, as when it is not installed), --scheduler names the extra to install; the
    grid on this machine's threads runs as before."""
    monkeypatch.setitem(sys.modules, "distributed", None)
    args = [*GRIDS[command], "--scheduler", "local:2", "--out", "res"]
    code, out, err = main_in_process(command, args, tmp_path, monkeypatch, capsys)
    assert code == 2, err
    assert err.splitlines() == [NO_EXTRA]
    assert list(tmp_path.iterdir()) == []
    args = [*GRIDS[command], "--out", "res"]
    code, out, err = main_in_process(command, args, tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert out.startswith("wrote res: ") and " runs" in out.splitlines()[0]
