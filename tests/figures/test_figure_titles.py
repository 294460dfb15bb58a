"""Exported figures are titled by the run's settings, as pinned runs are named (issue 46):
for random settings of each model (a seeded generator: schedules, warm-ups, noise), the
title every panel and the layout draw, read back from a figure drawn from its own JSON as
its script draws it, lists exactly the settings always shown (λ and m; m, n and l1) and
those that JSON keeps which differ from the defaults, each written with the settings
table's symbol and format; the title fits its figure (the layout rules of
figures/layout.py); a few are written out here by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
from settings_draws import interference_draw, note_draw

from sparsity_gui.core.interference.headless import train
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import HISTORY_COLUMNS
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS, run_settings
from sparsity_gui.core.interference.thresholds import run_threshold_curves
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import simulate_samples
from sparsity_gui.core.note.schedule import warmup_knots
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.figures.interference import figures as fi
from sparsity_gui.figures.layout import text_overlaps
from sparsity_gui.figures.note import figures as nf
from sparsity_gui.figures.save import arrays_of, data_json, figure_of
from sparsity_gui.figures.style import style_params

STYLE = style_params(None)
NOTE_PANELS = ("norm_balance", "weights_sorted")
INTERFERENCE_PANELS = ("weights", "polysemantic", "thresholds")
ADAM = ("beta1", "beta2", "eps")
# the settings a title names even at their defaults: what places a run
NOTE_ALWAYS = ("lam", "m")
INTERFERENCE_ALWAYS = ("m", "n", "l1")


def written(setting, value) -> str:
    shown = setting.fmt(value)
    return f"{setting.symbol} = {shown}" + (f" {setting.unit}" if setting.unit and shown != "none" else "")


def described(table, settings: dict, default: dict, always, skip=()) -> list[str]:
    """The settings of the JSON ``settings`` that are ``always`` shown or unlike
    ``default``'s, in the table's order (one the JSON does not keep, such as an l1 run's
    TopK, is not named; a skipped one, η without gradient descent or Adam's without Adam,
    never)."""
    return [
        written(s, settings[s.name])
        for s in table
        if s.name in settings
        and (
            s.name in always or (s.in_pin_name and s.name not in skip and settings[s.name] != default[s.name])
        )
    ]


def note_expected(settings: dict) -> str:
    default = NOTE_SETTINGS.values(SimParams())
    skip = () if settings["method"] == "gd" else ("eta",)
    return ", ".join(described(NOTE_SETTINGS, settings, default, NOTE_ALWAYS, skip))


def interference_expected(settings: dict) -> str:
    default = {**INTERFERENCE_SETTINGS.values(InterferenceParams()), "w0": None}
    default["weight_decay"] = 0.01 if settings["optimizer"] == "adamw" else 0.0  # torch's, by optimizer
    skip = () if settings["optimizer"] in ("adam", "adamw") else ADAM
    return ", ".join(described(INTERFERENCE_SETTINGS, settings, default, INTERFERENCE_ALWAYS, skip))


def drawn(function, part: dict, size):
    """(the figure drawn from the part's JSON as its script draws it, that JSON decoded)."""
    text = data_json(part)
    return figure_of(function, arrays_of(json.loads(text)), STYLE, size), json.loads(text)


def title_of(fig) -> str:
    """The settings line(s) above the figure, joined again: its legend's title, or its own."""
    legend_title = fig.legends[0].get_title().get_text() if fig.legends else ""
    text = legend_title or fig.get_suptitle()
    lines = [line for line in text.split("\n") if not line.startswith("The note's premise")]
    return " ".join(lines).replace(",  ", ", ").replace("\\$", "$")


def fits(fig) -> None:
    assert text_overlaps(fig) == [], text_overlaps(fig)


def note_data(params: SimParams) -> dict:
    run = simulate_samples(params, None, 101)
    return nf.panel_data(nf.run_snapshot(run), fit=nf.fit_constants(run))


def interference_data(params: InterferenceParams) -> dict:
    run = train(params, 20)
    run.measure(with_loss=False)
    settings = run_settings(run.params, run.w0_source)
    thresholds = run_threshold_curves(run)
    return fi.run_data(
        run.history_array(),
        HISTORY_COLUMNS,
        run.W,
        run.counts,
        params.n,
        settings=settings,
        thresholds=thresholds,
    )


@pytest.mark.parametrize("draw", range(3))
def test_note_figures_are_titled_by_the_settings_their_json_keeps(draw):
    params = note_draw(np.random.default_rng(4600 + draw), t_end=True)
    data = note_data(params)
    for name in NOTE_PANELS:
        fig, kept = drawn(nf.PANELS[name], data[name], nf.panel_size(None))
        want = note_expected(kept["settings"])
        assert title_of(fig) == want, name
        fits(fig)
    fig, kept = drawn(nf.note_layout, nf.layout_data(data), nf.LAYOUT_SIZE)
    assert title_of(fig) == note_expected(kept[nf.GRID[0]]["settings"])
    fits(fig)


@pytest.mark.parametrize("draw", range(3))
def test_interference_figures_are_titled_by_the_settings_their_json_keeps(draw):
    params = interference_draw(np.random.default_rng(4610 + draw))
    data = interference_data(params)
    for name in INTERFERENCE_PANELS:
        fig, kept = drawn(fi.PANELS[name][0], data[name], (3.5, 2.9))
        want = interference_expected(kept["settings"])
        assert title_of(fig) == want, name
        fits(fig)
    fig, kept = drawn(fi.layout, fi.layout_data(data), fi.layout_size(STYLE))
    assert title_of(fig) == interference_expected(kept["panels"][0]["settings"])
    fits(fig)


def test_titles_by_hand():
    """A warm-up in the note; a schedule and noise in the interference model."""
    warm = SimParams(m=500, lam=2e-3, sigma=0.5, seed=3, lam_schedule=warmup_knots(20.0, 2e-3))
    data = note_data(warm)
    fig, _kept = drawn(nf.PANELS["norm_balance"], data["norm_balance"], nf.panel_size(None))
    assert title_of(fig) == "λ = 2.0e-3, λ warm-up = 20, m = 500, σ = 0.5, seed = 3"
    noisy = InterferenceParams(
        n=8, m=16, optimizer="adam", l1=0.04, l1_schedule="0:0,50:0.04", steps=100, seed=7,
        noise="bernoulli", noise_sigma=0.1,
    )  # fmt: skip
    data = interference_data(noisy)
    fig, _kept = drawn(fi.layout, fi.layout_data(data), fi.layout_size(STYLE))
    assert title_of(fig) == (
        "m = 16, n = 8, l1 = 4.0e-2, optimizer = adam, steps = 100, seed = 7, noise = Bernoulli, "
        "noise σ = 0.1, l1 schedule = 0:0,50:0.04"
    )
    fig, _kept = drawn(fi.PANELS["weights"][0], data["weights"], (3.5, 2.9))
    assert fig.get_suptitle().split("\n")[0].endswith(",")  # wrapped between two settings
    # a run at every default is still placed: λ and m
    plain = note_data(SimParams())
    fig, _kept = drawn(nf.PANELS["weights_sorted"], plain["weights_sorted"], nf.panel_size(None))
    assert title_of(fig) == "λ = 1.0e-3, m = 1,000"
