"""The note model's figures (sparsity_gui/figures/note.py) from a real run with live
changes of λ and pinned runs: each panel's drawn data equal the exported CSV columns, the
layout rules hold at both widths. The files (the script beside a figure redrawing it pixel
for pixel without sparsity_gui, the SVG rendering, the PDF's fonts) are every family's
promises: tests/figures/test_figure_contracts.py."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from sparsity_gui.core.note.changes import LiveChange, RunScript
from sparsity_gui.core.note.files import timeseries_csv
from sparsity_gui.core.note.initial import draw_normal
from sparsity_gui.core.note.metrics import COL, COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.pins import PIN_COLUMNS, note_pin_label, pin_params
from sparsity_gui.core.note.sampled import replay_script
from sparsity_gui.core.pins import PinBoard
from sparsity_gui.figures import layout
from sparsity_gui.figures.note.figures import (
    PANELS,
    fit_constants,
    note_figure,
    panel_data,
    run_snapshot,
)
from sparsity_gui.figures.save import arrays_of, data_json
from sparsity_gui.figures.style import DEFAULT_DPI

TIME_PANELS = ("threshold_crossing", "norm_balance", "l1_decay", "relative_variance")


def _run(lam: float, changes=(), m: int = 400, t: float = 120.0, seed: int = 0):
    params = SimParams(m=m, lam=lam, seed=seed)
    return replay_script(RunScript(params, draw_normal(m, params.sigma, seed), tuple(changes), t, 301))


@pytest.fixture(scope="module")
def case():
    return make_case()


def make_case():
    """A run with two live changes of λ, two pinned runs (one with a long name)."""
    run = _run(2e-3, (LiveChange(30.0, "lam", 4e-3), LiveChange(70.0, "lam", 1.5e-3)))
    board = PinBoard()
    labels = {}
    for lam, seed in ((3e-3, 1), (1e-3, 2)):
        other = _run(lam, seed=seed)
        params = pin_params(other.sim.params)
        pin = board.add(params, PIN_COLUMNS, other.rows[:, : len(PIN_COLUMNS)])
        labels[pin.number] = note_pin_label(pin, run.sim.params)
    labels[2] += ", and a name far longer than any legend should show"
    snap = run_snapshot(run)
    data = panel_data(snap, pins=list(board), pin_labels=labels, fit=fit_constants(run))
    # the figures are drawn from the decoded JSON, as the script reads it
    data = arrays_of(__import__("json").loads(data_json(data)))
    return run, board, labels, data


def _csv_columns(run) -> dict[str, np.ndarray]:
    text = timeseries_csv(run.rows)
    table = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    return {name: table[:, i] for i, name in enumerate(COLUMNS)}


def _finite(x, y, positive=False):
    keep = np.isfinite(x) & np.isfinite(y) & ((y > 0) if positive else True)
    return x[keep], y[keep]


def _line(ax, label):
    return next(line for line in ax.get_lines() if line.get_label() == label)


def test_time_panels_draw_the_csv_columns(case):
    run, _board, _labels, data = case
    csv = _csv_columns(run)
    t = csv["t"]
    fig = note_figure("l1_decay", data)
    ax = fig.axes[0]
    line = _line(ax, r"$\|W\|_1$")
    np.testing.assert_array_equal(line.get_xdata(), t)
    np.testing.assert_array_equal(line.get_ydata(), csv["norm1"])
    law = ax.get_lines()[1]
    c = run.fitted_c
    w0 = csv["w"][0]
    np.testing.assert_allclose(law.get_ydata(), 1.0 / (w0 + c * csv["lam_t"]), rtol=1e-12)

    fig = note_figure("relative_variance", data)
    run_line = _line(fig.axes[0], "run")
    np.testing.assert_array_equal(
        np.c_[run_line.get_xdata(), run_line.get_ydata()], np.c_[_finite(t, csv["rel_var"])]
    )

    fig = note_figure("norm_balance", data)
    top, bottom = fig.axes[:2]
    feature = top.get_lines()[0]
    np.testing.assert_array_equal(feature.get_ydata(), _finite(t, csv["feature_push"])[1])
    ratio = bottom.get_lines()[0].get_ydata()
    expected = csv["feature_push"] / csv["reg_push"]
    # broken (a NaN) at each change of λ: the finite values are the ratio's, in order
    np.testing.assert_array_equal(ratio[np.isfinite(ratio)], expected[np.isfinite(expected)])
    assert np.isnan(ratio).sum() == 2  # two changes of λ
    # the ratio's range is set by the rows after the transient (t >= 1) and holds 1
    settled = expected[t >= 1]
    lo, hi = bottom.get_ylim()
    assert lo <= min(settled.min(), 1.0) and hi >= max(settled.max(), 1.0)
    assert hi - lo < 1.2 * (max(settled.max(), 1.0) - min(settled.min(), 1.0))

    fig = note_figure("threshold_crossing", data)
    top, bottom = fig.axes[:2]
    m_line = bottom.get_lines()[0]
    np.testing.assert_array_equal(m_line.get_ydata(), _finite(t, csv["nonzero"], True)[1])
    theta = top.get_lines()[0].get_ydata()
    th = csv["theta"]
    np.testing.assert_array_equal(theta[np.isfinite(theta)], th[np.isfinite(th)])

    fig = note_figure("phase_plane", data)
    path = fig.axes[0].get_lines()[0]
    np.testing.assert_array_equal(path.get_xdata(), csv["norm2_sq"])
    np.testing.assert_array_equal(path.get_ydata(), csv["norm1"])


def test_weight_panels_draw_the_final_weights(case):
    run, _board, _labels, data = case
    sim = run.sim
    w = np.abs(sim.solver.weights())
    by_rank = w[np.argsort(-np.abs(sim.init.w0), kind="stable")]  # |W| in the order of |W(0)|
    fig = note_figure("weights_sorted", data)
    ax = fig.axes[0]
    drawn = np.concatenate([line.get_ydata() for line in ax.get_lines()[:2]])
    ranks = np.concatenate([line.get_xdata() for line in ax.get_lines()[:2]])
    np.testing.assert_array_equal(drawn, by_rank[ranks.astype(int) - 1])
    assert set(ranks.astype(int)) == set(np.flatnonzero(by_rank > 0) + 1)  # every live weight (m small)
    fig = note_figure("sparsity_force", data)
    ax = fig.axes[0]
    points = np.concatenate([c.get_offsets() for c in ax.collections[:2]])
    s = 1.0 - float(np.sum(w * w))
    lam = run.sim.lam
    alive = np.sort(w[w > 0])
    np.testing.assert_allclose(np.sort(points[:, 0]), alive, rtol=0, atol=0)
    np.testing.assert_allclose(points[:, 1], s * points[:, 0] - lam, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("width", ["single", "double"])
@pytest.mark.parametrize("name", list(PANELS))
def test_layout_rules_hold_at_both_widths(case, name, width):
    run, _board, _labels, data = case
    fig = note_figure(name, data, width=width)
    faults = layout.layout_faults(fig, DEFAULT_DPI)
    assert faults == [], faults
    t = run.rows[:, COL["t"]]
    if name in TIME_PANELS:
        bottom = fig.axes[1] if name in ("threshold_crossing", "norm_balance") else fig.axes[0]
        assert layout.axes_past_data(bottom, t[0], t[-1]) == []
    if name in TIME_PANELS:
        changes = [a for a in fig.axes[0].texts if a.get_gid() == layout.CHANGE_LABEL_GID]
        assert len(changes) == 2


def test_the_layout_keeps_the_rules(case):
    _run_, _board, _labels, data = case
    fig = note_figure("layout", data)
    assert layout.layout_faults(fig, DEFAULT_DPI) == []


def test_pins_in_every_sub_plot_with_their_legend_entry(case):
    _run_, board, labels, data = case
    for name in ("threshold_crossing", "norm_balance", "l1_decay", "relative_variance", "phase_plane"):
        fig = note_figure(name, data)
        for ax in fig.axes:
            gids = {line.get_gid() for line in ax.get_lines() if (line.get_gid() or "").startswith("pin")}
            assert gids == {"pin1", "pin2"}, (name, gids)
        texts = [t.get_text() for lg in layout.legends(fig) for t in lg.get_texts()]
        assert labels[1] in texts  # short enough to keep
        long = next(t for t in texts if t.startswith("pin 2"))
        assert long.endswith("…") and len(long) < len(labels[2])


def test_lam_change_labels_are_written_as_the_title_and_the_screen_write_lam(case):
    """A change's label, the figure's title, the screen's marker and a pin's name write λ
    alike (the settings table's format: 4.0e-3, 0 as 0)."""
    _run_, _board, _labels, data = case
    assert [c[1] for c in data["l1_decay"]["changes"]] == ["λ = 4.0e-3", "λ = 1.5e-3"]


def test_fit_constants_of_the_run_are_shown(case):
    run, *_rest, data = case
    fig = note_figure("l1_decay", data)
    texts = [t.get_text() for lg in layout.legends(fig) for t in lg.get_texts()]
    assert any(f"$c$ = {run.fitted_c:.3f}" in t for t in texts)
    # constants another part of the program records in run.json are shown when present (the
    # bulk c in the note's regime: this run lowers λ, so it is outside)
    inside = {"holds": True, "reason": ""}
    more = {**data["l1_decay"], "fit": {"c": 0.5, "c_bulk": 0.61, "max_rel_dev": 0.034}, "regime": inside}
    fig = note_figure("l1_decay", {"l1_decay": more})
    texts = " ".join(t.get_text() for lg in layout.legends(fig) for t in lg.get_texts())
    assert "bulk $c$ = 0.610" in texts and "3.4 %" in texts


def test_long_runs_are_thinned_but_keep_their_ends_and_changes():
    from sparsity_gui.figures.note.figures import MAX_ROWS, thinned_rows

    lam = np.r_[np.full(6000, 1e-3), np.full(6000, 2e-3)]
    rows = np.zeros((12000, 1))
    keep = thinned_rows(rows, lam)
    assert keep.size <= MAX_ROWS + 3 and keep[0] == 0 and keep[-1] == 11999
    assert {5999, 6000} <= set(keep.tolist())


def test_an_axis_given_is_drawn_into(case):
    from matplotlib.figure import Figure

    _run_, _board, _labels, data = case
    from sparsity_gui.figures.note.panels import l1_decay, norm_balance

    fig = Figure(figsize=(7, 3))
    left, right = fig.subplots(1, 2)
    l1_decay(fig, data["l1_decay"], ax=left)
    assert left.get_lines() and left.get_legend() is not None
    norm_balance(fig, data["norm_balance"], ax=right)
    assert right not in fig.axes and len(fig.axes) == 3  # right's place split in two
    assert math.isclose(fig.axes[1].get_position().x0, right.get_position().x0, abs_tol=0.05)
