"""A setting's bounds are checked through its row of the settings table (core/note/settings.py,
core/interference/settings.py) and nowhere else: a value out of a row's bounds is refused by
the Python API, the command (in-process) and the dock's field with the row's own words. The
row's message is taken from the row's check; each surface must say exactly it."""

from __future__ import annotations

import pytest
from helpers import command_in_process, type_into

from sparsity_gui import api
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.settings import NOTE_SETTINGS

# (setting, a value out of its row's bounds, what else the run needs for the setting to mean
# anything); written here by hand, the bounds they break are the rows'
NOTE_CASES = [
    ("lam", 2.0, {}),
    ("lam_warmup", -1.0, {}),
    ("m", 0, {}),
    ("sigma", 0.0, {}),
    ("eta", 3.0, {}),
    ("t_end", 0.0, {}),
    ("seed", -1, {}),
]
JUMPRELU = {"sparsity": "jumprelu"}
INTERFERENCE_CASES = [
    ("n", 0, {}),
    ("m", 0, {}),
    ("l1", 5.0, {}),
    ("lr", 0.0, {}),
    ("sigma", 0.0, {}),
    ("noise_sigma", 11.0, {}),
    ("steps", 0, {}),
    ("weight_decay", -1.0, {}),
    ("beta1", 1.0, {}),
    ("beta2", 1.0, {}),
    ("eps", 0.0, {}),
    ("l1_warmup", -1, {}),
    ("lr_warmup", -1, {}),
    ("l0", -1.0, JUMPRELU),
    ("bandwidth", 0.0, JUMPRELU),
    ("threshold_init", 0.0, JUMPRELU),
]
MODELS = {
    "note": (NOTE_SETTINGS, NOTE_CASES, "run", "simulate"),
    "interference": (INTERFERENCE_SETTINGS, INTERFERENCE_CASES, "interference", "train"),
}
CASES = [(model, *case) for model, (_t, cases, _c, _f) in MODELS.items() for case in cases]


def _rows_words(table, name: str, bad) -> str:
    with pytest.raises(InputError) as refused:
        table[name].check(bad)
    return refused.value.message


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _note_field(qtbot, name: str, _context: dict):
    from sparsity_gui.ui.note.controls import ControlPanel

    dock = ControlPanel(SimParams(), 1.0)
    qtbot.addWidget(dock)
    return getattr(dock, name)


def _interference_field(qtbot, name: str, context: dict):
    from sparsity_gui.ui.interference.controls import InterferenceControls

    params = InterferenceParams(**context)
    dock = InterferenceControls(params, lambda: params)
    qtbot.addWidget(dock)
    return dock.fields[name]


@pytest.mark.parametrize(("model", "name", "bad", "context"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_out_of_bounds_is_refused_in_the_rows_words_by_api_command_and_dock(
    qtbot, tmp_path, monkeypatch, capsys, model, name, bad, context
):
    table, _cases, command, function = MODELS[model]
    words = _rows_words(table, name, bad)
    assert words.startswith("must be ")
    fields = (name, name.replace("_", "-"))  # the API's and the command's name for it

    with pytest.raises(InputError) as refused:
        getattr(api, function)(**context, **{name: bad})
    assert refused.value.field in fields and refused.value.message == words

    argv = [command, *(a for k, v in context.items() for a in (_option(k), v)), _option(name), bad]
    status, out, err = command_in_process([*argv, "--out", "res"], tmp_path, monkeypatch, capsys)
    assert status == 2 and out == "" and not (tmp_path / "res").exists()
    assert err in {f"error: {field}: {words}\n" for field in fields}, err

    field = (_note_field if model == "note" else _interference_field)(qtbot, name, context)
    type_into(field, repr(bad))
    assert field.error.text().removeprefix(f"{name}: ") == words


def test_a_warm_up_of_0_is_the_rows_default_none_on_every_surface(qtbot, tmp_path, monkeypatch, capsys):
    """The row's default T = 0 is no warm-up: the API and the command run a constant λ (they
    once refused 0 as 'must be > 0' while --help said '>= 0; default none'), as the dock's
    field takes 0 for none."""
    assert NOTE_SETTINGS["lam_warmup"].default == 0.0 and NOTE_SETTINGS["lam_warmup"].default_text == "none"
    plain = api.simulate(m=50, t_end=1.0, samples=3)
    warm0 = api.simulate(m=50, t_end=1.0, samples=3, lam_warmup=0.0)
    assert warm0.params == plain.params and warm0.params.lam_schedule == ()
    assert (warm0.timeseries == plain.timeseries).all()
    argv = ["run", "--m", "50", "--t-end", "1", "--samples", "3", "--lam-warmup", "0", "-q", "--out", "res"]
    assert command_in_process(argv, tmp_path, monkeypatch, capsys)[0] == 0
    field = _note_field(qtbot, "lam_warmup", {})
    seen = []
    field.accepted.connect(seen.append)
    type_into(field, "0")
    assert seen == [0.0] and field.error.isHidden()


def test_the_note_docks_seed_shows_and_keeps_a_seed_above_2_31(qtbot, make_window):
    """The row takes seeds up to 2^63-1, as --seed does. The dock's seed was a spin box that
    stopped at 2^31-1: it showed a larger seed as 2147483647 and, when the box was left,
    started a new run with that seed."""
    seed = 2**40 + 7
    win = make_window(SimParams(m=200, lam=1e-2, seed=seed))
    box = win.controls.seed
    assert box.text() == str(seed)
    edit = getattr(box, "edit", box)
    edit.setFocus()
    edit.editingFinished.emit()  # the box left without typing
    qtbot.wait(50)
    assert win.params.seed == seed
    type_into(box, str(2**62))
    qtbot.waitUntil(lambda: win.params.seed == 2**62, timeout=30_000)
