"""NotePanel: what each of the note model's live panels is (a LivePanel with pinned runs)
and the marker it puts where lam was changed."""

from __future__ import annotations

from sparsity_gui.core.note.changes import merged_changes
from sparsity_gui.core.note.runner import Snapshot
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.plots.base import LivePanel
from sparsity_gui.plots.pins import PinnablePanel


class NotePanel(PinnablePanel, LivePanel):
    """A panel of the note's model: a dashed marker where lam was changed during the run;
    the time panels draw pinned runs too (plots.pins)."""

    # each of the six costs 1-3 ms a frame on a slow machine, and their curves change on
    # every frame: a frame over the window's paint budget leaves up to half of them for
    # the next (ui/painting.py)
    STAGGERED = True

    def change_markers(self, snap: Snapshot) -> list[tuple[float, str]]:
        changes = merged_changes(snap.lam_changes[1:], snap.t)
        return [(c.t, NOTE_SETTINGS["lam"].text(c.lam)) for c in changes]
