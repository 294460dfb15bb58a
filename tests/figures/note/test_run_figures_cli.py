"""`sparsity-gui run --figures` draws with matplotlib alone: in a Python where PySide6,
shiboken6 and pyqtgraph cannot be imported it writes every figure with its data and its
script (as PNGs alone, --formats png: the other formats' promises, every PDF's fonts among
them, are test_figure_contracts.py's, and the formats asked test_figure_formats.py's);
--style applies a .mplstyle file and --dpi sets the PNGs' resolution, and a bad one of either
is refused before the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sparsity_gui.figures.note.figures import PANELS
from tests.figures.figure_files import png_pixels
from tests.helpers import assert_refused_in_process, command_in_process

BLOCKER = '''
import sys

class _NoQt:
    """No Qt here: as on a cluster node without PySide6."""
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph"):
            raise ImportError(f"{name} is blocked (no Qt on this machine)")
        return None

sys.meta_path.insert(0, _NoQt())
'''


def run_without_qt(args, cwd: Path) -> subprocess.CompletedProcess:
    site = cwd / "noqt"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run(
        [sys.executable, "-m", "sparsity_gui", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_the_blocker_blocks(tmp_path):
    site = tmp_path / "noqt"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    proc = subprocess.run(
        [sys.executable, "-c", "import PySide6"],
        env=dict(os.environ, PYTHONPATH=str(site)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "blocked" in proc.stderr


def test_run_figures_without_qt_writes_every_figure(tmp_path):
    style = tmp_path / "big.mplstyle"
    style.write_text("font.size: 9.5\nlines.linewidth: 1.6\n")
    proc = run_without_qt(
        [
            "--m",
            "300",
            "--t-end",
            "60",
            "--samples",
            "121",
            "--figures",
            "--style",
            str(style),
            "--dpi",
            "80",
            "--formats",
            "png",
            "--out",
            "res",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    figures = tmp_path / "res" / "figures"
    # the PNGs at the --dpi asked: 3.5 in and the layout's 7 in wide at 80 dpi
    assert png_pixels((figures / "weights_sorted.png").read_bytes()).shape[1] == round(3.5 * 80)
    assert png_pixels((figures / "layout.png").read_bytes()).shape[1] == round(7 * 80)
    for name in [*PANELS, "layout"]:
        for ext in ("png", "json", "py"):
            assert (figures / f"{name}.{ext}").stat().st_size > 0, f"{name}.{ext}"
        assert "'lines.linewidth': 1.6" in (figures / f"{name}.py").read_text()
    # the figure's arrays are the time series' columns
    table = np.loadtxt(tmp_path / "res" / "timeseries.csv", delimiter=",", skiprows=1)
    header = (tmp_path / "res" / "timeseries.csv").read_text().splitlines()[0].split(",")
    drawn = json.loads((figures / "l1_decay.json").read_text())
    np.testing.assert_array_equal(np.array(drawn["norm1"]), table[:, header.index("norm1")])


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--figures", "--style", "missing.mplstyle"], "no such style file"),
        (["--style", "talk"], "add --figures"),
        (["--figures", "--style", "bad.mplstyle"], "line 1"),
    ],
)
def test_a_bad_style_is_one_error_line_and_nothing_written(tmp_path, extra, message, monkeypatch, capsys):
    """In this process: the refusal's line, status and files are not the process's (a run
    with Qt blocked as a process of its own: the test above)."""
    (tmp_path / "bad.mplstyle").write_text("lines.linewidth: thick\n")
    argv = ["run", "--m", "50", *extra, "--out", "res"]
    code, out, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], err
    assert not (tmp_path / "res").exists()


def test_a_dpi_out_of_range_is_one_error_line_and_nothing_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["run", "--m", "50", "--figures", "--dpi", "10", "--out", "res"]
    assert_refused_in_process(args, "dpi: must be from 50 to 1200, got 10", tmp_path, capsys)
