"""Plain-text formatting: durations, counts of things, limits in messages."""

import math

import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.text import format_duration, plural, short_number


def test_plural():
    assert plural(1, "weight") == "1 weight"
    assert plural(0, "run") == "0 runs"
    assert plural(12345, "weight") == "12,345 weights"


@pytest.mark.parametrize(
    ("x", "text"),
    [(1e8, "1e8"), (10**9, "1e9"), (65536, "65536"), (0.25, "0.25"), (1.5e-7, "1.5e-7"), (4096, "4096")],
)
def test_short_number(x, text):
    assert short_number(x) == text


def test_limits_in_messages_read_as_people_write_them():
    with pytest.raises(InputError, match=r"m: must be a whole number from 1 to 1e8, got 1000000000$"):
        SimParams(m=10**9)


def test_format_duration():
    assert format_duration(42.4) == "42 s"
    assert format_duration(125) == "2 min 05 s"
    assert format_duration(3 * 3600 + 7 * 60) == "3 h 07 min"
    assert format_duration(math.nan) == "—"
