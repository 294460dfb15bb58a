"""What the note's surfaces say under a λ warm-up (issue 46 §2): θ's sufficient condition is
one for a constant λ (not judged under a rising λ(t), where θ can fall); the premise's
reasons say which λ they judge; an exported figure's regime caveat always has a reason;
the dock's step 4 names Λ(t) when λ changed."""

from __future__ import annotations

import json

import numpy as np

from sparsity_gui.core.note.metrics import COL, regime_failures
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import simulate_samples
from sparsity_gui.core.note.schedule import warmup_knots
from sparsity_gui.figures.note.figures import fit_constants, note_figure_files, panel_data, run_snapshot
from sparsity_gui.ui.note.argument import NoteView


def warm(m: int, lam: float, t_warm: float, seed: int) -> SimParams:
    return SimParams(m=m, lam=lam, seed=seed, lam_schedule=warmup_knots(t_warm, lam))


def test_under_a_warmup_theta_falls_and_the_condition_is_not_claimed():
    """run --m 200 --lam 1e-2 --lam-warmup 30 --seed 1: θ = λ/(1-‖W‖²) falls on the run's
    rows, so no sufficient condition may say it rises: the condition is null (for a
    constant λ), theta_rises false, and the reasons say that θ fell."""
    run = simulate_samples(warm(200, 1e-2, 30.0, 1), None, 2001)
    t, lam, n2 = run.rows[:, COL["t"]], run.rows[:, COL["lam"]], run.rows[:, COL["norm2_sq"]]
    theta = lam / (1.0 - n2)
    early = (t > 0.5) & (t < 20.0)
    assert np.any(np.diff(theta[early]) < -1e-3 * theta[early][1:])  # θ falls somewhere
    regime = run.regime
    assert regime["theta_rises"] is False
    assert regime["theta_rise_condition"] is None
    reasons = regime_failures(regime)
    assert reasons and any("θ fell" in r for r in reasons)
    # a constant λ keeps the judgement (the same start: it holds, and θ rises)
    constant = simulate_samples(SimParams(m=200, lam=1e-2, seed=1), None, 201).regime
    assert constant["theta_rise_condition"] is True and constant["theta_rises"] is True


def test_no_balance_under_a_warmup_is_judged_at_the_schedules_largest_lambda():
    run = simulate_samples(warm(1000, 5e-2, 5.0, 0).with_changes(t_end=8.0), None, 101)
    regime = run.regime
    assert regime["balance_possible"] is False
    (first, *_rest) = regime_failures(regime)
    assert "largest λ of the schedule, λ = 5.0e-2" in first and "at the start" not in first


def test_an_exported_figure_under_a_schedule_gives_its_reason(tmp_path):
    """Before: the figure JSON's reason was '' and the layout's title ended at its colon."""
    run = simulate_samples(warm(200, 1e-2, 30.0, 1), None, 401)
    data = panel_data(run_snapshot(run), fit=fit_constants(run))
    regime = data["l1_decay"]["regime"]
    assert regime["holds"] is False and regime["reason"] == "; ".join(regime_failures(run.regime, short=True))
    assert "θ fell" in regime["reason"]
    files = note_figure_files(data, formats=("svg",), names=["l1_decay"])
    assert json.loads(files["layout.json"])["regime"]["reason"] == regime["reason"]


def test_the_dock_names_capital_lambda_and_the_condition_under_a_warmup(qtbot):
    view = NoteView()
    qtbot.addWidget(view)
    run = simulate_samples(warm(200, 1e-2, 30.0, 1), None, 401)
    view.update_from(run_snapshot(run))
    text = view.toPlainText()
    assert "w(0) + c·Λ(t)" in text and "c·λt" not in text
    assert "is for a constant λ: not judged" in text
    constant = simulate_samples(SimParams(m=200, lam=1e-2, seed=1), None, 201)
    view.update_from(run_snapshot(constant))
    text = view.toPlainText()
    assert "w(0) + c·λt" in text and "(the condition holds)" in text


def test_an_exported_norm_balance_draws_the_lambda_strip_the_screen_draws():
    """The live panel puts λ(t) in a strip under the ratio for a run with a schedule; the
    exported figure (and its script, from the JSON) draws it too, and not without one."""
    from sparsity_gui.figures.note.figures import note_figure

    run = simulate_samples(warm(200, 1e-2, 30.0, 1), None, 401)
    data = panel_data(run_snapshot(run), fit=fit_constants(run))
    assert data["norm_balance"]["lam_strip"] is True
    fig = note_figure("norm_balance", data)
    strip = fig.axes[2]
    (line,) = strip.get_lines()
    np.testing.assert_array_equal(line.get_xdata(), run.rows[:, COL["t"]])
    np.testing.assert_array_equal(line.get_ydata(), run.rows[:, COL["lam"]])
    assert line.get_ydata()[0] == 0.0 and line.get_ydata()[-1] == 1e-2  # the ramp from 0
    constant = simulate_samples(SimParams(m=200, lam=1e-2, seed=1), None, 201)
    plain = panel_data(run_snapshot(constant), fit=fit_constants(constant))
    assert plain["norm_balance"]["lam_strip"] is False
    assert len(note_figure("norm_balance", plain).axes) == 2


def _ratio_top(warmup_run):
    from sparsity_gui.figures.note.figures import note_figure

    return note_figure("norm_balance", warmup_run).axes[1].get_ylim()


def test_the_ratio_axis_reads_the_balance_under_a_ramp_from_zero_and_with_pins(qtbot, make_window):
    """While a warm-up's λ is low the ratio is large (13 at t = 1 here, m = 200):
    the range's top counts each run's rows from where its λ reached half its largest (and
    from t >= 1), in the exported figure, on the live panel and for a pinned run alike. Its
    bottom counts every row from t >= 1: under the ramp the ratio dips below balance (the
    balance lags a rising λ), and that dip stays on the axis."""
    run = simulate_samples(warm(200, 1e-2, 30.0, 1), None, 2001)
    t = run.rows[:, COL["t"]]
    with np.errstate(divide="ignore", invalid="ignore"):  # λ = 0 at t = 0
        ratio = run.rows[:, COL["feature_push"]] / run.rows[:, COL["reg_push"]]
    assert np.nanmax(ratio[t >= 1.0]) > 10.0  # what set the axis before
    up = t >= 15.0  # λ at half its largest from t = 15 on
    lo, hi = _ratio_top(panel_data(run_snapshot(run), fit=fit_constants(run)))
    assert lo <= np.nanmin(ratio[up]) and np.nanmax(ratio[up]) <= hi < 1.2
    dip = np.nanmin(ratio[t >= 1.0])
    assert dip < np.nanmin(ratio[up]) - 0.01  # the ramp's dip lies below what follows it
    assert lo <= dip
    # a pinned warm-up run beside a constant λ: the same rule for the pin's rows
    from sparsity_gui.core.note.pins import PIN_COLUMNS, pin_params
    from sparsity_gui.core.pins import PinBoard

    constant = simulate_samples(SimParams(m=200, lam=1e-2, seed=1), None, 501)
    pin = PinBoard().add(pin_params(run.sim.params), PIN_COLUMNS, run.rows[:, : len(PIN_COLUMNS)])
    data = panel_data(
        run_snapshot(constant), pins=[pin], pin_labels={1: "pin 1"}, fit=fit_constants(constant)
    )
    assert _ratio_top(data)[1] < 2.0  # (the constant run's own transient reaches 1.35)

    # the live panel: a warm-up run, then a constant one beside it pinned
    win = make_window(warm(1000, 1e-2, 50.0, 0))
    win.on_speed_changed(0.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 60.0, timeout=120_000)
    qtbot.wait(200)
    balance = next(p for p in win.panels if type(p).__name__ == "BalancePanel")
    h = win.snapshot.history
    early = h[(h[:, COL["t"]] >= 1.0) & (h[:, COL["t"]] < 5.0)]
    assert np.nanmax(early[:, COL["feature_push"]] / early[:, COL["reg_push"]]) > 5.0
    assert balance.ratio_plot.vb.viewRange()[1][1] < 2.0
    settled = h[h[:, COL["t"]] >= 1.0]
    dip = np.nanmin(settled[:, COL["feature_push"]] / settled[:, COL["reg_push"]])
    assert balance.ratio_plot.vb.viewRange()[1][0] <= dip
    assert win.pin_control.pin()
    win.start_run(SimParams(m=1000, lam=1e-2))
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id and win.snapshot.t > 20.0, timeout=120_000)
    qtbot.wait(200)
    assert balance.ratio_plot.vb.viewRange()[1][1] < 2.0
