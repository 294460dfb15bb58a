"""Knots of either model's schedules (core/knots.py) given in bulk: a text or a list far
past the most knots allowed is refused before it is split or walked, in bounded memory and
time, with a message of bounded length."""

from __future__ import annotations

import itertools
import tracemalloc

import pytest

from sparsity_gui import api
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.knots import MAX_KNOTS, check_knots

MB = 2**20


def refused_with(knots, words: str) -> str:
    """check_knots' message for ``knots``, checking that refusing them allocated under 1 MB."""
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            check_knots(knots, 1.0, "lam_schedule", value_name="λ")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert words in info.value.message and info.value.field == "lam_schedule"
    assert peak < MB, peak
    assert len(str(info.value)) < 200
    return info.value.message


def test_a_text_of_16_mb_of_knots_is_counted_before_it_is_split():
    text = "0:0," * (4 * MB)  # 16 MB, 4 million knots
    assert refused_with(text, "knots; at most 1000 are allowed") == (
        f"more than {MAX_KNOTS} knots; at most {MAX_KNOTS} are allowed"
    )
    refused_with("," * (16 * MB), "characters long")  # commas alone: no knot, a long text


def test_one_knot_of_16_mb_is_refused_by_its_length_and_not_echoed():
    refused_with("0:" + "1" * (16 * MB), "characters long; the knots' text is at most 64000")
    refused_with("0:0, 10:" + "x" * 1000, "expected knots t:value")  # cut in the message


def test_a_list_or_an_endless_iterator_of_pairs_is_refused_at_the_limit():
    refused_with([(0.0, 0.0)] * (MAX_KNOTS + 1), f"{MAX_KNOTS + 1} knots")
    refused_with(((float(i), 0.0) for i in itertools.count()), f"more than {MAX_KNOTS} knots")


def test_the_most_knots_allowed_are_read():
    knots = ",".join(f"{i}.5:1e-3" for i in range(MAX_KNOTS))
    assert len(check_knots(knots, 1.0, "lam_schedule")) == MAX_KNOTS


def knots_text_of(count: int) -> str:
    return ",".join(f"{i}:{i % 2}e-3" for i in range(count))


@pytest.mark.parametrize(
    "layout",
    [
        "{}",
        "{},",  # a trailing comma
        " {} , ",  # spaces around
        ",{},, ,",  # empty items, as the parser skips them
    ],
)
def test_the_limit_is_exactly_the_knots_the_text_holds(layout):
    """1,000 knots are read however the text is laid out; 1,001 are refused before any is
    read, with the same layouts."""
    most = layout.format(knots_text_of(1000))
    knots = check_knots(most, 1.0, "lam_schedule")
    assert len(knots) == 1000 and knots[-1] == (999.0, 1e-3)
    refused_with(layout.format(knots_text_of(1001)), "more than 1000 knots; at most 1000 are allowed")


def test_a_knot_is_counted_by_what_it_holds_not_by_its_commas():
    """Spaces are dropped as the parser drops them: a text of 1,000 knots and 2,000 commas is
    not refused by its count; an item of a tab is a knot (and then a bad one)."""
    spaced = knots_text_of(1000).replace(",", ", ,")
    assert len(check_knots(spaced, 1.0, "lam_schedule")) == 1000
    refused_with(knots_text_of(1000) + ",\t", "more than 1000 knots")


def test_the_api_refuses_a_huge_schedule_of_either_model_by_name():
    text = "0:0," * MB
    with pytest.raises(ValueError, match=r"^lam_schedule: more than 1000 knots; at most 1000"):
        api.simulate(m=10, lam_schedule=text)
    with pytest.raises(ValueError, match=r"^l1_schedule: more than 1000 knots; at most 1000"):
        api.train(n=4, m=8, steps=10, l1_schedule=text)
