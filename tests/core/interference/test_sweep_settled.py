"""A sweep says which runs had settled: every feature still alive has an active weight and
the counts did not change over the last 10 % of the steps (checked here against the runs'
own W and counts, recomputed with numpy)."""

import numpy as np

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun
from sparsity_gui.core.interference.sweep import SweepSpec


def counts(W):
    a = np.abs(W)
    active = (a >= 0.8) & (a <= 1.2)
    return int((active.sum(axis=0) > 1).sum()), int(active.sum())


def pending_features(W):
    a = np.abs(W)
    return int(((a > 0).any(axis=1) & ~((a >= 0.8) & (a <= 1.2)).any(axis=1)).sum())


def expected_settled(p: InterferenceParams) -> bool:
    """The definition, from a run replayed here step by step."""
    run = InterferenceRun(p)
    mark = p.steps - int(0.1 * p.steps)
    run.advance(mark)
    before = counts(run.W)
    run.advance(p.steps - mark)
    return before == counts(run.W) and pending_features(run.W) == 0


def test_short_runs_are_unsettled_and_long_ones_settled():
    # the note's flow with interference: every feature settles on one weight near w* ~ 0.95
    long = InterferenceParams(n=6, m=16, optimizer="gd-zero", l1=0.2, lr=0.05, steps=600)
    short = long.with_changes(steps=12)  # stopped long before any weight is active
    rows = SweepSpec(long, m_values=(16, 24), seeds=2).run()
    assert [r.settled for r in rows] == [
        expected_settled(long.with_changes(m=r.m, seed=r.seed)) for r in rows
    ]
    assert all(r.settled for r in rows)
    rows = SweepSpec(short, m_values=(16,), seeds=2).run()
    assert not any(r.settled for r in rows)
    assert [r.settled for r in rows] == [expected_settled(short.with_changes(seed=r.seed)) for r in rows]
