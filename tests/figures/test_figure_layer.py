"""The figure layer itself (sparsity_gui/figures): a figure drawn from known arrays, its
files, the script beside it, the styles (that importing it loads no Qt: one fresh Python
for it and the API, note/test_api_plot.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.figures import layout
from sparsity_gui.figures.draw import finite_xy, mark_changes, panel_axes, panel_legend, pin_entries, pin_line
from sparsity_gui.figures.save import arrays_of, data_json, figure_files, figure_of, script_text
from sparsity_gui.figures.style import PAPER, SINGLE_COLUMN, style_params


def decay_panel(fig, d, ax=None):
    """A small panel in the shape of the real ones, for the layer's own tests."""
    own_ax = ax is not None
    (ax,) = panel_axes(fig, ax)
    ax.plot(*finite_xy(d["t"], d["y"]), color="#0072B2", label=r"$\|W\|_1$")
    for pin in d["pins"]:
        pin_line(ax, pin["t"], pin["y"], "#0072B2", pin["number"])
    mark_changes(ax, d["changes"])
    ax.set_xlabel("$t$")
    ax.set_ylabel(r"$\|W\|_1$")
    ax.set_xlim(d["t"][0], d["t"][-1])
    handles, labels = ax.get_legend_handles_labels()
    pin_h, pin_l = pin_entries(d["pins"], ["#0072B2"])
    panel_legend(fig, ax, handles + pin_h, labels + pin_l, own_ax)


def known_data():
    t = np.linspace(0.0, 10.0, 101)
    return {
        "t": t,
        "y": 1.0 / (1.0 + t),
        "pins": [{"number": 1, "short_label": "pin 1: λ = 2×10⁻³", "t": t, "y": 1.0 / (1.0 + 2 * t)}],
        "changes": [[4.0, r"$\lambda = 2\times10^{-3}$"]],
    }


def test_json_round_trip_is_exact_and_nan_for_non_finite():
    x = np.array([0.1, 1 / 3, 1e-300, np.pi * 1e17, np.nan, np.inf])
    back = arrays_of(json.loads(data_json({"x": x, "s": "λ", "pairs": [[1.5, "a"]]})))
    assert np.array_equal(back["x"][:4], x[:4])  # bit for bit
    assert np.isnan(back["x"][4:]).all()
    assert back["s"] == "λ" and back["pairs"] == [[1.5, "a"]]


def test_drawn_line_is_the_data_and_layout_rules_hold():
    d = known_data()
    fig = figure_of(decay_panel, d, PAPER, (SINGLE_COLUMN, 2.6))
    ax = fig.axes[0]
    live = ax.get_lines()[0]
    np.testing.assert_array_equal(live.get_xdata(), d["t"])
    np.testing.assert_array_equal(live.get_ydata(), 1.0 / (1.0 + d["t"]))
    assert layout.layout_faults(fig) == []
    assert layout.axes_past_data(ax, 0.0, 10.0) == []


def test_the_rules_catch_what_breaks_them():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.5, 2.6))
    ax = fig.add_subplot()
    ax.plot([0, 10], [0, 1])
    ax.set_xlim(0, 14)  # 40 % past the data
    ax.text(5, 0.5, "one")
    ax.text(5, 0.5, "two")  # on top of "one"
    for i in range(12):
        ax.plot([0, 10], [0.1 * i, 1], label=f"entry {i}")
    ax.legend()  # taller than a quarter of the figure
    (pinned,) = ax.plot([0, 10], [1, 0], color="C1", linestyle="--", gid="pin1")  # no legend entry
    ax.set_yscale("log")
    ax.set_ylim(2, 3)  # not even one decade
    faults = layout.layout_faults(fig)
    assert any("legend" in f and "height" in f for f in faults)
    assert any("'one' overlaps 'two'" in f for f in faults)
    assert any(f.startswith("pin1") for f in faults)
    assert any("log y axis" in f for f in faults)
    assert layout.axes_past_data(ax, 0, 10) != []


def test_change_label_over_a_curve_is_caught():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.5, 2.6))
    ax = fig.add_subplot()
    ax.plot([0, 10], [0, 1])
    ax.annotate("λ", xy=(5, 0.5), gid=layout.CHANGE_LABEL_GID, fontsize=20)
    assert any("over a curve" in f for f in layout.change_labels_unclear(fig))


def test_the_files_script_carries_the_panel_and_the_functions_it_calls():
    """The script names no sparsity_gui: it carries the panel and what it calls (that it
    redraws the PNG alone, the SVG and the PDF: test_figure_contracts.py's "layer")."""
    files = figure_files("decay", decay_panel, known_data(), PAPER, (SINGLE_COLUMN, 2.6), formats=())
    assert set(files) == {"decay.json", "decay.py"}
    script = files["decay.py"].decode()
    assert "sparsity_gui" not in script and "def decay_panel" in script and "def pin_line" in script


def test_a_style_file_sits_on_the_paper_style(tmp_path):
    style = tmp_path / "mine.mplstyle"
    style.write_text("font.size: 11\nlines.linewidth: 2.5\n")
    params = style_params(style)
    assert params["font.size"] == 11 and params["lines.linewidth"] == 2.5
    assert params["pdf.fonttype"] == 42  # the rest stays the paper style's
    script = script_text("decay", decay_panel, params, (3.5, 2.6), 300)
    assert "'lines.linewidth': 2.5" in script


@pytest.mark.parametrize(
    "text, reason",
    [
        ("lines.linewidth: wide\n", "lines.linewidth"),
        ("no.such.key: 1\n", "no.such.key"),
        ("# only\n", "sets no"),
    ],
)
def test_a_bad_style_file_is_refused_by_name(tmp_path, text, reason):
    style = tmp_path / "bad.mplstyle"
    style.write_text(text)
    with pytest.raises(InputError) as info:
        style_params(style)
    assert "bad.mplstyle" in info.value.message and reason in info.value.message


def test_missing_style_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="no such style file"):
        style_params(tmp_path / "none.mplstyle")
