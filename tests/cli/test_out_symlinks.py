"""`--out` given as a symbolic link, through the command's entry point (__main__.main in this
process; a full DIR refused by the real process: tests/cli/test_cli_run.py's nonempty): the link
stands for the folder it points to. That folder is written (made, if the link dangles) or,
with --force, replaced; the link itself is kept and nothing else is left beside either
(no `.NAME.old-PID`, no temporary folder). A location that cannot be used is refused
before the run with one `error:` line, status 2, and everything as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import command_result as command

RUN = ["run", "--m", "50", "--samples", "5"]
RUN_FILES = ["deaths.csv", "run.json", "timeseries.csv", "weights.csv"]


def entries(folder: Path) -> list[str]:
    """Every name in folder, hidden ones too, a link shown with its target."""
    return sorted(f"{p.name} -> {os.readlink(p)}" if p.is_symlink() else p.name for p in folder.iterdir())


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_a_link_to_an_empty_folder_writes_that_folder(tmp_path, monkeypatch, capsys, force):
    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to("real")
    proc = command([*RUN, "--out", "out", *(["--force"] if force else [])], tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    assert entries(tmp_path) == ["out -> real", "real"]
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == RUN_FILES
    assert json.loads((tmp_path / "out" / "run.json").read_text())["parameters"]["m"] == 50


def test_a_link_to_a_full_folder_is_refused_up_front_without_force(tmp_path, monkeypatch, capsys):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "keep.txt").write_text("keep")
    (tmp_path / "out").symlink_to("real")
    proc = command([*RUN, "--out", "out"], tmp_path, monkeypatch, capsys)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == ["error: out: real is not empty (use --force to replace it)"]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert entries(tmp_path) == ["out -> real", "real"]
    assert (tmp_path / "real" / "keep.txt").read_text() == "keep"


def test_force_onto_a_link_to_a_full_folder_replaces_the_folder_and_keeps_the_link(
    tmp_path, monkeypatch, capsys
):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "old.txt").write_text("old")
    (tmp_path / "out").symlink_to(tmp_path / "real")  # an absolute link
    proc = command([*RUN, "--out", "out", "--force"], tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    assert entries(tmp_path) == [f"out -> {tmp_path / 'real'}", "real"]  # no .real.old-PID
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == RUN_FILES


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_a_dangling_link_makes_the_folder_it_points_to(tmp_path, monkeypatch, capsys, force):
    (tmp_path / "out").symlink_to("made")
    proc = command([*RUN, "--out", "out", *(["--force"] if force else [])], tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    assert entries(tmp_path) == ["made", "out -> made"]
    assert sorted(p.name for p in (tmp_path / "made").iterdir()) == RUN_FILES


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_unusable_link_targets_are_one_error_line_before_the_run(tmp_path, monkeypatch, capsys, force):
    """A link into a missing folder, to a file, and a loop of links: refused at once."""
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "into_missing").symlink_to("missing/out")
    (tmp_path / "to_file").symlink_to("a_file")
    (tmp_path / "loop").symlink_to("loop")
    cases = {
        "into_missing": "error: out: missing does not exist (create it first: only DIR itself is made)",
        "to_file": "error: out: a_file exists and is not a folder",
        "loop": "error: out: loop: too many levels of symbolic links",
    }
    before = entries(tmp_path)
    for out, message in cases.items():
        proc = command([*RUN, "--out", out, *(["--force"] if force else [])], tmp_path, monkeypatch, capsys)
        assert proc.returncode == 2, (out, proc.stderr)
        assert proc.stderr.splitlines() == [message], out
        assert proc.stdout == ""
        assert entries(tmp_path) == before, out
