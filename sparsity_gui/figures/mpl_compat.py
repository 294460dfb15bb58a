"""matplotlib's private parts that the figures replace for speed, in one place.

Each replacement changes no pixel (tests/figures/test_parse_cache.py and the movie tests
compare against plain matplotlib) and is in force only while the tool itself draws: it is
installed when the first drawing of the process enters it and removed when the last one
leaves, so a notebook user's own figure, drawn after `run.plot(...)`, is drawn by plain
matplotlib. Each touch says which private attribute it needs; when an upgrade removes one,
the touch stays off (the figures are then only slower) and tests/figures/test_mpl_compat.py
fails, so the upgrade is noticed. SPARSITY_GUI_PLAIN_MATPLOTLIB=1 turns every touch off.

Tested with matplotlib 3.8 to 3.11 (pyproject.toml bounds it below 3.12)."""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

TESTED_MATPLOTLIB = ("3.8", "3.11")  # the oldest and newest minor versions these touches are tested on
OFF_SWITCH = "SPARSITY_GUI_PLAIN_MATPLOTLIB"


class ScopedPatch:
    """``owner.attr`` replaced by ``make(original)`` while at least one ``active()`` block
    runs, in any thread; the original put back when the last one ends."""

    def __init__(self, module: str, owner: str, attr: str, make: Callable[[Any], Any], needs: str = ""):
        self.module, self.owner_name, self.attr, self.make = module, owner, attr, make
        self.needs = needs  # an attribute the original must have (what the replacement relies on)
        self._lock = threading.Lock()
        self._users = 0
        self._original: Any = None

    @property
    def name(self) -> str:
        return f"{self.module}.{self.owner_name}.{self.attr}"

    def _owner(self):
        return getattr(importlib.import_module(self.module), self.owner_name, None)

    def available(self) -> bool:
        """Whether this matplotlib has what the replacement relies on."""
        owner = self._owner()
        original = getattr(owner, self.attr, None)
        return original is not None and (not self.needs or hasattr(original, self.needs))

    def enabled(self) -> bool:
        return os.environ.get(OFF_SWITCH) != "1" and self.available()

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        with self._lock:
            if self._users == 0 and self.enabled():
                owner = self._owner()
                self._original = owner.__dict__[self.attr]
                setattr(owner, self.attr, self.make(self._original))
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0 and self._original is not None:
                    setattr(self._owner(), self.attr, self._original)
                    self._original = None

    def installed(self) -> bool:
        """Whether the replacement is in force now (tests)."""
        return self._original is not None


PATCHES: list[ScopedPatch] = []  # every touch, for the guard test and the documentation


def scoped_patch(module: str, owner: str, attr: str, needs: str = ""):
    """Decorator: ``make(original) -> replacement`` registered as a ScopedPatch."""

    def register(make: Callable[[Any], Any]) -> ScopedPatch:
        patch = ScopedPatch(module, owner, attr, make, needs)
        PATCHES.append(patch)
        return patch

    return register


@contextlib.contextmanager
def all_active(*patches: ScopedPatch) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch.active())
        yield


#: The private names the figures read, set or call directly rather than replace (the movie's
#: recycled figure and its kept text shaping in figures/frames.py, the layout's renderer and
#: dash pattern in figures/layout.py, fontTools' subsetting defaults in figures/save.py):
#: (what holds it, its name, whether the code runs without it). tests/figures/test_mpl_compat.py
#: checks each on a fresh object of this matplotlib and fontTools, and that the figures touch
#: no private name that is not here or in PATCHES.
READ_DIRECTLY: tuple[tuple[str, str, bool], ...] = (
    ("Figure", "_suptitle", False),
    ("Figure", "_supxlabel", False),
    ("Figure", "_supylabel", False),
    ("Figure", "_get_renderer", False),
    ("SubFigure", "_redo_transform_rel_fig", False),
    ("Axes", "_request_autoscale_view", False),
    ("Axes", "_set_position", False),
    ("Text", "_fontproperties", False),
    ("Text", "_multialignment", False),
    ("Text", "_linespacing", False),
    ("Line2D", "_unscaled_dash_pattern", False),
    ("RendererAgg", "_prepare_font", False),
    ("FT2Font", "_layout", True),  # frames.keep_shapes keeps nothing without it (only slower)
    ("fontTools.subset.Options", "_drop_tables_default", False),
)


def missing_private_names() -> list[str]:
    """Those of READ_DIRECTLY (the ones the code needs) that this matplotlib or fontTools
    lacks, each looked up on a fresh object of its kind."""
    from fontTools import subset
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.figure import Figure
    from matplotlib.ft2font import FT2Font
    from matplotlib.lines import Line2D
    from matplotlib.text import Text

    fig = Figure()
    holders = {
        "Figure": fig,
        "SubFigure": fig.subfigures(1, 2)[0],
        "Axes": fig.add_subplot(),
        "Text": Text(),
        "Line2D": Line2D([0, 1], [0, 1]),
        "RendererAgg": RendererAgg(10, 10, 72),
        "FT2Font": FT2Font,
        "fontTools.subset.Options": subset.Options,
    }
    return [
        f"{owner}.{name}"
        for owner, name, optional in READ_DIRECTLY
        if not optional and not hasattr(holders[owner], name)
    ]
