"""The settings tables (core/note/settings.py, core/interference/settings.py): every field of
each model's parameters is declared once, with its default, its check and whether a change
is live; the parameters, the dock's fields, the session's live changes and the window's
"live or new run" derive from it; a pinned run keeps every setting (through a session
file's JSON exactly) and its name lists every one that differs, never "same parameters"
when one does."""

import dataclasses
import json
import math

import numpy as np
import pytest
from settings_draws import interference_draw, note_draw, one_changed

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.pins import PIN_NAMES as I_PIN_NAMES
from sparsity_gui.core.interference.pins import interference_pin_label
from sparsity_gui.core.interference.pins import pin_params as i_pin_params
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.core.interference.settings import live_change as i_live_change
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.pins import PIN_COLUMNS, PIN_NAMES, note_pin_label, pin_params
from sparsity_gui.core.note.settings import NOTE_SETTINGS, live_change
from sparsity_gui.core.pins import PinBoard, pin_dict, pin_from_dict
from sparsity_gui.core.settings import END, LIVE, NEW_RUN

DRAWS = 300
# a strength and the fields of its schedule (a live change of it ends them)
SCHEDULES = {
    "lam": ("lam_schedule",),
    "l1": ("l1_warmup", "l1_schedule"),
    "l0": ("l0_warmup", "l0_schedule"),
    "lr": ("lr_warmup", "lr_decay", "lr_decay_steps", "lr_schedule"),
}

MODELS = {
    "note": (SimParams, NOTE_SETTINGS),
    "interference": (InterferenceParams, INTERFERENCE_SETTINGS),
}


@pytest.mark.parametrize("model", MODELS)
def test_every_field_is_declared_once_with_the_default_the_parameters_have(model):
    cls, table = MODELS[model]
    names = [f.name for f in dataclasses.fields(cls)]
    assert sorted(table.fields) == sorted(names)
    defaults = cls()
    for f in dataclasses.fields(cls):
        assert table[f.name].default == f.default, f.name
    for setting in table:
        assert setting.change in (LIVE, END, NEW_RUN) and setting.symbol and setting.what
        if not setting.derived:  # a default passes its own check unchanged
            assert table.check(setting.name, getattr(defaults, setting.name)) == getattr(
                defaults, setting.name
            )


@pytest.mark.parametrize(
    ("model", "name", "bad", "message"),
    [
        ("note", "lam", 1.5, "must be from 0 to 1, got 1.5"),
        ("note", "lam", -1e-9, "must be from 0 to 1"),
        ("note", "m", 0, "must be a whole number from 1 to 1e8, got 0"),
        ("note", "sigma", 0.0, "must be > 0 and at most 1e6, got 0.0"),
        ("note", "eta", 2.5, "must be > 0 and at most 2 (GD is unstable near balance for eta >= 1)"),
        ("note", "method", "rk4", "must be one of exact, gd, got 'rk4'"),
        ("note", "t_end", 0.0, "must be > 0"),
        ("note", "lam_schedule", "0:2", "every λ must be from 0 to 1, got 2"),
        ("interference", "l1", 4.5, "must be from 0 to 4 (lam = l1/4 at most 1), got 4.5"),
        ("interference", "lr", 0.0, "must be > 0 and at most 1, got 0.0"),
        ("interference", "n", 5000, "must be a whole number from 1 to 4096, got 5000"),
        ("interference", "beta2", 1.0, "must be from 0 to below 1, got 1.0"),
        ("interference", "eps", 0.0, "must be > 0, got 0.0"),
        ("interference", "noise_sigma", 11.0, "must be from 0 to 10, got 11.0"),
        ("interference", "lr_decay", "step", "must be one of none, linear, cosine, got 'step'"),
        ("interference", "l1_schedule", "0:5", "every l1 must be from 0 to 4"),
    ],
)
def test_the_parameters_refuse_exactly_as_the_table_checks(model, name, bad, message):
    """One rule per setting: the table's check and the parameters' refusal are the same
    error (the dock's fields and the commands check through one or the other)."""
    cls, table = MODELS[model]
    with pytest.raises(InputError) as by_table:
        table.check(name, bad)
    with pytest.raises(InputError) as by_params:
        cls(**{name: bad})
    assert message in by_table.value.message
    assert (by_params.value.field, by_params.value.message) == (by_table.value.field, by_table.value.message)


SCHEDULE_REFUSALS = [
    ("note", "lam_schedule", [(0, 0.0), (10, 1.5)]),
    ("note", "lam_schedule", "0:0,10:-1e-3"),
    ("interference", "l1_schedule", [(0, 0.0), (10, 4.5)]),
    ("interference", "l1_schedule", "0:0,10:1e9"),
    ("interference", "lr_schedule", "0:0,10:1.5"),
]


@pytest.mark.parametrize(("model", "name", "bad"), SCHEDULE_REFUSALS)
def test_the_api_refuses_a_schedule_by_its_settings_row_naming_the_argument(model, name, bad):
    """A schedule argument is checked once, by its setting's row: the API's refusal is the
    row's message under the argument's name (not the command's 'l1-schedule')."""
    from sparsity_gui import api

    _, table = MODELS[model]
    with pytest.raises(InputError) as by_table:
        table.check(name, bad)
    with pytest.raises(ValueError) as by_api:
        if model == "note":
            api.simulate(m=10, **{name: bad})
        else:
            api.train(n=4, m=8, steps=10, **{name: bad})
    assert str(by_api.value) == f"{name}: {by_table.value.message}"


@pytest.mark.parametrize(("model", "name", "bad"), SCHEDULE_REFUSALS)
def test_the_commands_refuse_a_schedule_by_its_settings_row_in_one_line(tmp_path, capsys, model, name, bad):
    """The command's option (and a sweep's list of schedules) refused by the same row, in
    one `error:` line naming the option, status 2, nothing written."""
    from helpers import assert_refused_in_process

    from sparsity_gui.core.knots import knots_text

    _, table = MODELS[model]
    with pytest.raises(InputError) as by_table:
        table.check(name, bad)
    option = "--" + name.replace("_", "-")
    text = bad if isinstance(bad, str) else knots_text(bad)
    out = ["--out", str(tmp_path / "out")]
    words = f"{name.replace('_', '-')}: {by_table.value.message}"
    if model == "note":
        assert_refused_in_process(["run", "--m", "10", option, text, *out], words, tmp_path, capsys)
    else:
        assert_refused_in_process(
            ["interference", "--n", "4", "--m", "8", option, text, *out], words, tmp_path, capsys
        )
        sweep = ["sweep", "--n", "4", "--m", "8", option, f"0:0,10:1e-3;{text}", *out]
        assert_refused_in_process(sweep, f"{name}: {by_table.value.message}", tmp_path, capsys)


def test_a_grid_lam_is_a_run_lam_that_is_not_zero():
    """The scaling grid's λ check is made from the run's λ row: the same values refused,
    and 0 too (a grid's run ends at one weight left, which λ = 0 never reaches)."""
    from sparsity_gui.core.note.params import check_grid_lam

    for value in (-1.0, -1e-300, 0.0, 5e-324, 1e-3, 1.0, 1.0 + 2**-52, 2.0, math.inf, math.nan, "1e-3", True):
        try:
            run = NOTE_SETTINGS.check("lam", value)
        except InputError:
            run = None
        try:
            grid = check_grid_lam(value)
        except InputError as exc:
            grid = None
            assert exc.field == "lam" and exc.message.startswith("every lam must be")
            assert ("no weight ever dies" in exc.message) == (value == 0.0 and value is not True)
        assert grid == (None if run in (None, 0.0) else run), value


def test_the_note_dock_fields_check_by_the_table():
    from sparsity_gui.ui.fields import parse_float
    from sparsity_gui.ui.note.controls import _checked, parse_schedule

    with pytest.raises(InputError) as exc:
        _checked("lam", parse_float)("2")
    assert exc.value.message == "must be from 0 to 1, got 2.0"
    assert _checked("lam", parse_float)("0") == 0.0
    assert parse_schedule("0:0,5:1e-3") == ((0.0, 0.0), (5.0, 1e-3))


@pytest.mark.parametrize("model", MODELS)
def test_a_change_is_live_or_a_new_run_as_the_table_says(model):
    """live_change decides once per model: a field declared NEW_RUN restarts, LIVE and END
    go on (a live change of the strength ends its schedule and still goes on)."""
    rng = np.random.default_rng(7)
    cls, table = MODELS[model]
    change = live_change if model == "note" else i_live_change
    draw = (lambda: note_draw(rng, t_end=True)) if model == "note" else (lambda: interference_draw(rng))
    seen = set()
    for _ in range(DRAWS):
        params, other = draw(), draw()
        for setting in table:
            if setting.derived:
                continue
            varied = one_changed(params, other, setting.name)
            if varied is None:
                continue
            changes = {n: getattr(varied, n) for n in table.changed_fields(params, varied)}
            new, restart = change(params, changes)
            assert new == varied
            # a new strength ends its schedule: those fields go back to none, live; the note's
            # λ(t) removed holds λ from now on (what a live change of λ does), live too
            ended = {f for strength, group in SCHEDULES.items() if strength in changes for f in group}
            if model == "note" and not varied.lam_schedule:
                ended.add("lam_schedule")
            expected = any(table[n].change == NEW_RUN for n in changes if n not in ended)
            assert restart == expected, (setting.name, changes)
            seen.add(setting.name)
    assert seen == set(table.fields) - ({"w0_path"} if model == "note" else set())


def _pin(board, values, columns):
    return board.add(values, columns, np.zeros((1, len(columns))))


def test_random_pins_survive_a_session_entry_and_name_every_setting_that_differs():
    """A pinned run keeps every setting (knots as text) through a session file's JSON
    exactly, and its name lists each setting that differs from the live run: never "same
    parameters" when one does, zero as 0."""
    rng = np.random.default_rng(46)
    for _ in range(DRAWS):
        params, other = note_draw(rng), note_draw(rng)
        for setting in NOTE_SETTINGS:
            if setting.name == "w0_path":
                varied = dataclasses.replace(params, w0_path=f"/data/w{int(rng.integers(9))}.npy")
            else:
                varied = one_changed(params, other, setting.name)
            if varied is None:
                continue
            board = PinBoard()
            pin = _pin(board, pin_params(varied), PIN_COLUMNS)
            back = pin_from_dict(json.loads(json.dumps(pin_dict(pin))), "pins[0]", PIN_COLUMNS, PIN_NAMES)
            assert back.param_dict == pin_params(varied)
            label = note_pin_label(back, params)
            assert label != "pin 1: same parameters", (setting.name, varied, params)
            # (λ(t) is named as a warm-up or as a schedule: a change of one may show as the other)
            symbols = ("λ schedule", "λ warm-up") if setting.name.startswith("lam_") else (setting.symbol,)
            assert any(symbol + " = " in label for symbol in symbols), (setting.name, label)
            assert "0.0e0" not in label and "e0," not in label + ","
        assert (
            note_pin_label(_pin(PinBoard(), pin_params(params), PIN_COLUMNS), params)
            == "pin 1: same parameters"
        )


def test_random_interference_pins_name_every_setting_that_differs():
    rng = np.random.default_rng(460)
    for _ in range(DRAWS):
        params, other = interference_draw(rng), interference_draw(rng)
        for setting in INTERFERENCE_SETTINGS:
            source = None
            if setting.name == "w0":
                varied, source = params, f"w{int(rng.integers(9))}.safetensors [W]"
            else:
                varied = one_changed(params, other, setting.name)
            if varied is None or i_pin_params(varied, source) == i_pin_params(params):
                continue  # (weight decay None is the default in force: the same run)
            pin = _pin(PinBoard(), i_pin_params(varied, source), PIN_COLUMNS[:1])
            back = pin_from_dict(
                json.loads(json.dumps(pin_dict(pin))), "pins[0]", PIN_COLUMNS[:1], I_PIN_NAMES
            )
            assert back.param_dict == i_pin_params(varied, source)
            label = interference_pin_label(back, params)
            assert label != "pin 1: same parameters", (setting.name, varied, params)
            assert setting.symbol + " = " in label, (setting.name, label)
            assert "0.0e0" not in label


def test_pin_names_as_the_issue_writes_them():
    live = SimParams(lam=1e-3)
    warm = SimParams(lam=1e-3, lam_schedule=((0.0, 0.0), (50.0, 1e-3)))
    pin = _pin(PinBoard(), pin_params(warm), PIN_COLUMNS)
    assert note_pin_label(pin, live) == "pin 1: λ warm-up = 50"
    zero = _pin(PinBoard(), pin_params(SimParams(lam=0.0)), PIN_COLUMNS)
    assert note_pin_label(zero, live) == "pin 1: λ = 0"
    noisy = InterferenceParams(noise="bernoulli", noise_sigma=0.1)
    ipin = _pin(PinBoard(), i_pin_params(noisy), PIN_COLUMNS[:1])
    assert interference_pin_label(ipin, InterferenceParams()) == "pin 1: noise = Bernoulli, noise σ = 0.1"
    warm_lr = InterferenceParams(lr_warmup=100, l1=0.0)
    ipin = _pin(PinBoard(), i_pin_params(warm_lr), PIN_COLUMNS[:1])
    assert interference_pin_label(ipin, InterferenceParams()) == "pin 1: l1 = 0, lr warm-up = 100 steps"


def test_a_pin_from_an_older_file_is_never_called_the_same_on_what_it_did_not_keep():
    """A session written before the table kept λ's schedule in a pin: a pin that kept only
    λ, m, … and matches them is 'same recorded parameters', not 'same parameters'."""
    old = {k: v for k, v in pin_params(SimParams()).items() if k not in ("lam_warmup", "lam_schedule")}
    pin = _pin(PinBoard(), old, PIN_COLUMNS)
    warm = SimParams(lam_schedule=((0.0, 0.0), (20.0, 1e-3)))
    assert note_pin_label(pin, warm) == "pin 1: same recorded parameters"
    assert note_pin_label(pin, SimParams(m=10)) == "pin 1: m = 1,000"


def test_a_bound_without_an_upper_end_reads_as_one_inequality():
    """A setting bounded below only (weight decay, σ) is refused as '>= 0' / '> 0', never
    'from 0 to inf', which the interference dock showed at its field."""
    from sparsity_gui.core.settings import bounds_text

    assert bounds_text(0.0, math.inf) == ">= 0"
    assert bounds_text(0.0, math.inf, low_open=True) == "> 0"
    assert bounds_text(0.0, 1.0) == "from 0 to 1"
    assert bounds_text(0.0, 2.0, low_open=True) == "> 0 and at most 2"


@pytest.mark.parametrize(
    ("model", "name", "unit"),
    [
        ("interference", "steps", ""),
        ("interference", "lr_decay_steps", ""),
        ("interference", "l1_warmup", " steps"),
        ("interference", "lr_warmup", " steps"),
        ("interference", "k", ""),
    ],
)
def test_a_count_reads_with_thousands_separators_never_as_a_power(model, name, unit):
    """A count of steps reads as a count on every surface that prints its row
    (the status line 'step 5,000 / 10,000', pin names, figure titles, --help): a round
    10,000 was once shown as 10⁴."""
    setting = MODELS[model][1][name]
    for value, written in ((10_000, "10,000"), (100_000_000, "100,000,000"), (12_345, "12,345"), (7, "7")):
        assert setting.fmt(value) == written
        assert setting.text(value) == f"{setting.symbol} = {written}{unit}"
    for value in (10_000, 10**6, 10**8):
        assert not any(c in setting.fmt(value) for c in "⁰¹²³⁴⁵⁶⁷⁸⁹e")


@pytest.mark.parametrize("model", ["note", "interference"])
def test_a_seed_reads_as_the_digits_its_option_takes(model):
    """A seed is a name: written as `--seed` takes it (12345, 10000), so that it can be
    copied from a pin's name or a title into a command."""
    setting = MODELS[model][1]["seed"]
    largest = (2**63 - 1, "9223372036854775807")
    for value, written in ((12_345, "12345"), (10_000, "10000"), (0, "0"), largest):
        assert setting.fmt(value) == written
        assert setting.text(value) == f"seed = {written}"
