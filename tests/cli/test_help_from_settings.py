"""The commands' --help states each setting's bounds and default as the model's settings
table has them (core/note/settings.py, core/interference/settings.py), never by hand: every
option backed by a setting, in every parser that has one (run, interference, sweep, scaling
and the desktop app's), carries the table's bounds and its default, and the numbers of its
parenthesis are exactly those."""

from __future__ import annotations

import re

import pytest

from sparsity_gui.cli.gui_options import build_gui_parser
from sparsity_gui.cli.interference import build_interference_parser
from sparsity_gui.cli.note import build_run_parser
from sparsity_gui.cli.scaling import build_scaling_parser
from sparsity_gui.cli.sweep import build_sweep_parser
from sparsity_gui.core.interference.headless import INTERFERENCE_DEFAULTS, PAPER, SWEEP_DEFAULTS
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.settings import bounds_text

NUMBER = re.compile(r"2\^63-1|\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")
NOT_SETTINGS = {"seeds", "no_interference", "w0", "w0_tensor", "w0_row"}  # not a setting's value


def _options(parser):
    """(dest, help) of every option, its help as --help prints it (%% read as %)."""
    for action in parser._actions:
        if action.help and action.option_strings:
            yield action.dest, action.help.replace("%%", "%")


def _decays() -> str:
    """No weight decay given: torch's default for the optimizer, as InterferenceParams has it."""
    adamw, adam = (InterferenceParams(optimizer=o).effective_weight_decay for o in ("adamw", "adam"))
    fmt = INTERFERENCE_SETTINGS["weight_decay"].fmt
    return f"torch's, {fmt(adamw)} for adamw and {fmt(adam)} for adam"


# an option whose default is not one value but a rule, said in words
RULES = {"t_end": "when one weight is left, plus 10%", "weight_decay": _decays()}


def _expected(setting, defaults, paper):
    """The parenthesis the option's help must end its own text with: the table's bounds,
    and the command's default (and --paper's) as the table formats them."""
    name = setting.name
    default = setting.fmt(defaults[name]) if name in defaults else RULES.get(name, setting.default_text)
    more = f"; --paper: {setting.fmt(paper[name])}" if name in paper and paper[name] != defaults[name] else ""
    return f"({setting.bounds}; default {default}{more}" if setting.bounds else f"(default {default}{more}"


NOTE_OPTIONS = {"m", "lam", "lam_schedule", "lam_warmup", "sigma", "seed", "method", "eta", "t_end"}
INTERFERENCE_OPTIONS = {
    "n", "m", "seed", "steps", "optimizer", "l1", "lr", "sigma", "weight_decay", "dtype", "noise",
    "noise_sigma", "l1_warmup", "l1_schedule", "lr_warmup", "lr_decay", "lr_decay_steps", "lr_schedule",
}  # fmt: skip
HAND_WRITTEN = {
    "run": NOTE_OPTIONS,
    "interference": INTERFERENCE_OPTIONS,
    "sweep": INTERFERENCE_OPTIONS,
    "gui": NOTE_OPTIONS | INTERFERENCE_OPTIONS,
    "scaling": {"seed", "sigma"},
}
NOTE, INTERFERENCE = {"note": NOTE_SETTINGS}, {"interference": INTERFERENCE_SETTINGS}
PARSERS = {
    "run": (build_run_parser, NOTE, {}, {}),
    "interference": (build_interference_parser, INTERFERENCE, INTERFERENCE_DEFAULTS, {}),
    "sweep": (build_sweep_parser, INTERFERENCE, SWEEP_DEFAULTS, PAPER),
    # the app's: the note's options, and the interference model's but those the note's serve
    "gui": (build_gui_parser, {**NOTE, **INTERFERENCE}, INTERFERENCE_DEFAULTS, {}),
    "scaling": (build_scaling_parser, NOTE, {}, {}),
}
# a grid's list of values, which has no default (needed): each value's bounds
LISTS = {"scaling": {"m", "lam"}}


@pytest.mark.parametrize("command", PARSERS)
def test_every_option_of_a_setting_states_the_tables_bounds_and_default(command):
    build, tables, defaults, paper = PARSERS[command]
    checked = []
    for dest, text in _options(build()):
        if dest in NOT_SETTINGS or dest in LISTS.get(command, ()):
            continue
        # the app's --m, --seed, --sigma are the note's (its interference model uses them too)
        table = next((t for t in tables.values() if dest in t), None)
        if table is None:
            continue
        setting = table[dest]
        own = defaults if table is INTERFERENCE_SETTINGS else {}
        want = _expected(setting, own, paper)
        assert want in text, f"{command} --{dest}: {text!r} lacks {want!r}"
        # every number of the parenthesis is the table's: no bound or default by hand
        said = text[text.index(want) :].split(")")[0]
        table_numbers = NUMBER.findall(want)
        assert NUMBER.findall(said) == table_numbers, (command, dest, said)
        checked.append(dest)
    # every option written by hand is checked (and any a table's row adds: add_table_options)
    assert HAND_WRITTEN[command] <= set(checked), HAND_WRITTEN[command] - set(checked)


def _grid_bounds(setting) -> str:
    """A scaling grid's values: the row's bounds, but λ not 0 (its low end open)."""
    check = setting.check
    if setting.name == "lam":
        return bounds_text(check.low, check.high, low_open=True, high_open=check.high_open)
    return setting.bounds


def test_a_grids_lists_state_each_values_bounds_from_the_table():
    """scaling's --m and --lam take lists and have no default: each value's bounds, the
    row's (λ's low end open: a grid's run ends at one weight left), and no other number."""
    helps = dict(_options(build_scaling_parser()))
    for name in LISTS["scaling"]:
        want = f"(each {_grid_bounds(NOTE_SETTINGS[name])})"
        assert helps[name].endswith(want), (name, helps[name], want)
    assert helps["m"].endswith("(each a whole number from 1 to 1e8)")
    assert helps["lam"].endswith("(each > 0 and at most 1)")
    assert "(> 0 and at most 1e6; default 0.9, as `run`)" in helps["sigma"]


def test_a_few_helps_by_hand():
    """What the table says, written out here: the numbers a user reads."""
    run = dict(_options(build_run_parser()))
    assert "(from 0 to 1; default 1.0e-3, or where --lam-schedule ends)" in run["lam"]
    assert "(a whole number from 1 to 1e8; default 1,000)" in run["m"]
    assert "(> 0 and at most 2; default 0.05)" in run["eta"]
    assert "(>= 0; default none)" in run["lam_warmup"]
    assert "(> 0; default when one weight is left, plus 10%)" in run["t_end"]
    interference = dict(_options(build_interference_parser()))
    assert "(from 0 to 10; default 0)" in interference["noise_sigma"]
    assert "(> 0 and at most 1; default 1.0e-3)" in interference["lr"]
    assert "(a whole number from 1 to 4096; default 256)" in interference["n"]
    assert "(one of none, linear, cosine; default none)" in interference["lr_decay"]
    assert "(a whole number from 1 to m; default none)" in interference["k"]
    assert "(>= 0; default torch's, 0.01 for adamw and 0 for adam)" in interference["weight_decay"]
    sweep = dict(_options(build_sweep_parser()))
    assert "(a whole number from 1 to 4096; default 64; --paper: 256)" in sweep["n"]


@pytest.mark.parametrize(
    ("table", "name", "bad"),
    [
        (NOTE_SETTINGS, "lam", 2.0),
        (NOTE_SETTINGS, "m", 0),
        (NOTE_SETTINGS, "eta", 3.0),
        (NOTE_SETTINGS, "lam_warmup", -1.0),
        (INTERFERENCE_SETTINGS, "lr", 0.0),
        (INTERFERENCE_SETTINGS, "noise_sigma", 11.0),
        (INTERFERENCE_SETTINGS, "l1_warmup", -1),
        (INTERFERENCE_SETTINGS, "lr_decay", "step"),
    ],
)
def test_the_bounds_help_states_are_those_the_check_refuses_by(table, name, bad):
    from sparsity_gui.core.errors import InputError

    setting = table[name]
    with pytest.raises(InputError) as refused:
        setting.check(bad)
    assert f"must be {setting.bounds}" in refused.value.message


@pytest.mark.parametrize("table", [NOTE_SETTINGS, INTERFERENCE_SETTINGS], ids=["note", "interference"])
def test_a_rows_description_leaves_its_bounds_to_the_bounds(table):
    """An option's help is the row's description and then its bounds: a description that
    states an inequality of its own ('C >= 0', 'eps > 0') makes --help say the bounds twice."""
    for setting in table:
        assert not re.search(r"[<>]=? ?-?\d", setting.what), (setting.name, setting.what)


@pytest.mark.parametrize("command", ["interference", "gui"])
def test_an_options_placeholder_comes_from_its_row(command):
    """The placeholder of a value a row's option takes is the row's: KNOTS for knots, STEPS
    for a count of steps, a choice's names as argparse writes them, or the letter the row
    declares; never the field's name in capitals (THRESHOLD_INIT), and a description that
    names a placeholder ('over the first STEPS steps') names the option's own."""
    build, tables, _, _ = PARSERS[command]
    seen = 0
    for action in build()._actions:
        table = next((t for t in tables.values() if action.dest in t), None)
        if table is None or action.dest in HAND_WRITTEN[command] | NOT_SETTINGS:
            continue
        setting, shown = table[action.dest], action.metavar
        seen += 1
        assert shown == setting.metavar_text and "_" not in shown, (action.dest, shown)
        if "knots" in (setting.axis, setting.option):
            assert shown == "KNOTS"
        elif setting.unit == "steps":
            assert shown == "STEPS" and "STEPS" in action.help, (action.dest, action.help)
        elif getattr(setting.check, "choices", None) is not None:
            assert shown == "{" + ",".join(setting.check.choices) + "}"
        else:
            assert shown == setting.metavar and shown.isupper(), (action.dest, shown)
    assert seen >= 10  # Adam's three, the mechanisms' eight


def test_the_optimizer_table_of_the_docs_names_adams_options():
    """docs/interference.md once said no option sets Adam's β₁, β₂, ε, after their rows
    (Setting.option) had made them --beta1, --beta2, --eps."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "interference.md").read_text(encoding="utf-8")
    (adam,) = [line for line in text.splitlines() if line.startswith("| **Adam** (`adam`)")]
    for setting in INTERFERENCE_SETTINGS:
        if setting.only_with is not None and setting.option:
            assert f"`--{setting.name}`" in adam and f"`{setting.name}=`" in adam, setting.name
    assert "no option" not in adam


def test_the_paper_option_states_paper_settings_as_the_table_formats_them():
    """--paper's help says PAPER's settings (not a copy written beside them), each as its
    row formats it, and the runs they make: 16 values of m times 16 seeds."""
    paper = dict(_options(build_sweep_parser()))["paper"]
    S = INTERFERENCE_SETTINGS
    assert (
        "n=256, m=256:4096:256, 16 seeds, 7,500 steps, adamw, l1=lr=1.0e-3: 256 runs with W up to 256 x 4096"
        in paper
    )
    for name in ("n", "steps", "l1"):
        assert S[name].fmt(PAPER[name]) in paper, name
    assert f"m={PAPER['m']}, {PAPER['seeds']} seeds" in paper


def test_a_runs_defaults_are_its_rows():
    """The interference command's and the API's defaults are the table's, not a copy."""
    for name, value in INTERFERENCE_DEFAULTS.items():
        assert value == INTERFERENCE_SETTINGS[name].default, name


@pytest.mark.parametrize("command", ["run", "interference"])
def test_samples_help_states_the_bounds_its_check_refuses_by(command):
    """--samples is no setting of a run, but its help and its refusal say one range: the
    check's (core/*/headless.py SAMPLES_CHECK), from 2 to the model's SAMPLES_MAX."""
    from sparsity_gui.core.interference import headless as interference
    from sparsity_gui.core.note import headless as note

    headless, build = {
        "run": (note, build_run_parser),
        "interference": (interference, build_interference_parser),
    }[command]
    text = dict(_options(build()))["samples"]
    bounds = f"a whole number from 2 to {headless.SAMPLES_MAX:g}".replace("e+0", "e")
    assert f"({bounds}; " in text and text.endswith(f"default {headless.SAMPLES})"), text
    from sparsity_gui.core.errors import InputError

    with pytest.raises(InputError) as refused:
        headless.SAMPLES_CHECK(headless.SAMPLES_MAX + 1)
    assert refused.value.message.startswith(f"must be {bounds}, got ")
