"""What the grid figures (interference, sweep, scaling) share on top of save.py: a log
axis labelled at least three times, and the script beside a figure when the panel calls
functions of its own module (save.script_text carries only draw.py's helpers).

Functions here that a panel calls are drawn from numpy and matplotlib only: their source
goes into the script."""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Iterable, Sequence

import numpy as np

from sparsity_gui.figures import save
from sparsity_gui.figures.style import DEFAULT_DPI, SIZES, style_name, style_params


def label_log_axis(axis, lo, hi):
    """A log axis spanning [lo, hi] with at least three labelled ticks: the decades when
    it spans three, else 1-2-5 steps written as plain numbers where they are short."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if not (lo > 0 and hi > lo):
        return
    if math.log10(hi / lo) >= 2.0:  # every decade labelled (matplotlib skips some)
        axis.set_major_locator(LogLocator(base=10.0, subs=(1.0,), numticks=30))
        axis.set_minor_locator(LogLocator(base=10.0, subs=np.arange(2.0, 10.0), numticks=30))
        axis.set_minor_formatter(NullFormatter())
        return

    def text(v, _pos=None):
        if 1e-3 <= v < 1e4:
            return f"{v:g}"
        k = math.floor(math.log10(v) + 1e-9)
        head = round(v / 10.0**k, 3)
        return f"${head:g}\\times10^{{{k}}}$" if head != 1 else f"$10^{{{k}}}$"

    decades = math.log10(hi / lo)
    if decades >= 1.0:
        subs = (1.0, 3.0)
    elif decades >= 0.5:
        subs = (1.0, 2.0, 5.0)
    else:
        subs = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    axis.set_major_locator(LogLocator(base=10.0, subs=subs))
    axis.set_major_formatter(FuncFormatter(text))
    axis.set_minor_formatter(NullFormatter())


def _extras(panel, functions: Sequence) -> list:
    """The `functions` that `panel` uses (and those they use), in their given order."""
    candidates = [f for f in functions if f is not panel]
    used: set = set()

    def visit(source: str) -> None:
        for f in candidates:
            if f not in used and re.search(rf"\b{f.__name__}\b", source):
                used.add(f)
                visit(inspect.getsource(f))

    visit(inspect.getsource(panel))
    return [f for f in candidates if f in used]


def script_text(
    name: str, panel, style: dict, size, dpi: float, title: str = "", functions: Sequence = ()
) -> str:
    """save.script_text, with those of `functions` that `panel` uses (its module's helpers;
    for a layout, the panels) and the draw.py helpers they call put in before it: the
    script stays standalone."""
    text = save.script_text(name, panel, style, size, dpi, title)
    extras = _extras(panel, (label_log_axis, *functions))
    if not extras:
        return text
    combined = "".join(inspect.getsource(f) for f in extras)
    helpers = [h for h in save._helpers_used(combined) if f"\ndef {h}(" not in text]
    pieces = [inspect.getsource(getattr(save.draw_helpers, h)) for h in helpers]
    pieces += [inspect.getsource(f) for f in extras]
    insert = "".join(textwrap.dedent(piece).rstrip() + "\n\n\n" for piece in pieces)
    at = text.index(f"\ndef {panel.__name__}(") + 1
    return text[:at] + insert + text[at:]


def panel_size(style, width: float | None = None) -> tuple[float, float]:
    """A panel's size in inches: the style's, or `width` wide (3.5 in: a journal's column,
    7 in: the text width) and a little taller when wider."""
    w, h = SIZES[style_name(style)]
    if width is None:
        return (w, h)
    return (float(width), h * max(1.0, width / w) ** 0.5)


def figure_files(
    name: str,
    panel,
    data: dict,
    style=None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
    formats: Iterable[str] = save.FORMATS,
    title: str = "",
    functions: Sequence = (),
) -> dict[str, bytes]:
    """save.figure_files of `panel` (`style`: a name, a dict or a .mplstyle path), with a
    standalone script that carries the `functions` it uses."""
    params = style_params(style)
    size = size or panel_size(style)
    formats = tuple(formats)
    out = save.figure_files(name, panel, data, params, size, dpi, formats, title)
    out[f"{name}.py"] = script_text(name, panel, params, size, dpi, title, functions).encode("utf-8")
    return out


def plot_panel(panel, data: dict, ax=None, style=None, size: tuple[float, float] | None = None):
    """The Python API's figure: `panel` drawn from `data` (through its JSON, as the files
    are) into a new `matplotlib.figure.Figure` of `size` inches, or in place of `ax` (its
    sub-plots share the space `ax` had). Returns the Figure."""
    import json

    import matplotlib
    from matplotlib.figure import Figure

    params = style_params(style)
    data = save.arrays_of(json.loads(save.data_json(data)))
    with matplotlib.rc_context(params):
        if ax is None:
            fig = Figure(figsize=size or panel_size(style), layout="constrained")
            panel(fig, data)
            return fig
        spec = ax.get_subplotspec()
        if spec is None:
            raise ValueError("ax must be a sub-plot (made by add_subplot or subplots)")
        fig = ax.figure
        ax.remove()
        panel(fig, data, spec)
        return fig


def panel_named(panels: dict, name: str):
    """panels[name], or an InputError listing the names."""
    from sparsity_gui.core.errors import InputError

    if name not in panels:
        raise InputError("panel", f"unknown panel {name!r}; use one of {', '.join(panels)}")
    return panels[name]
