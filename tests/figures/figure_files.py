"""Checks on written figure files shared by the figure tests: the script beside a figure
redraws its PNG pixel for pixel in a Python that cannot import sparsity_gui, the PDF's
fonts are embedded (pdffonts), the SVG keeps its text as text."""

from __future__ import annotations

import atexit
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
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


# Runs each figure's script alone: `python -I` with a finder ahead of every other one that
# refuses sparsity_gui (an editable install finds it through a meta-path finder, not
# sys.path), checked to be unimportable. Importing numpy and matplotlib costs more than most
# scripts' drawing, so one such Python imports them once and forks a fresh child for each
# script: the child starts from that clean interpreter (no script ran in it before), takes
# the script's folder as its working directory and runs it as __main__.
SCRIPT_SERVER = """
import json, os, runpy, sys, traceback
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'sparsity_gui':
            raise ImportError('sparsity_gui is blocked here')
sys.meta_path.insert(0, Refuse())
assert not any('sparsity' in p for p in sys.path), sys.path
try:
    import sparsity_gui
except ImportError:
    pass
else:
    raise SystemExit('sparsity_gui is importable')
import matplotlib, matplotlib.figure, numpy
for line in sys.stdin:
    folder, script, output = json.loads(line)
    pid = os.fork()
    if pid == 0:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        code = 0
        try:
            os.chdir(folder)
            runpy.run_path(script, run_name='__main__')
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (exc.code is not None and 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)
"""
_server: subprocess.Popen | None = None
_server_lock = threading.Lock()


def _script_server() -> subprocess.Popen:
    """The pytest process's one script server, started on first use, ended at its exit (or
    when its stdin closes with pytest)."""
    global _server
    if _server is None or _server.poll() is not None:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
        _server = subprocess.Popen(
            [sys.executable, "-I", "-c", SCRIPT_SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),
        )
        atexit.register(_stop_server, _server)
    return _server


def _stop_server(server: subprocess.Popen) -> None:
    server.stdin.close()
    server.wait(timeout=60)
    server.stdout.close()


def run_script_alone(folder: Path, name: str) -> bytes:
    """`<name>.py` run alone (SCRIPT_SERVER: no user site, no PYTHONPATH, sparsity_gui
    unimportable) with the working directory in a copy of `folder`, the figure's files
    removed from it first: it must write them again, exactly the formats written beside it
    (its FORMATS). Returns the PNG it wrote."""
    copy = folder.parent / f"{folder.name}-script-{name}"
    shutil.copytree(folder, copy)
    png = copy / f"{name}.png"
    drawn = sorted(p.name for p in copy.glob(f"{name}.*") if p.suffix in (".png", ".svg", ".pdf"))
    for figure in drawn:
        (copy / figure).unlink()
    output = folder.parent / f"{folder.name}-script-{name}.out"
    with _server_lock:
        server = _script_server()
        server.stdin.write(json.dumps([str(copy), str(copy / f"{name}.py"), str(output)]) + "\n")
        server.stdin.flush()
        reply = server.stdout.readline()
    assert reply, "the script server ended"
    assert json.loads(reply) == 0, output.read_text(encoding="utf-8", errors="replace")
    again = sorted(p.name for p in copy.glob(f"{name}.*") if p.suffix in (".png", ".svg", ".pdf"))
    assert again == drawn, (name, drawn, again)
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
