"""`interference --figures`, `sweep` and `scaling` in subprocesses where `import PySide6`
(and pyqtgraph) fails: every figure is still written into DIR/figures/, with its data and
script; `--style` takes the talk style or a .mplstyle file, and a bad style file is one
`error:` line, exit 2, nothing written (in this process: what a style does is not the
process's). The Python API's plot() draws the same figures. `interference` and `scaling`
write PNGs alone (--formats png: nothing here reads an SVG or a PDF; their promises are
test_figure_contracts.py's); `sweep` its default three."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

from sparsity_gui.figures.save import arrays_of
from tests.figures.figure_files import png_pixels
from tests.helpers import command_in_process

# Qt and pyqtgraph refused at import, as on a machine without them
NO_QT = (
    "import sys\n"
    "class NoQt:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'):\n"
    "            raise ImportError(f'{name} is not installed here')\n"
    "sys.meta_path.insert(0, NoQt())\n"
    "from sparsity_gui.__main__ import main\n"
    "code = main(sys.argv[1:])\n"
    "assert not any(m.split('.')[0] in ('PySide6', 'pyqtgraph') for m in sys.modules)\n"
    "sys.exit(code)\n"
)
ENV = {**os.environ, "SPARSITY_GUI_PROGRESS_AFTER": "1e9"}
FIVE = ("json", "pdf", "png", "py", "svg")
PNG_ALONE = ("json", "png", "py")


def cli(args, cwd):
    return subprocess.run(
        [sys.executable, "-c", NO_QT, *args], cwd=cwd, capture_output=True, text=True, timeout=600, env=ENV
    )


def figure_names(folder) -> list[str]:
    return sorted(p.name for p in (folder / "figures").iterdir())


@pytest.fixture(scope="module")
def interference_out(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("interference")
    args = [
        "interference",
        "--n",
        "8",
        "--m",
        "16",
        "--steps",
        "300",
        "--samples",
        "31",
        "--figures",
        "--formats",
        "png",
        "--dpi",
        "80",
    ]
    proc = cli([*args, "--out", "res"], tmp)
    return tmp / "res", proc


def test_interference_figures_without_qt(interference_out):
    out, proc = interference_out
    assert proc.returncode == 0, proc.stderr
    panels = ("active", "kept", "layout", "polysemantic", "signs", "sparsity", "thresholds", "weights")
    assert figure_names(out) == sorted(f"{p}.{ext}" for p in panels for ext in PNG_ALONE)
    # the polysemantic figure's data are history.csv's columns
    table = np.loadtxt(out / "history.csv", delimiter=",", skiprows=1, ndmin=2)
    header = (out / "history.csv").read_text().splitlines()[0].split(",")
    data = arrays_of(json.loads((out / "figures" / "polysemantic.json").read_text()))
    for column in ("step", "polysemantic", "predicted"):
        np.testing.assert_array_equal(data[column], table[:, header.index(column)])
    w = np.load(out / "w_final.npy")
    weights = arrays_of(json.loads((out / "figures" / "weights.json").read_text()))
    np.testing.assert_array_equal(np.asarray(weights["image"]).reshape(w.shape), w)
    assert png_pixels((out / "figures" / "weights.png").read_bytes()).shape[1] == round(3.5 * 80)
    # the Thresholds figure ends at the note's theta_i = (l1/4)/(1 - |W_i|^2) of the final W
    thresholds = arrays_of(json.loads((out / "figures" / "thresholds.json").read_text()))
    np.testing.assert_array_equal(thresholds["step"], table[:, header.index("step")])
    l1 = json.loads((out / "run.json").read_text())["parameters"]["l1"]
    theta = [(l1 / 4) / (1 - sum(x * x for x in row)) for row in w.tolist()]
    theta = sorted(t for t in theta if t > 0)
    assert thresholds["median"][-1] == pytest.approx(float(np.median(theta)), rel=1e-12)


def test_sweep_and_scaling_figures_without_qt_in_the_talk_style(tmp_path):
    sweep = cli(
        [
            "sweep",
            "--n",
            "4",
            "--m",
            "8,16",
            "--seeds",
            "2",
            "--steps",
            "40",
            "--jobs",
            "1",
            "--style",
            "talk",
            "--dpi",
            "60",
            "--out",
            "sw",
        ],
        tmp_path,
    )
    assert sweep.returncode == 0, sweep.stderr
    assert figure_names(tmp_path / "sw") == [f"sweep.{ext}" for ext in FIVE]
    assert "'font.size': 14.0" in (tmp_path / "sw" / "figures" / "sweep.py").read_text()
    scaling = cli(
        [
            "scaling",
            "--m",
            "100,300",
            "--lam",
            "1e-1",
            "--seeds",
            "2",
            "--jobs",
            "1",
            "--formats",
            "png",
            "--dpi",
            "60",
            "--out",
            "sc",
        ],
        tmp_path,
    )
    assert scaling.returncode == 0, scaling.stderr
    assert figure_names(tmp_path / "sc") == sorted(
        f"{n}.{e}" for n in ("fitted_c", "lam_t_one", "rel_var") for e in PNG_ALONE
    )


def test_a_style_file_restyles_and_a_bad_one_is_refused(tmp_path, monkeypatch, capsys):
    """In this process (the commands as processes without Qt: the tests above): a style
    file's settings reach the script; a bad or missing one is one error line, status 2,
    nothing written."""
    good = tmp_path / "mine.mplstyle"
    good.write_text("lines.linewidth: 2.5\naxes.grid: True\n")
    args = ["sweep", "--n", "4", "--m", "8", "--seeds", "1", "--steps", "20", "--jobs", "1"]
    argv = [*args, "--style", good, "--formats", "png", "--dpi", "60", "--out", "ok"]
    code, _out, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
    assert code in (0, None), err
    script = (tmp_path / "ok" / "figures" / "sweep.py").read_text()
    assert "'lines.linewidth': 2.5" in script and "'axes.grid': True" in script
    bad = tmp_path / "bad.mplstyle"
    bad.write_text("lines.linewidth: thick\n")
    for style in (str(bad), str(tmp_path / "missing.mplstyle")):
        args = ["interference", "--n", "4", "--m", "8", "--steps", "20", "--figures", "--style", style]
        code, out, err = command_in_process([*args, "--out", "no"], tmp_path, monkeypatch, capsys)
        assert code == 2 and out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: style: ") and style in lines[0], err
        assert not (tmp_path / "no").exists()


def test_the_api_draws_the_same_figures(interference_out):
    """TrainingResult.plot: a Figure per panel; into an ax, in its place."""
    from sparsity_gui import api

    result = api.train(n=8, m=16, steps=300, samples=31)
    for panel in ("weights", "active", "polysemantic", "kept", "signs", "sparsity", "thresholds", "layout"):
        fig = result.plot(panel)
        assert isinstance(fig, Figure) and fig.axes, panel
    poly = result.plot("polysemantic").axes[0]
    drawn = next(ln for ln in poly.get_lines() if ln.get_label() == "polysemantic neurons")
    np.testing.assert_array_equal(
        drawn.get_ydata(), result.history[:, list(result.columns).index("polysemantic")]
    )
    fig = Figure()
    left, right = fig.subplots(1, 2)
    assert result.plot("signs", ax=right) is fig
    assert left in fig.axes and right not in fig.axes and len(fig.axes) == 3  # signs: two sub-plots
    with pytest.raises(ValueError, match="unknown panel 'nope'"):
        result.plot("nope")
    with pytest.raises(ValueError, match="the layout is a figure of its own"):
        result.plot("layout", ax=left)
