"""The note model's six live panels (sorted weights, threshold crossing, norm balance, L1
decay, relative variance, sparsity force) and the phase plane. Each creates its plot items
once and, per frame, only calls setData on them with arrays taken from a
core.note.runner.Snapshot. The panels of the weights are in weights.py, those of W's norms
over time in norms.py; NotePanel, what they are, in panel.py."""

from __future__ import annotations

from sparsity_gui.plots.note.norms import BalancePanel, DecayPanel, PhasePlanePanel, RelVarPanel
from sparsity_gui.plots.note.weights import ForcePanel, SortedWeightsPanel, ThresholdPanel

PANEL_TYPES = (
    SortedWeightsPanel,
    ThresholdPanel,
    BalancePanel,
    DecayPanel,
    RelVarPanel,
    ForcePanel,
    PhasePlanePanel,
)
GRID_PANELS = 6  # the first six fill the grid; the rest are tabs beside TABBED_WITH
TABBED_WITH = BalancePanel
