"""The figure styles: `paper` (8 pt text, thin lines, the Okabe–Ito colour-blind-safe
colours, at a journal's single-column 3.5 in or double-column 7 in width), `talk` (larger
text and lines for slides) and a user's `.mplstyle` file on top of the paper style.

A style is a plain dict of matplotlib rcParams: the script beside each figure carries it
as a literal, so it redraws the figure without this package."""

from __future__ import annotations

from pathlib import Path

from sparsity_gui.core.errors import InputError

SINGLE_COLUMN = 3.5  # in: a journal's column
DOUBLE_COLUMN = 7.0  # in: the full text width
WIDTHS = {"single": SINGLE_COLUMN, "double": DOUBLE_COLUMN}
DEFAULT_DPI = 300  # a journal's least for line art is 300-600 dpi
# Okabe & Ito (2008), "Color universal design": told apart with every common colour-vision
# deficiency and in greyscale by lightness
OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)

_COMMON = {
    # fonts embedded (TrueType, Type 42) in PDF and kept as text in SVG: a journal's
    # production checks the first, an editor edits the second
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "none",
    # DejaVu Sans ships with matplotlib and with most Linux systems (librsvg finds it):
    # the PNG, SVG and PDF show the same glyphs; mathtext in the same face
    "font.family": "DejaVu Sans",
    "mathtext.fontset": "dejavusans",
    "axes.prop_cycle": "cycler('color', " + repr(list(OKABE_ITO)) + ")",
    "axes.spines.top": False,
    "axes.spines.right": False,
    # tick labels as plain text (mathtext would parse every one of them: 10x slower), in
    # plain numbers over a wide range, with no offset (never 2e+06 or (x1e-06))
    "axes.formatter.use_mathtext": False,
    "axes.formatter.useoffset": False,
    "axes.formatter.limits": (-4, 5),
    "axes.autolimit_mode": "data",
    "axes.xmargin": 0.0,  # time axes end at the data
    "axes.ymargin": 0.04,
    "legend.frameon": False,
    "legend.handlelength": 2.2,
    "savefig.facecolor": "white",
    "figure.facecolor": "white",
    "svg.hashsalt": "sparsity-gui",  # the same SVG for the same figure (stable ids)
    "path.simplify": True,
}

PAPER = {
    **_COMMON,
    "font.size": 8.0,
    "axes.titlesize": 8.0,
    "axes.labelsize": 8.0,
    "xtick.labelsize": 7.0,
    "ytick.labelsize": 7.0,
    "legend.fontsize": 7.0,
    "figure.titlesize": 9.0,
    "lines.linewidth": 1.0,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.minor.width": 0.4,
    "ytick.minor.width": 0.4,
    "xtick.major.size": 3.0,
    "ytick.major.size": 3.0,
    "xtick.minor.size": 1.6,
    "ytick.minor.size": 1.6,
    "lines.markersize": 3.5,
    "figure.dpi": 72.0,  # as SVG and PDF lay text out: mathtext is parsed once for the three
}

TALK = {
    **PAPER,
    "font.size": 14.0,
    "axes.titlesize": 14.0,
    "axes.labelsize": 14.0,
    "xtick.labelsize": 12.0,
    "ytick.labelsize": 12.0,
    "legend.fontsize": 12.0,
    "figure.titlesize": 16.0,
    "lines.linewidth": 2.0,
    "axes.linewidth": 1.0,
    "lines.markersize": 6.0,
}
STYLES = {"paper": PAPER, "talk": TALK}


def _plain(value):
    """An rcParam as a Python literal the script can carry (cyclers as their text)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


# a style file is a handful of settings: anything much bigger is not one
MAX_STYLE_BYTES = 64 * 1024
MAX_STYLE_LINE = 500
# what a figure can be drawn with: sizes in points (or inches for figure.figsize)
SIZE_LIMITS = {"size": (0.5, 100.0), "width": (0.0, 20.0), "pad": (0.0, 100.0)}
FIGSIZE_LIMITS = (0.5, 50.0)  # inches
DPI_LIMITS = (10.0, 1200.0)
_checked: dict[str, None] = {}  # styles already drawn with (their repr): checked once


def shown_text(text: str, limit: int = 80) -> str:
    """``text`` for a one-line message: control characters escaped (a newline as \\n, an
    escape as \\x1b), at most ``limit`` characters."""
    from sparsity_gui.core.text import printable

    text = printable(str(text))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def style_file_params(path: str | Path) -> dict:
    """The rcParams a `.mplstyle` file sets (only those: the rest stay the paper style's).
    InputError names the file and line when it cannot be read, is not a small regular
    text file, a key is unknown or a value is invalid (matplotlib itself only logs those
    and goes on)."""
    import matplotlib

    path = Path(path)
    name = shown_text(path, 120)
    if not path.exists():
        raise InputError("style", f"{name}: no such style file")
    if not path.is_file():  # a folder, a FIFO (reading it would block), a device
        raise InputError("style", f"{name}: not a regular file")
    try:
        size = path.stat().st_size
        if size > MAX_STYLE_BYTES:
            raise InputError(
                "style", f"{name}: {size:,} bytes is not a style file (at most {MAX_STYLE_BYTES:,})"
            )
        with open(path, "rb") as f:
            raw = f.read(MAX_STYLE_BYTES + 1)
        lines = raw.decode("utf-8").splitlines()
    except OSError as exc:
        raise InputError("style", f"{name}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError("style", f"{name}: not a text file (UTF-8)") from None
    checked = matplotlib.RcParams()
    out: dict = {}
    for number, line in enumerate(lines, 1):
        where = f"{name}, line {number}"
        if len(line) > MAX_STYLE_LINE:
            raise InputError("style", f"{where}: {len(line):,} characters long (at most {MAX_STYLE_LINE})")
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        key, colon, value = (part.strip() for part in text.partition(":"))
        if not colon:
            raise InputError("style", f"{where}: not 'key: value' ({shown_text(line.strip(), 60)!r})")
        if key not in matplotlib.rcParams:
            raise InputError("style", f"{where}: {shown_text(key, 60)!r} is not a matplotlib parameter")
        if value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        try:
            checked[key] = value
        except (ValueError, TypeError) as exc:
            raise InputError("style", f"{where}: {key}: {shown_text(exc, 160)}") from None
        out[key] = _plain(checked[key])
    if not out:
        raise InputError("style", f"{name}: sets no matplotlib parameter ('key: value' lines)")
    check_drawable(out, name)
    return out


def _dict_params(style: dict) -> dict:
    """A dict style's rcParams, each key and value checked as a style file's are."""
    import matplotlib

    checked = matplotlib.RcParams()
    out: dict = {}
    for key, value in style.items():
        if not isinstance(key, str) or key not in matplotlib.rcParams:
            raise InputError("style", f"{shown_text(repr(key), 60)} is not a matplotlib parameter")
        try:
            checked[key] = value
        except (ValueError, TypeError) as exc:
            raise InputError("style", f"{key}: {shown_text(exc, 160)}") from None
        out[key] = _plain(checked[key])
    check_drawable(out, "")
    return out


def _limits_broken(params: dict) -> str | None:
    """Why ``params`` cannot draw a figure (absurd sizes, LaTeX text without LaTeX, a colour
    cycle without colours), or None."""
    import shutil

    for key, value in params.items():
        leaf = key.rsplit(".", 1)[-1]
        for ending, (low, high) in SIZE_LIMITS.items():
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if leaf.endswith(ending) and number and not low <= value <= high:
                return f"{key}: {value:g} is outside {low:g} to {high:g}"
        if key == "figure.figsize" and not all(FIGSIZE_LIMITS[0] <= v <= FIGSIZE_LIMITS[1] for v in value):
            low, high = FIGSIZE_LIMITS
            return f"{key}: {value} inches; each side must be from {low:g} to {high:g}"
        dpi = key in ("figure.dpi", "savefig.dpi") and isinstance(value, (int, float))
        if dpi and not DPI_LIMITS[0] <= value <= DPI_LIMITS[1]:
            return f"{key}: {value:g} is outside {DPI_LIMITS[0]:g} to {DPI_LIMITS[1]:g}"
    missing = _missing_font(params)
    if missing is not None:
        return missing
    if params.get("text.usetex") and shutil.which("latex") is None:
        return "text.usetex: True needs LaTeX, which is not installed here (no latex on PATH)"
    cycle = params.get("axes.prop_cycle")
    if cycle is not None:
        import matplotlib

        by_key = matplotlib.rcsetup.validate_cycler(cycle).by_key()
        if not by_key.get("color"):
            return "axes.prop_cycle: needs at least one colour (the runs and curves are told apart by it)"
    return None


def _missing_font(params: dict) -> str | None:
    """The first font the style names that this machine lacks, said (matplotlib would fall
    back to DejaVu Sans, logging a warning for every text it draws)."""
    import logging

    from matplotlib import font_manager

    wanted = [("font.family", f) for f in params.get("font.family", [])]
    if params.get("mathtext.fontset") == "custom":
        wanted += [(k, params[k]) for k in ("mathtext.rm", "mathtext.it", "mathtext.bf") if k in params]
    log = logging.getLogger("matplotlib.font_manager")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        for key, family in wanted:
            family = str(family).split(":", 1)[0]  # mathtext's 'sans:italic'
            try:
                font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
            except ValueError:
                return f"{key}: no font {shown_text(family, 60)!r} on this machine"
    finally:
        log.setLevel(level)
    return None


def check_drawable(params: dict, name: str = "") -> None:
    """InputError unless a figure can be drawn and saved with ``params`` on top of the paper
    style: its limits, then a small figure with text, mathtext and a legend, drawn once."""
    import io

    import matplotlib
    from matplotlib.figure import Figure

    why = _limits_broken(params)
    if why is not None:
        raise InputError("style", f"{name}: {why}" if name else why)
    key = repr(sorted(params.items()))
    if key in _checked:
        return
    try:
        with matplotlib.rc_context({**PAPER, **params}):
            fig = Figure(figsize=(2.0, 1.5), layout="constrained")
            ax = fig.add_subplot()
            ax.plot([1.0, 2.0], [1.0, 3.0], label=r"$\theta = \lambda / (1 - \|W\|^2)$")
            ax.set_xlabel("t")
            ax.legend()
            fig.savefig(io.BytesIO(), format="png", dpi=20)
    except Exception as exc:  # noqa: BLE001 - whatever stops matplotlib, said in one line
        raise InputError(
            "style",
            f"{name + ': ' if name else ''}matplotlib cannot draw with it "
            f"({type(exc).__name__}: {shown_text(exc, 160)})",
        ) from None
    _checked[key] = None


def movie_style_params(style=None) -> dict:
    """style_params for a movie's frames, which must all be the size asked: no
    `savefig.bbox: tight` (it crops each frame to its own content)."""
    params = style_params(style)
    if params.get("savefig.bbox") == "tight":
        raise InputError(
            "style", "savefig.bbox: tight crops each frame differently; a movie needs them one size"
        )
    return params


def style_params(style: str | Path | dict | None = None) -> dict:
    """rcParams of `style`: None or "paper", "talk", a dict (checked, on top of the paper
    style) or the path of a `.mplstyle` file (on top of the paper style). InputError for
    a style nothing can be drawn with; TypeError for a style of another type."""
    if style is None:
        return dict(PAPER)
    if isinstance(style, dict):
        return {**PAPER, **_dict_params(style)}
    if isinstance(style, str) and style in STYLES:
        return dict(STYLES[style])
    if not isinstance(style, (str, Path)) and not hasattr(style, "__fspath__"):
        raise TypeError(
            f"style must be 'paper', 'talk', a .mplstyle path or a dict, not {type(style).__name__}"
        )
    return {**PAPER, **style_file_params(style)}


def style_name(style: str | Path | dict | None) -> str:
    """ "paper" or "talk" (the size a figure gets); a user's file sizes like paper."""
    return style if isinstance(style, str) and style in STYLES else "paper"
