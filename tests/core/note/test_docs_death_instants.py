"""docs/commands.md's warm-up numbers (1 % of the weights dead, half dead, one left) are the
exact death times docs/schedules/warmup_deaths.py computes, not the first sampled rows after
each event: the page prints what the script gives, and each instant is where the weights
alive on the run's rows cross that count."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import numpy as np

from sparsity_gui.core.note.initial import initial_weights
from sparsity_gui.core.note.metrics import COL
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import sample_times_of
from sparsity_gui.core.note.schedule import warmup_knots
from sparsity_gui.core.note.simulation import Simulation

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_the_page_prints_the_exact_death_times_the_script_gives():
    script = runpy.run_path(str(DOCS / "schedules" / "warmup_deaths.py"), run_name="warmup_deaths")
    plain, warm = script["sentence_numbers"]()
    text = " ".join((DOCS / "commands.md").read_text().split())
    found = re.search(
        r"1 % of the weights are dead at t = ([\d.]+), half at t = ([\d.]+), one is left at t = ([\d.]+); "
        r"with `--lam-warmup 50` those are ([\d.]+), ([\d.]+) and ([\d.]+) \(the 1 % point (\d+) times "
        r"later, the half point (\d+) times\)",
        text,
    )
    assert found, "the sentence moved or changed"
    groups = found.groups()
    exact = [plain["1 %"], plain["half"], plain["one left"], warm["1 %"], warm["half"], warm["one left"]]
    for shown, value in zip(groups[:6], exact, strict=True):
        decimals = len(shown.partition(".")[2])
        assert abs(float(shown) - value) <= 0.5 * 10.0**-decimals, (shown, value)  # rounded, not sampled
    assert int(groups[6]) == round(warm["1 %"] / plain["1 %"])
    assert int(groups[7]) == round(warm["half"] / plain["half"])
    assert plain["survivor"] == warm["survivor"] and len(plain["survivor"]) == 1


def test_each_instant_is_where_the_count_of_living_weights_crosses_it():
    """An independent look at the same runs: on a fine grid of times around each instant,
    m' (the run's own count at each row) is above the count just before and at or below it
    from the instant on; the README's old numbers (the first sampled rows) are later."""
    script = runpy.run_path(str(DOCS / "schedules" / "warmup_deaths.py"), run_name="warmup_deaths")
    for warmup, old in ((None, (0.11, 0.75)), (50.0, (1.3, 9.5))):
        got = script["instants"](warmup)
        params = SimParams(m=10_000, lam=1e-2, lam_schedule=warmup_knots(warmup, 1e-2) if warmup else ())
        for name, alive, stale in (("1 %", 9_900, old[0]), ("half", 5_000, old[1])):
            t = got[name]
            times = np.array([0.0, t * (1 - 1e-6), t * (1 + 1e-6)])
            sim = Simulation(params, initial_weights(params))
            rows, _ = sample_times_of(sim, times, ())
            nonzero = rows[:, COL["nonzero"]]
            assert nonzero[1] > alive >= nonzero[2], (warmup, name, nonzero)
            assert stale > t  # the old number was a sampled row after the event
