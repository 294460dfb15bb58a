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


def style_file_params(path: str | Path) -> dict:
    """The rcParams a `.mplstyle` file sets (only those: the rest stay the paper style's).
    InputError names the file and line when it cannot be read, a key is unknown or a
    value is invalid (matplotlib itself only logs those and goes on)."""
    import matplotlib

    path = Path(path)
    if not path.is_file():
        raise InputError("style", f"{path}: no such style file")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError("style", f"{path}: cannot read it ({exc})") from None
    checked = matplotlib.RcParams()
    out: dict = {}
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        key, colon, value = (part.strip() for part in text.partition(":"))
        if not colon:
            raise InputError("style", f"{path}, line {number}: not 'key: value' ({line.strip()!r})")
        if key not in matplotlib.rcParams:
            raise InputError("style", f"{path}, line {number}: {key!r} is not a matplotlib parameter")
        if value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        try:
            checked[key] = value
        except (ValueError, TypeError) as exc:
            raise InputError("style", f"{path}, line {number}: {key}: {exc}") from None
        out[key] = _plain(checked[key])
    if not out:
        raise InputError("style", f"{path}: sets no matplotlib parameter ('key: value' lines)")
    return out


def style_params(style: str | Path | dict | None = None) -> dict:
    """rcParams of `style`: None or "paper", "talk", a dict (used as given, on top of the
    paper style) or the path of a `.mplstyle` file (on top of the paper style)."""
    if style is None:
        return dict(PAPER)
    if isinstance(style, dict):
        return {**PAPER, **style}
    if isinstance(style, str) and style in STYLES:
        return dict(STYLES[style])
    return {**PAPER, **style_file_params(style)}


def style_name(style: str | Path | dict | None) -> str:
    """ "paper" or "talk" (the size a figure gets); a user's file sizes like paper."""
    return style if isinstance(style, str) and style in STYLES else "paper"
