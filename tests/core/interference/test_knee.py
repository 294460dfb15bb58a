"""The knee rule (core/interference/knee.py) on hand-made curves whose knees are worked out
here by hand: the smallest C from which every step to the next C changes the readout by less
than 10 % of its value per decade."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparsity_gui.core.interference.knee import KNEE_DEFINITION, KNEE_TOLERANCE, change_per_decade, knee

DECADES = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)


def test_the_tolerance_is_the_one_the_definition_states():
    assert KNEE_TOLERANCE == 0.1 and "10%" in KNEE_DEFINITION


def test_a_curve_that_flattens_has_its_knee_where_the_changes_fall_under_the_tolerance():
    # steps: 16 -> 12 (25 %), 12 -> 8 (33 %), 8 -> 7.5 (6.25 %), 7.5 -> 7.45 (0.67 %)
    values = (16.0, 12.0, 8.0, 7.5, 7.45)
    assert change_per_decade(DECADES, values) == pytest.approx([0.25, 1 / 3, 0.0625, 0.05 / 7.5])
    assert knee(DECADES, values) == 1e-2


def test_a_grid_whose_last_step_still_changes_the_readout_has_no_knee():
    assert knee(DECADES, (16.0, 15.9, 15.8, 15.7, 12.0)) is None  # 15.7 -> 12: 24 %


def test_a_flat_curve_has_its_knee_at_the_first_c():
    assert knee(DECADES, (5.0,) * 5) == 1e-4


def test_a_change_after_a_flat_stretch_moves_the_knee_past_it():
    # 16 -> 8 -> 8 -> 12 -> 12: flat from 1e-3 to 1e-2, then 50 %, then flat
    assert knee(DECADES, (16.0, 8.0, 8.0, 12.0, 12.0)) == 1e-1


def test_the_change_is_per_decade_of_c():
    # 15 % over two decades is 7.5 % per decade: under the tolerance; over one, 15 %: not
    assert knee((1e-3, 1e-1), (10.0, 8.5)) == 1e-3
    assert knee((1e-3, 1e-2), (10.0, 8.5)) is None
    # a third of a decade (1e-3 -> 10^-2.667): 4 % is 12 % per decade
    c = (1e-3, 10 ** (-3 + 1 / 3))
    assert change_per_decade(c, (10.0, 9.6)) == pytest.approx([0.12])
    assert knee(c, (10.0, 9.6)) is None


def test_zero_to_zero_is_no_change_and_zero_to_more_is_every_change():
    assert knee((1e-2, 1e-1, 1.0), (4.0, 0.0, 0.0)) == 1e-1
    assert change_per_decade((1e-2, 1e-1), (0.0, 1.0))[0] == math.inf
    assert knee((1e-2, 1e-1, 1.0), (0.0, 0.0, 1.0)) is None


def test_a_missing_value_breaks_the_flat_stretch():
    assert knee(DECADES[:4], (16.0, math.nan, 8.0, 8.0)) == 1e-2
    assert knee(DECADES[:3], (16.0, 8.0, math.nan)) is None


def test_fewer_than_two_cs_have_no_knee():
    assert knee((), ()) is None and knee((1e-2,), (3.0,)) is None


def test_a_custom_tolerance():
    values = (16.0, 12.0, 8.0, 7.5, 7.45)
    assert knee(DECADES, values, tolerance=0.01) == 1e-1
    assert knee(DECADES, values, tolerance=0.5) == 1e-4


@pytest.mark.parametrize(
    "c, values",
    [((1e-2, 1e-3), (1.0, 2.0)), ((0.0, 1.0), (1.0, 2.0)), ((1e-2, 1e-2), (1.0, 2.0)), ((1e-2, 1.0), (1.0,))],
)
def test_cs_that_are_not_positive_and_increasing_are_refused(c, values):
    with pytest.raises(ValueError):
        knee(np.array(c), values)
