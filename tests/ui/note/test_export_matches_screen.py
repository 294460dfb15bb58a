"""The real window's *Export figure* shows what its panels show at that instant (issue 34):
Weights, sorted spans the ranks the screen shows (the survivors, not 1..m); outside the note's
regime the L1 legend on screen and the exported figure, its JSON and its SVG all say so; in
the regime, after a live change of λ, the screen's law and the exported one are drawn with
the bulk c (fitted back here from the drawn points)."""

from __future__ import annotations

import json
import runpy

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.core.note.metrics import COL
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.figures.save import arrays_of
from tests.figures.figure_files import svg_texts

TIMEOUT = 60_000


def panel(win, name):
    return next(p for p in win.panels if type(p).__name__ == name)


def paused(qtbot, win):
    QTest.keyClick(win, QtCore.Qt.Key.Key_Space)  # the user's pause
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(80)
    QtWidgets.QApplication.processEvents()
    return win.snapshot


def exported_figure(win, index: int, path):
    """Export the panel as the user does, then draw it with the script written beside it
    from the JSON written beside it: (data, Figure, SVG texts without whitespace)."""
    import matplotlib
    from matplotlib.figure import Figure

    assert win.exports.export_figure(index, path), win.last_error
    data = arrays_of(json.loads(path.with_suffix(".json").read_text(encoding="utf-8")))
    space = runpy.run_path(str(path.with_suffix(".py")), run_name="exported_script")
    name = next(k for k in space if k in ("weights_sorted", "l1_decay") and callable(space[k]))
    with matplotlib.rc_context(space["STYLE"]):
        fig = Figure(figsize=space["SIZE"], layout="constrained")
        space[name](fig, data)
    texts = ["".join(t.split()) for t in svg_texts(path.read_bytes())] if path.suffix == ".svg" else []
    return data, fig, texts


def fitted_back(x, y, lam_t_of_t, w0: float) -> float:
    """c of w = w(0) + c·λt, least squares through points (t, ‖W‖₁ = 1/w)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y) & (y > 0)
    lt = lam_t_of_t(x[keep])
    return float(np.dot(lt, 1.0 / y[keep] - w0) / np.dot(lt, lt))


def test_a_late_instant_outside_the_regime(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=10_000, lam=1e-2, seed=0), speed=60.0)
    qtbot.waitUntil(
        lambda: (
            win.snapshot is not None
            and win.snapshot.run_id == win.run_id
            and win.snapshot.history.shape[0] > 0
            and win.snapshot.history[-1, COL["nonzero"]] <= 12
        ),
        timeout=TIMEOUT,
    )
    snap = paused(qtbot, win)
    qtbot.wait(300)  # the panels' ranges settle
    QtWidgets.QApplication.processEvents()
    sorted_panel = panel(win, "SortedWeightsPanel")
    screen_lo, screen_hi = sorted_panel.plot.vb.viewRange()[0]

    data, fig, _texts = exported_figure(win, 0, tmp_path / "sorted.svg")
    alive = data["rank"][data["abs_w"] > 0]
    assert 1 <= alive.size <= 12 and data["rank"].max() >= 9000
    lo, hi = fig.axes[0].get_xlim()
    # the survivors inside both ranges, neither reaching far past them
    for a, b, who in ((lo, hi, "export"), (screen_lo, screen_hi, "screen")):
        assert a <= alive.min() and b >= alive.max(), (who, a, b, alive)
        assert b - a <= 2.0 * (alive.max() - alive.min()) + 4.0, (who, a, b, alive)
    assert abs(hi - screen_hi) <= 0.5 * (screen_hi - screen_lo), (lo, hi, screen_lo, screen_hi)

    # outside the regime: the screen's legend, the export's JSON, legend and SVG text
    decay = panel(win, "DecayPanel")
    assert "outside the note's regime" in decay.plot.legend.getLabel(decay.law).text
    assert snap.regime["lam_l1_w0"] > 0.25
    data, fig, texts = exported_figure(win, 3, tmp_path / "decay.svg")
    assert data["regime"]["holds"] is False
    assert data["regime"]["lam_l1_w0"] == pytest.approx(snap.regime["lam_l1_w0"], rel=1e-12)
    assert any("outsidethenote'sregime" in t for t in texts)
    labels = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert any("outside the note's regime" in label for label in labels)
    assert not any("bulk" in t for t in texts)  # hidden on screen, hidden here


def test_after_a_live_lam_change_in_the_regime_both_draw_the_bulk_c(qtbot, make_window, tmp_path):
    # raised within the transient (t = 0.2 < 0.3), while the feature push is still ahead:
    # θ still rises, the balance still possible, so the note's premise holds (a raise at
    # balance makes θ fall back for a while after its jump: outside the premise)
    win = make_window(SimParams(m=1000, lam=4e-3, seed=0), playing=False, speed=1.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    for k in range(1, 7):  # six steps of 1/30 of simulated time at speed 1
        win.single_step()
        qtbot.waitUntil(lambda k=k: win.snapshot.t >= k / 30 - 1e-12, timeout=TIMEOUT)
    assert win.snapshot.t < 0.3
    win.on_params_changed({"lam": 5e-3})
    qtbot.waitUntil(lambda: win.snapshot.lam == 5e-3, timeout=TIMEOUT)
    win.on_speed_changed(40.0)
    win.set_playing(True)
    qtbot.waitUntil(lambda: win.snapshot.t > 90.0, timeout=TIMEOUT)
    snap = paused(qtbot, win)
    from sparsity_gui.core.note.metrics import regime_holds

    assert regime_holds(snap.regime) and np.isfinite(snap.fit.c_bulk)
    decay = panel(win, "DecayPanel")
    h = snap.history
    t, lam_t, w0 = h[:, COL["t"]], h[:, COL["lam_t"]], h[0, COL["w"]]

    def screen_lam_t(x):
        return np.interp(x, t, lam_t)

    # the screen: dashed law with the bulk c, dotted with c, each named
    assert fitted_back(decay.law.xData, decay.law.yData, screen_lam_t, w0) == pytest.approx(
        snap.fit.c_bulk, rel=1e-6
    )
    assert fitted_back(decay.law_c.xData, decay.law_c.yData, screen_lam_t, w0) == pytest.approx(
        snap.fit.c, rel=1e-6
    )
    assert f"bulk c = {snap.fit.c_bulk:.3f}" in decay.plot.legend.getLabel(decay.law).text
    assert f"c = {snap.fit.c:.3f}" in decay.plot.legend.getLabel(decay.law_c).text

    # the export at the same instant (replayed): the dashed line is its JSON's bulk c, which is
    # the screen's to within the resampling of the live history
    data, fig, texts = exported_figure(win, 3, tmp_path / "decay.svg")
    assert data["regime"]["holds"] is True
    assert data["t"][-1] == pytest.approx(snap.t, rel=1e-9)
    bulk = data["fit"]["c_bulk"]
    assert bulk == pytest.approx(snap.fit.c_bulk, rel=0.05)
    ax = fig.axes[0]
    dashed = next(ln for ln in ax.get_lines() if ln.get_linestyle() == "--")

    def export_lam_t(x):
        return np.interp(x, data["t"], data["lam_t"])

    assert fitted_back(dashed.get_xdata(), dashed.get_ydata(), export_lam_t, data["w"][0]) == pytest.approx(
        bulk, rel=1e-9
    )
    assert any("bulk" in t and f"{bulk:.3f}" in t for t in texts)
    assert not any("regime" in t for t in texts)
    # the change of λ is marked on the exported figure
    assert any(a.get_gid() == "lam-change-label" for a in ax.texts)
