"""The windows' texts write settings as the settings tables do (issue 46): in each real
window, with a schedule, a warm-up, noise and a live change set, every setting the status
line, the note window's argument dock and the interference window's dock note show is the
table's symbol and format of the window's current parameters. The expected texts are made
here from the parameters and the table's ``fmt`` (and a few are written out by hand)."""

from __future__ import annotations

import re

import numpy as np
from settings_draws import interference_draw, note_draw

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS, run_settings
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


# --- random settings: every text, every setting it names -----------------------------------
# the settings a run's description names even at their defaults (the run line, the titles)
NOTE_ALWAYS = ("lam", "m")
INTERFERENCE_ALWAYS = ("m", "n", "l1")
# where a setting's "symbol = value" may begin in a text: a line's start, after ', ', ': ', '(' or '  '
_START = r"(?:^|(?<=, )|(?<=: )|(?<=\()|(?<=  ))"
# where its value ends: ', ' (knots and counts hold a bare ','), ';', a line's end, ')', a sentence's '.'
_END = r"(?=, |;|\)|\.(?:\s|$)|  | by step|$)"


def shown_settings(text: str, table) -> list[tuple[object, str]]:
    """Each (row, 'symbol = value') ``text`` writes of ``table``'s settings, the longest
    symbol first where one holds another (λ warm-up before λ, noise σ before σ)."""
    found, taken = [], set()
    for row in sorted(table, key=lambda s: -len(s.symbol)):
        pattern = _START + re.escape(row.symbol) + r" = (.+?)" + _END
        for match in re.finditer(pattern, text, flags=re.M):
            if match.start() not in taken:
                taken.add(match.start())
                found.append((row, f"{row.symbol} = {match[1]}"))
    return found


def assert_written_by_table(text: str, table, values: dict) -> int:
    """Every setting ``text`` names is its row's text of its value in ``values``; how many."""
    found = shown_settings(text, table)
    for row, shown in found:
        assert shown == row.text(values[row.name]), (text, shown, row.text(values[row.name]))
    return len(found)


def described(table, values: dict, default: dict, always, skip=()) -> str:
    """A run's description written out here: the settings always named and those unlike a
    default run's, in the table's order, each as 'symbol = fmt(value) unit'."""
    return ", ".join(
        written(s, values[s.name])
        for s in table
        if s.name in values
        and (s.name in always or (s.in_pin_name and s.name not in skip and values[s.name] != default[s.name]))
    )


def _check_note_window(win) -> None:
    snap, lam = win.snapshot, NOTE_SETTINGS["lam"]
    values = NOTE_SETTINGS.values(win.params)
    status = {key: label.text() for key, label in win.status_labels.items()}
    assert status["lam"] == f"λ = {lam.fmt(snap.lam)}"  # the λ in force, as the table writes it
    assert float(status["t"].removeprefix("t = ")) == float(f"{snap.t:.6g}")
    run = win.note.toPlainText().split("\n")[0]
    skip = () if win.params.method == "gd" else ("eta",)
    default = NOTE_SETTINGS.values(SimParams())
    assert run == f"This run: {described(NOTE_SETTINGS, values, default, NOTE_ALWAYS, skip)}."
    assert assert_written_by_table(run, NOTE_SETTINGS, values) >= 2
    # the change markers: each λ changed to, as the table writes it (0 as 0)
    changed = {lam.text(c.lam) for c in snap.lam_changes[1:]}
    for panel in win.panels:
        for _plot, markers in panel._markers:
            assert set(markers.labels()) <= changed, (markers.labels(), changed)
    for pin in win.pin_control.board:
        label = win.pin_control.labels[pin.number]
        assert_written_by_table(label, NOTE_SETTINGS, pin.param_dict)


def test_the_note_windows_texts_write_random_settings_as_the_table(qtbot, make_window):
    rng = np.random.default_rng(4648)
    # a late end: each run is paused while it goes on, and goes on after the live change
    draws = [d.with_changes(t_end=1e4) for d in (note_draw(rng) for _ in range(6)) if d.lam > 0][:3]
    win = make_window(draws[0])  # one window, reconfigured
    for k, params in enumerate(draws):
        if k:
            win.start_run(params)
            win.set_playing(True)
        qtbot.waitUntil(
            lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.snapshot.t > 0.5,
            timeout=TIMEOUT,
        )
        win.set_playing(False)
        _idle(qtbot, win)
        _check_note_window(win)
        assert win.pin_control.pin(), win.last_error
        # a live change of λ (0 the first time: it reads 0), then on
        lam = 0.0 if k == 0 else float(f"{params.lam * 1.7 + 1e-3:.3g}")
        win.on_params_changed({"lam": lam})
        win.set_playing(True)
        qtbot.waitUntil(
            lambda: any(c.t > 0 and c.lam == lam for c in win.snapshot.lam_changes),  # noqa: B023
            timeout=TIMEOUT,
        )
        win.set_playing(False)
        _idle(qtbot, win)
        _check_note_window(win)
        assert any(p._markers for p in win.panels)  # the change is marked
    assert win.status_labels["lam"].text() != "λ = 0.0e0"


def _check_interference_window(win) -> None:
    p, snap, S = win.params, win.snapshot, INTERFERENCE_SETTINGS
    status = win.status_line.text().split("\n")[0]
    assert status.startswith(f"step {snap.step:,} / {S['steps'].fmt(p.steps)}"), status
    lines = win.controls.units.text().split("\n")
    values = run_settings(p, win.controls._w0_source)
    default = {**INTERFERENCE_SETTINGS.values(InterferenceParams()), "w0": None}
    default["weight_decay"] = 0.01 if p.optimizer == "adamw" else 0.0  # torch's, by optimizer
    skip = () if p.optimizer in ("adam", "adamw") else ("beta1", "beta2", "eps")
    assert lines[0] == "run: " + described(S, values, default, INTERFERENCE_ALWAYS, skip)
    assert assert_written_by_table(lines[0], S, values) >= 3
    # λ = l1/4 and η = 4·lr as the note's table writes them; t by step as the status line's
    lam, eta = NOTE_SETTINGS["lam"].fmt(p.l1 / 4), NOTE_SETTINGS["eta"].fmt(4 * p.lr)
    assert lines[1].startswith(f"λ = l1/4 = {lam},  η = 4·lr = {eta},  t = 4·Σ lr = ")
    assert f" by step {S['steps'].fmt(p.steps)}" in lines[1]
    dock_t = re.search(r"t = 4·Σ lr = (\S+) by step", lines[1])[1]
    status_t = re.search(r"\(t = (\S+)\)", status)
    if snap.state == "finished" and status_t:  # one time, one text
        assert status_t[1] == dock_t, (status, lines[1])
    for line in lines[2:]:
        if line.startswith("in force at step"):  # the l1 and lr the run used at its step
            meas = snap.latest
            used = f"{written(S['l1'], meas.l1)}, {written(S['lr'], meas.lr)}"
            assert line == f"in force at step {meas.step:,}: {used}"
    # the step panels' marks: where a schedule turned, what was changed live, by the table
    start = snap.initial_params or p
    knots = {S[n].text(v) for n in ("l1", "lr") for _x, v in getattr(start, f"{n}_schedule")}
    changes = {
        ", ".join(S[n].text(c.value_dict[n]) for n in ("l1", "lr") if n in c.value_dict) for c in snap.changes
    }
    for panel in win.panels:
        for _x, label in panel._drawn:
            assert " = " not in label or label in knots | changes, (label, knots, changes)
    # an exported figure marks them in the screen's words
    drawn = [label for _x, label in win.poly_panel._drawn]
    for name, part in win.exports.run_data().items():
        if "changes" in part:
            assert [text for _step, text in part["changes"]] == drawn, name
    for pin in win.pin_control.board:
        assert_written_by_table(win.pin_control.labels[pin.number], S, pin.param_dict)


def test_the_interference_windows_texts_write_random_settings_as_the_table(qtbot, make_iwindow):
    rng = np.random.default_rng(4649)
    draws = [interference_draw(rng) for _ in range(3)]
    draws[0] = draws[0].with_changes(optimizer="gd-zero")  # a note time in the status line
    win = make_iwindow(draws[0])  # one window, reconfigured
    for k, params in enumerate(draws):
        if k:
            win.start_run(params)
        _finished(qtbot, win)
        win.repaint_now()
        _check_interference_window(win)
        assert win.pin_control.pin(), win.last_error
        # a live change of l1 and lr (each ends its schedule), and more steps to run on
        l1, lr = float(f"{params.l1 * 1.5 + 1e-4:.3g}"), float(f"{params.lr * 0.7:.3g}")
        win.on_params_changed({"l1": l1, "lr": lr})
        win.on_params_changed({"steps": params.steps + 17})
        _finished(qtbot, win)
        win.repaint_now()
        _check_interference_window(win)
        assert any(label.startswith("l1 = ") for panel in win.panels for _x, label in panel._drawn)


def test_the_regimes_reason_and_the_argument_write_thetas_fall_alike():
    """θ falling to 0 (λ scheduled down to 0): the short reason a figure and run.json give
    and the dock's step 6 both say 100 % (never 1e+02 %)."""
    from sparsity_gui.core.note.metrics import regime_failures
    from sparsity_gui.core.note.sampled import simulate_samples
    from sparsity_gui.ui.note.argument import theta_rise_sentence

    knots = ((0.0, 0.01), (4.0, 0.01), (4.5, 0.0))
    params = SimParams(m=200, lam=0.0, seed=1, t_end=10.0, lam_schedule=knots)
    regime = simulate_samples(params, None, 101).regime
    assert regime_failures(regime, short=True) == ["θ fell 100 % by t = 4.5"]
    assert theta_rise_sentence(regime)[0].startswith("θ fell by 100 %, from ")
