"""--formats on every command that writes figures (run and interference with --figures,
checkpoints --figures, sweep and scaling without --no-figure): DIR/figures/ holds each
figure in exactly the formats asked, beside its JSON and its script, and each script's
FORMATS line writes the same. A value that is not a non-empty comma list of png, svg and
pdf is refused before anything runs: one `error:` line naming --formats, status 2,
nothing written. In-process (the entry point's own process is tested with each command
elsewhere); PNGs at 50 dpi, since only which files exist is asked here."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_refused_in_process, command_in_process


def checkpoint_series(folder: Path) -> Path:
    """A stacked .npz of four snapshots of one row (checkpoints reads W and steps)."""
    rng = np.random.default_rng(8)
    w = rng.normal(0.0, 0.25, 16)
    steps = np.array([0, 40, 80, 120])
    path = folder / "row.npz"
    np.savez(path, W=np.stack([w * 0.99**s for s in steps]), steps=steps)
    return path


# each command with the smallest run it takes, and a different choice of formats
COMMANDS = {
    "run": (["run", "--m", "50", "--samples", "5", "--figures"], "png"),
    "interference": (
        ["interference", "--n", "4", "--m", "8", "--steps", "20", "--samples", "5", "--figures"],
        "SVG",
    ),
    "sweep": (["sweep", "--n", "4", "--m", "8", "--seeds", "1", "--steps", "20", "--jobs", "1"], "pdf,png"),
    "scaling": (["scaling", "--m", "50", "--lam", "1e-2", "--seeds", "1", "--jobs", "1"], "png, svg"),
    "checkpoints": (
        ["checkpoints", "row.npz", "--l1", "0.05", "--lr", "0.01", "--optimizer", "sgd", "--figures"],
        "svg,PNG",
    ),
}
ASKED = {
    "png": ("png",),
    "SVG": ("svg",),
    "pdf,png": ("png", "pdf"),
    "png, svg": ("png", "svg"),
    "svg,PNG": ("png", "svg"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_figures_are_written_in_exactly_the_formats_asked(command, tmp_path, monkeypatch, capsys):
    argv, formats = COMMANDS[command]
    checkpoint_series(tmp_path)
    status, _out, err = command_in_process(
        [*argv, "--formats", formats, "--dpi", "50", "--out", "res", "-q"], tmp_path, monkeypatch, capsys
    )
    assert status == 0, err
    asked = ASKED[formats]
    figures = tmp_path / "res" / "figures"
    stems = {p.stem for p in figures.iterdir()}
    assert stems, "no figures"
    assert sorted(p.name for p in figures.iterdir()) == sorted(
        f"{stem}.{ext}" for stem in stems for ext in (*asked, "json", "py")
    )
    for stem in stems:
        line = re.search(r"^FORMATS = (.*?)  #", (figures / f"{stem}.py").read_text(encoding="utf-8"), re.M)
        assert line and eval(line.group(1)) == asked, (stem, line)  # noqa: S307 - a tuple literal


def test_the_default_is_all_three_formats_and_help_says_the_words(tmp_path, monkeypatch, capsys):
    """Without --formats: PNG, SVG and PDF (the sweep's one figure); every command's --help
    gives the option with the formats it takes and its default."""
    argv, _ = COMMANDS["sweep"]
    status, _out, err = command_in_process(
        [*argv, "--dpi", "50", "--out", "res", "-q"], tmp_path, monkeypatch, capsys
    )
    assert status == 0, err
    assert sorted(p.name for p in (tmp_path / "res" / "figures").iterdir()) == [
        f"sweep.{ext}" for ext in ("json", "pdf", "png", "py", "svg")
    ]
    for command in COMMANDS:
        status, out, _err = command_in_process([command, "--help"], tmp_path, monkeypatch, capsys)
        assert status == 0
        said = " ".join(out.split())
        assert (
            "--formats LIST the figures' file formats: png, svg or pdf, or several, comma-separated" in said
        )
        assert "(default png,svg,pdf)" in said, command


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("jpg", "unknown format 'jpg'"),
        ("png,eps", "unknown format 'eps'"),
        ("", "no format given"),
        ("png,", "an empty name in the list"),
    ],
)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_bad_formats_value_is_refused_naming_the_option(
    command, value, words, tmp_path, monkeypatch, capsys
):
    argv, _ = COMMANDS[command]
    monkeypatch.chdir(tmp_path)
    argv = [a if a != "row.npz" else str(tmp_path.parent / "absent.npz") for a in argv]
    assert_refused_in_process(
        [*argv, "--formats", value, "--out", "res"], f"argument --formats: {words}", tmp_path, capsys
    )
