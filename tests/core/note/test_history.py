"""History: bounded memory however long a run goes; the first and newest rows stay;
time order is kept; recent rows stay dense. And death events: every weight that died
has a finite time in the solver's per-weight array."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from sparsity_gui.core.history import History
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.simulation import Simulation

N_RECORDS = 10**7  # measured ~4.5 s on the reference machine (a Python loop of appends)


def test_ten_million_records_stay_bounded():
    cap = 4096
    h = History(width=3, capacity=cap)
    row = np.zeros(3)
    append = h.append
    max_len = 0
    start = time.perf_counter()
    for i in range(N_RECORDS):
        row[0] = i
        append(row)
        if i & 0xFFFF == 0:  # sample the size now and then (checking every time doubles the cost)
            max_len = max(max_len, len(h))
            assert len(h) <= cap
    elapsed = time.perf_counter() - start
    assert elapsed < 60.0  # about 1 us per append; a regression to O(capacity) per append fails
    assert h.appended == N_RECORDS
    assert max_len <= cap and len(h) <= cap
    assert h.nbytes == cap * 3 * 8  # the buffer never grew
    data = h.array()
    t = data[:, 0]
    assert t[0] == 0.0  # the first row is kept
    assert t[-1] == N_RECORDS - 1  # and the newest
    assert np.all(np.diff(t) > 0)  # time order
    # resolution falls off with age, recent rows stay dense: after a thinning the newest
    # quarter of the buffer is untouched, so the last cap/4 rows are consecutive
    assert np.all(np.diff(t[-cap // 4 :]) == 1)
    # and the buffer is still reasonably full (thinning keeps ~5/8)
    assert len(h) >= cap // 2


def test_thinning_invariants_at_every_append():
    cap = 16
    h = History(width=2, capacity=cap)
    for i in range(2000):
        h.append(np.array([float(i), -float(i)]))
        data = h.array()
        assert len(h) <= cap
        assert data[0, 0] == 0.0 and data[-1, 0] == i
        assert np.all(np.diff(data[:, 0]) > 0)
        np.testing.assert_array_equal(data[:, 1], -data[:, 0])  # rows are not mixed up
        assert np.array_equal(h.last(), data[-1])


def test_history_basics():
    with pytest.raises(ValueError):
        History(width=3, capacity=15)
    h = History(width=2, capacity=16)
    assert len(h) == 0 and h.last() is None and h.array().shape == (0, 2)
    h.append(np.array([1.0, 2.0]))
    a = h.array()
    a[0, 0] = 99.0  # a copy: the caller may keep it
    assert h.array()[0, 0] == 1.0
    h.clear()
    assert len(h) == 0 and h.last() is None


@pytest.mark.parametrize("method", ["exact", "gd"])
def test_every_dead_weight_has_a_finite_death_time(method):
    """After a long run to one survivor, the solver's death_t holds a finite time for every
    weight that died (and NaN for the survivor), in order of |W(0)|, within the run."""
    m = 300
    sim = Simulation(SimParams(m=m, lam=5e-3, seed=4, method=method, eta=0.05))
    t_end = 1.1 * sim.time_to_nonzero(1)
    for t in np.linspace(0.0, t_end, 200)[1:]:  # (the constructor recorded t = 0)
        sim.advance(t)
        sim.record()
    assert sim.moments().nonzero == 1
    d = sim.solver.death_times()
    w = sim.solver.weights()
    dead = w == 0.0
    assert dead.sum() == m - 1
    assert np.all(np.isfinite(d[dead])) and np.all((d[dead] > 0) & (d[dead] <= sim.t))
    assert np.all(np.isnan(d[~dead]))
    by_size = np.argsort(np.abs(sim.init.w0[dead]))
    assert np.all(np.diff(d[dead][by_size]) >= 0)  # a smaller weight never dies later
    # the history stayed bounded and ordered along the way
    rows = sim.history.array()
    assert len(rows) <= sim.history.capacity
    assert np.all(np.diff(rows[:, 0]) > 0)
    if method == "gd":  # GD deaths sit on the step grid t = eta * step
        steps = d[dead] / 0.05
        np.testing.assert_allclose(steps, np.round(steps), rtol=0, atol=1e-6)
    assert math.isfinite(sim.t)
