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
