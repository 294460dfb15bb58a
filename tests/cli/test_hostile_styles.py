"""Hostile styles (`--style FILE`, a dict of the API): refused before any work with one
line that names the file and line and never echoes the file's content; a style nothing can
draw with (TeX without LaTeX, a cycle without colours, absurd sizes, a missing font,
`savefig.bbox: tight` in a movie) is refused up front, not after the run. Drawing that
still fails once the data are written keeps the data and says so in one line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import cli, command_in_process, one_error_line

from sparsity_gui.core.errors import InputError
from sparsity_gui.figures.style import movie_style_params, style_params

RUN = ["run", "--m", "50", "--lam", "1e-2", "--samples", "40", "--figures"]
SWEEP = ["sweep", "--n", "4", "--m", "8,16", "--seeds", "1", "--steps", "20", "--jobs", "1"]

# (style file text, what the error line must say)
BAD_FILES = {
    "usetex": ("text.usetex: True\n", "needs LaTeX"),
    "no_colours": ("axes.prop_cycle: cycler('linestyle', ['-', '--'])\n", "at least one colour"),
    "huge_font": ("font.size: 5000\n", "font.size: 5000 is outside"),
    "tiny_figure": ("figure.figsize: 0.01, 0.01\n", "figure.figsize"),
    "missing_font": ("font.family: No Such Font Family\n", "no font 'No Such Font Family'"),
    "long_line": ("font.size: 9\n# " + "x" * 50_000 + "\n", "line 2: 50,002 characters"),
    "unknown_key": ("no.such.key: 1\n", "'no.such.key' is not a matplotlib parameter"),
    "escape_codes": ("\x1b[31mfont.size 9\n", "\\x1b[31m"),
}


def assert_refused_up_front(args, tmp_path: Path, needle: str, style: Path, in_process=None) -> str:
    """The command refused with one error line naming ``needle``, nothing left behind: in a
    subprocess, or in this process with ``in_process`` (pytest's monkeypatch and capsys)."""
    argv = [*args, "--style", style, "--out", tmp_path / "out"]
    if in_process is None:
        proc = cli(argv, cwd=tmp_path)
        line, err = one_error_line(proc), proc.stderr
    else:
        code, out, err = command_in_process(argv, tmp_path, *in_process)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, (code, out, err)
        line = err.splitlines()[0]
        assert line.startswith("error: "), line
    assert needle in line, line
    assert "Traceback" not in err and "\x1b" not in err
    assert len(line) < 400, "the error line echoes the file"
    assert sorted(p.name for p in tmp_path.iterdir()) == [style.name], "something was left behind"
    return line


@pytest.mark.parametrize("case", ["usetex", "no_colours", "long_line", "escape_codes"])
def test_run_refuses_a_style_nothing_can_draw_with(tmp_path, monkeypatch, capsys, case):
    """One real process (the escape codes: none reaches the terminal); the others in this
    process, where the refusal is the same code path."""
    if case == "usetex" and shutil.which("latex"):
        pytest.skip("LaTeX is installed here: usetex can draw")
    text, needle = BAD_FILES[case]
    style = tmp_path / "bad.mplstyle"
    style.write_text(text, encoding="utf-8")
    in_process = None if case == "escape_codes" else (monkeypatch, capsys)
    line = assert_refused_up_front(RUN, tmp_path, needle, style, in_process)
    assert "bad.mplstyle" in line


def test_sweep_refuses_such_a_style_before_its_runs(tmp_path, monkeypatch, capsys):
    style = tmp_path / "bad.mplstyle"
    style.write_text(BAD_FILES["huge_font"][0], encoding="utf-8")
    assert_refused_up_front(SWEEP, tmp_path, BAD_FILES["huge_font"][1], style, (monkeypatch, capsys))


def test_a_movie_refuses_tight_bbox_before_the_run(tmp_path, monkeypatch, capsys):
    style = tmp_path / "tight.mplstyle"
    style.write_text("savefig.bbox: tight\n", encoding="utf-8")
    args = ["run", "--m", "50", "--lam", "1e-2", "--movie", "l1_decay"]
    assert_refused_up_front(args, tmp_path, "savefig.bbox: tight", style, (monkeypatch, capsys))
    # the same style draws figures (a figure is one size, whatever its bounding box)
    assert style_params(style)["savefig.bbox"] == "tight"


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_every_bad_style_file_is_one_input_error(tmp_path, case):
    if case == "usetex" and shutil.which("latex"):
        pytest.skip("LaTeX is installed here: usetex can draw")
    text, needle = BAD_FILES[case]
    style = tmp_path / "s.mplstyle"
    style.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        style_params(style)
    assert caught.value.field == "style" and needle in caught.value.message
    assert "\n" not in caught.value.message and len(caught.value.message) < 400


def test_special_big_and_binary_files_are_not_read(tmp_path):
    fifo = tmp_path / "fifo.mplstyle"
    os.mkfifo(fifo)  # reading it would block: it must not be opened
    big = tmp_path / "big.mplstyle"
    big.write_bytes(b"font.size: 9\n" * 100_000)
    binary = tmp_path / "bin.mplstyle"
    binary.write_bytes(bytes(range(256)))
    cases = {
        fifo: "not a regular file",
        tmp_path: "not a regular file",
        big: "1,300,000 bytes",
        binary: "not a text file",
        tmp_path / "new\nline.mplstyle": "new\\nline.mplstyle: no such style file",
    }
    for path, needle in cases.items():
        with pytest.raises(InputError) as caught:
            style_params(path)
        assert needle in caught.value.message, caught.value.message


def test_the_apis_dict_and_type_errors():
    with pytest.raises(TypeError, match="style must be"):
        style_params(5)
    with pytest.raises(InputError, match="'no.such.key' is not a matplotlib parameter"):
        style_params({"no.such.key": 1})
    with pytest.raises(InputError, match="lines.linewidth"):
        style_params({"lines.linewidth": "thick"})
    with pytest.raises(InputError, match="savefig.bbox: tight"):
        movie_style_params({"savefig.bbox": "tight"})
    assert style_params({"font.size": 9.5})["font.size"] == 9.5


def test_a_figure_that_fails_after_the_data_keeps_the_data(tmp_path):
    """figures_kept_apart: what the commands wrap their figures in once the data are
    written; a drawing error removes the figures and is kept as one line."""
    from sparsity_gui.cli.common import figures_kept_apart

    folder = tmp_path / "figures"
    failures: list[str] = []

    def draw():
        folder.mkdir()
        (folder / "half.png").write_bytes(b"\x89PNG")
        raise RuntimeError("Failed to process string with tex")

    figures_kept_apart(folder, draw, failures)
    assert failures == ["RuntimeError: Failed to process string with tex"] and not folder.exists()
    with pytest.raises(OSError):
        figures_kept_apart(folder, lambda: (_ for _ in ()).throw(OSError(28, "No space left")), failures)
