"""The sweep's figure (plots/sweep.SweepPanel) from hand-built rows: what it draws
(the prediction n^2/(4m), the mean +- std per m, the runs that a log axis cannot show,
the colliding pairs), that it paints in every state, and the tab's "save sweep"
(core/interference/files.write_sweep)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.sweep import ROW_COLUMNS, SweepRow, SweepSpec
from sparsity_gui.plots.base import LivePanel
from sparsity_gui.plots.qt_setup import prepare_qt

N = 16
# (m, seed, polysemantic, opposite pairs, same pairs): zeros at m = 64, a lone run at m = 128
TABLE = [
    (8, 0, 6, 6, 0),
    (8, 1, 5, 5, 1),
    (8, 2, 7, 8, 0),
    (16, 0, 2, 2, 0),
    (16, 1, 4, 4, 0),
    (16, 2, 3, 3, 0),
    (32, 0, 1, 1, 0),
    (32, 1, 2, 2, 0),
    (32, 2, 1, 1, 0),
    (64, 0, 0, 0, 0),
    (64, 1, 1, 1, 0),
    (64, 2, 0, 0, 0),
    (128, 0, 0, 0, 0),
]


def row(m, seed, poly, opposite=0, same=0, n=N, settled=True) -> SweepRow:
    return SweepRow(
        m=m,
        seed=seed,
        n=n,
        polysemantic=poly,
        predicted=n * n / (4.0 * m),
        active=2 * poly + 3,
        opposite_pairs=opposite,
        same_pairs=same,
        kept_share=0.5,
        nonzero=n * m,
        steps=100,
        optimizer="adamw",
        settled=settled,
        seconds=0.25,
        sum_w4=0.75,
        steps_to_sparse=90,
        rail_share=0.25,
        shrinkage_ratio=0.98,
        l1=1e-3,
        lr=1e-3,
        weight_decay=0.01,
        sigma=1.0,
        l1_schedule="0.0:0.0,50.0:0.001",  # a cell with commas: sweep.csv quotes it
    )


ROWS = [row(*t) for t in TABLE]


@pytest.fixture
def panel(qtbot):

    from sparsity_gui.plots.interference.sweep import SweepPanel

    prepare_qt()
    p = SweepPanel()
    qtbot.addWidget(p)
    p.resize(720, 520)
    p.show()
    QtWidgets.QApplication.processEvents()
    return p


def by_m(rows):
    ms = sorted({r.m for r in rows})
    counts = [np.array([r.polysemantic for r in rows if r.m == m], float) for m in ms]
    return (
        np.array(ms, float),
        np.array([c.mean() for c in counts]),
        np.array([c.std(ddof=1) if c.size > 1 else 0.0 for c in counts]),
    )


def painted(panel) -> bool:
    """The panel paints: its view grabbed as an image has ink (not only the background)."""
    image = panel.graphics.grab().toImage().convertToFormat(QtGui.QImage.Format.Format_Grayscale8)
    ptr = image.constBits()
    gray = np.frombuffer(ptr, np.uint8, image.sizeInBytes()).reshape(image.height(), image.bytesPerLine())
    return image.width() > 0 and bool((gray[:, : image.width()] < 128).any())


def data(item) -> tuple[np.ndarray, np.ndarray]:
    """A curve's data as given to it (before the log axes' transform); empty when none."""
    x, y = item.getOriginalDataset()
    return (
        np.zeros(0) if x is None else np.asarray(x, float),
        np.zeros(0) if y is None else np.asarray(y, float),
    )


def image_of(png: bytes) -> QtGui.QImage:
    image = QtGui.QImage()
    assert image.loadFromData(png, "PNG")
    return image


def colours(image: QtGui.QImage) -> set[int]:
    return {image.pixel(x, y) for x in range(0, image.width(), 5) for y in range(0, image.height(), 5)}


def test_prediction_line_is_n_squared_over_4m(panel):
    panel.show_rows(ROWS, n=N)
    x, y = data(panel.prediction)
    assert x[0] == pytest.approx(8) and x[-1] == pytest.approx(128)
    assert np.all(np.diff(x) > 0) and len(x) > 10
    np.testing.assert_allclose(y, N * N / (4.0 * x), rtol=1e-15)
    # the line also spans a planned sweep before its runs arrive
    panel.show_rows([], n=32, m_values=[256, 64, 1024])
    x, y = data(panel.prediction)
    assert (x[0], x[-1]) == (pytest.approx(64), pytest.approx(1024))
    np.testing.assert_allclose(y, 32 * 32 / (4.0 * x), rtol=1e-15)


def test_error_bars_are_mean_and_std_of_the_rows(panel):
    ms, mean, std = by_m(ROWS)
    panel.show_rows(ROWS)
    assert panel.n == N  # taken from the rows
    # log axes: ErrorBarItem gets log10 coordinates; m = 128 (mean 0) cannot be drawn
    keep = mean > 0
    up = panel.upper_bars.opts
    np.testing.assert_allclose(10 ** up["x"], ms[keep], rtol=1e-12)
    np.testing.assert_allclose(10 ** up["y"], mean[keep], rtol=1e-12)
    np.testing.assert_allclose(10 ** (up["y"] + up["top"]), (mean + std)[keep], rtol=1e-12)
    assert up["bottom"] is None and up["beam"] > 0
    # a real lower bound (mean - std > 0): a capped bar ending at it
    real = keep & (mean - std > 0)
    low = panel.lower_bars.opts
    assert low["top"] is None and low["beam"] > 0
    np.testing.assert_allclose(10 ** low["x"], ms[real], rtol=1e-12)
    np.testing.assert_allclose(10 ** (low["y"] - low["bottom"]), (mean - std)[real], rtol=1e-12)
    mx, my = data(panel.means)
    np.testing.assert_allclose(my, mean[keep], rtol=1e-15)
    np.testing.assert_array_equal(mx, ms[keep])
    # linear axes: the values themselves, zeros included, every bar capped
    panel.log_axes.setChecked(False)
    up, low = panel.upper_bars.opts, panel.lower_bars.opts
    np.testing.assert_array_equal(up["x"], ms)
    np.testing.assert_allclose(up["y"], mean, rtol=1e-15)
    np.testing.assert_allclose(up["top"], std, rtol=1e-15)
    np.testing.assert_allclose(low["bottom"], std, rtol=1e-15)
    assert panel.open_m.size == 0 and len(panel.open_ends.data) == 0
    x, _ = data(panel.runs)
    assert len(x) == len(ROWS)  # the zeros are drawn on a linear axis
    assert "not shown" not in panel.plot.legend.getLabel(panel.runs).text
    assert painted(panel)


def test_a_lower_bound_at_or_below_zero_is_an_open_marker_not_a_cap(panel):
    """On log axes mean - SD <= 0 cannot be drawn: that bar is cut at the axis, with no
    cap (a cap would say 'the bound is here'), and ends in an open triangle with its own
    legend entry."""
    ms, mean, std = by_m(ROWS)
    unbounded = (mean > 0) & (mean - std <= 0)
    assert unbounded.sum() == 1  # m = 64: counts 0, 1, 0
    panel.show_rows(ROWS)
    np.testing.assert_array_equal(panel.open_m, ms[unbounded])
    assert not np.isin(10 ** panel.lower_bars.opts["x"], ms[unbounded]).any(), "no capped end"
    opened = panel.open_bars.opts
    assert not opened["beam"] and opened["top"] is None
    np.testing.assert_allclose(10 ** opened["x"], ms[unbounded], rtol=1e-12)
    ends = panel.open_ends.data
    assert len(ends) == 1 and panel.open_ends.opts["symbol"] == "t"
    assert panel.open_ends.opts["brush"].color().name() == "#ffffff", "open (unfilled) marker"
    # the triangle sits where the bar is cut: below every point drawn
    lowest = min(float(np.min(data(panel.runs)[1])), float(mean[mean > 0].min()))
    assert 10 ** ends["y"][0] < lowest
    np.testing.assert_allclose(ends["y"], opened["y"] - opened["bottom"], rtol=1e-12)
    labels = [label.text for _sample, label in panel.plot.legend.items]
    assert any("≤ 0" in text and "cut" in text for text in labels), labels
    # rows whose bounds are all real: no open marker, and its legend entry goes
    panel.show_rows([r for r in ROWS if r.m <= 32])
    assert panel.open_m.size == 0 and len(panel.open_ends.data) == 0
    assert not any("≤ 0" in label.text for _s, label in panel.plot.legend.items)


def test_means_are_larger_distinct_markers_joined_by_a_line(panel):
    panel.show_rows(ROWS)
    means, runs = panel.means.opts, panel.runs.opts
    assert means["symbol"] != runs["symbol"]
    assert means["symbolSize"] >= runs["symbolSize"] + 3
    assert means["pen"] is not None and runs["pen"] is None, "the means are joined, the runs not"
    assert QtGui.QColor(means["symbolBrush"].color()).alpha() == 255


def test_the_rows_settings_are_named_as_the_settings_table_names_them(panel):
    """From the rows alone, not a list by hand: a warm-up, noise and an lr that the rows
    vary are said (several values joined by '/'), a default one is not."""
    import dataclasses

    rows = [
        dataclasses.replace(
            r, l1_warmup=50, noise="bernoulli", noise_sigma=0.05, lr=0.01 if r.seed % 2 else 0.1
        )
        for r in ROWS
    ]
    panel.show_rows(rows, n=N)
    assert (
        "n = 16 · l1 = 1.0e-3 · lr = 1.0e-2/1.0e-1 · steps = 100 · noise = Bernoulli · noise σ = 0.05"
        " · l1 warm-up = 50 steps · l1 schedule = 0:0,50:0.001 · 3 seeds per m"
    ) in panel.note.text
    assert "optimizer" not in panel.note.text  # adamw, the default: as a pin's name


def test_settings_bars_and_the_fitted_slope_are_stated(panel):
    ms, mean, _std = by_m(ROWS)
    panel.show_rows(ROWS, n=N)
    text = panel.note.text
    for words in (
        "n = 16 · l1 = 1.0e-3 · steps = 100 · l1 schedule = 0:0,50:0.001 · 3 seeds per m",
        "bars: ± 1 sample SD over seeds",
    ):
        assert words in text, words
    # the least-squares slope over the means > 0, against numpy's polyfit
    keep = mean > 0
    slope = np.polyfit(np.log10(ms[keep]), np.log10(mean[keep]), 1)[0]
    assert panel.summary.slope == pytest.approx(slope, rel=1e-12)
    assert panel.summary.slope_points == keep.sum() == 4
    assert f"{slope:.2f}".replace("-", "−") in text and "n²/(4m): −1" in text
    assert "over 4 values of m" in text
    # one m has no slope
    panel.show_rows([row(32, s, p) for s, p in enumerate((1, 3, 2))])
    assert math.isnan(panel.summary.slope) and "too few m" in panel.note.text


def test_legend_is_under_the_plot_at_the_tick_labels_size(panel):
    from sparsity_gui.plots.legend import LegendRow, tick_text_size

    panel.show_rows(ROWS, n=N)
    QtWidgets.QApplication.processEvents()
    legend = panel.plot.legend
    assert isinstance(legend, LegendRow) and legend.opts["labelTextSize"] == tick_text_size(panel.plot)
    box = legend.sceneBoundingRect()
    assert not box.intersects(panel.plot.vb.sceneBoundingRect()), "not over the data area"
    # every entry shown whole in the panel's view
    view = QtCore.QRectF(panel.graphics.viewport().rect())
    assert view.contains(box), (box, view)
    # each entry's text is drawn at the tick labels' size
    sizes = {label.text: label.opts["size"] for _sample, label in legend.items}
    tick = tick_text_size(panel.plot)
    assert sizes["prediction n²/(4m), slope −1"] == tick and sizes["mean over seeds ± 1 SD"] == tick


def test_collision_signs_are_totalled(panel):
    panel.show_rows(ROWS)
    opposite = sum(t[3] for t in TABLE)
    same = sum(t[4] for t in TABLE)
    assert panel.summary.opposite_pairs == opposite and panel.summary.same_pairs == same
    assert f"{opposite} of opposite sign, {same} of equal sign" in panel.note.text


def test_the_view_shows_all_the_data(panel):
    panel.show_rows(ROWS)
    (x0, x1), (y0, y1) = panel.plot.vb.viewRange()
    assert x0 <= math.log10(8) and x1 >= math.log10(128)
    assert y0 <= math.log10(1) and y1 >= math.log10(N * N / (4 * 8))


def test_single_m_no_rows_and_all_zero_rows(panel):
    # a single m: the prediction still a visible stretch around it, one error bar
    rows = [row(32, s, p) for s, p in enumerate((1, 3, 2, 2))]
    panel.show_rows(rows, n=N)
    x, y = data(panel.prediction)
    assert x[0] < 32 < x[-1]
    np.testing.assert_allclose(y, N * N / (4.0 * x), rtol=1e-15)
    assert 10 ** panel.upper_bars.opts["y"] == pytest.approx([2.0])
    assert painted(panel)
    # no rows at all, with and without a plan
    panel.show_rows([])
    assert not panel.upper_bars.isVisible() and panel.summary is None
    assert len(data(panel.prediction)[0]) == 0
    assert painted(panel)
    panel.show_rows([], n=8, m_values=[16, 32])
    assert panel.note.text == "no runs yet"
    assert painted(panel)
    # every run at zero: nothing can be drawn on log axes, and the legend says so
    zeros = [row(64, s, 0) for s in range(3)]
    panel.show_rows(zeros)
    assert not panel.upper_bars.isVisible() and not panel.lower_bars.isVisible()
    assert len(data(panel.runs)[0]) == 0
    assert "3 of 3" in panel.plot.legend.getLabel(panel.runs).text
    assert painted(panel)


def test_rows_arriving_one_at_a_time(panel):
    """The GUI calls show_rows with all rows so far after every run."""
    for k in range(len(ROWS) + 1):
        panel.show_rows(ROWS[:k], n=N, m_values=[8, 16, 32, 64, 128])
        x, _ = data(panel.runs)
        shown = sum(r.polysemantic > 0 for r in ROWS[:k])
        assert len(x) == shown
        assert panel.zero_runs == sum(r.polysemantic == 0 for r in ROWS[:k])
    _, mean, _ = by_m(ROWS)
    np.testing.assert_allclose(10 ** panel.upper_bars.opts["y"], mean[mean > 0], rtol=1e-12)


def test_the_sweep_panel_draws_rows_not_snapshots(panel):
    """It is a plain Panel: nothing of the live panels' snapshot drawing to misuse."""
    assert not hasattr(panel, "update_from") and not hasattr(panel, "draw")
    assert not isinstance(panel, LivePanel)


def comparable(rows) -> list[dict]:
    """The rows' fields, a readout its mechanism lacks (NaN under l1) equal to itself: a
    NaN read back from sweep.csv is another float object than the row's."""
    return [{k: "nan" if v != v else v for k, v in dataclasses.asdict(r).items()} for r in rows]


def test_write_sweep_into_a_folder(tmp_path):
    """The GUI's "save sweep" data: sweep.csv and sweep.json into a folder (a partial sweep
    is marked incomplete); the CSV reads back as the same rows. (Its figure, in figures/,
    is tested in tests/figures/interference/test_grid_figures.py.)"""
    from sparsity_gui.core.interference.files import rows_from_csv, write_sweep

    spec = SweepSpec(InterferenceParams(n=N, m=8, steps=100), m_values=(8, 16, 32, 64, 128), seeds=3)
    written = write_sweep(tmp_path / "saved", spec, ROWS, command_line=None)
    assert sorted(p.name for p in written) == ["sweep.csv", "sweep.json"]
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == sorted(p.name for p in written)
    text = (tmp_path / "saved" / "sweep.csv").read_text()
    assert text.splitlines()[0] == ",".join(ROW_COLUMNS)
    assert comparable(rows_from_csv(text)) == comparable(ROWS)
    meta = json.loads((tmp_path / "saved" / "sweep.json").read_text())
    assert meta["complete"] is False and meta["runs_done"] == 13 and meta["runs_planned"] == 15
    assert meta["command_line"] is None
    ms, mean, std = by_m(ROWS)
    assert [s["m"] for s in meta["summary"]] == ms.tolist()
    np.testing.assert_allclose([s["mean"] for s in meta["summary"]], mean, rtol=1e-15)
    np.testing.assert_allclose([s["std"] for s in meta["summary"]], std, rtol=1e-15)
    # saving again replaces the files in place
    write_sweep(tmp_path / "saved", spec, ROWS[:3])
    assert comparable(rows_from_csv((tmp_path / "saved" / "sweep.csv").read_text())) == comparable(ROWS[:3])


def test_an_incomplete_sweep_says_so_in_sweep_json(tmp_path):
    """A sweep cut short (Cancel, Ctrl+C): sweep.json counts only the m that have runs,
    names the m without any, and says the sweep is incomplete; the fitted slope is numpy's
    polyfit over the means > 0. (The figure's title: tests/figures/interference/test_grid_figures.py.)"""
    from sparsity_gui.core.interference.files import write_sweep

    planned = (8, 16, 32, 64, 128, 256, 512)
    spec = SweepSpec(InterferenceParams(n=N, m=8, steps=100), m_values=planned, seeds=3)
    write_sweep(tmp_path, spec, ROWS)
    meta = json.loads((tmp_path / "sweep.json").read_text())
    with_runs = sorted({r.m for r in ROWS})
    assert meta["complete"] is False and meta["runs_planned"] == 21 and meta["runs_done"] == len(ROWS)
    assert meta["m_with_runs"] == with_runs == [8, 16, 32, 64, 128]
    assert meta["m_without_runs"] == [256, 512]
    assert [s["m"] for s in meta["summary"]] == with_runs
    ms, mean, _ = by_m(ROWS)
    keep = mean > 0
    assert meta["fitted_loglog_slope"] == pytest.approx(
        np.polyfit(np.log10(ms[keep]), np.log10(mean[keep]), 1)[0], rel=1e-12
    )
    assert meta["predicted_loglog_slope"] == -1.0 and "SD" in meta["bars"]
    # a complete sweep says nothing of the kind
    full = SweepSpec(InterferenceParams(n=N, m=8, steps=100), m_values=(8, 16, 32), seeds=3)
    rows = [r for r in ROWS if r.m <= 32]
    write_sweep(tmp_path / "full", full, rows)
    meta = json.loads((tmp_path / "full" / "sweep.json").read_text())
    assert meta["complete"] is True and meta["m_without_runs"] == []
