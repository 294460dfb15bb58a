"""Plain-text formatting shared by the CLI's progress bar and the GUI's sweep tab."""

from __future__ import annotations

import math


def format_duration(seconds: float) -> str:
    """42 s, 2 min 05 s, 3 h 07 min; '—' when unknown (the CLI's bar and the GUI's sweep)."""
    if not math.isfinite(seconds) or seconds < 0:
        return "—"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {(seconds % 3600) // 60:02d} min"
