"""What the exported figures mark and how they read, through the real paths: `run --figures`
(the CLI writes PNG, SVG, PDF, JSON and the script; each figure is redrawn here by its own
script from its JSON) and note_figure_files (the window's Export all; here only its JSON and
scripts, all that the tests of it read) after live changes of λ. Outside the note's regime
(m = 10^4, λ = 10^-2) every tracked weight starts below θ(0), rises above it and falls
back: each fall is found here from the JSON and must carry a triangle. The phase plane holds
its marks and pins; the layout's legends leave the data their room; every text is at least
6 pt; each log axis labels its ticks in one form; the PDF and SVG carry the figure's title."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.legend import Legend

from sparsity_gui.core.note.changes import LiveChange, RunScript
from sparsity_gui.core.note.initial import draw_normal
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.pins import PIN_COLUMNS, note_pin_label, pin_params
from sparsity_gui.core.note.sampled import replay_script
from sparsity_gui.core.pins import PinBoard
from sparsity_gui.figures import layout
from sparsity_gui.figures.note.figures import (
    GRID,
    PANELS,
    TITLES,
    fit_constants,
    note_figure_files,
    panel_data,
    run_snapshot,
)
from sparsity_gui.figures.save import write_files
from tests.figures.figure_files import redraw
from tests.helpers import ENV
from tests.note_oracles import theta_falls

NAMES = [*PANELS, "layout"]
ROOT = Path(__file__).resolve().parents[3]
# each figure redrawn by its script once and read by every test here (they only read it)
redrawn = functools.cache(redraw)


@pytest.fixture(scope="module")
def cli_figures(tmp_path_factory) -> Path:
    """`sparsity-gui run --figures` outside the note's regime, to a late instant, as SVG and
    PDF (--formats): no test here reads the PNGs (the script redraws from the JSON)."""
    where = tmp_path_factory.mktemp("cli")
    proc = subprocess.run(
        [sys.executable, "-m", "sparsity_gui", "run", "--m", "10000", "--lam", "0.01"]
        + ["--t-end", "400", "--samples", "401", "--figures", "--formats", "svg,pdf", "--out", "res"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(ENV, PYTHONPATH=str(ROOT)),  # this checkout's package, not an installed one
    )
    assert proc.returncode == 0, proc.stderr
    return where / "res" / "figures"


def _run(m, lam, changes=(), t=200.0, seed=0):
    params = SimParams(m=m, lam=lam, seed=seed)
    return replay_script(RunScript(params, draw_normal(m, params.sigma, seed), tuple(changes), t, 301))


@pytest.fixture(scope="module")
def export_figures(tmp_path_factory) -> Path:
    """Export all of a run outside the regime with a live change of λ up and one down
    (16 tracked weights) and two pinned runs of other λ, at a late instant."""
    run = _run(10_000, 1e-2, (LiveChange(40.0, "lam", 2e-2), LiveChange(90.0, "lam", 5e-3)))
    board = PinBoard()
    labels = {}
    for lam, seed in ((3e-3, 1), (4e-2, 2)):
        other = _run(2000, lam, seed=seed, t=120.0)
        pin = board.add(pin_params(other.sim.params), PIN_COLUMNS, other.rows[:, : len(PIN_COLUMNS)])
        labels[pin.number] = note_pin_label(pin, run.sim.params)
    data = panel_data(
        run_snapshot(run),
        views={"threshold_crossing": {"tracked": 16}, "phase_plane": {"log_y": True}},
        pins=list(board),
        pin_labels=labels,
        fit=fit_constants(run),
    )
    folder = tmp_path_factory.mktemp("export")
    # every test here redraws from the JSON and the script; the images (PNG, SVG and PDF,
    # 7 of 8 s here) are neither read nor needed to write those two
    write_files(folder, note_figure_files(data, formats=()))
    return folder


def _triangles(fig) -> np.ndarray:
    ax = fig.axes[0]
    (line,) = [line for line in ax.get_lines() if line.get_label() == r"falls below $\theta$"]
    assert line.get_marker() == "v"
    return np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)


def _expected_falls(folder: Path) -> tuple[np.ndarray, int]:
    d = json.loads((folder / "threshold_crossing.json").read_text(encoding="utf-8"))
    t = np.array(d["t"], float)
    theta = np.array([np.nan if v is None else v for v in d["theta"]], float)
    points, from_below = [], 0
    for weight in d["tracked"]:
        y = np.array([np.nan if v is None else v for v in weight["w"]], float)
        rows = theta_falls(y, theta)
        points += [(t[i], y[i]) for i in rows]
        if rows and y[0] < theta[0]:
            from_below += 1
    return np.array(sorted(points), float).reshape(-1, 2), from_below


@pytest.mark.parametrize("source", ["cli_figures", "export_figures"])
def test_a_triangle_for_every_fall_below_theta(request, source):
    folder = request.getfixturevalue(source)
    want, from_below = _expected_falls(folder)
    assert from_below >= 3, "the case must have weights that start below θ(0) and fall below it later"
    got = _triangles(redrawn(folder, "threshold_crossing"))
    np.testing.assert_array_equal(np.array(sorted(map(tuple, got)), float).reshape(-1, 2), want)
    # in the layout too (its second panel)
    layout_fig = redrawn(folder, "layout")
    (line,) = [
        line
        for ax in layout_fig.axes
        for line in ax.get_lines()
        if line.get_label() == r"falls below $\theta$"
    ]
    assert len(line.get_xdata()) == len(want)


def test_the_lone_survivor_resting_at_theta_marks_nothing(cli_figures):
    """At the end one weight is left, at θ up to rounding (|W| - θ ~ 1e-13 θ): no
    triangle after its last real fall."""
    d = json.loads((cli_figures / "threshold_crossing.json").read_text(encoding="utf-8"))
    t = np.array(d["t"], float)
    survivor = next(w for w in d["tracked"] if w["t_death"] is None)
    theta = np.array(d["theta"], float)
    y = np.array(survivor["w"], float)
    resting = np.abs(y - theta) <= 1e-9 * theta
    assert resting[-50:].all()  # the case: it rests at θ over the last rows
    got = _triangles(redrawn(cli_figures, "threshold_crossing"))
    assert (got[:, 0] < t[-50]).all()


def test_phase_plane_holds_its_marks_and_pins(export_figures):
    fig = redrawn(export_figures, "phase_plane")
    ax = fig.axes[0]
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    marks = [line for line in ax.get_lines() if line.get_label() in ("$W(0)$", "end")]
    pins = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("pin")]
    assert len(marks) == 2 and len(pins) == 2
    for line in marks + pins:
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        assert ((x0 < x) & (x < x1) & (y0 < y) & (y < y1)).all(), line.get_label()
    box = ax.get_window_extent()
    for line in marks:  # the whole dot (its radius and edge, in px) inside the axes
        r = (line.get_markersize() / 2 + line.get_markeredgewidth()) * fig.dpi / 72.0
        (px, py) = ax.transData.transform((line.get_xdata()[0], line.get_ydata()[0]))
        assert box.x0 <= px - r and px + r <= box.x1, line.get_label()
        assert box.y0 <= py - r and py + r <= box.y1, line.get_label()


def test_layout_legends_take_little_of_each_panel(export_figures):
    fig = redrawn(export_figures, "layout")
    r = fig._get_renderer()
    cells = fig.subfigs
    assert len(cells) == len(GRID)
    for cell, name in zip(cells, GRID, strict=True):
        (legend,) = [lg for lg in cell.legends if isinstance(lg, Legend)]
        lb = legend.get_window_extent(r)
        data = sum(ax.get_window_extent(r).width * ax.get_window_extent(r).height for ax in cell.axes)
        share = lb.width * lb.height / data
        assert share <= 0.25, f"{name}: the legend takes {share:.0%} of the axes' area"
    assert layout.layout_faults(fig) == []


@pytest.mark.parametrize("name", NAMES)
def test_every_text_is_at_least_6_pt(export_figures, name):
    """In each figure as its script draws it from its JSON; the script names no
    sparsity_gui (it redraws its PNG alone: test_figure_contracts.py's "note")."""
    assert "sparsity_gui" not in (export_figures / f"{name}.py").read_text(encoding="utf-8")
    fig = redrawn(export_figures, name)
    small = [(t.get_text(), t.get_fontsize()) for t in layout.visible_texts(fig) if t.get_fontsize() < 6.0]
    assert small == [], small


LOG_FORMS = {
    "plain": re.compile(r"^-?\d+(\.\d+)?$"),
    "power": re.compile(r"^\$(\d(\.\d+)?\\times)?10\^\{-?\d+\}\$$"),
}


@pytest.mark.parametrize("source", ["cli_figures", "export_figures"])
def test_each_log_axis_labels_its_ticks_in_one_form(request, source):
    folder = request.getfixturevalue(source)
    seen = set()
    for name in NAMES:
        fig = redrawn(folder, name)
        for ax in fig.axes:
            for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
                if axis.get_scale() != "log":
                    continue
                lo, hi = sorted(axis.get_view_interval())
                texts = [
                    t.label1.get_text()
                    for t in axis.get_major_ticks()
                    if lo * (1 - 1e-9) <= t.get_loc() <= hi * (1 + 1e-9) and t.label1.get_text()
                ]
                forms = {f for t in texts for f, rx in LOG_FORMS.items() if rx.match(t)}
                assert len(forms) == 1 and all(
                    any(rx.match(t) for rx in LOG_FORMS.values()) for t in texts
                ), (
                    name,
                    which,
                    texts,
                )
                seen |= forms
    if source == "cli_figures":  # m' from 10^4 to 1: powers on that axis, never 100 beside 10^4
        assert "power" in seen


def test_the_sparsity_force_keeps_the_screens_scale(export_figures):
    """Forces of order 10^-2 to 10^-3 read as on screen: whole numbers below 1000 on the
    ticks, the power of ten (a multiple of 3, as pyqtgraph's SI scale) in the axis label."""
    fig = redrawn(export_figures, "sparsity_force")
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert max(abs(lo), abs(hi)) < 0.1  # the case: small forces
    found = re.search(r"\(\$\\times10\^\{(-?\d+)\}\$\)$", ax.get_ylabel())
    assert found, ax.get_ylabel()
    k = int(found.group(1))
    assert k % 3 == 0
    shown = []
    for tick in ax.yaxis.get_major_ticks():
        if lo <= tick.get_loc() <= hi:
            value = float(tick.label1.get_text().replace("\u2212", "-"))
            assert value == pytest.approx(tick.get_loc() / 10.0**k, rel=1e-6, abs=1e-9)
            shown.append(abs(value))
    assert 1 <= max(shown) < 1000


@pytest.mark.parametrize("name", ["threshold_crossing", "layout"])
def test_m_prime_in_fonts_every_svg_viewer_has(cli_figures, name):
    """m′ is the italic m and DejaVu's prime (mathtext's $m'$ takes its prime from cmsy10,
    a font the SVG names and viewers lack: librsvg showed m0); no SVG text names any
    font but DejaVu Sans."""
    svg = (cli_figures / f"{name}.svg").read_text(encoding="utf-8")
    assert set(re.findall(r"font-family: '?([^;'\"]+)", svg)) == {"DejaVu Sans"}
    assert re.search(r">m</tspan>\s*<tspan[^>]*DejaVu Sans[^>]*>′</tspan>", svg)


def _pdf_info_title(pdf: bytes) -> str:
    """/Title of the PDF's document information dictionary (the trailer's /Info), read
    from the file's bytes: a literal string (...) or a UTF-16 hex string <FEFF...>."""
    info_ref = re.search(rb"/Info\s+(\d+)\s+0\s+R", pdf)
    assert info_ref, "no /Info in the trailer"
    obj = re.search(rb"\n" + info_ref.group(1) + rb"\s+0\s+obj\s*(<<.*?>>)\s*endobj", pdf, re.S)
    assert obj, "the /Info object is missing"
    found = re.search(rb"/Title\s*(\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f]+>)", obj.group(1))
    assert found, "no /Title"
    raw = found.group(1)
    if raw.startswith(b"<"):
        return bytes.fromhex(raw[1:-1].decode()).decode("utf-16")
    return re.sub(rb"\\(.)", rb"\1", raw[1:-1]).decode("latin-1")


@pytest.mark.parametrize("name", NAMES)
def test_pdf_and_svg_carry_the_title(cli_figures, name):
    title = TITLES.get(name, "Layout")
    assert _pdf_info_title((cli_figures / f"{name}.pdf").read_bytes()) == title
    svg = (cli_figures / f"{name}.svg").read_text(encoding="utf-8")
    assert f"<title>{title}</title>" in svg and f"<dc:title>{title}</dc:title>" in svg
