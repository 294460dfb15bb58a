"""The live window's SVG exports (panels and the layout, drawn by matplotlib) render in
librsvg like their PNG exports: the same check as the figure layer's (tests/svg_render.py),
on a running window."""

from __future__ import annotations

from svg_render import check_renders_alike, needs_rsvg

from sparsity_gui.core.note.params import SimParams


@needs_rsvg
def test_live_panel_and_window_svg_render_alike_in_rsvg(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=300, lam=1e-2, seed=4), speed=20.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 2.0, timeout=10000)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=10000)
    qtbot.wait(50)
    for target, name in ((0, "sorted"), (4, "relative_variance"), ("layout", "layout")):
        svg = win.exports.figure_bytes(target, "svg")
        png = win.exports.figure_bytes(target, "png", scale=72 / 150)  # 72 dpi: the SVG's size
        (tmp_path / f"{name}.png").write_bytes(png)  # beside the SVG and rsvg's PNG, to look at
        check_renders_alike(svg, png, tmp_path, name)
