"""A figure drawn, saved and scripted. `figure_of` draws a panel function into a new
`Figure` in a style; `figure_files` gives its PNG (at a chosen DPI), SVG (text kept as
text) and PDF (every font embedded) bytes, the JSON of the arrays it was drawn from and
`<name>.py`, the standalone script that redraws the PNG pixel for pixel from that JSON.

The app draws from the JSON's decoded arrays, exactly what the script reads back (floats
round-trip exactly through JSON; a non-finite value is null and reads back as NaN), so
the two drawings cannot differ. The script is the panel function's own source, the
helpers it calls, the style as a dict and a loader: numpy and matplotlib only."""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import json
import logging
import math
import textwrap
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes
from sparsity_gui.figures import draw as draw_helpers
from sparsity_gui.figures.mpl_compat import scoped_patch
from sparsity_gui.figures.style import DEFAULT_DPI

FORMATS = ("png", "svg", "pdf")  # every surface's choice is a non-empty subset of these
FORMATS_WORDS = "png, svg or pdf, or several, comma-separated (png,pdf)"
PanelFunction = Callable[..., None]  # (fig, data, spec=None) -> draws into fig


def figure_formats(value, name: str = "formats") -> tuple[str, ...]:
    """The figure formats asked, in FORMATS's order without repeats: a comma list
    ("png,pdf", any case, spaces ignored) or a sequence of names, any non-empty subset of
    FORMATS. The one check of --formats, the API's ``formats`` and the windows' choice:
    InputError (TypeError for a value of another type) naming ``name`` otherwise."""
    if isinstance(value, str):
        asked = [part.strip().lower() for part in value.split(",")]
    elif isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        asked = [v.strip().lower() for v in value]
    else:
        raise TypeError(
            f"{name} must be a comma list or a sequence of png, svg and pdf, not {type(value).__name__}"
        )
    unknown = [fmt for fmt in asked if fmt not in FORMATS]
    if unknown or not asked:
        if not any(asked):
            said = "no format given"
        else:
            said = f"unknown format {unknown[0]!r}" if unknown[0] else "an empty name in the list"
        raise InputError(name, f"{said}; give {FORMATS_WORDS}")
    return tuple(fmt for fmt in FORMATS if fmt in asked)


def arrays_of(obj):
    """The JSON's lists of numbers (null: NaN) as float arrays, a lone null as NaN;
    everything else as is."""
    if obj is None:
        return float("nan")
    if isinstance(obj, dict):
        return {key: arrays_of(value) for key, value in obj.items()}
    if isinstance(obj, list):
        if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in obj):
            return np.array([np.nan if v is None else v for v in obj], dtype=float)
        return [arrays_of(v) for v in obj]
    return obj


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(key): _jsonable(value) for key, value in obj.items()}
    if isinstance(obj, np.ndarray):
        return [v if math.isfinite(v) else None for v in obj.astype(float).ravel().tolist()]
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def data_json(data: dict) -> str:
    """The figure's data as JSON text: arrays as lists, exact (repr floats)."""
    return json.dumps(_jsonable(data), allow_nan=False, ensure_ascii=False, indent=None) + "\n"


# OpenType layout tables (substitution, positioning): a PDF places every glyph itself and
# never reads them, yet fontTools decompiles DejaVu's large ones to subset them (2/3 of the
# time of embedding a font)
PDF_UNUSED_FONT_TABLES = ("GSUB", "GPOS", "GDEF", "BASE", "JSTF", "MATH")


@scoped_patch("matplotlib.mathtext", "MathTextParser", "_parse_cached", needs="__wrapped__")
def shared_mathtext(cached):
    """Mathtext parses shared by every renderer while the tool draws (no output changes).
    matplotlib caches a parse per parser, and every renderer (each figure, each savefig) has
    its own, so a figure's labels were parsed by pyparsing again at every save; the parse is
    a pure function of its key and the mathtext rcParams."""
    import matplotlib
    from matplotlib import mathtext

    parse = cached.__wrapped__  # matplotlib's own: an lru_cache over the method
    mathtext_keys = [k for k in matplotlib.rcParams if k.startswith("mathtext.")]

    def parse_shared(self, s, dpi, prop, antialiased, load_glyph_flags):
        output = {"vector": "path", "raster": "agg"}[self._output_type]
        # the parse also reads the mathtext.* rcParams (a style may set them): part of the key
        rc = tuple(str(matplotlib.rcParams[k]) for k in mathtext_keys)
        return _shared_parse(
            parse, mathtext.MathTextParser, output, s, dpi, prop, antialiased, load_glyph_flags, rc
        )

    return parse_shared


@functools.lru_cache(4096)
def _shared_parse(parse, parser, output_type, s, dpi, prop, antialiased, load_glyph_flags, _mathtext_rc):
    return parse(parser(output_type), s, dpi, prop, antialiased, load_glyph_flags)


# PDF saves in progress (threads: Export all beside a worker's figures) and the defaults
# to put back when the last one ends: with a save each restoring what it saw, two
# overlapping saves would leave the tables dropped for good.
_lean_fonts_lock = threading.Lock()
_lean_fonts_users = 0
_lean_fonts_before: list[str] = []


@contextlib.contextmanager
def lean_pdf_fonts():
    """While a PDF is saved: font subsets without the OpenType layout tables
    (PDF_UNUSED_FONT_TABLES); fontTools' defaults are put back when the last save in the
    process ends, for anyone else who subsets a font."""
    global _lean_fonts_users, _lean_fonts_before
    from fontTools import subset

    drop = subset.Options._drop_tables_default
    with _lean_fonts_lock:
        if _lean_fonts_users == 0:
            _lean_fonts_before = list(drop)
            drop.extend(tag for tag in PDF_UNUSED_FONT_TABLES if tag not in drop)
        _lean_fonts_users += 1
    try:
        yield
    finally:
        with _lean_fonts_lock:
            _lean_fonts_users -= 1
            if _lean_fonts_users == 0:
                drop[:] = _lean_fonts_before


def figure_of(panel: PanelFunction, data: dict, style: dict, size: tuple[float, float]):
    """A new Figure of `size` inches with `panel` drawn from `data` in the rcParams
    `style` (constrained layout: the legend and labels get their room)."""
    import matplotlib
    from matplotlib.figure import Figure

    with shared_mathtext.active(), matplotlib.rc_context(style):
        fig = Figure(figsize=size, layout="constrained")
        panel(fig, data)
    return fig


def figure_bytes(fig, fmt: str, style: dict, dpi: float = DEFAULT_DPI, title: str = "") -> bytes:
    """The figure as PNG (at `dpi`), SVG or PDF bytes, saved in its style (the font
    embedding and SVG text settings are read at save time); `title` in the file's
    metadata (PDF Title, SVG <title>, PNG Title)."""
    import matplotlib

    if fmt not in FORMATS:
        raise ValueError(f"unknown figure format {fmt!r} (use png, svg or pdf)")
    buf = io.BytesIO()
    # fontTools warns on stderr about DejaVu's font dates while embedding them in a PDF
    fonttools = logging.getLogger("fontTools")
    level = fonttools.level
    fonttools.setLevel(logging.ERROR)
    with contextlib.ExitStack() as undo, shared_mathtext.active(), matplotlib.rc_context(style):
        undo.callback(fonttools.setLevel, level)
        if fmt == "pdf":
            undo.enter_context(lean_pdf_fonts())
        # no dates in SVG/PDF metadata: the same figure gives the same bytes
        metadata = save_metadata(fmt, title)
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    return buf.getvalue()


def save_metadata(fmt, title=""):
    """savefig's metadata: the figure's title (PDF Title, SVG title, PNG Title) and, in
    SVG and PDF, no date (the same figure gives the same bytes)."""
    metadata = {"Title": title} if title else {}
    if fmt == "svg":
        metadata["Date"] = None
    elif fmt == "pdf":
        metadata["CreationDate"] = None
    return metadata


# --- the script beside a figure ---------------------------------------------------------
def _helpers_used(source: str, seen: set[str] | None = None) -> list[str]:
    """Names of draw.py's helpers the source calls, and those they call, in file order."""
    seen = set() if seen is None else seen
    names = [
        name
        for name, obj in vars(draw_helpers).items()
        if inspect.isfunction(obj)
        and (obj.__module__ == draw_helpers.__name__ or obj in draw_helpers.CARRIED)
    ]
    for name in names:
        if name not in seen and f"{name}(" in source:
            seen.add(name)
            _helpers_used(inspect.getsource(getattr(draw_helpers, name)), seen)
    return [name for name in names if name in seen]


def script_text(
    name: str,
    panel: PanelFunction,
    style: dict,
    size,
    dpi: float,
    title: str = "",
    calls: Iterable = (),
    formats: Iterable[str] = ("png",),
) -> str:
    """`<name>.py`: standalone, reads the JSON of its own name beside it and writes the
    figure in `formats` (its FORMATS line). `calls`: the other drawing functions `panel`
    calls (a layout's panels)."""
    formats = figure_formats(tuple(formats))
    sources = [inspect.getsource(f) for f in calls] + [inspect.getsource(panel)]
    source = "\n\n".join(sources)
    helpers = [inspect.getsource(getattr(draw_helpers, h)) for h in _helpers_used(source)]
    helpers.append(inspect.getsource(save_metadata))
    style_lines = "\n".join(f"    {key!r}: {value!r}," for key, value in style.items())
    loader = inspect.getsource(arrays_of)
    # Nothing a user typed (the file's name, its title) is pasted into code: the title
    # is a repr literal, and the script finds its data and writes its figure by its own
    # file name, so any name (quotes, braces, a newline) and any later renaming works.
    head = f"""\
\"\"\"Redraws the figure beside this script from the JSON file of the same name.

Run `python <this file>` (numpy and matplotlib only): it reads <name>.json beside it
and writes <name>.<format> for each of FORMATS. Restyle it here: STYLE holds matplotlib's
rcParams, SIZE the size in inches, FORMATS what is written; {panel.__name__}() below draws
the figure.
\"\"\"

import json
import sys
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

STYLE = {{
{style_lines}
}}
SIZE = {tuple(float(v) for v in size)!r}  # inches
DPI = {dpi!r}
TITLE = {title or name!r}  # in each file's metadata (PDF Title, SVG title)
FORMATS = {formats!r}  # any of "png", "svg", "pdf"
"""
    main = f"""
if __name__ == "__main__":
    script = Path(__file__).resolve()
    source = script.with_suffix(".json")
    try:
        with open(source, encoding="utf-8") as f:
            data = arrays_of(json.load(f))
    except (OSError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        sys.exit(f"error: cannot read {{source.name!r}}: {{exc}}")
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=SIZE, layout="constrained")
        try:
            {panel.__name__}(fig, data)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            sys.exit(f"error: {{source.name!r}} is not this figure's data ({{type(exc).__name__}}: {{exc}})")
        for fmt in FORMATS:
            fig.savefig(script.with_suffix(f".{{fmt}}"), dpi=DPI, metadata=save_metadata(fmt, TITLE))
"""
    body = "\n\n".join(textwrap.dedent(s).rstrip() + "\n" for s in [loader, *helpers, *sources])
    return head + "\n\n" + body + "\n" + main


def figure_files(
    name: str,
    panel: PanelFunction,
    data: dict,
    style: dict,
    size: tuple[float, float],
    dpi: float = DEFAULT_DPI,
    formats: Iterable[str] = FORMATS,
    title: str = "",
    calls: Iterable = (),
) -> dict[str, bytes]:
    """{file name: bytes}: `<name>.<fmt>` per format, `<name>.json` and `<name>.py`. The
    figure is drawn from the decoded JSON, as the script will draw it; its script writes
    the same `formats` (figure_formats checks them). No formats: the JSON and the script
    alone (which then writes the PNG), for what reads only those."""
    formats = tuple(formats)
    formats = figure_formats(formats) if formats else ()
    text = data_json(data)
    fig = figure_of(panel, arrays_of(json.loads(text)), style, size)
    out = {}
    # the PNG first, laid out as its script lays it out; the other formats keep that layout
    # (the constrained layout, which measures every text, is most of a save's time)
    for fmt in sorted(formats, key=lambda f: f != "png"):
        out[f"{name}.{fmt}"] = figure_bytes(fig, fmt, style, dpi, title or name)
        fig.set_layout_engine("none")
    out[f"{name}.json"] = text.encode("utf-8")
    script = script_text(name, panel, style, size, dpi, title, calls, formats or ("png",))
    out[f"{name}.py"] = script.encode("utf-8")
    return out


def write_files(folder: str | Path, files: dict[str, bytes]) -> list[Path]:
    """Each file written atomically (whole or not at all, with the user's umask)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, payload in files.items():
        atomic_write_bytes(folder / file_name, payload)
        written.append(folder / file_name)
    return written
