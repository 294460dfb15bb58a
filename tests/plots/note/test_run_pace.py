"""The time axes' room ahead: RunPace measures a live run's simulated time per wall
second, and a growing time axis holds the next second of the run at that pace (on a
1, 2 or 5 x 10^k step), so that its steps, each a re-layout of every time axis in one
frame, no longer come a few frames apart in a run's first second."""

from __future__ import annotations

import math

import pytest

from sparsity_gui.plots.note.norms import DecayPanel
from sparsity_gui.plots.ranges import LOOK_AHEAD_S, RunPace


def test_the_pace_is_the_t_covered_per_wall_second_over_the_last_half_second():
    pace = RunPace()
    assert pace.per_second == 0.0
    pace.add(10.0, 0.0)
    assert pace.per_second == 0.0  # one frame: no pace yet
    for k in range(1, 61):  # 60 frames a second, t at 75 a second
        pace.add(10.0 + k / 60, 75.0 * k / 60)
    assert pace.per_second == pytest.approx(75.0)
    for k in range(61, 121):  # then twice as fast: after half a second only that counts
        pace.add(10.0 + k / 60, 75.0 + 150.0 * (k - 60) / 60)
    assert pace.per_second == pytest.approx(150.0)


def test_a_restart_or_a_frozen_clock_starts_the_pace_over():
    pace = RunPace()
    pace.add(0.0, 0.0)
    pace.add(0.05, 40.0)  # two frames close together, around a jump of t: no pace yet
    assert pace.per_second == 0.0
    pace.add(0.5, 40.0)
    assert pace.per_second == pytest.approx(80.0)
    pace.add(0.6, 1.0)  # t went back: a new run
    assert pace.per_second == 0.0
    pace.add(0.6, 2.0)  # the same wall instant twice: no division by zero
    pace.add(0.7, math.nan)  # no t: ignored
    assert pace.per_second == 0.0
    pace.add(0.8, 4.0)
    assert pace.per_second == pytest.approx(10.0)  # from (0.6, 2.0)


def test_while_the_run_goes_on_its_time_axis_never_shrinks_with_a_slower_pace(qtbot):
    """The pace varies (a live change, a busy machine): a top of 200 for the next second
    at one frame must not become 100 at the next, a re-layout of every time axis each
    time. Paused, the axis ends where the run does."""
    panel = DecayPanel()
    qtbot.addWidget(panel)
    plot = panel.time_plots[0]
    panel.pace.add(0.0, 0.0)
    panel.pace.add(1.0, 150.0)  # 150 a second: room to 200 at t = 20
    lo, hi = panel._range_for(plot, 0, (0.0, 20.0), (0.0, 10.0), force=False)
    assert hi == pytest.approx(200.0)
    panel.pace.add(1.5, 160.0)  # slower now: 20 a second
    assert panel._range_for(plot, 0, (0.0, 25.0), (lo, hi), force=False) is None  # left as it is
    panel._settled = True  # paused at t = 25: the axis hugs the run
    lo2, hi2 = panel._range_for(plot, 0, (0.0, 25.0), (lo, hi), force=False)
    assert 25.0 <= hi2 < 30.0


@pytest.mark.parametrize(
    ("t", "per_second", "top"),
    [
        (0.5, 0.0, 1.0),
        (0.5, 75.0, 100.0),
        (3.0, 75.0, 100.0),
        (60.0, 75.0, 200.0),
        (60.0, 0.3, 100.0),
        (400.0, 150.0, 1000.0),
    ],
)
def test_a_growing_time_axis_holds_the_next_second_of_the_run(qtbot, t, per_second, top):
    panel = DecayPanel()
    qtbot.addWidget(panel)
    plot = panel.time_plots[0]
    if per_second:
        panel.pace.add(0.0, 0.0)
        panel.pace.add(1.0, per_second)
    lo, hi = panel._range_for(plot, 0, (0.0, t), (0.0, 0.1), force=False)
    assert hi == pytest.approx(top)
    assert hi >= t + LOOK_AHEAD_S * per_second  # the next second fits
    mantissa = hi / 10 ** math.floor(math.log10(hi))
    assert any(math.isclose(mantissa, step) for step in (1.0, 2.0, 5.0))
    assert lo <= 0.0
