"""Checks on written figure files shared by the figure tests: the script beside a figure
redraws its PNG pixel for pixel in a Python that cannot import sparsity_gui, the PDF's
fonts are embedded (pdffonts), the SVG keeps its text as text."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

PDFFONTS = shutil.which("pdffonts")
needs_pdffonts = pytest.mark.skipif(
    PDFFONTS is None, reason="pdffonts is not installed (Debian: poppler-utils; .ci/run installs it)"
)
SVG = "{http://www.w3.org/2000/svg}"


def png_pixels(data: bytes) -> np.ndarray:
    from matplotlib.image import imread

    return imread(io.BytesIO(data), format="png")


def run_script_alone(folder: Path, name: str) -> bytes:
    """`python <name>.py` in `folder` with -I (no user site, no PYTHONPATH) and the
    working directory there, in a copy of the folder; sys.path is checked to hold no
    sparsity_gui. Returns the PNG it wrote."""
    copy = folder.parent / f"{folder.name}-script-{name}"
    shutil.copytree(folder, copy)
    png = copy / f"{name}.png"
    png.unlink()
    # an editable install finds sparsity_gui through a meta-path finder, not sys.path:
    # a finder ahead of every other one refuses it
    guard = (
        "import sys, runpy\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'sparsity_gui':\n"
        "            raise ImportError('sparsity_gui is blocked here')\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "assert not any('sparsity' in p for p in sys.path), sys.path\n"
        "try:\n    import sparsity_gui\nexcept ImportError:\n    pass\n"
        "else:\n    raise SystemExit('sparsity_gui is importable')\n"
        f"runpy.run_path({str(copy / (name + '.py'))!r}, run_name='__main__')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    proc = subprocess.run(
        [sys.executable, "-I", "-c", guard], cwd=copy, capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return png.read_bytes()


def assert_same_pixels(a: bytes, b: bytes, name: str) -> None:
    pa, pb = png_pixels(a), png_pixels(b)
    assert pa.shape == pb.shape, f"{name}: {pa.shape} vs {pb.shape}"
    assert np.array_equal(pa, pb), f"{name}: {np.count_nonzero((pa != pb).any(axis=-1))} pixels differ"


def pdf_fonts(pdf: Path) -> list[list[str]]:
    """pdffonts' rows (name, type, encoding, emb, sub, uni, object, ID) of the PDF."""
    proc = subprocess.run([PDFFONTS, str(pdf)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [line.split() for line in proc.stdout.splitlines()[2:] if line.strip()]


def assert_fonts_embedded(pdf: Path) -> None:
    rows = pdf_fonts(pdf)
    assert rows, f"{pdf.name}: no fonts (text drawn as paths?)"
    for row in rows:
        # the emb column is the third from the end of the yes/no triple
        yes_no = [v for v in row if v in ("yes", "no")]
        assert yes_no[0] == "yes", f"{pdf.name}: font {row[0]} not embedded ({' '.join(row)})"


def svg_texts(svg: bytes) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(el.itertext()) for el in root.iter(SVG + "text")]


def redraw(folder: Path, name: str):
    """The figure as the script beside it draws it from its JSON, as a Figure to measure:
    the script's own drawing function (the one its __main__ calls), STYLE, SIZE and DPI."""
    import json
    import re
    import runpy

    import matplotlib
    from matplotlib.figure import Figure

    path = folder / f"{name}.py"
    function = re.search(r"^ +(\w+)\(fig, data\)$", path.read_text(encoding="utf-8"), re.M).group(1)
    script = runpy.run_path(str(path), run_name="figure_script")
    data = script["arrays_of"](json.loads((folder / f"{name}.json").read_text(encoding="utf-8")))
    with matplotlib.rc_context(script["STYLE"]):
        fig = Figure(figsize=script["SIZE"], layout="constrained")
        script[function](fig, data)
        fig.set_dpi(script["DPI"])
        fig.draw_without_rendering()
    return fig
