"""Exported SVGs are plain SVG 1.1 that librsvg draws like the app's PNG export.

Qt's QSvgGenerator writes `vector-effect="non-scaling-stroke"` (SVG Tiny 1.2) on curves in
data coordinates; librsvg ignores it and draws each curve as a band that covers the plot.
The Qt SVG path is post-processed by plots/svgplain.py; its mapping is tested here on
hand-written files. (The exported figures are matplotlib's: tests/figures/ renders each
SVG with `rsvg-convert` and compares it with the PNG.)"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from svg_render import SVG, check_plain

from sparsity_gui.plots.svgplain import map_path, plain_svg


def test_scaled_shapes_are_mapped_to_output_units():
    """plain_svg on a hand-written Qt-style file: a curve in data units under a flipping,
    anisotropic matrix, a rect, a translated polyline (kept) and text beside the curve."""
    src = b"""<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg width="10mm" height="10mm" viewBox="0 0 100 100"
 xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
 version="1.2" baseProfile="tiny">
<g fill="none" stroke="black" stroke-width="1">
<g fill="none" stroke="#ff0000" stroke-width="2" transform="matrix(100,0,0,-50,0,100)">
<path vector-effect="non-scaling-stroke" fill-rule="evenodd" d="M0,0 L0.5,1 L1,0.5"/>
<text x="0" y="0">t</text>
<rect vector-effect="non-scaling-stroke" x="0" y="0" width="1" height="1"/>
</g>
<g stroke="#000000" stroke-width="1" transform="matrix(1,0,0,1,5,6)">
<polyline fill="none" vector-effect="non-scaling-stroke" points="0,11 20,11 " />
</g>
</g>
</svg>"""
    out = plain_svg(src)
    check_plain(out, "hand-written")
    root = ET.fromstring(out)
    outer = root.find(SVG + "g")
    groups = outer.findall(SVG + "g")
    assert [g.get("transform") for g in groups] == [
        None,
        "matrix(100,0,0,-50,0,100)",
        None,
        "matrix(1,0,0,1,5,6)",
    ], "paint order kept: curve, text (still transformed), rect, polyline"
    assert groups[0].get("stroke-width") == "2" and groups[0].get("stroke") == "#ff0000"
    assert groups[0].find(SVG + "path").get("d") == "M0,100 L50,50 L100,75"
    assert groups[1].find(SVG + "text").text == "t"
    assert groups[2].find(SVG + "path").get("d") == "M0,100 L100,100 L100,50 L0,50 Z"
    assert groups[3].find(SVG + "polyline").get("points").split() == ["0,11", "20,11"]


def test_map_path_refuses_what_it_cannot_map_exactly():
    assert map_path("M1,2 C3,4 5,6 7,8 Z", (2, 0, 0, 3, 1, 1)) == "M3,7 C7,13 11,19 15,25 Z"
    with pytest.raises(ValueError):
        map_path("m1,2 l3,4", (1, 0, 0, 1, 0, 0))
    with pytest.raises(ValueError):
        map_path("M0,0 A1,1 0 0 1 2,2", (1, 0, 0, 1, 0, 0))
