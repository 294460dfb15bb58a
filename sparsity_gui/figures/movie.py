"""Movies of a run: frames drawn one at a time by the figure functions and streamed to
the encoder, MP4 (H.264, yuv420p: every player and slide tool plays it) or GIF.

A frame is the figure's PNG pipeline (`savefig` at the movie's DPI, as raw RGBA instead of
PNG) with a strip below it stamping the simulated time: the figure itself is pixel for
pixel the figure function's PNG at that instant. No frame is kept after it is encoded,
so the memory of a movie is that of one figure whatever its length.

The encoder is PyAV (FFmpeg's libraries in its wheels), the optional extra `[movie]`;
`require_encoder()` raises MovieExtraMissing, an ImportError naming the extra, when it is
not installed. The frame times of both models come from `frame_times`; the model modules
(note_movie.py, interference_movie.py) replay a run and hand each frame's figure here."""

from __future__ import annotations

import contextlib
import functools
import io
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_with

FORMATS = ("mp4", "gif")
SPACINGS = ("linear", "log")
DEFAULT_FPS = 30
DEFAULT_SECONDS = 10.0
DEFAULT_MOVIE_DPI = 150  # 3.5 in: 525 px; the talk style's 6.4 in: 960 px
MAX_FRAMES = 36_000  # 20 minutes at 30 fps
LOG_DECADES = 3.0  # log spacing: the first frame after t = 0 is 10^-3 of the span
STAMP_INCHES = 0.22  # the time stamp's strip under the figure
INSTALL_HINT = "pip install 'sparsity-gui[movie]'"
MISSING_TEXT = f"movies need the PyAV encoder, which is not installed: {INSTALL_HINT}"
GIF_COLOURS = 256


class MovieExtraMissing(ImportError):
    """PyAV (the `[movie]` extra) is not installed; the message says how to install it."""


class MovieCancelled(Exception):
    """The export was cancelled: nothing was written."""


def require_encoder():
    """The `av` module, or MovieExtraMissing naming the extra."""
    try:
        import av
    except ImportError as exc:
        raise MovieExtraMissing(MISSING_TEXT) from exc
    return av


@dataclass(frozen=True)
class MovieSettings:
    """What the user chose: length, frame rate, spacing of the frame times, format, DPI."""

    seconds: float = DEFAULT_SECONDS
    fps: int = DEFAULT_FPS
    spacing: str = "linear"
    fmt: str = "mp4"
    dpi: float = DEFAULT_MOVIE_DPI

    @property
    def frames(self) -> int:
        return max(2, round(self.seconds * self.fps))


def movie_settings(
    seconds: float = DEFAULT_SECONDS,
    fps: int = DEFAULT_FPS,
    spacing: str = "linear",
    fmt: str = "mp4",
    dpi: float = DEFAULT_MOVIE_DPI,
) -> MovieSettings:
    """Checked settings (InputError naming the field: the CLI, the API and the dialog say
    the same)."""
    if not isinstance(fps, (int, np.integer)) or isinstance(fps, bool) or not 1 <= fps <= 120:
        raise InputError("fps", f"must be a whole number of frames per second from 1 to 120, got {fps!r}")
    if not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0:
        raise InputError("seconds", f"must be a length in seconds above 0, got {seconds!r}")
    if seconds * fps > MAX_FRAMES:
        raise InputError("seconds", f"{seconds:g} s at {fps} fps is over {MAX_FRAMES:,} frames")
    if spacing not in SPACINGS:
        raise InputError("spacing", f"must be linear or log, got {spacing!r}")
    if fmt not in FORMATS:
        raise InputError("format", f"must be mp4 or gif, got {fmt!r}")
    if not isinstance(dpi, (int, float)) or not math.isfinite(dpi) or not 20 <= dpi <= 600:
        raise InputError("dpi", f"must be from 20 to 600, got {dpi!r}")
    return MovieSettings(float(seconds), int(fps), spacing, fmt, float(dpi))


def movie_format(path: str | Path, fmt: str | None = None) -> str:
    """The format asked for, else the file's suffix (.mp4 or .gif)."""
    if fmt is not None:
        return fmt
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise InputError("path", f"{path}: a movie is .mp4 or .gif")
    return suffix


def frame_times(t_start: float, t_end: float, count: int, spacing: str = "linear") -> np.ndarray:
    """`count` frame times from t_start to t_end, both included: evenly spaced, or
    log-spaced (the note's dynamics span decades): t_start, then a geometric sequence from
    LOG_DECADES decades below the span to its end (measured from t_start)."""
    if count < 2:
        raise ValueError("a movie has at least two frames")
    if not t_end > t_start:
        return np.full(count, float(t_start))
    if spacing == "linear":
        times = np.linspace(t_start, t_end, count)
    else:
        span = t_end - t_start
        times = np.concatenate([[t_start], t_start + np.geomspace(span * 10**-LOG_DECADES, span, count - 1)])
    times[0], times[-1] = t_start, t_end  # exactly the ends, not a rounding of them
    return times


# --- one frame --------------------------------------------------------------------------
def figure_rgb(fig, style: dict, dpi: float) -> np.ndarray:
    """The figure as savefig draws its PNG at `dpi` (the same pipeline: layout, facecolor),
    as an H x W x 3 uint8 array, a transparent background flattened onto white."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context(style):
        fig.savefig(buf, format="raw", dpi=dpi)
    width = int(fig.get_figwidth() * dpi)  # Agg's canvas: the size in pixels truncated
    rgba = np.frombuffer(buf.getbuffer(), np.uint8).reshape(-1, width, 4)
    return flatten_rgba(rgba)


def flatten_rgba(rgba: np.ndarray) -> np.ndarray:
    """RGBA over white, as a viewer shows a PNG."""
    if np.all(rgba[..., 3] == 255):
        return np.ascontiguousarray(rgba[..., :3])
    alpha = rgba[..., 3:4].astype(np.float32) / 255.0
    return np.round(rgba[..., :3] * alpha + 255.0 * (1.0 - alpha)).astype(np.uint8)


def even_frame(rgb: np.ndarray) -> np.ndarray:
    """Padded with white to an even width and height (yuv420p halves both for colour)."""
    h, w = rgb.shape[:2]
    if h % 2 == 0 and w % 2 == 0:
        return rgb
    return np.pad(rgb, ((0, h % 2), (0, w % 2), (0, 0)), constant_values=255)


@dataclass(frozen=True)
class Frame:
    """What one frame shows: the figure function, the data it draws at the instant, the
    style and size, and the stamp's two texts."""

    panel: Callable  # a figure function: panel(fig, data)
    data: dict
    style: dict
    size: tuple[float, float]  # inches
    stamp: str
    note: str = ""

    @property
    def fig(self):
        """The frame's figure, as the figure function draws it (a new Figure)."""
        from sparsity_gui.figures.save import figure_of

        return figure_of(self.panel, self.data, self.style, self.size)


class StructureChanged(Exception):
    """The figure function asked for other axes or sub-figures than the frame before."""


REUSED_METHODS = ("add_gridspec", "add_subplot", "subfigures")


def same_call(a: tuple, b: tuple) -> bool:
    """Two calls' (name, args, kwargs) equal (an axes by identity, a SubplotSpec by its place)."""
    try:
        return bool(a == b)
    except Exception:  # an array among the arguments: not a call this reuses
        return False


class ReusedFigure:
    """Hands a figure function, drawing frame after frame into one Figure, the grids, axes
    and sub-figures it made for the first frame, emptied of what it drew there, instead of
    new ones: a new Axes costs as much to make as the frame costs to draw, and keeps its
    ticks and the extents of its texts measured. The figure's (and each sub-figure's)
    `add_gridspec`, `add_subplot` and `subfigures` are replaced on the instance: the first
    frame records each call and its result; later frames get the same result for the same
    call in the same order, and any other call (or fewer calls) raises StructureChanged,
    after which the figure is cleared and drawn anew. A figure that makes axes otherwise
    (a colour bar's) is never reused."""

    def __init__(self, fig):
        self.fig = fig
        self.containers = [fig]  # the figure and its sub-figures
        self.made: dict[int, list] = {}  # id(container): [((name, args, kwargs), result)]
        self.used: dict[int, int] = {}
        self.sizes: dict[tuple, tuple[float, float]] = {}
        self.recording = True
        self.install(fig)

    def install(self, container) -> None:
        for name in REUSED_METHODS:
            setattr(container, name, functools.partial(self.call, container, name))

    def call(self, container, name, *args, **kwargs):
        made = self.made.setdefault(id(container), [])
        i = self.used.get(id(container), 0)
        self.used[id(container)] = i + 1
        if self.recording:
            result = getattr(type(container), name)(container, *args, **kwargs)
            if name == "subfigures":
                for sub in np.ravel(result):
                    self.install(sub)
                    self.containers.append(sub)
            made.append(((name, args, kwargs), result))
            return result
        if i < len(made) and same_call(made[i][0], (name, args, kwargs)):
            return made[i][1]
        raise StructureChanged

    def axes(self) -> list:
        return [
            result for made in self.made.values() for (name, _a, _k), result in made if name == "add_subplot"
        ]

    @property
    def reusable(self) -> bool:
        return set(map(id, self.fig.axes)) == set(map(id, self.axes()))

    def begin(self) -> None:
        """Empties the figure as Figure.clear() would, its axes and sub-figures kept."""
        from matplotlib.transforms import Bbox

        for container in self.containers:  # what clear() resets, but for the axes
            for legend in list(container.legends):
                legend.remove()
            container.artists, container.lines, container.patches = [], [], []
            container.texts, container.images, container.legends = [], [], []
            container._suptitle = container._supxlabel = container._supylabel = None
        self.fig.subplotpars.reset()
        for ax in self.axes():  # what Axes.clear() resets that a figure function sets
            for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.texts, *ax.images, *ax.tables]:
                artist.remove()
            for artist in list(ax.artists):
                artist.remove()
            if ax.legend_ is not None:
                ax.legend_.remove()
            ax.containers.clear()
            for loc in ("center", "left", "right"):
                if ax.get_title(loc):
                    ax.set_title("", loc=loc)
            ax.set_prop_cycle(None)
            ax.dataLim.set_points(Bbox.null().get_points())
            ax.ignore_existing_data_limits = True
            ax.viewLim.set_points(Bbox.unit().get_points())
            ax.set_autoscale_on(True)
            ax._request_autoscale_view()
        self.used = {}
        self.recording = False

    def end(self) -> None:
        if any(self.used.get(key, 0) != len(made) for key, made in self.made.items()):
            raise StructureChanged

    def reset_positions(self) -> None:
        """The axes and sub-figures where a new figure has them before its layout (the
        layout from there finds what it finds for a new figure)."""
        for sub in self.containers[1:]:
            sub._redo_transform_rel_fig()
        for ax in self.axes():
            ax._set_position(ax.get_subplotspec().get_position(ax.get_figure(root=False)))

    def layout_key(self) -> tuple:
        """What the constrained layout of the figure depends on besides its structure: the
        size, each axis's tick labels, how far its end labels reach past the axis's ends
        (to 0.001 px), its label, each legend's entries. Equal keys: the layout of the
        last frame is this frame's."""
        key: list = [tuple(self.fig.get_size_inches())]
        for ax in self.axes():
            for axis, along in ((ax.xaxis, 0), (ax.yaxis, 1)):
                lo, hi = sorted(axis.get_view_interval())
                locs = [v for v in axis.get_majorticklocs() if lo <= v <= hi]
                labels = tuple(axis.major.formatter.format_ticks(locs))
                if axis.majorTicks and not axis.majorTicks[0].label1.get_visible():
                    labels = ()  # not drawn: no room made for them
                key.append((labels, axis.label.get_text(), self.reach(ax, axis, along, locs, labels)))
        for container in self.containers:
            for legend in container.legends:
                key.append(tuple(t.get_text() for t in legend.get_texts()))
        return tuple(key)

    def reach(self, ax, axis, along: int, locs: list, labels: tuple) -> tuple:
        """How far (in pixels, to 0.001) the first and last tick labels reach past the axis's
        start and end: where a label sits at an end, the layout leaves it room."""
        shown = [(v, t) for v, t in zip(locs, labels, strict=False) if t]
        if not shown or not axis.majorTicks:
            return ()
        prototype = axis.majorTicks[0].label1
        start, end = (ax.bbox.x0, ax.bbox.x1) if along == 0 else (ax.bbox.y0, ax.bbox.y1)
        reach = []
        for loc, text in (shown[0], shown[-1]):
            at = ax.transData.transform([(loc, loc)])[0][along]
            half = self.text_size(prototype, text)[along] / 2
            reach.append((round(max(0.0, start - (at - half)), 3), round(max(0.0, at + half - end), 3)))
        return tuple(reach)

    def text_size(self, prototype, text: str) -> tuple[float, float]:
        """A tick label's width and height in pixels as drawn (measured once per text)."""
        from matplotlib.text import Text

        key = (text, prototype.get_fontproperties(), self.fig.dpi)
        if key not in self.sizes:
            probe = Text(0, 0, text, fontproperties=prototype.get_fontproperties())
            probe.set_figure(self.fig)
            box = probe.get_window_extent(self.fig.canvas.get_renderer())
            self.sizes[key] = (box.width, box.height)
        return self.sizes[key]


_tick_memos: dict[int, dict] = {}  # id(figure) being drawn by ticks_worked_out_once: its memo


@functools.cache
def _remember_ticks() -> None:
    """Axis._update_ticks, once per process, made to consult the memo of a figure being
    drawn in ticks_worked_out_once (any other figure's axes work out their ticks as always)."""
    from matplotlib.axis import Axis

    original = Axis._update_ticks

    def update_ticks(axis):
        memo = _tick_memos.get(id(axis.get_figure(root=True))) if _tick_memos else None
        if memo is None:
            return original(axis)
        key = (
            tuple(axis.get_view_interval()),
            tuple(axis.axes.bbox.bounds),
            axis.major.locator,
            axis.major.formatter,
            axis.minor.locator,
            axis.minor.formatter,
        )
        last = memo.get(id(axis))
        if last is None or last[0] != key:  # only the last: the Tick artists hold its labels
            last = memo[id(axis)] = (key, original(axis))
        return last[1]

    Axis._update_ticks = update_ticks


@contextlib.contextmanager
def ticks_worked_out_once(fig):
    """While `fig` is drawn once: each of its axes works out its ticks (locator, formatter,
    the Tick artists) again only when its view interval or place changed since it last did,
    not at each of the 20 or 30 times the layout and the draw ask (the layout at each of its
    passes, every spine and each shared axis again). The memo lives for this one draw of
    this one figure."""
    _remember_ticks()
    _tick_memos[id(fig)] = {}
    try:
        yield
    finally:
        del _tick_memos[id(fig)]


class FrameCanvas:
    """The one Figure every frame of a movie is drawn into, and the strip with the time
    stamp. The figure function draws each frame into the axes it made for the first one
    (ReusedFigure), emptied; the constrained layout is run again, from a new figure's
    places, only when what it depends on changed (the size, the tick labels and how far the
    end ones reach past their axis, the axis labels, the legends' entries), else the last
    frame's is kept. A frame laid out anew is the figure function's PNG at the movie's DPI
    pixel for pixel, a frame in a kept layout the same but for a few anti-aliased pixels
    (tested)."""

    def __init__(self, dpi: float):
        self.dpi = float(dpi)
        self.fig = None
        self.reuse: ReusedFigure | None = None
        self.drawn: tuple | None = None  # (panel, size, style) of the figure's last frame
        self.layout_key: tuple | None = None
        self.stamp_fig = None
        self.stamp_texts = None
        self.stamp_width = 0

    def figure_rgb(self, frame: Frame) -> np.ndarray:
        import matplotlib

        from sparsity_gui.figures.save import quicker_matplotlib

        quicker_matplotlib()
        with matplotlib.rc_context(frame.style):
            rc = matplotlib.rcParams
            if rc["savefig.transparent"] or rc["savefig.bbox"] is not None:
                # a style that saves otherwise than the figure is drawn: savefig's own way
                return figure_rgb(frame.fig, frame.style, self.dpi)
            fig = self.draw_panel(frame, rc)
            faces = {"facecolor": rc["savefig.facecolor"], "edgecolor": rc["savefig.edgecolor"]}
            for key, value in faces.items():
                if value != "auto":
                    getattr(fig, f"set_{key}")(value)
            fig.set_dpi(self.dpi)
            self.draw_laid_out(fig)
            rgba = np.asarray(fig.canvas.buffer_rgba())
        return flatten_rgba(rgba)

    def draw_panel(self, frame: Frame, rc):
        """The frame's figure function drawn into the canvas's figure (as into a new
        Figure: at the style's DPI and the frame's size)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        drawn = (frame.panel, frame.size, frame.style)
        if (
            self.reuse is not None
            and self.drawn is not None
            and all(a is b or a == b for a, b in zip(self.drawn, drawn, strict=True))
        ):
            self.reuse.begin()
            self.fig.set_dpi(rc["figure.dpi"])
            self.fig.set_size_inches(frame.size)
            try:
                frame.panel(self.fig, frame.data)
                self.reuse.end()
                return self.fig
            except StructureChanged:
                pass
        if self.fig is None:
            self.fig = Figure(figsize=frame.size, layout="constrained")
            FigureCanvasAgg(self.fig)
        else:  # as a new Figure: cleared, at the style's size and DPI
            self.fig.clear()
            self.fig.set_dpi(rc["figure.dpi"])
            self.fig.set_size_inches(frame.size)
        self.reuse = ReusedFigure(self.fig)
        frame.panel(self.fig, frame.data)
        self.reuse.recording = False
        if not self.reuse.reusable:
            self.reuse = None
        self.drawn, self.layout_key = drawn, None
        return self.fig

    def draw_laid_out(self, fig) -> None:
        """One draw, with the constrained layout run from a new figure's places when its
        inputs changed since it last ran, else in the last layout."""
        key = None if self.reuse is None or self.layout_key is None else self.reuse.layout_key()
        if key is not None and key == self.layout_key:
            engine = fig.get_layout_engine()
            fig.set_layout_engine("none")
            with ticks_worked_out_once(fig):
                fig.canvas.draw()
            fig.set_layout_engine(engine)
            return
        if self.reuse is not None:
            self.reuse.reset_positions()
        with ticks_worked_out_once(fig):
            fig.canvas.draw()
        self.layout_key = None if self.reuse is None else self.reuse.layout_key()

    def stamp_rgb(self, left: str, right: str, width: int, style: dict) -> np.ndarray:
        """The strip under a frame: the simulated time on the left, how it was reached (the
        solver, the step) on the right, in the figure's font, on the colour the figure is
        saved on."""
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        with matplotlib.rc_context(style):
            if self.stamp_fig is None or self.stamp_width != width:
                face = matplotlib.rcParams["savefig.facecolor"]
                fig = Figure(
                    figsize=(width / self.dpi, STAMP_INCHES),
                    dpi=self.dpi,
                    facecolor="white" if face == "auto" else face,
                )
                FigureCanvasAgg(fig)
                self.stamp_texts = (
                    fig.text(0.01, 0.5, "", ha="left", va="center", fontsize="medium"),
                    fig.text(0.99, 0.5, "", ha="right", va="center", fontsize="small", color="0.35"),
                )
                self.stamp_fig, self.stamp_width = fig, width
            for text, value in zip(self.stamp_texts, (left, right), strict=True):
                text.set_text(value)
            self.stamp_fig.canvas.draw()
            rgb = flatten_rgba(np.asarray(self.stamp_fig.canvas.buffer_rgba()))
        return (
            rgb[:, :width]
            if rgb.shape[1] >= width
            else np.pad(rgb, ((0, 0), (0, width - rgb.shape[1]), (0, 0)))
        )

    def image(self, frame: Frame) -> np.ndarray:
        """The figure's PNG pixels with the time stamp below, even-sized."""
        top = self.figure_rgb(frame)
        strip = self.stamp_rgb(frame.stamp, frame.note, top.shape[1], frame.style)
        return even_frame(np.concatenate([top, strip], axis=0))


def frame_image(frame: Frame, dpi: float) -> np.ndarray:
    """One frame alone (a canvas of its own): the figure's PNG pixels, the stamp below."""
    return FrameCanvas(dpi).image(frame)


# --- encoding ---------------------------------------------------------------------------
class GifPalette:
    """One palette for every frame of a GIF (a palette per frame would flicker): the
    colours most used in the first frame, then the style's line colours and the colour maps
    the panels use, each also faded toward white as anti-aliased edges are (curves that are
    not drawn yet at t = 0 keep their colour). Every pixel is mapped to its nearest colour
    through a lookup table over 5 bits per channel."""

    FIRST_FRAME = 128  # colours taken from the first frame at most
    FADES = (1.0, 0.7, 0.45, 0.2)

    def __init__(self, rgb: np.ndarray, style: dict | None = None):
        q = (rgb >> 3).astype(np.int32)
        keys = (q[..., 0] << 10 | q[..., 1] << 5 | q[..., 2]).ravel()
        counts = np.bincount(keys, minlength=1 << 15)
        used = np.flatnonzero(counts)
        top = used[np.argsort(counts[used])[::-1][: self.FIRST_FRAME]]
        # each bin's colour as the first frame has it (a pure curve colour, not the bin's
        # centre): the first pixel that falls in the bin
        bins, first = np.unique(keys, return_index=True)
        seen = rgb.reshape(-1, 3).astype(np.int64)[first[np.searchsorted(bins, top)]]
        colours = np.unique(np.concatenate([seen, self.style_colours(style)]), axis=0)
        order = np.argsort([0 if any((c == seen).all(axis=1)) else 1 for c in colours], kind="stable")
        colours = colours[order][:GIF_COLOURS]
        self.colours = colours
        grid = np.arange(1 << 15)
        centres = np.stack([(grid >> 10) & 31, (grid >> 5) & 31, grid & 31], axis=1) * 8 + 4
        best = np.empty(1 << 15, np.uint8)
        for start in range(0, 1 << 15, 4096):  # nearest colour, a block of the cube at a time
            d = ((centres[start : start + 4096, None, :] - colours[None, :, :]) ** 2).sum(axis=2)
            best[start : start + 4096] = np.argmin(d, axis=1)
        # a bin that holds a palette colour maps to it (the first frame's first), not to
        # whatever is nearest the bin's centre: white stays white
        own = (colours[:, 0] >> 3) << 10 | (colours[:, 1] >> 3) << 5 | (colours[:, 2] >> 3)
        best[own[::-1]] = np.arange(len(colours))[::-1]
        self.lut = best
        argb = np.zeros((256, 4), np.uint8)
        argb[:, 0] = 255
        argb[: len(colours), 1:] = colours
        self.argb = argb

    @classmethod
    def style_colours(cls, style: dict | None) -> np.ndarray:
        import matplotlib
        from matplotlib.colors import to_rgb

        with matplotlib.rc_context(style or {}):
            cycle = [to_rgb(c["color"]) for c in matplotlib.rcParams["axes.prop_cycle"]]
        maps = [matplotlib.colormaps[name](np.linspace(0, 1, 9))[:, :3] for name in ("viridis", "RdBu_r")]
        base = np.concatenate([np.array(cycle).reshape(-1, 3), *maps, [[0, 0, 0], [0.35] * 3, [0.6] * 3]])
        faded = [base * a + (1 - a) for a in cls.FADES]
        return np.round(np.concatenate(faded) * 255).astype(np.int64)

    def indices(self, rgb: np.ndarray) -> np.ndarray:
        q = (rgb >> 3).astype(np.int32)
        return self.lut[q[..., 0] << 10 | q[..., 1] << 5 | q[..., 2]]


class Encoder:
    """Frames in, a movie out into an open binary file (PyAV muxes into it)."""

    def __init__(self, file, fmt: str, fps: int, style: dict | None = None):
        self.av = require_encoder()
        self.file, self.fmt, self.fps, self.style = file, fmt, fps, style
        self.container = None
        self.stream = None
        self.palette: GifPalette | None = None
        self.size: tuple[int, int] | None = None
        self.frames = 0

    def _open(self, width: int, height: int) -> None:
        av = self.av
        self.container = av.open(self.file, mode="w", format=self.fmt)
        codec, pix_fmt = ("libx264", "yuv420p") if self.fmt == "mp4" else ("gif", "pal8")
        options = {"crf": "18", "preset": "veryfast"} if self.fmt == "mp4" else {}
        self.stream = self.container.add_stream(codec, rate=self.fps, options=options)
        self.stream.width, self.stream.height, self.stream.pix_fmt = width, height, pix_fmt
        self.size = (width, height)

    def add(self, rgb: np.ndarray) -> None:
        height, width = rgb.shape[:2]
        if self.container is None:
            self._open(width, height)
            if self.fmt == "gif":
                self.palette = GifPalette(rgb, self.style)
        if (width, height) != self.size:
            # a figure keeps its size in inches and its DPI: a different size is a bug
            raise RuntimeError(f"frame {self.frames} is {width}x{height}, the movie {self.size}")
        if self.palette is not None:
            frame = self.av.VideoFrame.from_ndarray(
                (self.palette.indices(rgb), self.palette.argb), format="pal8"
            )
        else:
            frame = self.av.VideoFrame.from_ndarray(rgb, format="rgb24")
        frame.pts = self.frames
        for packet in self.stream.encode(frame):
            self.container.mux(packet)
        self.frames += 1

    def close(self) -> None:
        if self.container is None:
            return
        for packet in self.stream.encode(None):
            self.container.mux(packet)
        self.container.close()
        self.container = None

    def abandon(self) -> None:
        if self.container is not None:
            try:
                self.container.close()
            except Exception:  # the file is removed anyway; the first error is the one to tell
                pass
            self.container = None


ProgressCallback = Callable[[int, int], None]


def encode_frames(
    file,
    frames: Iterable[Frame],
    count: int,
    settings: MovieSettings,
    cancelled: Callable[[], bool] = lambda: False,
    progress: ProgressCallback | None = None,
) -> tuple[int, int]:
    """Draw and encode each frame as it comes (never two held); returns the movie's
    (width, height). `cancelled()` is asked before each frame (MovieCancelled);
    `progress(done, count)` is told after each."""
    encoder = Encoder(file, settings.fmt, settings.fps)
    canvas = FrameCanvas(settings.dpi)
    try:
        for k, frame in enumerate(frames):
            if cancelled():
                raise MovieCancelled
            encoder.style = frame.style  # the GIF's palette takes the style's colours
            encoder.add(canvas.image(frame))
            if progress is not None:
                progress(k + 1, count)
        if encoder.frames != count:
            raise RuntimeError(f"{encoder.frames} frames drawn, {count} planned")
        encoder.close()
    except BaseException:
        encoder.abandon()
        raise
    assert encoder.size is not None
    return encoder.size


def write_movie(
    path: str | Path,
    frames: Callable[[], Iterator[Frame]],
    count: int,
    settings: MovieSettings,
    cancelled: Callable[[], bool] = lambda: False,
    progress: ProgressCallback | None = None,
    write_with: Callable | None = None,
) -> tuple[int, int]:
    """The movie written atomically to `path` (whole, with the user's umask, or not at all:
    a cancel or an encoder's failure, a full disk included, leaves nothing). `write_with`
    (a ResultDir's) writes into a result folder instead. Returns (width, height)."""
    require_encoder()  # before any work: the missing extra is the first thing said
    size: list[tuple[int, int]] = []

    def write(f) -> None:
        size.append(encode_frames(f, frames(), count, settings, cancelled, progress))

    if write_with is None:
        atomic_write_with(path, write)
    else:
        write_with(path, write)
    return size[0]
