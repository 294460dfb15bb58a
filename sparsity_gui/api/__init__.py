"""The solvers for notebooks and scripts, without Qt: ``simulate`` (the note's model),
``scaling`` (the note's constants across m and lam), ``train`` (one run of the interference
model) and ``sweep`` (polysemantic neurons against m). Keyword arguments carry the CLI's
option names (``--t-end`` is ``t_end``, ``--no-interference`` is ``no_interference``) and
defaults; a bad one raises ValueError (``sparsity_gui.core.errors.InputError``) with the
message the CLI prints after ``error:``, as both check their arguments in the same place
(core/*/headless.py).

Units: the note's model runs in its own time ``t`` (W' = (1 - |W|^2) W - lam sign(W));
gradient descent (``method="gd"``) takes steps of ``eta`` in that time, t = eta * step.
The interference model takes the network's units: the loss's L1 coefficient ``l1`` and
the learning rate ``lr``, per step. Its gradient divided by 4 is the note's flow plus
interference, so the note's lam = l1/4 and, for plain gradient descent, eta = 4 lr and
t = 4 lr * steps.

Each call returns a result whose arrays are numpy arrays. ``to_pandas()`` gives its main
table as a DataFrame when pandas is installed (it is not a dependency), and
``save(dir)`` writes the files the CLI command with the same options writes, with the
same digits, into a new or empty folder (atomically: all of it or nothing), recording
that command line in its metadata.

>>> from sparsity_gui import api
>>> run = api.simulate(m=1000, lam=1e-3, seed=0)
>>> run.nonzero_final
1
"""

from sparsity_gui.api.checkpoints import CheckpointComparison, compare_checkpoints
from sparsity_gui.api.interference import SweepResult, TrainingResult, sweep, train
from sparsity_gui.api.note import ScalingResult, SimulationResult, scaling, simulate
from sparsity_gui.api.note import Schedule as Schedule  # the type of simulate(schedule=)

__all__ = [
    "CheckpointComparison",
    "ScalingResult",
    "SimulationResult",
    "SweepResult",
    "TrainingResult",
    "compare_checkpoints",
    "scaling",
    "simulate",
    "sweep",
    "train",
]
