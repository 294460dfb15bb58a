"""One front door for a grid (core/interference/headless.sweep_order,
core/note/headless.scaling_order): the same grid given through the command line, the Python
API and the window's grid tab is the same plan with the same runs side by side, and the
command line a tab shows, run as the command, writes the tab's runs. Each surface is given
the grid its own way, written out by hand below; nothing is derived from the code under test.
Real widgets, the real commands in-process, real runs (tiny ones)."""

from __future__ import annotations

import csv
import shlex

import pytest
from helpers import command_in_process, type_into

from sparsity_gui import api
from sparsity_gui.cli.scaling import build_scaling_parser, grid_from_args
from sparsity_gui.cli.sweep import build_sweep_parser, sweep_spec_from_args
from sparsity_gui.core.interference.files import resumed_rows
from sparsity_gui.core.interference.headless import sweep_order
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.headless import scaling_order
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.interference.sweep_tab import SweepWidget
from sparsity_gui.ui.note.scaling_tab import ScalingWidget

# (name, the command's options, the API's keywords, the dock's run and the tab's fields or
# None (the tab has no --paper), the runs and the varied options as counted by hand)
SWEEPS = [
    (
        "lists",
        "--n 8 --m 8,16 --seeds 2 --l1 1e-3,1e-2 --optimizer adamw,gd-zero --steps 40 --lr 0.05 --jobs 2",
        dict(
            n=8,
            m=[8, 16],
            seeds=2,
            l1=[1e-3, 1e-2],
            optimizer=["adamw", "gd-zero"],
            steps=40,
            lr=0.05,
            jobs=2,
        ),
        (
            InterferenceParams(n=8, m=32, lr=0.05, steps=40),
            {"n": "8", "m": "8,16", "seeds": "2", "l1": "1e-3,1e-2", "optimizer": "adamw,gd-zero"},
        ),
        16,
        ("m", "l1", "optimizer"),
    ),
    (
        "knots and noise",
        "--n 6 --m 6,12 --seeds 1 --steps 30 --l1-schedule 0:0,10:0.002 --lr 0.01,0.02 "
        "--noise gaussian --noise-sigma 0.05 --seed 5 --jobs 1",
        dict(
            n=6,
            m=[6, 12],
            seeds=1,
            steps=30,
            l1_schedule=[(0, 0), (10, 0.002)],
            lr=[0.01, 0.02],
            noise="gaussian",
            noise_sigma=0.05,
            seed=5,
            jobs=1,
        ),
        (
            InterferenceParams(
                n=6,
                m=6,
                steps=30,
                l1=0.002,
                l1_schedule=((0, 0.0), (10, 0.002)),
                noise="gaussian",
                noise_sigma=0.05,
                seed=5,
            ),
            {"n": "6", "m": "6,12", "seeds": "1", "lr": "0.01, 0.02"},
        ),
        4,
        ("m", "lr"),
    ),
    (
        "two schedules as a list",
        "--n 4 --m 4 --seeds 1 --steps 20 --lr-schedule 0:0.01,10:0.02;0:0.03,10:0.02 --jobs 1",
        dict(n=4, m=[4], seeds=1, steps=20, lr_schedule=["0:0.01,10:0.02", [(0, 0.03), (10, 0.02)]], jobs=1),
        None,
        2,
        ("lr_schedule",),
    ),
    (
        "--paper with its sizes given",
        "--paper --n 4 --m 4,8 --seeds 2 --steps 10 --jobs 1",
        dict(paper=True, n=4, m=[4, 8], seeds=2, steps=10, jobs=1),
        None,
        4,
        ("m",),
    ),
]


def _cli_sweep(options: str):
    args = build_sweep_parser().parse_args([*shlex.split(options), "--out", "unused"])
    spec = sweep_spec_from_args(args)
    return spec, args.jobs


def _tab(show_tab, make, fields: dict[str, str], workers: int | None = None):
    tab = show_tab(make())
    for name, text in fields.items():
        type_into(tab.fields[name], text)
    if workers is not None:
        tab.workers.setValue(workers)
    return tab


@pytest.mark.parametrize("name, cli, kwargs, tab, runs, varied", SWEEPS, ids=[c[0] for c in SWEEPS])
def test_a_sweep_is_the_same_through_the_cli_the_api_and_the_tab(
    show_tab, name, cli, kwargs, tab, runs, varied
):
    spec, jobs = _cli_sweep(cli)
    assert len(spec.runs()) == runs and spec.varied == varied
    result = api.sweep(**kwargs)
    assert result.spec == spec and result.jobs == jobs
    assert len(result.sweep_rows) == runs
    if tab is not None:
        dock, fields = tab
        widget = _tab(show_tab, lambda: SweepWidget(lambda: dock), fields, workers=jobs)
        assert widget.make_plan(None) == spec
        assert sweep_order(widget.grid_options(None)).jobs == jobs


def test_paper_through_the_door_is_the_papers_grid():
    """--paper alone: n = 256, m = 256 .. 4096 by 256, 16 seeds (256 runs), AdamW at
    l1 = lr = 1e-3 for 7500 steps (Lecomte et al. 2023), the same through every surface's door."""
    spec, jobs = _cli_sweep("--paper")
    order = sweep_order({"paper": True})
    assert order.plan == spec and order.jobs == jobs
    assert spec.m_values == tuple(range(256, 4097, 256)) and spec.seeds == 16 and len(spec.runs()) == 256
    b = spec.base
    assert (b.n, b.optimizer, b.l1, b.lr, b.steps) == (256, "adamw", 1e-3, 1e-3, 7500)


def test_the_sweep_tabs_command_line_runs_the_tabs_runs(show_tab, tmp_path, monkeypatch, capsys):
    dock = InterferenceParams(
        n=4,
        m=4,
        optimizer="gd-zero",
        lr=0.05,
        lr_schedule=((0, 0.02), (10, 0.05)),
        steps=20,
        seed=7,
        sigma=0.8,
    )
    fields = {"n": "4", "m": "4,8", "seeds": "1", "l1": "0.01,0.04"}
    tab = _tab(show_tab, lambda: SweepWidget(lambda: dock), fields, workers=1)
    tab.readout.setCurrentIndex(tab.readout.findData("active"))
    plan = tab.make_plan(None)
    assert len(plan.runs()) == 4 and plan.base.lr_schedule == ((0, 0.02), (10, 0.05))
    command = shlex.split(tab.command.text())
    assert command[:2] == ["sparsity-gui", "sweep"] and command[-2:] == ["--out", "DIR"]
    assert "--readout" in command and "--lr-schedule" in command and "--seed" in command
    assert command[command.index("--readout") + 1] == "active"
    out = tmp_path / "out"
    argv = [*command[1:-1], str(out), "--no-figure"]  # figures: the sweep commands' own tests
    status, _out, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    rows, dropped = resumed_rows(out, plan)  # sweep.json holds the tab's spec, sweep.csv its runs
    assert dropped == 0
    assert sorted(plan.row_key(r) for r in rows) == sorted(plan.run_key(p) for p in plan.runs())


NOTE = SimParams(m=200, lam=1e-2, sigma=0.8, seed=4)


def test_a_scaling_grid_is_the_same_through_the_cli_the_api_and_the_tab(show_tab):
    args = build_scaling_parser().parse_args(
        ["--m", "100,200", "--lam", "1e-2,2e-2", "--seeds", "2", "--seed", "4", "--sigma", "0.8"]
        + ["--jobs", "2", "--out", "unused"]
    )
    grid, jobs = grid_from_args(args)
    assert grid.runs() == [(m, lam, s) for m in (100, 200) for lam in (1e-2, 2e-2) for s in (4, 5)]
    result = api.scaling(m=[100, 200], lam="1e-2,2e-2", seeds=2, seed=4, sigma=0.8, jobs=2)
    assert result.grid == grid and result.jobs == jobs
    fields = {"m": "100,200", "lam": "1e-2,2e-2", "seeds": "2"}
    tab = _tab(show_tab, lambda: ScalingWidget(lambda: NOTE), fields, workers=2)
    assert tab.make_plan(None) == grid
    assert scaling_order(tab.grid_options(None)).jobs == jobs


def test_the_scaling_tabs_command_line_runs_the_tabs_runs(show_tab, tmp_path, monkeypatch, capsys):
    tab = _tab(show_tab, lambda: ScalingWidget(lambda: NOTE), {"m": "100", "lam": "1e-2,3e-2", "seeds": "1"})
    plan = tab.make_plan(None)
    command = shlex.split(tab.command.text())
    assert command[:2] == ["sparsity-gui", "scaling"] and "--sigma" in command and "--seed" in command
    out = tmp_path / "out"
    argv = [*command[1:-1], str(out), "--no-figure"]  # figures: the scaling command's own tests
    status, _out, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    with open(out / "scaling.csv", newline="") as f:
        written = [
            (int(r["m"]), float(r["lam"]), int(r["seed"]), float(r["sigma"])) for r in csv.DictReader(f)
        ]
    assert sorted(written) == sorted((m, lam, s, 0.8) for m, lam, s in plan.runs())
    assert sorted(written) == [(100, 1e-2, 4, 0.8), (100, 3e-2, 4, 0.8)]


# --- a setting added to the settings table reaches every surface of a grid -----------------------
KIND_VALUES = {
    "number": ("0.5", 0.5),
    "whole": ("7", 7),
    "choice": ("abc", "abc"),
    "knots": ("0:1,5:2", "0:1,5:2"),
}


def test_every_axis_of_the_table_is_an_option_of_every_surface(show_tab):
    """The settings a grid varies are the table's rows marked with Setting.axis: each is an
    option of the sweep's door, of the `sweep` and `interference` commands, a keyword of
    api.sweep, a field of the Sweep tab (or one it leaves to the dock) and a column of
    sweep.csv (a row says which run it is)."""
    import dataclasses
    import inspect

    from sparsity_gui.api.interference import table_options
    from sparsity_gui.cli.interference import build_interference_parser
    from sparsity_gui.core.interference.axes import AXES
    from sparsity_gui.core.interference.headless import SWEEP_OPTIONS
    from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS
    from sparsity_gui.core.interference.sweep import SweepRow
    from sparsity_gui.ui.interference.sweep_tab import DOCK_ONLY

    axes = INTERFERENCE_SETTINGS.axes()
    assert set(axes) == set(AXES) and AXES[0] == "m" and len(axes) == 24
    tab = show_tab(SweepWidget(lambda: InterferenceParams(n=4, m=4)))
    sweep_dests = {a.dest for a in build_sweep_parser()._actions}
    one_run_dests = {a.dest for a in build_interference_parser()._actions}
    keywords = inspect.signature(api.sweep).parameters
    columns = {f.name for f in dataclasses.fields(SweepRow)}
    for axis in axes:
        assert axis in SWEEP_OPTIONS and axis in sweep_dests and axis in one_run_dests, axis
        assert axis in keywords or table_options("sweep", {axis: 1}) == {axis: 1}, axis
        assert axis in columns, f"{axis}: sweep.csv needs its column (a field of SweepRow)"
        assert axis == "m" or axis in tab.fields or axis in DOCK_ONLY, axis
    with pytest.raises(TypeError, match="unexpected keyword argument 'sparsity_typo'"):
        api.sweep(n=4, m=[4], sparsity_typo=1)


@pytest.mark.parametrize("kind", list(KIND_VALUES))
def test_a_row_marked_as_an_axis_becomes_an_option_from_its_row_alone(kind):
    """A made-up row of each kind, in a table of its own: add_table_options gives it an
    option named, explained and defaulted by its row, its text read as its kind."""
    import argparse

    from sparsity_gui.cli.interference import add_table_options
    from sparsity_gui.core.settings import NEW_RUN, Setting, Settings

    table = Settings([Setting("made_up", "µ", 3, NEW_RUN, "a knob no model has", axis=kind)])
    parser = argparse.ArgumentParser()
    add_table_options(parser.add_argument_group("model"), table, added=set())
    (action,) = [a for a in parser._actions if a.dest == "made_up"]
    assert action.option_strings == ["--made-up"] and "a knob no model has (default 3)" in action.help
    text, value = KIND_VALUES[kind]
    assert parser.parse_args(["--made-up", text]).made_up == value
    assert parser.parse_args([]).made_up is None
    add_table_options(parser.add_argument_group("again"), table, added={"made_up"})  # written by hand: left
