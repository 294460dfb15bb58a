"""Random settings across every knob of each model (tests/settings_draws.py: a seeded
generator; schedules, warm-ups, noise and a live change included) survive every surface
that stores them: pin → Export all → pins.json (and the figures' JSON), Save session →
Open session, and `run --figures` / `interference --figures` → the
figure JSON and run.json. A pinned run whose settings differ from the live run's is named
by each setting that differs, never "same parameters"."""

import json

import numpy as np
from settings_draws import interference_draw, note_draw

from sparsity_gui.cli.interference import interference_command
from sparsity_gui.cli.note import run_command
from sparsity_gui.core.interference.params import QUIET_FIELDS
from sparsity_gui.core.interference.session import load_session as load_interference_session
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS, run_settings
from sparsity_gui.core.note.session import load_session
from sparsity_gui.core.note.settings import NOTE_SETTINGS

TIMEOUT = 120_000  # ms: waits end as soon as the run gets there; a loaded machine is slow
PINS = 4


def as_json(value):
    return json.loads(json.dumps(value))


def started(qtbot, win):
    qtbot.waitUntil(
        lambda: (
            win.snapshot is not None
            and win.snapshot.run_id == win.run_id
            and win.snapshot.history.shape[0] > 1
        ),
        timeout=TIMEOUT,
    )


def names_every_difference(label: str, pinned: dict, live: dict, table) -> None:
    """The label lists each setting that differs (η, β₁, β₂, ε included), and says "same
    parameters" only when none does."""
    differ = [s for s in table if s.in_pin_name and pinned.get(s.name) != live.get(s.name)]
    if not differ:
        assert label.endswith("same parameters"), label
        return
    assert "same parameters" not in label, label
    unnamed = [s.name for s in differ if s.symbol + " = " not in label]
    assert not unnamed, (label, unnamed)


def test_note_settings_survive_pins_export_all_a_session_and_run_figures(qtbot, make_window, tmp_path):
    rng = np.random.default_rng(4646)
    draws = [note_draw(rng, t_end=True) for _ in range(PINS)]
    win = make_window(draws[0])
    for params in draws:
        win.start_run(params)
        started(qtbot, win)
        assert win.pin_control.pin(), win.last_error
    last = draws[-1]
    # a live change (it ends λ(t)) to gradient descent: then every pin's η is its own
    # setting in its name (the exact flow has no step, so between two exact runs η is named
    # only alone: tests/core/test_settings.py)
    win.on_params_changed({"lam": float(f"{last.lam * 2 + 1e-3:.3g}"), "method": "gd"})
    qtbot.waitUntil(lambda: win.snapshot.params == win.params, timeout=TIMEOUT)
    qtbot.wait(50)
    live = win.params
    assert live.lam_schedule == () and live.lam != last.lam and live.method == "gd"

    folder = tmp_path / "all"
    assert win.exports.export_all(folder, formats="png"), win.last_error  # only the JSON is read
    listing = json.loads((folder / "pins.json").read_text())
    live_values = as_json(NOTE_SETTINGS.pin_values(live))
    for entry, params in zip(listing, draws, strict=True):
        assert entry["parameters"] == as_json(NOTE_SETTINGS.pin_values(params))
        if params is not last:
            assert entry["parameters"]["eta"] != live_values["eta"]  # each pin's own η, named
        names_every_difference(entry["label"], entry["parameters"], live_values, NOTE_SETTINGS)
    # the figures' JSON: the live run's settings, and each pinned run's beside its name
    for name in ("norm_balance", "threshold_crossing"):
        panel = json.loads((folder / f"{name}.json").read_text())
        assert panel["settings"] == as_json(NOTE_SETTINGS.values(live)), name
        assert [p["settings"] for p in panel["pins"]] == [e["parameters"] for e in listing]
        assert [p["label"] for p in panel["pins"]] == [e["label"] for e in listing]

    # the session Export all wrote: the run (its settings at t = 0 and the live change), the pins
    session = load_session(folder / "session.json")
    assert session.script.params.with_changes(t_end=None) == last.with_changes(t_end=None)
    assert session.params.lam == live.lam and session.params.lam_schedule == ()
    assert [p.param_dict for p in session.pins] == [e["parameters"] for e in listing]
    labels = dict(win.pin_control.labels)
    assert win.files.open_session(folder / "session.json"), win.last_error
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    assert win.params.lam == live.lam and win.pin_control.labels == labels

    # run --figures: the figure JSON and run.json keep every setting of a random run
    params = note_draw(np.random.default_rng(11), t_end=True)
    warmup = NOTE_SETTINGS["lam_warmup"].value(params)
    argv = ["--m", str(params.m), "--lam", repr(params.lam), "--sigma", repr(params.sigma)]
    argv += ["--seed", str(params.seed), "--method", params.method, "--eta", repr(params.eta)]
    argv += ["--t-end", repr(params.t_end), "--samples", "40", "--figures", "--formats", "png", "--dpi", "50"]
    argv += ["--out", str(tmp_path / "run")]
    if warmup:
        argv += ["--lam-warmup", repr(warmup)]
    elif params.lam_schedule:
        argv += ["--lam-schedule", NOTE_SETTINGS["lam_schedule"].value(params)]
    assert run_command(argv) == 0
    figure = json.loads((tmp_path / "run" / "figures" / "l1_decay.json").read_text())
    assert figure["settings"] == as_json(NOTE_SETTINGS.values(params))
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())["parameters"]
    for name in NOTE_SETTINGS.fields:
        value = getattr(params, name)
        if name == "lam_schedule":
            value = [list(k) for k in value] if value else None
        assert run_json.get(name) == value, name


def test_interference_settings_survive_pins_export_all_a_session_and_figures(qtbot, make_iwindow, tmp_path):
    rng = np.random.default_rng(4647)
    draws = [interference_draw(rng) for _ in range(PINS)]
    # the live run Adam's: then every pin's β₁, β₂, ε are settings its name lists when they
    # differ (under two other optimizers only alone: tests/core/test_settings.py)
    draws[-1] = draws[-1].with_changes(optimizer="adam")
    win = make_iwindow(draws[0])
    for params in draws:
        win.start_run(params)
        started(qtbot, win)
        assert win.pin_control.pin(), win.last_error
    last = draws[-1]
    win.on_params_changed({"l1": float(f"{last.l1 * 2 + 1e-3:.3g}")})  # a live change (ends l1's schedule)
    qtbot.waitUntil(lambda: win.snapshot.params == win.params, timeout=TIMEOUT)
    qtbot.wait(50)
    live = win.params
    assert (live.l1_warmup, live.l1_schedule) == (0, ())

    folder = tmp_path / "all"
    assert win.exports.export_all(folder, formats="png"), win.last_error  # only the JSON is read
    listing = json.loads((folder / "pins.json").read_text())
    live_values = as_json({**INTERFERENCE_SETTINGS.pin_values(live), "w0": None})
    for entry, params in zip(listing, draws, strict=True):
        assert entry["parameters"] == as_json({**INTERFERENCE_SETTINGS.pin_values(params), "w0": None})
        if params is not last:  # each pin's own β₁, β₂, ε, named
            assert all(entry["parameters"][k] != live_values[k] for k in ("beta1", "beta2", "eps"))
        names_every_difference(entry["label"], entry["parameters"], live_values, INTERFERENCE_SETTINGS)
    for name in ("polysemantic", "sparsity"):
        (path,) = folder.rglob(f"{name}.json")  # (in figures/)
        data = json.loads(path.read_text())
        assert data["settings"] == as_json(run_settings(live)), name
        assert [p["settings"] for p in data["pins"]] == [e["parameters"] for e in listing]

    saved = tmp_path / "session.json"
    assert win.sessions.save_session(saved), win.last_error
    session = load_interference_session(saved)
    assert session.script.params == last
    assert session.params == live
    assert [p.param_dict for p in session.pins] == [e["parameters"] for e in listing]
    labels = dict(win.pin_control.labels)
    assert win.sessions.open_session(saved), win.last_error
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    assert win.params == live and win.pin_control.labels == labels

    # interference --figures: the figure JSON and run.json keep every setting the command takes
    params = interference_draw(np.random.default_rng(12))
    # an AdamW run: its own β₁, β₂, ε are options too (refused under an optimizer without them)
    assert params.optimizer == "adamw"
    assert all(getattr(params, k) != INTERFERENCE_SETTINGS[k].default for k in ("beta1", "beta2", "eps"))
    argv = ["--out", str(tmp_path / "run"), "--figures", "--formats", "png", "--dpi", "50", "--samples", "20"]
    for setting in INTERFERENCE_SETTINGS:
        value = setting.value(params)
        if setting.derived or value in (None, setting.default):
            continue
        if setting.name == "interference":
            argv.append("--no-interference")
            continue
        argv += ["--" + setting.name.replace("_", "-"), value if isinstance(value, str) else repr(value)]
    assert interference_command(argv) == 0, argv
    figure = json.loads((tmp_path / "run" / "figures" / "polysemantic.json").read_text())
    assert figure["settings"] == as_json(run_settings(params, {"source": "normal"}))
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())["parameters"]
    for setting in INTERFERENCE_SETTINGS:
        if setting.derived:
            continue
        value = (
            params.effective_weight_decay if setting.name == "weight_decay" else getattr(params, setting.name)
        )
        default = setting.default
        if isinstance(value, tuple):  # knots: run.json's lists
            value, default = [list(k) for k in value], []
        # a schedule's and the noise's fields are written only when set
        stored = run_json.get(setting.name, default if setting.name in QUIET_FIELDS else "missing")
        assert stored == value, setting.name
