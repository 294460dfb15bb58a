"""A movie frame at t_k is what *Export figure* draws at t_k: the L1 frame carries the bulk c
and the fit's deviation beside c, each fitted to the frame's rows as they are (computed
here by least squares through the origin, from the frame's own arrays: no resample), and
the first frame's time axis is the run's instant, not the pinned runs' span."""

from __future__ import annotations

import numpy as np
import pytest

from sparsity_gui.core.note.changes import RunScript
from sparsity_gui.core.note.initial import draw_normal
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.pins import PIN_COLUMNS, pin_params
from sparsity_gui.core.note.sampled import replay_script
from sparsity_gui.core.pins import PinBoard
from sparsity_gui.figures.note.movie import note_frames


def _script(m=1000, lam=4e-3, t=300.0, seed=1):
    params = SimParams(m=m, lam=lam, seed=seed)
    return RunScript(params, draw_normal(m, params.sigma, seed), (), t, 301)


def _through_origin(x, y):
    return float(np.dot(x, y) / np.dot(x, x))


def test_an_l1_frame_carries_c_bulk_c_and_the_deviation_of_its_own_rows():
    script = _script()
    t_k = 150.0
    (frame,) = note_frames(script, "layout", np.array([t_k]))
    l1 = frame.data["l1_decay"]
    nonzero = np.asarray(frame.data["threshold_crossing"]["nonzero"], float)
    t = np.asarray(l1["t"], float)
    assert t[-1] == t_k and np.all(t[:-1] <= t_k)
    w, x = np.asarray(l1["w"], float), np.asarray(l1["lam_t"], float)
    fit = l1["fit"]
    assert set(fit) >= {"c", "c_bulk", "max_rel_dev"}  # in the note's regime: all three, as an export's
    for key, least in (("c", 2), ("c_bulk", 10)):
        keep = (nonzero >= least) & np.isfinite(w)
        assert fit[key] == pytest.approx(_through_origin(x[keep], w[keep] - w[0]), rel=1e-12)
    keep = (nonzero >= 2) & np.isfinite(w)
    norm1 = np.asarray(l1["norm1"], float)[keep]
    law = 1.0 / (w[0] + fit["c"] * x[keep])
    assert fit["max_rel_dev"] == pytest.approx(np.max(np.abs(law - norm1) / norm1), rel=1e-12)


def test_the_first_frame_spans_the_runs_instant_not_the_pins():
    script = _script(t=100.0)
    board = PinBoard()
    other = replay_script(_script(m=500, lam=1e-3, t=900.0, seed=2))
    board.add(pin_params(other.sim.params), PIN_COLUMNS, other.rows[:, : len(PIN_COLUMNS)])
    first, second = note_frames(script, "l1_decay", np.array([0.0, 10.0]), pins=list(board))
    lo, hi = first.fig.axes[0].get_xlim()
    assert lo <= 0.0 <= hi and hi < 1.0  # the pinned run reaches t = 900
    assert second.fig.axes[0].get_xlim()[1] == pytest.approx(10.0)
