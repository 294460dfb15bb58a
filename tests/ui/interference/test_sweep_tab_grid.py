"""The Sweep tab over lists of options, not m alone: lists typed key by key into its fields
make the grid `sweep` makes; two varied options are drawn as a heatmap of the chosen
readout's median over seeds (cells without a value grey and hatched), one or three as
curves; a bad list is refused at its field, naming the bad value, with nothing started;
Save writes what `sweep` writes. Real widgets, real threads, real files; the medians are
the test's own, from the rows the tab holds."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pytest
from helpers import read_csv, tick_texts, type_keys

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import ROW_COLUMNS
from sparsity_gui.ui.interference.sweep_tab import SweepWidget

TIMEOUT = 60_000
# an Export all draws every panel in PNG, SVG and PDF: minutes on a machine other work loads
EXPORT_TIMEOUT = 300_000
# the dock's run: its l1, lr and optimizer are replaced by the lists typed
DOCK = InterferenceParams(n=16, m=32, optimizer="adam", l1=1e-3, lr=1e-3, steps=3000, seed=0)
L1S, OPTIMIZERS = (0.01, 0.1), ("adamw", "gd-zero")
L1_TEXT = {0.01: "1.0e-2", 0.1: "1.0e-1"}.get  # as the l1 row writes them
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def sweep_widget(show_tab):
    return show_tab(SweepWidget(lambda: DOCK), 1100, 650)


def type_all(widget, texts: dict[str, str]) -> None:
    for name, text in texts.items():
        type_keys(widget.fields[name], text)


def typed_grid(widget, seeds: str = "2") -> None:
    """n = 4, m = 8, 2 l1 x 2 optimizers x ``seeds``, 100 steps at lr = 0.1."""
    type_all(
        widget,
        {
            "n": "4",
            "m": "8",
            "seeds": seeds,
            "steps": "100",
            "l1": "1e-2, 0.1",
            "optimizer": "adamw,gd-zero",
            "lr": "0.1",
        },
    )


def medians(rows, readout: str) -> np.ndarray:
    """The readout's median over seeds per (optimizer, l1), from the rows: NaN where no run
    has a value (steps_to_sparse = -1: never sparse)."""
    out = np.full((len(OPTIMIZERS), len(L1S)), np.nan)
    for j, opt in enumerate(OPTIMIZERS):
        for i, l1 in enumerate(L1S):
            values = [getattr(r, readout) for r in rows if r.optimizer == opt and r.l1 == l1]
            assert values, (opt, l1)
            if readout == "steps_to_sparse":
                values = [v for v in values if v != -1]
            if values:
                out[j, i] = statistics.median(values)
    return out


def key(row) -> tuple:
    return (row.m, row.l1, row.optimizer, row.seed)


def drawn_values(heatmap) -> np.ndarray:
    """The heatmap image's values in the readout's units (a log colour scale holds log10)."""
    image = np.asarray(heatmap.image.image, float)
    return 10.0**image if heatmap.value_log else image


def choose_readout(widget, name: str) -> None:
    widget.readout.setCurrentIndex(widget.readout.findData(name))


def test_two_lists_are_a_heatmap_of_the_readout_chosen_and_saved(qtbot, sweep_widget, tmp_path):
    w = sweep_widget
    typed_grid(w)
    assert not any(f.error.isVisibleTo(w) for f in w.fields.values())
    # the options typed no longer come from the dock; what is left does, said under the form
    base = w.base_label.text()
    assert "from the Parameters dock:" in base and "interference on" in base and "first seed 0" in base
    assert "l1 =" not in base and "lr =" not in base and "Adam," not in base and "3000 steps" not in base
    assert w.shown_panel is w.heatmap  # the plan typed, before it runs
    assert w.start()
    spec = w.spec
    assert spec.varied == ("l1", "optimizer") and spec.seeds == 2 and spec.m_values == (8,)
    assert spec.axes == (("l1", L1S), ("optimizer", OPTIMIZERS))
    assert (spec.base.n, spec.base.lr, spec.base.steps) == (4, 0.1, 100)
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    rows = list(w.rows)
    assert sorted((r.l1, r.optimizer, r.seed) for r in rows) == sorted(
        (l1, opt, s) for l1 in L1S for opt in OPTIMIZERS for s in (0, 1)
    )
    heat = w.heatmap
    assert w.shown_panel is heat and sorted(heat.rows, key=key) == sorted(rows, key=key)
    # the image: a cell per (l1, optimizer), the median over seeds, optimizer up, l1 across
    expect = medians(rows, "polysemantic")
    assert heat.image.image.shape == (2, 2)
    np.testing.assert_array_equal(drawn_values(heat), expect)
    assert heat.missing.cells == []
    # the axes: the options' names, the values as ticks where the cells are
    plot = heat.plot
    assert tick_texts(plot.getAxis("bottom")) == ["0.01", "0.1"]
    assert tick_texts(plot.getAxis("left")) == ["adamw", "gd-zero"]
    assert plot.getAxis("bottom").labelText == "l1 coefficient"
    assert plot.getAxis("left").labelText == "optimizer"
    assert heat.colorbar.axis.labelText == "median polysemantic neurons"
    assert "polysemantic" in plot.titleLabel.text

    # another readout: the same rows drawn again, nothing trained
    choose_readout(w, "active")
    assert heat.readout == "active" and w.rows == rows
    np.testing.assert_array_equal(drawn_values(heat), medians(rows, "active"))
    assert heat.colorbar.axis.labelText == "median active weights"
    # steps to sparsity: a cell whose runs never became sparse has no value, drawn grey
    choose_readout(w, "steps_to_sparse")
    expect = medians(rows, "steps_to_sparse")
    np.testing.assert_array_equal(heat.grid, expect)
    shown = drawn_values(heat)
    np.testing.assert_allclose(shown[np.isfinite(expect)], expect[np.isfinite(expect)])
    assert np.isnan(shown[~np.isfinite(expect)]).all()
    assert sorted(heat.missing.cells) == sorted(
        (i, j) for j, i in zip(*np.nonzero(np.isnan(expect)), strict=True)
    )
    # (at lr = 0.1 and 100 steps most runs never become sparse: both kinds of cell are drawn)
    assert np.isnan(expect).any() and np.isfinite(expect).any()
    never = sum(r.steps_to_sparse == -1 for r in rows)
    assert f"{never} of 8 runs never sparse" in heat.note.text
    assert "grey, hatched: no run of the cell became sparse" in heat.note.text

    # Save: what `sweep` writes, its figures of the readout chosen
    assert w.save(tmp_path), w.info.text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figures", "sweep.csv", "sweep.json"]
    figures = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert figures == sorted(
        f"{name}.{ext}" for name in ("curves", "heatmap") for ext in ("json", "pdf", "png", "py", "svg")
    )
    assert (tmp_path / "figures" / "heatmap.png").read_bytes().startswith(PNG_MAGIC)
    drawn = json.loads((tmp_path / "figures" / "heatmap.json").read_text())
    assert drawn["readout"] == "steps_to_sparse" and drawn["runs"] == 8
    header, lines = read_csv(tmp_path / "sweep.csv")
    assert header == list(ROW_COLUMNS) and len(lines) == 8
    meta = json.loads((tmp_path / "sweep.json").read_text())
    assert meta["spec"]["axes"] == {"l1": list(L1S), "optimizer": list(OPTIMIZERS)}

    # a bad list afterwards starts nothing and leaves the sweep shown as it was
    before = heat.grid.copy()
    type_keys(w.lists["l1"], "1e-3,abc")
    assert not w.start()
    assert w.outcome == "done" and w.rows == rows and w.job is None
    np.testing.assert_array_equal(heat.grid, before)


@pytest.mark.parametrize(
    "name, text, named",
    [
        ("l1", "1e-3,abc", "'abc' in the list '1e-3,abc' is not a finite number"),
        ("lr", "0.01,2", "2: must be > 0 and at most 1"),
        ("optimizer", "adamw,adamx", "adamx: must be one of"),
        ("steps", "100,-5", "-5: must be a whole number from 1"),
        ("noise", "none,pink", "pink: must be one of none, bernoulli, gaussian"),
        ("l1_warmup", "0,1.5", "'1.5' in the list '0,1.5' is not a whole number"),
        ("noise_sigma", "0.1,20", "20: must be from 0 to 10"),
        ("sigma", "0,1", "0: must be > 0"),
        ("m", "8,x", "got '8,x'"),
    ],
)
def test_a_bad_list_is_refused_at_its_field_naming_the_value(qtbot, sweep_widget, name, text, named):
    w = sweep_widget
    typed_grid(w, seeds="1")
    drawn = w.shown_panel
    type_keys(w.fields[name], text)
    field = w.fields[name]
    assert field.error.isVisibleTo(w), text
    assert named in field.error.text(), field.error.text()
    assert not w.start()
    assert w.job is None and w.outcome == "" and w.rows == [] and w.plan is None
    assert w.shown_panel is drawn


def test_a_list_that_needs_another_value_is_refused_at_start(qtbot, sweep_widget):
    """The dock has no noise: a noise kind typed here needs its σ, said at that field."""
    w = sweep_widget
    typed_grid(w, seeds="1")
    type_keys(w.lists["noise"], "none,bernoulli")
    assert not w.lists["noise"].error.isVisibleTo(w)
    assert not w.start()
    assert w.lists["noise_sigma"].error.isVisibleTo(w)
    assert "bernoulli needs its σ" in w.lists["noise_sigma"].error.text()
    assert w.job is None and w.plan is None
    type_keys(w.lists["noise_sigma"], "0.05")
    type_keys(w.lists["optimizer"], "")  # back to the dock's Adam
    type_keys(w.lists["l1"], "0.1")
    assert w.start()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    assert w.spec.varied == ("noise",) and w.shown_panel is w.curves
    assert sorted((r.noise, r.noise_sigma, r.optimizer) for r in w.rows) == [
        ("bernoulli", 0.05, "adam"),
        ("none", 0.0, "adam"),
    ]


def series_of(curves) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each series' median curve, (x, y) as drawn, by its legend label."""
    names = {id(sample.item): label.text for sample, label in curves.plot.legend.items}
    return {names[id(median)]: median.getData() for median, *_rest in curves.series}


def test_one_varied_option_or_three_are_curves_with_their_bands(qtbot, sweep_widget):
    w = sweep_widget
    type_all(w, {"n": "4", "m": "8", "seeds": "1", "steps": "100", "lr": "0.1"})
    assert w.shown_panel is w.panel  # m alone: the count against m, as before
    type_keys(w.lists["l1"], "1e-2,0.1")
    assert w.shown_panel is w.curves
    # three: m, l1 and the optimizer; l1 across, a curve per (m, optimizer)
    type_keys(w.m, "8,16")
    type_keys(w.lists["optimizer"], "adamw,gd-zero")
    type_keys(w.seeds, "2")
    assert w.start()
    qtbot.waitUntil(lambda: w.outcome == "done", timeout=TIMEOUT)
    rows = list(w.rows)
    assert len(rows) == 16 and w.spec.varied == ("m", "l1", "optimizer")
    curves = w.curves
    assert w.shown_panel is curves
    # the first varied option (m) across; a series per (l1, optimizer), named in the legend
    drawn = series_of(curves)
    names = [f"l1 = {L1_TEXT(l1)}, optimizer = {opt}" for l1 in L1S for opt in OPTIMIZERS]
    assert sorted(drawn) == sorted(names)
    for l1 in L1S:
        for opt in OPTIMIZERS:
            x, y = drawn[f"l1 = {L1_TEXT(l1)}, optimizer = {opt}"]
            np.testing.assert_array_equal(x, [8.0, 16.0])
            for m, got in zip(x, y, strict=True):
                values = [r.polysemantic for r in rows if (r.m, r.l1, r.optimizer) == (m, l1, opt)]
                assert got == statistics.median(values)
    # each series' band: its 10th to 90th percentile over seeds (numpy's linear quantiles)
    for s, (_median, lo, hi, band, _pred) in enumerate(curves.series):
        c = curves.cells.combos[s]
        l1, opt = c
        for m, low, high in zip(lo.getData()[0], lo.getData()[1], hi.getData()[1], strict=True):
            values = [r.polysemantic for r in rows if (r.m, r.l1, r.optimizer) == (m, l1, opt)]
            assert math.isclose(low, np.quantile(values, 0.1)) and math.isclose(
                high, np.quantile(values, 0.9)
            )
        assert band.curves == [lo, hi]
    legend = [label.text for _sample, label in curves.plot.legend.items]
    assert "10–90 % of seeds" in legend and "n²/(4m)" in legend
    assert curves.plot.getAxis("bottom").labelText == "m (neurons)"
    # another readout redraws the same rows
    choose_readout(w, "nonzero")
    x, y = series_of(curves)["l1 = 1.0e-1, optimizer = gd-zero"]
    want = [
        statistics.median(r.nonzero for r in rows if (r.m, r.l1, r.optimizer) == (m, 0.1, "gd-zero"))
        for m in x
    ]
    np.testing.assert_array_equal(y, want)
    assert "n²/(4m)" not in [label.text for _sample, label in curves.plot.legend.items]


def test_the_window_exports_the_figure_shown_for_the_readout_chosen(qtbot, make_iwindow, tmp_path):
    """Export figure of the sweep's panel: the heatmap on screen (its data and script
    beside it), drawn for the readout chosen in the tab."""
    win = make_iwindow(DOCK, playing=False)
    tab = win.sweep
    win.tabs.setCurrentWidget(tab)
    typed_grid(tab, seeds="1")
    assert tab.start()
    qtbot.waitUntil(lambda: tab.outcome == "done", timeout=TIMEOUT)
    choose_readout(tab, "active")
    assert tab.figure_name == "heatmap" and tab.shown_panel is tab.heatmap
    assert win.exports.export_figure(tab.panel, tmp_path / "grid.png"), win.last_error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.json", "grid.png", "grid.py"]
    assert (tmp_path / "grid.png").read_bytes().startswith(PNG_MAGIC)
    drawn = json.loads((tmp_path / "grid.json").read_text())
    assert drawn["readout"] == "active" and drawn["s_labels"] == list(OPTIMIZERS)
    assert drawn["x_labels"] == ["0.01", "0.1"]


# a JumpReLU dock: the tab's grid over its L0 coefficient C and lr draws the knee, as `sweep`
JUMP_DOCK = InterferenceParams(
    n=6, m=4, optimizer="adam", l1=0.0, lr=1e-2, steps=120, seed=0, sparsity="jumprelu", l0=0.01
)
KNEE_CS, KNEE_LRS = (1e-3, 0.1, 1.0), (1e-3, 1e-2)


def knee_by_hand(cs, values, tolerance=0.1):
    """The smallest C from which on every step to the next C changes the value by less than
    ``tolerance`` of it per decade of C (docs/interference.md's knee), or None."""
    found = None
    for j in range(len(cs) - 2, -1, -1):
        a, b = values[j], values[j + 1]
        if a == 0:
            rate = 0.0 if b == a else math.inf
        else:
            rate = abs(b - a) / abs(a) / math.log10(cs[j + 1] / cs[j])
        if not rate < tolerance:
            break
        found = cs[j]
    return found


def test_export_all_draws_a_grids_heatmap_and_curves_not_the_count_against_m(qtbot, make_iwindow, tmp_path):
    """File → Export all with a finished grid in the tab: its figures are the ones `sweep`
    draws for the readout chosen (heatmap and curves), not a count against m pooling the cells;
    a JumpReLU grid over its L0 coefficient C adds the knee, as `sweep` does, and so do the
    tab's Save's figures: the final L0's median per (lr, C) over the tab's rows, the knee by hand."""
    win = make_iwindow(JUMP_DOCK, playing=False)
    tab = win.sweep
    win.tabs.setCurrentWidget(tab)
    type_all(tab, {"m": "4", "seeds": "1", "l0": "1e-3, 0.1, 1", "lr": "1e-3, 1e-2"})
    assert tab.start(), tab.info.text()
    assert tab.spec.varied == ("l0", "lr")
    qtbot.waitUntil(lambda: tab.outcome == "done", timeout=TIMEOUT)
    choose_readout(tab, "active")
    # the window's own run (paused) shows its first snapshot on the window's timer, which a
    # loaded machine may not have run yet: Export all refuses until then, as it should
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.latest is not None, timeout=TIMEOUT)
    # (PNG alone: which figures are drawn is the promise here; every format of each figure is
    # test_export_all_formats.py's and test_interference_export_all.py's)
    assert win.exports.export_all(tmp_path / "all", wait=False, formats="png"), win.last_error
    job = win.exports.job
    qtbot.waitUntil(lambda: not job.running, timeout=EXPORT_TIMEOUT)
    assert job.outcome.ok, win.last_error
    figures = {p.name for p in (tmp_path / "all" / "figures").iterdir()}
    assert {"heatmap.png", "heatmap.json", "curves.png", "curves.py"} <= figures
    assert {f"knee.{ext}" for ext in ("json", "png", "py")} <= figures
    assert not {p for p in figures if p.endswith((".svg", ".pdf"))}, "only the format asked"
    assert "sweep.png" not in figures
    assert json.loads((tmp_path / "all" / "figures" / "heatmap.json").read_text())["readout"] == "active"
    knee = json.loads((tmp_path / "all" / "figures" / "knee.json").read_text())
    rows = list(tab.rows)
    assert len(rows) == len(KNEE_CS) * len(KNEE_LRS)
    assert knee["c"] == list(KNEE_CS) and knee["series"] == ["lr = 1.0e-3", "lr = 1.0e-2"]  # KNEE_LRS
    medians = np.array(knee["l0_median"], float).reshape(len(KNEE_LRS), len(KNEE_CS))
    for s, lr in enumerate(KNEE_LRS):
        want = [statistics.median(r.l0_per_input for r in rows if r.lr == lr and r.l0 == c) for c in KNEE_CS]
        np.testing.assert_allclose(medians[s], want, rtol=1e-12)
        assert knee["knees"][s] == knee_by_hand(KNEE_CS, want), lr
    # Save sweep…'s figures (what `sweep --out` draws), the knee among them; as PNG alone here
    saved = tab.figure_files(rows, formats=("png",))
    assert {"heatmap.png", "curves.png", "knee.png"} <= set(saved)
    assert json.loads(saved["knee.json"]) == knee
