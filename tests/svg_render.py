"""Render an exported SVG with rsvg-convert (librsvg) and compare it with the app's PNG
export of the same figure: used by tests/figures and tests/ui/note/test_export_svg_renders.py."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6 import QtGui

SVG = "{http://www.w3.org/2000/svg}"
RSVG = shutil.which("rsvg-convert")
needs_rsvg = pytest.mark.skipif(
    RSVG is None, reason="rsvg-convert is not installed (Debian: librsvg2-bin; .ci/run installs it)"
)


def gray(data: bytes) -> np.ndarray:
    """A PNG as darkness in [0, 1] (0 white), rows x columns."""
    image = QtGui.QImage.fromData(data)
    assert not image.isNull()
    image = image.convertToFormat(QtGui.QImage.Format.Format_Grayscale8)
    rows = np.frombuffer(image.constBits(), np.uint8, image.bytesPerLine() * image.height())
    pixels = rows.reshape(image.height(), image.bytesPerLine())[:, : image.width()]
    return 1.0 - pixels.astype(float) / 255.0


def blocks(a: np.ndarray, n: int = 8) -> np.ndarray:
    h, w = a.shape[0] // n * n, a.shape[1] // n * n
    return a[:h, :w].reshape(h // n, n, w // n, n).mean(axis=(1, 3))


def check_plain(svg: bytes, name: str) -> None:
    assert b"vector-effect" not in svg, f"{name}: vector-effect left"
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == SVG + "svg"
    assert root.get("version") == "1.1" and root.get("baseProfile") is None, name
    for el in root.iter():
        assert el.get("vector-effect") is None


def rsvg_png(svg: bytes, w: int, h: int, tmp_path, name: str) -> bytes:
    src = tmp_path / f"{name}.svg"
    src.write_bytes(svg)
    out = tmp_path / f"{name}.rsvg.png"
    proc = subprocess.run(
        [RSVG, "-w", str(w), "-h", str(h), "-b", "white", "-o", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, f"{name}: rsvg-convert failed: {proc.stderr}"
    return out.read_bytes()


def check_renders_alike(svg: bytes, png: bytes, tmp_path, name: str) -> None:
    check_plain(svg, name)
    qt = gray(png)
    h, w = qt.shape
    rs = gray(rsvg_png(svg, w, h, tmp_path, name))
    assert rs.shape == qt.shape
    # ink = mean darkness (a 1 px line spread over 2 px by antialiasing inks as much):
    # the "filled band" bug inks most of the image; fonts and antialiasing differ a little
    ink_qt, ink_rs = qt.mean(), rs.mean()
    assert ink_qt > 0.005, f"{name}: the PNG is blank"
    assert abs(ink_rs - ink_qt) <= 0.15 * ink_qt, f"{name}: ink {ink_rs:.4f} (rsvg) vs {ink_qt:.4f} (PNG)"
    diff = np.abs(blocks(qt) - blocks(rs))
    assert diff.mean() < 0.02, f"{name}: blocks differ by {diff.mean():.3f} on average"
    assert (diff > 0.1).mean() < 0.03, f"{name}: {(diff > 0.1).mean():.1%} of the blocks differ"
