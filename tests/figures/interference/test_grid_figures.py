"""The interference model's figures (figures/interference/figures.py), the sweep's and the scaling
figures, drawn from known arrays: the drawn data are the CSV columns (read back from the
CSV text the app writes, or computed here by numpy), the layout rules hold at a journal's
column (3.5 in) and text width (7 in), and each figure's script draws it from its JSON with
no text under 6 pt. The files' promises (the script redrawing the PNG alone, the SVG, the
PDF's fonts) are every family's: tests/figures/test_figure_contracts.py."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from sparsity_gui.core.interference.files import history_csv, neuron_counts_csv
from sparsity_gui.core.interference.mechanisms import SPARSITY_COLUMNS
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.interference.sweep import SweepRow
from sparsity_gui.core.interference.thresholds import threshold_curves
from sparsity_gui.core.note.scaling import ROW_COLUMNS as SCALING_COLUMNS
from sparsity_gui.core.note.scaling import ScalingRow, rows_csv
from sparsity_gui.core.pins import PinnedRun
from sparsity_gui.figures import layout
from sparsity_gui.figures.interference import figures as fi
from sparsity_gui.figures.interference.sweep import sweep, sweep_data, sweep_figure_files
from sparsity_gui.figures.note.scaling import (
    BALANCE_LIMIT,
    FIGURES,
    scaling_data,
    scaling_figure_files,
    scaling_panel,
)
from sparsity_gui.figures.save import arrays_of, data_json, figure_of
from sparsity_gui.figures.style import DOUBLE_COLUMN, PAPER, SINGLE_COLUMN, TALK
from tests.figures.figure_files import redraw, svg_texts

N = 8
STEPS = np.arange(0.0, 1001.0, 50.0)
WIDTHS = [SINGLE_COLUMN, DOUBLE_COLUMN]
LONG_PIN = "pin 2: m = 16, l1 = 2.0e-3, lr = 5.0e-3, optimizer gd, seed 7"


def known_history(scale: float = 1.0) -> np.ndarray:
    """A history with every column a simple function of the step (a figure test needs no
    training): counts fall, the loss and ‖W‖₁ decay."""
    s = STEPS
    h = np.zeros((s.size, len(HISTORY_COLUMNS)))
    col = {c: i for i, c in enumerate(HISTORY_COLUMNS)}
    h[:, col["step"]] = s
    h[:, col["t"]] = 4e-3 * s
    h[:, col["polysemantic"]] = np.round(scale * 6 * np.exp(-s / 300.0))
    h[:, col["predicted"]] = N * N / (4.0 * 16)
    h[:, col["active"]] = np.round(scale * (N + 10 * np.exp(-s / 200.0)))
    h[:, col["opposite_pairs"]] = np.round(scale * 5 * (1 - np.exp(-s / 250.0)))
    h[:, col["same_pairs"]] = np.round(scale * 3 * np.exp(-s / 150.0))
    h[:, col["kept_share"]] = 1.0 - 0.3 * s / s[-1]
    h[:, col["nonzero"]] = np.round(N * 16 * np.exp(-s / 400.0 * scale)) + N
    h[:, col["norm1"]] = 40.0 * np.exp(-s / 500.0) + N
    h[:, col["mean_norm2"]] = 1.0
    h[:, col["loss"]] = 3.0 * np.exp(-s / 100.0) + 0.02
    return h


def known_pins() -> list[PinnedRun]:
    return [
        PinnedRun(1, (("m", 16),), HISTORY_COLUMNS, known_history(0.7)),
        PinnedRun(2, (("m", 16),), HISTORY_COLUMNS, known_history(1.3)),
    ]


def known_run(pins: bool = True, changes: bool = True) -> dict:
    rng = np.random.default_rng(5)
    W = rng.normal(0.0, 0.5, (N, 16))
    W[np.arange(N), np.arange(N) * 2] = 1.0  # one survivor per feature, on neuron 2i
    W[1, 4] = -1.0  # features 1 and 2 share neuron 4 (polysemantic)
    counts = (np.abs(W) >= 0.8) & (np.abs(W) <= 1.2)
    labels = {1: ("pin 1: m = 16", "pin 1: m = 16"), 2: (fi_short(LONG_PIN), LONG_PIN)}
    return {
        "history": known_history(),
        "W": W,
        "counts": counts.sum(axis=0),
        "pins": known_pins() if pins else [],
        "labels": labels,
        "changes": [(300.0, "$\\ell_1$ = 0.002"), (700.0, "lr = 0.01")] if changes else [],
        "thresholds": known_thresholds(),
    }


JUMP = InterferenceParams(
    n=N, m=16, optimizer="adam", lr=1e-3, l1=0.0, steps=1000, sparsity="jumprelu", l0=0.01
)


def known_thresholds() -> dict:
    """A JumpReLU run's record (mechanisms.SPARSITY_COLUMNS) whose thresholds rise from
    theta(0) and settle, as core turns it into the Thresholds panel's curves."""
    s = STEPS
    rows = np.zeros((s.size, len(SPARSITY_COLUMNS)))
    col = {c: i for i, c in enumerate(SPARSITY_COLUMNS)}
    settle = JUMP.threshold_init + 0.3 * (1 - np.exp(-s / 200.0))
    rows[:, col["step"]] = s
    for name, scale in (("median", 1.0), ("p10", 0.8), ("p90", 1.25), ("tracked", 0.95)):
        rows[:, col[f"threshold_{name}"]] = scale * settle
    rows[:, col["thresholds_moved"]] = 16 * s
    rows[:, col["thresholds_past_rail"]] = np.round(0.02 * 16 * s)
    return threshold_curves(JUMP, np.zeros((0, 5)), rows)


def fi_short(text: str) -> str:
    from sparsity_gui.ui.interference.export import short_label

    return short_label(text)


def run_data_of(run: dict) -> dict:
    """fi.run_data of a known_run: what the run's figures draw."""
    return fi.run_data(
        run["history"],
        HISTORY_COLUMNS,
        run["W"],
        run["counts"],
        N,
        pins=run["pins"],
        pin_labels=run["labels"],
        changes=run["changes"],
        thresholds=run["thresholds"],
    )


def panels_data(run: dict) -> dict:
    return arrays_of(json.loads(data_json(run_data_of(run))))  # what the JSON beside the figure holds


def csv_columns(text: str) -> dict[str, np.ndarray]:
    header = text.splitlines()[0].split(",")
    table = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    return {name: table[:, i] for i, name in enumerate(header)}


def line(ax, label: str):
    found = [ln for ln in ax.get_lines() if ln.get_label() == label]
    assert len(found) == 1, [ln.get_label() for ln in ax.get_lines()]
    return found[0]


def same(a, b, **kw) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.allclose(a, b, **kw)


def draw(panel, data, width: float = SINGLE_COLUMN, style=PAPER):
    return figure_of(panel, data, style, (width, 2.6 * max(1.0, width / SINGLE_COLUMN) ** 0.5))


# --- what each figure draws -------------------------------------------------------------
def test_step_panels_draw_the_columns_of_history_csv():
    run = known_run()
    data = panels_data(run)
    csv = csv_columns(history_csv(run["history"]))
    expect = {
        # panel: [(axes index, legend label, column)]
        "polysemantic": [(0, "polysemantic neurons", "polysemantic"), (0, "$n^2/(4m)$", "predicted")],
        "kept": [(0, "this run", "kept_share")],
        "signs": [(0, "opposite signs", "opposite_pairs"), (0, "same sign", "same_pairs")],
        "sparsity": [
            (0, "nonzero weights", "nonzero"),
            (0, "active weights", "active"),
            (1, "loss", "loss"),
            (1, "$\\|W\\|_1$", "norm1"),
        ],
    }
    for name, curves in expect.items():
        fig = draw(fi.PANELS[name][0], data[name])
        for index, label, column in curves:
            drawn = line(fig.axes[index], label)
            np.testing.assert_array_equal(drawn.get_xdata(), csv["step"], err_msg=f"{name}: {label}")
            np.testing.assert_array_equal(drawn.get_ydata(), csv[column], err_msg=f"{name}: {label}")
    # the share of opposite signs, below the pairs: opposite / (opposite + same), NaN without pairs
    fig = draw(fi.signs, data["signs"])
    share = line(fig.axes[1], "opposite share")
    with np.errstate(invalid="ignore", divide="ignore"):
        want = csv["opposite_pairs"] / (csv["opposite_pairs"] + csv["same_pairs"])
    keep = np.isfinite(want)
    np.testing.assert_array_equal(share.get_ydata(), want[keep])


def test_pinned_runs_are_their_columns_and_share_colour_and_dash_with_their_entry():
    run = known_run()
    data = panels_data(run)
    for name in ("polysemantic", "kept", "signs", "sparsity"):
        for width in WIDTHS:
            fig = draw(fi.PANELS[name][0], data[name], width)
            assert layout.pins_unlike_legend(fig) == [], name
            pinned = [
                ln for ax in fig.axes for ln in ax.get_lines() if (ln.get_gid() or "").startswith("pin")
            ]
            per_curve = {"polysemantic": 1, "kept": 2, "signs": 3, "sparsity": 4}[name]
            assert len(pinned) == 2 * per_curve, name
            # each pinned curve's points are its pinned run's rows
            for ln in pinned:
                pin = run["pins"][int(ln.get_gid()[3:]) - 1]
                np.testing.assert_array_equal(ln.get_xdata(), pin.column("step")[: len(ln.get_xdata())])
            texts = [t.get_text() for lg in layout.legends(fig) for t in lg.get_texts()]
            assert "pin 1: m = 16" in texts and fi_short(LONG_PIN) in texts, texts
    fig = draw(fi.polysemantic, data["polysemantic"])
    pin1 = next(ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "pin1")
    np.testing.assert_array_equal(pin1.get_ydata(), run["pins"][0].column("polysemantic"))
    assert to_rgba(pin1.get_color())[:3] == to_rgba(line(fig.axes[0], "polysemantic neurons").get_color())[:3]


def test_long_pin_names_are_shortened_in_the_legend_and_kept_whole_in_the_data():
    short = fi_short(LONG_PIN)
    assert short == "pin 2: m = 16, l1 = 2.0e-3…" and len(short) <= 28
    data = panels_data(known_run())
    assert [p["label"] for p in data["polysemantic"]["pins"]] == ["pin 1: m = 16", LONG_PIN]


def test_weights_image_is_w_pooled_by_largest_magnitude():
    """Below the pixel budget the image is W itself; above it, each block's entry of largest
    |w| (sign kept), checked against a loop over the blocks; ordered, feature i's largest
    weight lands in column i."""
    run = known_run()
    d = fi.weights_data(run["W"])
    np.testing.assert_array_equal(np.asarray(d["image"]).reshape(d["shape"]), run["W"])
    rng = np.random.default_rng(1)
    W = rng.normal(0.0, 0.3, (5, 23))
    W[3, 17] = -1.1
    pooled = fi.weights_data(W, pixels=4)
    fy, fx = pooled["pooled"]
    image = np.asarray(pooled["image"]).reshape(pooled["shape"])
    for r in range(image.shape[0]):
        for c in range(image.shape[1]):
            block = W[r * fy : (r + 1) * fy, c * fx : (c + 1) * fx]
            assert image[r, c] == block.flat[np.argmax(np.abs(block))]
    assert image.min() == -1.1
    ordered = fi.weights_data(run["W"], ordered=True)
    shown = np.asarray(ordered["image"]).reshape(ordered["shape"])
    # the order: each feature's largest-|w| neuron at its first feature, then the rest
    order = []
    for i in range(N):
        k = int(np.argmax(np.abs(run["W"][i])))
        if k not in order:
            order.append(k)
    order += [k for k in range(run["W"].shape[1]) if k not in order]
    np.testing.assert_array_equal(shown, run["W"][:, order])
    fig = draw(fi.weights, arrays_of(json.loads(data_json(d))))
    (cells,) = fig.axes[0].collections  # small: a mesh of rectangles, one per weight
    np.testing.assert_array_equal(np.asarray(cells.get_array()).reshape(run["W"].shape), run["W"])
    assert cells.get_clim() == (-1.2, 1.2)
    assert fig.axes[0].get_ylim() == (N, 0)  # feature 0 at the top


def test_active_panel_draws_neuron_counts_csv_and_its_histogram():
    run = known_run()
    csv = csv_columns(neuron_counts_csv(run["counts"]))
    data = panels_data(run)["active"]
    fig = draw(fi.active, data)
    top, below = fig.axes[0], fig.axes[1]
    bars = list(top.patches)
    assert len(bars) == 2  # all, and the polysemantic ones in red
    np.testing.assert_array_equal(bars[0].get_data().values, csv["active_features"])
    np.testing.assert_array_equal(
        bars[1].get_data().values, np.where(csv["polysemantic"] == 1, csv["active_features"], 0)
    )
    heights = [p.get_height() for p in below.patches]
    np.testing.assert_array_equal(heights, np.bincount(csv["active_features"].astype(int), minlength=3))
    # many neurons: a bar per bin holds its largest count, so a polysemantic neuron shows
    counts = np.zeros(10_000, dtype=np.int64)
    counts[7777] = 3
    big = fi.active_data(counts, bins=100)
    assert big["neurons_per_bar"] == 100 and len(big["counts"]) == 100 and big["counts"][77] == 3


def test_change_labels_sit_above_the_plot_clear_of_their_lines():
    data = panels_data(known_run())
    for name in ("polysemantic", "kept", "signs", "sparsity", "thresholds"):
        for width in WIDTHS:
            fig = draw(fi.PANELS[name][0], data[name], width)
            labels = [t for ax in fig.axes for t in ax.texts if t.get_gid() == layout.CHANGE_LABEL_GID]
            assert [t.get_text() for t in labels] == ["$\\ell_1$ = 0.002", "lr = 0.01"], name
            assert layout.change_labels_unclear(fig) == [], name


@pytest.mark.parametrize("width", WIDTHS, ids=["3.5in", "7in"])
@pytest.mark.parametrize("name", list(fi.PANELS))
def test_interference_panels_keep_the_layout_rules(name, width):
    data = panels_data(known_run())[name]
    fig = draw(fi.PANELS[name][0], data, width)
    assert layout.layout_faults(fig) == []
    if name in (*fi.HISTORY_PANELS, "thresholds"):  # the step axis ends at the data
        assert layout.axes_past_data(fig.axes[0], STEPS[0], STEPS[-1]) == []


def test_layout_keeps_the_rules_and_holds_every_panel():
    """The six panels, each in a sub-figure of its own with its legend above it."""
    data = panels_data(known_run())
    whole = {"panels": [data[p] for p in fi.LAYOUT_ORDER]}
    fig = figure_of(fi.layout, whole, PAPER, fi.layout_size("paper"))
    assert layout.layout_faults(fig) == []
    titles = [ax.get_title(loc="left") for ax in fig.axes if ax.get_title(loc="left")]
    assert titles == ["Weights $W$", *(fi.PANELS[p][1] for p in fi.LAYOUT_ORDER[1:])]


# --- the sweep ------------------------------------------------------------------------------
# (m, seed, polysemantic): zeros at m = 64, a lone run at m = 128
SWEEP_TABLE = [(8, 0, 6), (8, 1, 5), (8, 2, 7), (16, 0, 2), (16, 1, 4), (16, 2, 3), (32, 0, 1), (32, 1, 2)]
SWEEP_TABLE += [(32, 2, 1), (64, 0, 0), (64, 1, 1), (64, 2, 0), (128, 0, 0)]


def sweep_rows() -> list[SweepRow]:
    return [
        SweepRow(
            m=m,
            seed=seed,
            n=16,
            polysemantic=p,
            predicted=64.0 / m,
            active=2 * p + 3,
            opposite_pairs=p,
            same_pairs=0,
            kept_share=0.5,
            nonzero=16 * m,
            steps=100,
            optimizer="adamw",
            settled=True,
            seconds=0.25,
            sum_w4=0.75,
            steps_to_sparse=90,
            rail_share=0.25,
            shrinkage_ratio=0.98,
        )
        for m, seed, p in SWEEP_TABLE
    ]


def test_sweep_draws_the_runs_their_means_and_the_prediction():
    data = arrays_of(json.loads(data_json(sweep_data(sweep_rows(), 16, (8, 16, 32, 64, 128, 256), 18))))
    fig = draw(sweep, data)
    ax = fig.axes[0]
    m = np.array([t[0] for t in SWEEP_TABLE], float)
    y = np.array([t[2] for t in SWEEP_TABLE], float)
    runs = next(ln for ln in ax.get_lines() if ln.get_label().startswith("runs"))
    np.testing.assert_array_equal(runs.get_xdata(), m[y > 0])  # a log axis cannot show 0
    np.testing.assert_array_equal(runs.get_ydata(), y[y > 0])
    assert runs.get_label() == "runs (3 of 13 at zero: not shown)"
    means = next(ln for ln in ax.get_lines() if ln.get_label().startswith("mean over seeds"))
    ms = np.unique(m)
    mean = np.array([y[m == v].mean() for v in ms])
    np.testing.assert_allclose(means.get_xdata(), ms[mean > 0])
    np.testing.assert_allclose(means.get_ydata(), mean[mean > 0], rtol=1e-15)
    slope = np.polyfit(np.log10(ms[mean > 0]), np.log10(mean[mean > 0]), 1)[0]
    assert f"slope ${slope:.2f}$" in means.get_label()
    prediction = next(ln for ln in ax.get_lines() if ln.get_label().startswith("$n^2/(4m)$"))
    x = prediction.get_xdata()
    assert x[0] == 8 and x[-1] == 256  # over the planned m
    np.testing.assert_allclose(prediction.get_ydata(), 256.0 / (4.0 * x), rtol=1e-14)
    assert "incomplete: 13 of 18 runs" in ax.get_title()
    assert layout.layout_faults(fig) == []
    # cancelled, in the SVG the tab saves
    files = sweep_figure_files(None, sweep_rows(), formats=("svg",))
    assert "cancelled" not in " ".join(svg_texts(files["sweep.svg"]))


@pytest.mark.parametrize("width", WIDTHS, ids=["3.5in", "7in"])
def test_sweep_keeps_the_layout_rules(width):
    fig = draw(sweep, arrays_of(json.loads(data_json(sweep_data(sweep_rows())))), width)
    assert layout.layout_faults(fig) == []
    ax = fig.axes[0]
    assert layout.axes_past_data(ax, 8, 128, share=0.05) == []


# --- the scaling figures -----------------------------------------------------------------
M_VALUES = (1000, 10_000, 100_000)
LAMS = (1e-4, 1e-3, 1e-2)


def scaling_rows() -> list[ScalingRow]:
    rows = []
    for m in M_VALUES:
        for j, lam in enumerate(LAMS):
            for s in range(3):
                v = 1.0 + 0.1 * j + 0.05 * s * math.log10(m)
                start = lam * 0.7 * math.sqrt(m)  # > 1/4 at m >= 10^4 for lam = 10^-2, ...
                rows.append(
                    ScalingRow(
                        m=m,
                        lam=lam,
                        seed=s,
                        t_one=v / lam,
                        lam_t_one=v,
                        fitted_c=0.5 + 0.01 * s + 0.02 * j,
                        fitted_c_bulk=0.5,
                        fit_max_rel_dev=0.01,
                        rel_var_mean=0.4 + 0.03 * s,
                        rel_var_min=0.01,
                        rel_var_max=1.5,
                        balance_ratio=1.0,
                        w_last=0.99,
                        w_last_root=0.99,
                        lam_norm1_0=start,
                        norm2_w0=0.8,
                        balance_possible=start <= 0.25,
                        theta_rises=True,
                        theta_rise_condition=True,
                        theta_fall=0.0,
                        theta_fall_t=float("nan"),
                        sigma=0.9,
                        t_end=1.1 * v / lam,
                        seconds=0.1,
                    )
                )
    return rows


@pytest.mark.parametrize("name", list(FIGURES))
def test_scaling_figures_draw_the_columns_of_scaling_csv(name):
    rows = scaling_rows()
    text = rows_csv(rows)
    csv = csv_columns(text)
    assert list(csv) == list(SCALING_COLUMNS)
    column = FIGURES[name][0]
    data = arrays_of(json.loads(data_json(scaling_data(rows, name, M_VALUES, LAMS))))
    fig = draw(scaling_panel, data)
    ax = fig.axes[0]
    lines = ax.get_lines()
    for i, lam in enumerate(LAMS):
        shift = 10.0 ** ((i - 1) * 0.025)
        mine = csv["lam"] == lam
        cells = np.unique(csv["m"][mine])
        mean = np.array([csv[column][mine & (csv["m"] == v)].mean() for v in cells])
        start = np.array([csv["lam_norm1_0"][mine & (csv["m"] == v)].mean() for v in cells])
        inside = start <= BALANCE_LIMIT
        joined = [
            ln for ln in lines if ln.get_linestyle() == "-" and np.allclose(ln.get_xdata(), cells * shift)
        ]
        assert any(np.allclose(ln.get_ydata(), mean, rtol=1e-14) for ln in joined), (name, lam)
        filled = [ln for ln in lines if ln.get_marker() == "o" and ln.get_markerfacecolor() != "white"]
        hollow = [ln for ln in lines if ln.get_marker() == "o" and ln.get_markerfacecolor() == "white"]
        assert any(
            same(ln.get_xdata(), cells[inside] * shift) and same(ln.get_ydata(), mean[inside])
            for ln in filled
        ), (name, lam)
        assert any(
            same(ln.get_xdata(), cells[~inside] * shift) and same(ln.get_ydata(), mean[~inside])
            for ln in hollow
        ), (name, lam)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "$\\lambda\\|W(0)\\|_1 > 1/4$" in texts and "$\\lambda$ = $10^{-3}$" in texts


@pytest.mark.parametrize("width", WIDTHS, ids=["3.5in", "7in"])
@pytest.mark.parametrize("name", list(FIGURES))
def test_scaling_figures_keep_the_layout_rules(name, width):
    data = arrays_of(json.loads(data_json(scaling_data(scaling_rows(), name, M_VALUES, LAMS))))
    fig = draw(scaling_panel, data, width)
    assert layout.layout_faults(fig) == []


def test_the_talk_style_keeps_the_rules_too():
    data = panels_data(known_run())
    for name in ("sparsity", "signs"):
        fig = figure_of(fi.PANELS[name][0], data[name], TALK, (6.4, 4.2))
        assert layout.layout_faults(fig) == []


# --- the scripts --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every grid figure's JSON and script, in one folder as the commands write them (their
    PNG, SVG and PDF: tests/figures/test_figure_contracts.py, and the commands' five files
    each: test_grid_figure_commands.py)."""
    folder = tmp_path_factory.mktemp("grid") / "figures"
    folder.mkdir()
    data = run_data_of(known_run())
    files = fi.run_figure_files(data, formats=())
    files.update(sweep_figure_files(None, sweep_rows(), formats=(), cancelled=True))
    files.update(scaling_figure_files(None, scaling_rows(), formats=()))
    for name, blob in files.items():
        (folder / name).write_bytes(blob)
    return folder, files


NAMES = [*fi.PANEL_ORDER, "layout", "sweep", *FIGURES]


def test_every_figure_has_its_json_and_a_script_alone(written):
    _folder, files = written
    assert set(files) == {f"{n}.{ext}" for n in NAMES for ext in ("json", "py")}
    for n in NAMES:
        script = files[f"{n}.py"].decode()
        assert "sparsity_gui" not in script and "import numpy" in script


@pytest.mark.parametrize("name", NAMES)
def test_every_text_is_at_least_6_pt(written, name):
    """A journal's least text size, in each figure as its script draws it."""
    folder, _files = written
    fig = redraw(folder, name)
    small = [(t.get_text(), t.get_fontsize()) for t in layout.visible_texts(fig) if t.get_fontsize() < 6.0]
    assert small == [], small
