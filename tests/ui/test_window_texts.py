"""The windows' texts write settings as the settings tables do (issue 46): in each real
window, with a schedule, a warm-up, noise and a live change set, every setting the status
line, the note window's argument dock and the interference window's dock note show is the
table's symbol and format of the window's current parameters. The expected texts are made
here from the parameters and the table's ``fmt`` (and a few are written out by hand)."""

from __future__ import annotations

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.schedule import warmup_knots
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.ui.note.file_menu import _describe

TIMEOUT = 120_000  # ms: each wait ends as soon as the run gets there


def written(setting, value) -> str:
    """'symbol = value unit', from the table's symbol, fmt and unit."""
    shown = setting.fmt(value)
    return f"{setting.symbol} = {shown}" + (f" {setting.unit}" if setting.unit and shown != "none" else "")


def named(table, params, default: dict, skip=()) -> str:
    """The settings of ``params`` that differ from ``default`` (values by name), in the
    table's order."""
    parts = [
        written(s, s.value(params))
        for s in table
        if s.in_pin_name and s.name not in skip and s.value(params) != default[s.name]
    ]
    return ", ".join(parts)


# --- the note window ---------------------------------------------------------------------
def _idle(qtbot, win):
    """Paused, and the painted snapshot is of the window's parameters (a live change taken)."""
    qtbot.waitUntil(
        lambda: (
            win.snapshot is not None
            and win.snapshot.run_id == win.run_id
            and win.snapshot.state in ("paused", "finished")
            and win.snapshot.params == win.params
        ),
        timeout=TIMEOUT,
    )
    qtbot.wait(300)  # the idle snapshot painted: status and dock are set from it


def _note_run_line(params) -> str:
    skip = () if params.method == "gd" else ("eta",)
    return f"This run: {named(NOTE_SETTINGS, params, NOTE_SETTINGS.values(SimParams()), skip)}."


def test_the_note_windows_texts_write_settings_as_the_table(qtbot, make_window):
    lam = NOTE_SETTINGS["lam"]
    params = SimParams(
        m=500, lam=2e-3, sigma=0.5, seed=3, method="gd", eta=0.1, t_end=1000.0,
        lam_schedule=warmup_knots(500.0, 2e-3),
    )  # fmt: skip
    win = make_window(params)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 1.0, timeout=TIMEOUT)
    win.set_playing(False)
    _idle(qtbot, win)
    snap = win.snapshot
    assert 0.0 < snap.t < 500.0  # under the warm-up: λ in force is λ·t/T
    in_force = 2e-3 * snap.t / 500.0
    np.testing.assert_allclose(snap.lam, in_force, rtol=1e-12)
    assert win.status_labels["lam"].text() == f"λ = {lam.fmt(snap.lam)}"
    argument = win.note.toPlainText()
    expected = _note_run_line(win.params)
    assert expected in argument
    assert "This run: λ = 2.0e-3, λ warm-up = 500, m = 500, σ = 0.5, method = gd, η = 0.1, " in argument
    assert "seed = 3, t_end = 1000." in argument
    # a preset's description and the scaling tab write the settings as the table does
    assert _describe(win.params) == (
        "m = 500, λ = 2.0e-3, λ warm-up = 500, σ = 0.5, seed = 3, method = gd, η = 0.1, t_end = 1000"
    )
    win.scaling.refresh_base()
    assert "from the Parameters dock: σ = 0.5, first seed 3; exact solver" in win.scaling.base_label.text()
    assert win.scaling.current_text((100_000, 3e-4, 12_345)) == "running m = 10⁵, λ = 3.0e-4, seed 12345"

    win.on_params_changed({"lam": 0.01})  # a live change: it ends the warm-up
    _idle(qtbot, win)
    assert win.params.lam_schedule == ()
    assert win.status_labels["lam"].text() == written(lam, win.params.lam) == "λ = 1.0e-2"
    argument = win.note.toPlainText()
    assert _note_run_line(win.params) in argument
    assert "This run: λ = 1.0e-2, m = 500, σ = 0.5, method = gd, η = 0.1, seed = 3, t_end = 1000." in argument
    assert "warm-up" not in argument.split("\n")[0]


# --- the interference window ---------------------------------------------------------------
def _finished(qtbot, win):
    qtbot.waitUntil(
        lambda: (
            win.snapshot is not None
            and win.snapshot.run_id == win.run_id
            and win.snapshot.state == "finished"
            and win.snapshot.params == win.params
        ),
        timeout=TIMEOUT,
    )
    qtbot.wait(300)


def _check_interference_texts(win) -> None:
    """Every setting the texts show, from the window's parameters and the table."""
    p, snap, S = win.params, win.snapshot, INTERFERENCE_SETTINGS
    status = win.status_line.text().split("\n")[0]
    assert status.startswith(f"step {snap.step:,} / {S['steps'].fmt(p.steps)}"), status
    lines = win.controls.units.text().split("\n")
    default = {**INTERFERENCE_SETTINGS.values(InterferenceParams()), "w0": None}
    default["weight_decay"] = 0.01 if p.optimizer == "adamw" else 0.0  # torch's, by optimizer
    adam = p.optimizer in ("adam", "adamw")
    assert lines[0] == "run: " + named(S, p, default, () if adam else ("beta1", "beta2", "eps"))
    # λ = l1/4 and η = 4·lr as the note's table writes λ and η (format_sci, format_value)
    lam, eta = NOTE_SETTINGS["lam"].fmt(p.l1 / 4), NOTE_SETTINGS["eta"].fmt(4 * p.lr)
    assert lines[1].startswith(f"λ = l1/4 = {lam},  η = 4·lr = {eta},  t = 4·Σ lr = ")
    assert lines[1].endswith(f" by step {S['steps'].fmt(p.steps)}")
    # l1 in force at the last step: the knots' line, by hand
    (t0, v0), (t1, v1) = p.l1_schedule
    l1_now = float(np.interp(snap.step, [t0, t1], [v0, v1]))
    assert lines[2] == f"in force at step {snap.step:,}: {written(S['l1'], l1_now)}, {written(S['lr'], p.lr)}"
    drawn = f"{written(S['seed'], p.seed)}, {written(S['sigma'], p.sigma)}"
    assert win.w0_line.text() == f"W(0): normal draw ({drawn})"


def test_the_interference_windows_texts_write_settings_as_the_table(qtbot, make_iwindow):
    params = InterferenceParams(
        n=8, m=16, optimizer="gd-zero", l1=0.04, lr=0.05, steps=10_000, seed=5, sigma=0.5,
        noise="bernoulli", noise_sigma=0.1, l1_schedule="0:0,300:0.04", lr_warmup=100,
    )  # fmt: skip
    win = make_iwindow(params)
    _finished(qtbot, win)
    _check_interference_texts(win)
    lines = win.controls.units.text().split("\n")
    assert win.status_line.text().startswith("step 10,000 / 10,000")
    assert lines[0] == (
        "run: m = 16, n = 8, l1 = 4.0e-2, lr = 5.0e-2, optimizer = gd-zero, steps = 10,000, seed = 5, "
        "σ = 0.5, noise = Bernoulli, noise σ = 0.1, l1 schedule = 0:0,300:0.04, lr warm-up = 100 steps"
    )
    assert lines[1].startswith("λ = l1/4 = 1.0e-2,  η = 4·lr = 0.2,  t = 4·Σ lr = ")
    assert lines[2] == "in force at step 10,000: l1 = 4.0e-2, lr = 5.0e-2"
    assert win.w0_line.text() == "W(0): normal draw (seed = 5, σ = 0.5)"

    # live changes: lr (it ends the lr warm-up), the noise's σ, and more steps to run on
    win.on_params_changed({"lr": 0.02})
    win.on_params_changed({"noise_sigma": 0.2})
    win.on_params_changed({"steps": 12_000})
    _finished(qtbot, win)
    assert win.params.lr_warmup == 0 and win.params.l1_schedule  # the l1 schedule goes on
    _check_interference_texts(win)
    lines = win.controls.units.text().split("\n")
    assert lines[0] == (
        "run: m = 16, n = 8, l1 = 4.0e-2, lr = 2.0e-2, optimizer = gd-zero, steps = 12,000, "
        "seed = 5, σ = 0.5, noise = Bernoulli, noise σ = 0.2, l1 schedule = 0:0,300:0.04"
    )
    assert lines[2] == "in force at step 12,000: l1 = 4.0e-2, lr = 2.0e-2"
    assert win.status_line.text().startswith("step 12,000 / 12,000")
