"""core.pins: pinned runs are read-only copies, at most eight, named by what differs from
the live run, and carried through a session file exactly (NaN and inf too)."""

import json

import numpy as np
import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.pins import PIN_COLUMNS, PIN_NAMES, note_pin_label, pin_params
from sparsity_gui.core.pins import MAX_PINS, PinBoard, pin_dict, pin_from_dict
from sparsity_gui.core.settings import format_value

COLS = ("t", "y")


def test_a_pin_is_a_read_only_copy_and_the_board_holds_eight():
    rows = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, np.inf]])
    board = PinBoard()
    pin = board.add({"lam": 1e-3}, COLS, rows)
    rows[0, 1] = 99.0  # the caller's array changes; the pin does not
    assert pin.rows[0, 1] == 1.0 and not pin.rows.flags.writeable
    with pytest.raises(ValueError):
        pin.rows[0, 0] = 5.0
    for _ in range(MAX_PINS - 1):
        board.add({}, COLS, rows)
    assert board.full and [p.number for p in board] == list(range(1, 9))
    with pytest.raises(InputError, match="8 runs are pinned already"):
        board.add({}, COLS, rows)
    board.remove(3)
    assert board.add({}, COLS, rows).number == 3  # the freed number
    with pytest.raises(InputError):
        PinBoard().add({}, COLS, np.zeros((4, 3)))  # three columns for two names


def test_values_and_labels_as_a_researcher_reads_them():
    assert [format_value(v) for v in (10_000, 12_345, 1, 2e-3, 0.9, 1e-6, "gd", None)] == [
        "10⁴",
        "12,345",
        "1",
        "2.0e-3",
        "0.9",
        "1.0e-6",
        "gd",
        "none",
    ]
    board = PinBoard()
    live = SimParams(m=1000, lam=4e-3)
    pin = board.add(pin_params(SimParams(m=10_000, lam=2e-3)), PIN_COLUMNS, np.zeros((1, len(PIN_COLUMNS))))
    assert note_pin_label(pin, live) == "pin 1: λ = 2.0e-3, m = 10⁴"
    assert note_pin_label(pin, SimParams(m=10_000, lam=2e-3)) == "pin 1: same parameters"
    # η names a difference when a run takes gradient-descent steps, or when nothing else
    # differs (a pin whose settings differ is never "same parameters")
    assert note_pin_label(pin, SimParams(m=10_000, lam=2e-3, eta=0.1)) == "pin 1: η = 0.05"
    assert note_pin_label(pin, SimParams(m=10, lam=2e-3, eta=0.1)) == "pin 1: m = 10⁴"
    gd = SimParams(m=10_000, lam=2e-3, method="gd", eta=0.1)
    assert note_pin_label(pin, gd) == "pin 1: method = exact, η = 0.05"


def test_a_pin_survives_its_session_entry_bit_for_bit_and_bad_entries_are_named():
    rows = np.random.default_rng(0).standard_normal((5, len(PIN_COLUMNS)))
    rows[1, 2], rows[2, 3] = np.nan, np.inf
    pin = PinBoard().add(pin_params(SimParams()), PIN_COLUMNS, rows)
    entry = json.loads(json.dumps(pin_dict(pin)))  # through JSON text
    back = pin_from_dict(entry, "pins[0]", PIN_COLUMNS, PIN_NAMES)
    assert back.number == pin.number and back.params == pin.params
    assert back.rows.tobytes() == pin.rows.tobytes() and not back.rows.flags.writeable
    for change, field in (
        ({"number": 9}, "pins[0].number"),
        ({"columns": ["t"]}, "pins[0].columns"),
        ({"data": "!!"}, "pins[0].data"),
        ({"rows": 6}, "pins[0].data"),
        ({"parameters": {"bogus": 1}}, "pins[0].parameters"),
    ):
        with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
            pin_from_dict({**entry, **change}, "pins[0]", PIN_COLUMNS, PIN_NAMES)
