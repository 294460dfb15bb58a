"""The Python API's keyword defaults are the settings tables' (core/note/settings.py,
core/interference/settings.py): each keyword named after a setting defaults to None (the
table's default, or a rule such as torch's weight decay) or to the row's default itself, so
a default changed in a table cannot leave the API on the old one unnoticed. A sweep's
own defaults (SWEEP_DEFAULTS: a smaller n, a list of m) are the sweep's."""

from __future__ import annotations

import inspect

import pytest

from sparsity_gui import api
from sparsity_gui.core.interference.headless import SWEEP_DEFAULTS
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.core.note.settings import NOTE_SETTINGS

FUNCTIONS = {
    "simulate": (NOTE_SETTINGS, {}),
    "scaling": (NOTE_SETTINGS, {}),
    "train": (INTERFERENCE_SETTINGS, {}),
    "sweep": (INTERFERENCE_SETTINGS, SWEEP_DEFAULTS),
}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_keyword_of_a_setting_defaults_to_its_row(function):
    table, own = FUNCTIONS[function]
    checked = []
    for name, parameter in inspect.signature(getattr(api, function)).parameters.items():
        if name not in table or parameter.default is inspect.Parameter.empty:
            continue
        if parameter.default is not None:
            assert parameter.default == own.get(name, table[name].default), (function, name)
        checked.append(name)
    assert len(checked) >= 2, (function, checked)
