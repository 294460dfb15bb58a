"""The figure formats asked, in the Python API and in figures/save.py's one check that the
CLI's --formats and the windows' Export all share: CompareResult.save(figures=True,
formats=...) writes each figure in exactly those formats (its script's FORMATS the same)
and records them in run.json's command line as `checkpoints --formats` would take them;
a bad value is a ValueError (InputError) or TypeError naming ``formats`` with nothing
written. The script written for a choice without PNG writes that choice alone when run."""

from __future__ import annotations

import json
import re
import runpy
import shlex

import numpy as np
import pytest

from sparsity_gui import api
from sparsity_gui.core.errors import InputError
from sparsity_gui.figures.save import FORMATS, figure_files, figure_formats


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    folder = tmp_path_factory.mktemp("series")
    rng = np.random.default_rng(8)
    w = rng.normal(0.0, 0.25, 16)
    steps = np.array([0, 40, 80, 120])
    np.savez(folder / "row.npz", W=np.stack([w * 0.99**s for s in steps]), steps=steps)
    return api.compare_checkpoints(folder / "row.npz", l1=0.05, lr=0.01, optimizer="sgd")


@pytest.mark.parametrize(
    ("value", "asked"),
    [
        ("svg", ("svg",)),
        ("PDF,png", ("png", "pdf")),
        (["pdf", "svg", "pdf"], ("svg", "pdf")),
        (" png , svg ,pdf", FORMATS),
        (("png",), ("png",)),
    ],
)
def test_figure_formats_takes_any_non_empty_subset_in_one_order(value, asked):
    assert figure_formats(value) == asked


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("", "no format given"),
        ([], "no format given"),
        ("png,jpg", "unknown format 'jpg'"),
        ("svg,", "empty name"),
    ],
)
def test_figure_formats_refuses_naming_the_argument(value, words):
    with pytest.raises(InputError) as info:
        figure_formats(value, "formats")
    assert info.value.field == "formats" and words in info.value.message
    assert "png, svg or pdf" in info.value.message


@pytest.mark.parametrize("value", [None, 3, [b"png"], {"png": 1}])
def test_figure_formats_refuses_other_types(value):
    with pytest.raises(TypeError, match="^formats must be"):
        figure_formats(value)


def test_save_writes_exactly_the_formats_asked(result, tmp_path):
    out = result.save(tmp_path / "out", figures=True, formats="svg,png")
    figures = out / "figures"
    stems = {p.stem for p in figures.iterdir()}
    assert {"norm1", "norm2", "nonzero", "theta"} <= stems
    assert sorted(p.name for p in figures.iterdir()) == sorted(
        f"{s}.{ext}" for s in stems for ext in ("png", "svg", "json", "py")
    )
    for stem in stems:
        assert "\nFORMATS = ('png', 'svg')  #" in (figures / f"{stem}.py").read_text(encoding="utf-8")
    command = shlex.split(json.loads((out / "run.json").read_text(encoding="utf-8"))["command_line"])
    assert command[command.index("--formats") + 1] == "png,svg" and "--figures" in command


@pytest.mark.parametrize(
    ("formats", "error"), [("gif", ValueError), ("", ValueError), (7, TypeError), (None, TypeError)]
)
def test_save_refuses_a_bad_formats_before_writing(result, tmp_path, formats, error):
    with pytest.raises(error, match="formats"):
        result.save(tmp_path / "out", figures=True, formats=formats)
    assert list(tmp_path.iterdir()) == []


def test_a_script_without_png_writes_only_its_formats(tmp_path):
    """The script's FORMATS line is the choice: run here (its __main__, in its folder), it
    rewrites the SVG and writes no PNG or PDF."""

    def line(fig, data):
        ax = fig.add_subplot()
        ax.plot(data["x"], data["x"] ** 2)
        ax.set_xlabel("x")

    files = figure_files("curve", line, {"x": np.linspace(0, 1, 5)}, {}, (2.0, 1.5), 50, ("svg",))
    assert sorted(files) == ["curve.json", "curve.py", "curve.svg"]
    for name in ("curve.json", "curve.py"):
        (tmp_path / name).write_bytes(files[name])
    runpy.run_path(str(tmp_path / "curve.py"), run_name="__main__")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.json", "curve.py", "curve.svg"]
    svg = (tmp_path / "curve.svg").read_text(encoding="utf-8")
    assert re.search(r"<svg\b", svg) and "x" in svg
