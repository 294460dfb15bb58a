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
    assert "largest λ of the schedule, λ = 0.05" in first and "at the start" not in first


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
