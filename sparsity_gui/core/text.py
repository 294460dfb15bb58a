"""Plain-text formatting shared by the CLI, the windows and the figures: durations, counts
of things, and limits in messages."""

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


def plural(k: int, word: str) -> str:
    """'1 run', '3 runs', '1,000 weights'."""
    return f"{k:,} {word}{'' if k == 1 else 's'}"


def short_number(x: float) -> str:
    """A limit as people write it: 1e8 (not 1e+08), 65536, 0.25."""
    mantissa, _, exponent = f"{x:g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def round_number(x: float) -> str:
    """An estimate to two significant digits, as short_number writes it: 2.5e12, 4e307."""
    return short_number(float(f"{x:.2g}")) if math.isfinite(x) else str(x)


def sci(x: float, digits: int = 2) -> str:
    """A value in scientific notation with ``digits`` significant digits: 2.0e-3, 1.5e2."""
    mantissa, _, exponent = f"{x:.{digits - 1}e}".partition("e")
    return f"{mantissa}e{int(exponent)}"


def printable(text: str) -> str:
    """``text`` with its control characters escaped (a newline as \\n, a terminal's escape
    as \\x1b): a message is one line and never drives the terminal."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text
    )


def time_text(t: float) -> str:
    """The note's time t as the status lines and the docks write it (6 significant digits):
    a run's t in the status line and 4·Σ lr in the dock read alike."""
    return f"{t:.6g}"
