"""What the grid figures (interference, sweep, scaling) share on top of save.py: the
files of a panel that calls functions of its own module (found here and handed to the
script as save.py's `calls`), its size, and the Python API's plot of one."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sparsity_gui.figures import save
from sparsity_gui.figures.style import DEFAULT_DPI, SINGLE_COLUMN, style_name, style_params

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# a panel's size in inches per style: a journal's column; the talk style half a 16:9 slide
SIZES = {"paper": (SINGLE_COLUMN, 2.6), "talk": (6.4, 4.2)}


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


def panel_size(style, width: float | None = None) -> tuple[float, float]:
    """A panel's size in inches: the style's, or `width` wide (3.5 in: a journal's column,
    7 in: the text width) and a little taller when wider."""
    w, h = SIZES[style_name(style)]
    if width is None:
        return (w, h)
    return (float(width), h * max(1.0, width / w) ** 0.5)


def row_columns(rows: Sequence, names: Iterable[str]) -> dict[str, np.ndarray]:
    """A grid's rows (ScalingRow, SweepRow) as its figure's data holds them: a float array
    per named column (its .csv's)."""
    return {name: np.array([getattr(r, name) for r in rows], float) for name in names}


def planned_values(plan: Iterable, rows: Sequence, name: str, kind: type = int) -> np.ndarray:
    """The values of column ``name`` a grid's figure spans: its plan's and its rows'."""
    return np.array(sorted({kind(v) for v in plan} | {getattr(r, name) for r in rows}), float)


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
    calls = _extras(panel, functions)
    return save.figure_files(name, panel, data, params, size, dpi, formats, title, calls)


def panels_files(
    panels: Iterable[tuple[str, Any, dict, str]],
    functions: Sequence = (),
    style=None,
    dpi: float = DEFAULT_DPI,
    formats: Iterable[str] = save.FORMATS,
    width: float | None = None,
) -> dict[str, bytes]:
    """The files of each (name, panel, data, title) of ``panels`` (figure_files), all at
    the style's panel size or ``width`` wide: a grid's figures."""
    size = panel_size(style, width)
    formats = tuple(formats)
    out: dict[str, bytes] = {}
    for name, panel, data, title in panels:
        out.update(figure_files(name, panel, data, style, size, dpi, formats, title, functions))
    return out


def check_axes(ax) -> None:
    """TypeError unless ``ax`` is a matplotlib Axes; ValueError unless it is a sub-plot."""
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(
            f"ax must be a matplotlib Axes (made by add_subplot or subplots), not {type(ax).__name__}"
        )
    if ax.get_subplotspec() is None:
        raise ValueError("ax must be a sub-plot (made by add_subplot or subplots)")


def plot_panel(panel, data: dict, ax=None, style=None, size: tuple[float, float] | None = None) -> Figure:
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
        check_axes(ax)
        fig = ax.figure
        panel(fig, data, ax=ax)
        return fig


def panel_named(panels: dict, name: str):
    """panels[name], or an InputError listing the names."""
    from sparsity_gui.core.errors import InputError

    if name not in panels:
        raise InputError("panel", f"unknown panel {name!r}; use one of {', '.join(panels)}")
    return panels[name]
