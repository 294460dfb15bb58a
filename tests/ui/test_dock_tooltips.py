"""The docks' tooltips state a field's bounds and default from its settings row (core/*/settings.py),
as the field refuses by and --help says them: no range is written by hand in a dock."""

import pytest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.ui.fields import Field
from sparsity_gui.ui.interference.controls import InterferenceControls
from sparsity_gui.ui.note.controls import ControlPanel

# what a change does, as the row's ``change`` says (written here by hand)
ENDINGS = {
    "live": "Applies live.",
    "end": "Applies live: it moves the run's end.",
    "new run": "Starts a new run.",
}


def _note_dock():
    return ControlPanel(SimParams(), 1.0), NOTE_SETTINGS


def _interference_dock():
    params = InterferenceParams()
    return InterferenceControls(params, lambda: params), INTERFERENCE_SETTINGS


@pytest.mark.parametrize("build", [_note_dock, _interference_dock], ids=["note", "interference"])
def test_every_dock_field_of_a_row_states_the_rows_bounds_and_default(qtbot, build):
    dock, table = build()
    qtbot.addWidget(dock)
    fields = dock.findChildren(Field)
    assert len(fields) >= 7
    for field in fields:
        setting = table[field.name]
        tip = field.edit.toolTip()
        assert f"({setting.accepts()})." in tip, (field.name, tip)
        if setting.bounds:
            assert setting.bounds in tip
        assert tip.endswith(ENDINGS[setting.change]), (field.name, tip)


def test_tooltips_by_hand(qtbot):
    note, _ = _note_dock()
    interference, _ = _interference_dock()
    qtbot.addWidget(note)
    qtbot.addWidget(interference)
    assert interference.l1.edit.toolTip() == (
        "l1: the network's L1 coefficient (from 0 to 4; default 1.0e-3). The note's λ = l1/4. Applies live."
    )
    assert interference.n.edit.toolTip() == (
        "n: number of features, the rows of W (a whole number from 1 to 4096; default 256). Starts a new run."
    )
    assert interference.steps.edit.toolTip() == (
        "Steps to train (a whole number from 1 to 1e8; default 7,500). "
        "Raise it to continue a finished run. Applies live."
    )
    assert note.m.edit.toolTip() == (
        "m: number of weights in W (a whole number from 1 to 1e8; default 1,000). Starts a new run."
    )
    assert note.t_end.edit.toolTip() == (
        "t_end: simulated time at which to stop (> 0; default one weight left). "
        "Applies live: it moves the run's end."
    )


def test_the_lam_sliders_top_is_the_rows_and_its_tooltip_says_so(qtbot):
    """The λ slider reaches the top of λ's row, and its tooltip and the field's say the
    slider's ends as they are (not a range written beside them)."""
    note, table = _note_dock()
    qtbot.addWidget(note)
    row = table["lam"].check
    assert note.lam_slider.hi == row.high
    ends = f"{note.lam_slider.lo:g} … {row.high:g}"
    assert ends == "1e-06 … 1"
    shown = ends.replace("1e-06", "1e-6")
    assert f"log scale {shown}" in note.lam_slider.toolTip()
    assert f"The slider: {shown}, log scale." in note.lam.edit.toolTip()
