"""A series of snapshots pinned in the interference window (File → Compare with
checkpoints…, filled by code) is drawn as points in the exported figures too, as on screen:
the figure's JSON marks the pin ``points``, and the figure drawn from that JSON has one
hollow circle a snapshot and no line for it, while a plain pinned run stays a line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.figures import save
from sparsity_gui.figures.interference import figures as fi
from sparsity_gui.figures.scripted import panel_size
from sparsity_gui.figures.style import style_params

TIMEOUT = 30_000
SVG = "{http://www.w3.org/2000/svg}"
STEPS = (0, 20, 50, 100)
N, M = 4, 8


def write_series(folder):
    """Snapshots of a matrix shrinking towards sparsity, one .npy per step (numpy only)."""
    folder.mkdir()
    rng = np.random.default_rng(11)
    W = rng.normal(0.0, 0.6, (N, M))
    for k, step in enumerate(STEPS):
        np.save(folder / f"step_{step:06d}.npy", np.sign(W) * np.maximum(np.abs(W) - 0.1 * k, 0.0))
    return folder


def finished(qtbot, win):
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.finished,
        timeout=TIMEOUT,
    )
    qtbot.wait(60)
    return win.snapshot


def pin_artists(fig, number):
    return [a for ax in fig.axes for a in ax.get_lines() if a.get_gid() == f"pin{number}"]


def test_an_exported_figure_draws_a_pinned_series_as_points_and_its_json_says_so(
    qtbot, make_iwindow, tmp_path
):
    folder = write_series(tmp_path / "matrix-run")
    win = make_iwindow(
        InterferenceParams(n=16, m=32, optimizer="gd-zero", l1=0.04, lr=0.05, steps=400, seed=1)
    )
    dialog = win.checkpoints.open_dialog()
    dialog.path.setText(str(folder))
    dialog.set_pick("matrix")
    dialog.l1.setText("0.05")
    dialog.lr.setText("0.01")
    dialog.optimizer.setCurrentText("sgd")
    dialog.accept()
    dialog.wait(60)
    assert not dialog.isVisible(), dialog.error.text()
    (series,) = [p for p in win.pin_control.pins if p.marks == "points"]
    finished(qtbot, win)
    assert win.pin_control.pin(), win.last_error  # a plain pinned run beside it: a line
    (plain,) = [p for p in win.pin_control.pins if p.marks == "line"]

    sparsity = win.all_panels().index(win.sparsity_panel)
    path = tmp_path / "sparsity.svg"
    assert win.exports.export_figure(sparsity, path), win.last_error
    data = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    pins = {p["number"]: p for p in data["pins"]}
    assert pins[series.number]["points"] is True and "points" not in pins[plain.number]
    assert pins[series.number]["step"] == list(STEPS)

    # the figure as the JSON draws it (what its script redraws): circles, no line
    style = style_params(None)
    fig = save.figure_of(fi.sparsity, save.arrays_of(data), style, panel_size(None))
    marks = pin_artists(fig, series.number)
    assert len(marks) == 4  # nonzero, active, loss and |W|_1
    for line in marks:
        assert line.get_linestyle() == "None" and line.get_marker() == "o"
        assert line.get_markerfacecolor() == "none"
        np.testing.assert_array_equal(line.get_xdata(), np.array(STEPS, float))
    norm1 = np.array([np.abs(np.load(f)).sum() for f in sorted(folder.glob("step_*.npy"))])
    (drawn,) = [ln for ln in marks if np.allclose(ln.get_ydata(), norm1, rtol=1e-12)]
    for line in pin_artists(fig, plain.number):
        assert line.get_linestyle() != "None" and line.get_marker() in ("None", "", None)

    # the SVG written: the series' group holds a circle per snapshot per curve, no stroke path
    group = next(e for e in ET.fromstring(path.read_bytes()).iter() if e.get("id") == f"pin{series.number}")
    assert sum(1 for _ in group.iter(SVG + "use")) == len(STEPS)

    # the layout's JSON (the whole window) marks it too, in every step panel
    files = win.exports.figure_files("window", "layout", ("png",))
    layout = json.loads(files["layout.json"])
    step_panels = [p for p in layout["panels"] if "pins" in p]
    assert len(step_panels) == 4
    for panel in step_panels:
        (entry,) = [p for p in panel["pins"] if p["number"] == series.number]
        assert entry["points"] is True
