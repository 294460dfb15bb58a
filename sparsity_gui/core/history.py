"""A time-series store whose memory stays bounded however long a run goes."""

from __future__ import annotations

import numpy as np


class History:
    """Rows of equal width, appended in time order.

    When full, the oldest three quarters are thinned to every other row, so resolution
    falls off with age (recent rows stay dense) and memory never exceeds ``capacity``
    rows. The first and the newest rows are always kept. Death events are not stored
    here: every weight's death time lives in the solver's per-weight array.

    A row appended as provisional (the state "now", between two rows a run keeps) is
    replaced by the next row appended, so a run that reports often does not fill the
    store with rows at wall-clock instants.
    """

    def __init__(self, width: int, capacity: int = 8192):
        if capacity < 16:
            raise ValueError("capacity must be at least 16")
        self._data = np.empty((capacity, width))
        self._n = 0
        self.appended = 0  # rows ever appended (for rates and tests)
        self._provisional = False  # the last row is replaced by the next one

    @property
    def capacity(self) -> int:
        return self._data.shape[0]

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def append(self, row: np.ndarray, provisional: bool = False) -> None:
        if self._provisional:
            self._n -= 1
        if self._n == self.capacity:
            self._thin()
        self._data[self._n] = row
        self._n += 1
        self.appended += 1
        self._provisional = provisional

    @property
    def provisional(self) -> bool:
        """Whether the last row is to be replaced by the next."""
        return self._provisional

    def keep_last(self) -> None:
        """Keep the last row even if it was appended as provisional."""
        self._provisional = False

    def _thin(self) -> None:
        old = (3 * self._n) // 4
        kept = self._data[0:old:2]  # keeps row 0
        k = kept.shape[0]
        self._data[:k] = kept
        recent = self._data[old : self._n].copy()
        self._data[k : k + recent.shape[0]] = recent
        self._n = k + recent.shape[0]

    def array(self) -> np.ndarray:
        """A copy of the rows (safe to hand to another thread)."""
        return self._data[: self._n].copy()

    def set_columns(self, columns: list[int], values: np.ndarray) -> None:
        """Overwrite ``columns`` of every row held (values: one row of them per row)."""
        self._data[: self._n, columns] = values

    def last(self) -> np.ndarray | None:
        return self._data[self._n - 1].copy() if self._n else None

    def clear(self) -> None:
        self._n = 0
        self._provisional = False
