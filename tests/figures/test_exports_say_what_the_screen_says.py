"""The exported figures of `run --figures` say what the screen says (issue 34): read back
from the files the CLI wrote (each figure's JSON, SVG and the script beside it, whose own
drawing function is run on its own JSON), against oracles computed here from those files.

- Weights, sorted spans the ranks still alive at the export's instant, not 1..m.
- Outside the note's regime every figure's JSON says so, and the single panels' and the
  layout's drawn text say so; inside it, none does.
- The L1 law is drawn with the bulk c (the constant docs/guide.md says to quote) and with c,
  each labelled: fitted back from the drawn lines' points, the constants are run.json's.
- Norm balance's push axis is set by the rows with t >= 1 (the live panel's rule), the ratio
  has its legend entry, and the benefit is called so.
- Relative variance: the run, its bounds and the idealized bounds in colours apart for
  normal, deuteranope and protanope vision."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sparsity_gui.figures.save import arrays_of
from tests.figures.figure_files import svg_texts

NOTE_FIGURES = (
    "weights_sorted",
    "threshold_crossing",
    "norm_balance",
    "l1_decay",
    "relative_variance",
    "sparsity_force",
    "phase_plane",
    "layout",
)
FLAGGED = ("weights_sorted", "norm_balance", "l1_decay", "relative_variance", "layout")


def run_figures(folder: Path, *args: str) -> Path:
    """`run --figures --formats svg`: the tests here read the SVG's texts and redraw each
    figure from its JSON and script (the same at any --dpi but the script's DPI); no PNG or
    PDF is read (their promises: test_figure_contracts.py)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparsity_gui",
            "run",
            *args,
            "--figures",
            "--formats",
            "svg",
            "--dpi",
            "50",
            "--out",
            str(folder),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return folder


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """m = 10^4, λ = 1e-2 (λ‖W(0)‖₁ ≈ 0.72 > 1/4), stopped at t = 100 with a few weights alive."""
    return run_figures(tmp_path_factory.mktemp("outside"), "--m", "10000", "--lam", "1e-2", "--t-end", "100")


@pytest.fixture(scope="module")
def inside(tmp_path_factory):
    """m = 10^3, λ = 4e-3: in the note's regime (the issue's example)."""
    return run_figures(tmp_path_factory.mktemp("inside"), "--m", "1000", "--lam", "4e-3", "--t-end", "200")


def exported(folder: Path, name: str):
    """(the figure's data as its script reads it, a Figure drawn by the script's own
    function from it, the SVG's texts with whitespace removed)."""
    from matplotlib.figure import Figure

    figures = folder / "figures"
    data = arrays_of(json.loads((figures / f"{name}.json").read_text(encoding="utf-8")))
    space = runpy.run_path(str(figures / f"{name}.py"), run_name="exported_script")
    import matplotlib

    with matplotlib.rc_context(space["STYLE"]):
        fig = Figure(figsize=space["SIZE"], layout="constrained")
        function = "note_layout" if name == "layout" else name
        space[function](fig, data)
    texts = ["".join(t.split()) for t in svg_texts((figures / f"{name}.svg").read_bytes())]
    return data, fig, texts


def legend_texts(fig) -> list[str]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [t.get_text() for lg in legends for t in lg.get_texts()]


def test_weights_sorted_spans_the_ranks_still_alive(outside):
    data, fig, _texts = exported(outside, "weights_sorted")
    rank, w = data["rank"], data["abs_w"]
    alive = rank[w > 0]
    assert 1 <= alive.size < 50, alive.size  # a few survivors of 10^4: the case of the issue
    assert rank.max() >= 9000  # the JSON holds every rank, the dead too
    lo, hi = fig.axes[0].get_xlim()
    # every survivor inside, off the spines, and the axis no wider than twice their span + 2
    assert lo < alive.min() and hi > alive.max()
    assert hi - lo <= 2.0 * (alive.max() - alive.min()) + 2.0, (lo, hi, alive.min(), alive.max())
    drawn = np.concatenate([line.get_xdata() for line in fig.axes[0].get_lines()[:2]])
    assert set(drawn.astype(int)) == set(alive.astype(int))
    # the layout draws the same panel in its first cell
    _data, layout_fig, _ = exported(outside, "layout")
    cell = layout_fig.subfigs[0].axes[0]
    assert cell.get_xlim() == pytest.approx((lo, hi))


def test_outside_the_regime_every_figure_says_so(outside):
    run = json.loads((outside / "run.json").read_text())
    lam_l1 = run["regime"]["lam_l1_w0"]
    assert lam_l1 > 0.25 and not run["regime"]["balance_possible"]
    for name in NOTE_FIGURES:
        data = json.loads((outside / "figures" / f"{name}.json").read_text(encoding="utf-8"))
        regime = data["regime"]
        assert regime["holds"] is False, name
        assert regime["lam_l1_w0"] == pytest.approx(lam_l1, rel=1e-12), name
    for name in FLAGGED:
        _data, fig, texts = exported(outside, name)
        says = "outsidethenote'sregime" if name != "layout" else "Thenote'spremisedoesnotholdhere"
        assert any(says in t for t in texts), (name, texts)  # the SVG's text
        drawn = ["".join(t.split()) for t in legend_texts(fig)]
        if name == "layout":
            drawn.append("".join(fig._suptitle.get_text().split()))
        assert any(says in t for t in drawn), name  # the script's drawing (legend or title)
        assert any(f"={lam_l1:.2f}>1/4" in t for t in texts), name  # with the reason
        # the flag's longer lines fit: nothing sticks out of the figure or overlaps
        from sparsity_gui.figures import layout
        from sparsity_gui.figures.style import DEFAULT_DPI

        assert layout.layout_faults(fig, DEFAULT_DPI) == [], name
    # outside, the L1 law is c's alone: no bulk c shown (the screen hides it there too)
    _data, fig, texts = exported(outside, "l1_decay")
    assert not any("bulk" in t for t in texts)
    assert len([ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() in ("--", ":")]) == 1


def test_inside_the_regime_no_figure_flags_it(inside):
    run = json.loads((inside / "run.json").read_text())
    assert run["regime"]["balance_possible"] and run["regime"]["theta_rises"]
    for name in NOTE_FIGURES:
        data = json.loads((inside / "figures" / f"{name}.json").read_text(encoding="utf-8"))
        assert data["regime"]["holds"] is True, name
        texts = ["".join(t.split()) for t in svg_texts((inside / "figures" / f"{name}.svg").read_bytes())]
        assert not any("regime" in t or "premise" in t for t in texts), name


def fitted_back(line, lam_t_of_t, w0: float) -> float:
    """c of the law w = w(0) + c·λt, least squares through the drawn line's points
    (its y is ‖W‖₁ = 1/w)."""
    t, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    x = lam_t_of_t(t)
    w = 1.0 / y
    return float(np.dot(x, w - w0) / np.dot(x, x))


def test_the_l1_law_is_drawn_with_the_constant_to_quote(inside):
    run = json.loads((inside / "run.json").read_text())
    bulk, c = run["fitted_c_bulk"], run["fitted_c"]
    assert bulk is not None and c is not None
    data, fig, texts = exported(inside, "l1_decay")
    ax = fig.axes[0]
    t, lam_t = data["t"], data["lam_t"]

    def lam_t_of_t(x):
        return np.interp(x, t, lam_t)

    w0 = data["w"][0]
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    dotted = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert len(dashed) == 1 and len(dotted) == 1
    assert fitted_back(dashed[0], lam_t_of_t, w0) == pytest.approx(bulk, rel=1e-9)
    assert fitted_back(dotted[0], lam_t_of_t, w0) == pytest.approx(c, rel=1e-9)
    # each line's legend entry names its own constant
    assert f"bulk $c$ = {bulk:.3f}" in dashed[0].get_label()
    assert f"$c$ = {c:.3f}" in dotted[0].get_label() and "bulk" not in dotted[0].get_label()
    # in the SVG's text (mathtext's glyphs come grouped by font: the words and numbers in one)
    assert any("bulk" in t and f"{bulk:.3f}" in t for t in texts)
    assert any("bulk" not in t and f"{c:.3f}" in t for t in texts)
    # the guide tells users to quote the bulk c, the constant drawn dashed
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide.md").read_text(encoding="utf-8")
    assert "**Which constant to quote:** `fitted_c_bulk`" in guide


def test_norm_balance_push_range_from_t_at_least_1(outside):
    data, fig, texts = exported(outside, "norm_balance")
    top = fig.axes[0]
    t = data["t"]
    pushes = np.r_[data["feature_push"], data["reg_push"]]
    tt = np.r_[t, t]
    settled = pushes[(tt >= 1.0) & np.isfinite(pushes)]
    early = pushes[(tt < 1.0) & np.isfinite(pushes)]
    assert early.max() > 1.5 * settled.max()  # the spike the live panel leaves out
    lo, hi = top.get_ylim()
    assert lo <= settled.min() and hi >= settled.max()
    assert hi - lo <= 1.2 * (settled.max() - settled.min())
    labels = legend_texts(fig)
    assert "benefit / regularization" in labels
    assert any(label.startswith("benefit ") for label in labels)
    assert not any("feature" in label for label in labels)
    assert not any("feature" in t for t in texts)


# --- colours ---------------------------------------------------------------------------
# Machado, Oliveira & Fernandes (2009), severity 1.0, on linear RGB
DEUTERANOPIA = np.array(
    [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
)
PROTANOPIA = np.array(
    [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
)


def _linear(rgb):
    rgb = np.asarray(rgb, float)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb):
    xyz = np.array(
        [
            [0.4124564, 0.3575761, 0.1804375],
            [0.2126729, 0.7151522, 0.0721750],
            [0.0193339, 0.1191920, 0.9503041],
        ]
    ) @ np.clip(linear_rgb, 0, 1)
    white = np.array([0.95047, 1.0, 1.08883])
    f = np.cbrt(xyz / white)
    f = np.where(xyz / white > (6 / 29) ** 3, f, xyz / white / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a, b, vision=None) -> float:
    la, lb = _linear(a), _linear(b)
    if vision is not None:
        la, lb = vision @ la, vision @ lb
    return float(np.linalg.norm(_lab(la) - _lab(lb)))


def test_relative_variance_colours_a_colour_blind_reader_tells_apart(inside):
    from matplotlib.colors import to_rgb

    _data, fig, _texts = exported(inside, "relative_variance")
    ax = fig.axes[0]
    by_label = {ln.get_label(): to_rgb(ln.get_color()) for ln in ax.get_lines()}
    run, bounds, ideal = by_label["run"], by_label["bounds from $W(0)$"], by_label["idealized bounds"]
    colours = {"run": run, "bounds": bounds, "idealized": ideal}
    names = list(colours)
    for vision, label in ((None, "normal"), (DEUTERANOPIA, "deuteranope"), (PROTANOPIA, "protanope")):
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                d = delta_e(colours[a], colours[b], vision)
                assert d >= 20.0, f"{label}: {a} and {b} are {d:.1f} apart in CIELAB"
