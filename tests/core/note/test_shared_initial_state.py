"""A replay of the run on screen (what an export re-simulates) shares the live run's sorted
W(0) instead of sorting it again: the same InitialState object, and the same rows, bit for
bit, as a replay from a fresh copy of W(0), which sorts its own."""

from __future__ import annotations

import gc

import numpy as np

from sparsity_gui.core.note import solvers
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import replay_script
from sparsity_gui.core.note.simulation import Simulation
from sparsity_gui.core.note.solvers import InitialState


def test_a_replay_of_the_live_run_shares_its_initial_state_and_its_numbers():
    live = Simulation(SimParams(m=3000, lam=5e-3, seed=6))
    live.advance(40.0)
    script = live.script(t=live.t, samples=41)
    assert script.w0 is live.init.w0  # the snapshot's read-only W(0), not a copy

    shared = replay_script(script)
    assert shared.sim.init is live.init
    fresh = replay_script(
        script.__class__(script.params, script.w0.copy(), script.changes, script.t, script.samples)
    )
    assert fresh.sim.init is not live.init
    assert np.array_equal(shared.rows, fresh.rows, equal_nan=True)
    assert np.array_equal(shared.sim.solver.weights(), fresh.sim.solver.weights())


def test_an_equal_but_other_array_is_sorted_anew_and_a_gone_state_leaves_no_entry():
    w = np.random.default_rng(1).standard_normal(500) / 25
    first = InitialState.from_weights(w)
    assert InitialState.from_weights(first.w0) is first
    assert InitialState.from_weights(w) is not first  # the caller's own array: its own state
    other = InitialState.from_weights(first.w0.copy())
    assert other is not first and np.array_equal(other.u, first.u)
    key = id(first.w0)
    del first, other
    gc.collect()
    assert key not in solvers._STATES  # weak: the entry went with its state
