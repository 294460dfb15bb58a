"""One frame of a movie: a figure function's drawing at one instant, as the pixels of its
PNG with a strip below stamping the simulated time. `FrameCanvas` draws frame after frame
into axes and a layout kept from the frame before while they stay the same (constrained
layout and tick placement are most of a frame's cost), and draws a frame anew whenever its
structure or layout inputs change, so each frame is the figure function's PNG at that
instant (within a fraction of a grey level where the layout was kept)."""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sparsity_gui.figures.mpl_compat import scoped_patch

STAMP_INCHES = 0.22  # the time stamp's strip under the figure
STAMP_GAP = 3  # px: a text's anti-aliased ink stays this close to its box


def figure_rgba(fig, style: dict, dpi: float) -> np.ndarray:
    """The figure as savefig draws its PNG at `dpi` (the same pipeline: layout, facecolor),
    as an H x W x 4 uint8 RGBA array."""
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context(style):
        fig.savefig(buf, format="raw", dpi=dpi)
    width = int(fig.get_figwidth() * dpi)  # Agg's canvas: the size in pixels truncated
    return np.frombuffer(buf.getbuffer(), np.uint8).reshape(-1, width, 4)


def flatten_into(dst: np.ndarray, rgba: np.ndarray) -> None:
    """`rgba` over white, as a viewer shows a PNG, written opaque into the RGBA array `dst`
    of its size."""
    if rgba[..., 3].min() == 255:
        dst[...] = rgba  # whole pixels: a copy of rows, several times quicker than of RGB
        return
    alpha = rgba[..., 3:4].astype(np.float32) / 255.0
    dst[..., :3] = np.round(rgba[..., :3] * alpha + 255.0 * (1.0 - alpha)).astype(np.uint8)
    dst[..., 3] = 255


def without_settings_lines(data):
    """``data`` without the settings' lines above a figure (figures/draw.settings_lines), at
    any depth: a movie's frames keep one size, and those lines, the legend's title, come
    and go with the legend and can make a small figure taller; the movie's run is named by
    its file and its stamp."""
    if isinstance(data, dict):
        return {k: without_settings_lines(v) for k, v in data.items() if k != "settings_named"}
    if isinstance(data, list):
        return [without_settings_lines(v) for v in data]
    return data


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

    def __post_init__(self):
        object.__setattr__(self, "data", without_settings_lines(self.data))

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


@scoped_patch("matplotlib.axis", "Axis", "_update_ticks")
def _remembered_ticks(original):
    """Axis._update_ticks, while the tool draws, made to consult the memo of a figure being
    drawn in ticks_worked_out_once (any other figure's axes work out their ticks as always)."""

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
            last = memo[id(axis)] = (key, original(axis), {})
        return last[1]

    return update_ticks


@scoped_patch("matplotlib.axis", "Axis", "_get_ticklabel_bboxes")
def _remembered_tick_boxes(original_boxes):
    """Axis._get_ticklabel_bboxes, while the tool draws, made to consult the same memo."""

    def ticklabel_bboxes(axis, ticks, renderer):
        # always asked right after _update_ticks, of its ticks: their labels' boxes are those
        # of the last ticks worked out, while these stand (same view, place and ticks)
        memo = _tick_memos.get(id(axis.get_figure(root=True))) if _tick_memos else None
        last = None if memo is None else memo.get(id(axis))
        if last is None:
            return original_boxes(axis, ticks, renderer)
        key = (id(renderer), renderer.dpi if hasattr(renderer, "dpi") else None, tuple(map(id, ticks)))
        boxes = last[2].get(key)
        if boxes is None:
            boxes = last[2][key] = original_boxes(axis, ticks, renderer)
        return boxes

    return ticklabel_bboxes


@contextlib.contextmanager
def ticks_worked_out_once(fig):
    """While `fig` is drawn once: each of its axes works out its ticks (locator, formatter,
    the Tick artists) and measures their labels again only when its view interval or place
    changed since it last did, not at each of the 20 or 30 times the layout and the draw ask
    (the layout at each of its passes, every spine, the axis label's placing and each shared
    axis again). The memo lives for this one draw of this one figure."""
    with _remembered_ticks.active(), _remembered_tick_boxes.active():
        _tick_memos[id(fig)] = {}
        try:
            yield
        finally:
            del _tick_memos[id(fig)]


_layout_memos: dict[int, dict] = {}  # id(figure) being drawn in texts_laid_out_once: its memo
TEXT_LAYOUTS_KEPT = 20_000  # a canvas's memo of text layouts is emptied when it holds more


@scoped_patch("matplotlib.text", "Text", "_get_layout")
def _remembered_text_layouts(original):
    """Text._get_layout, while the tool draws, made to consult the memo of a figure being
    drawn in texts_laid_out_once (any other figure's texts are laid out as always)."""

    def get_layout(text, renderer):
        fig = text.get_figure(root=True)
        memo = _layout_memos.get(id(fig)) if _layout_memos else None
        if memo is None or text.get_wrap():  # a wrapped text depends on where it is
            return original(text, renderer)
        fp = text._fontproperties
        key = (
            text.get_text(),
            text.get_usetex(),
            text.get_parse_math(),
            tuple(fp.get_family()),  # the font: what FontProperties hashes
            fp.get_slant(),
            fp.get_variant(),
            fp.get_weight(),
            fp.get_stretch(),
            fp.get_size_in_points(),
            fp.get_file(),
            fp.get_math_fontfamily(),
            text.get_rotation(),
            text.get_rotation_mode(),
            text.get_horizontalalignment(),
            text.get_verticalalignment(),
            text._multialignment,
            text._linespacing,
            fig.dpi,
            type(renderer),
            getattr(renderer, "dpi", None),
        )
        found = memo.get(key)
        if found is None:
            if len(memo) >= TEXT_LAYOUTS_KEPT:
                memo.clear()
            found = memo[key] = original(text, renderer)
        return found

    return get_layout


@contextlib.contextmanager
def texts_laid_out_once(fig, memo: dict):
    """While `fig` is drawn: each text's layout (its box, lines and their metrics, which the
    constrained layout, the axis labels' placing, the legend and the draw each ask for again)
    is taken from `memo` when a text of the same string, font, size, rotation, alignment and
    DPI was laid out before; `_get_layout` is a function of these alone (a wrapped text, which
    is not, is laid out as always). The memo may outlive the draw while the rcParams it was
    made under hold (the font lookup and hinting read them)."""
    with _remembered_text_layouts.active():
        _layout_memos[id(fig)] = memo
        try:
            yield
        finally:
            del _layout_memos[id(fig)]


class ShapedFont:
    """An FT2Font (what RendererAgg._prepare_font gives) whose text shaping, `_layout`: the
    glyphs of a string and their places at the font's size, is kept in a memo, as a
    function of the font (its files, fallbacks and hinting factor), the size, the DPI, the
    string and the shaping's options; all else is the font's own."""

    def __init__(self, font, size: tuple, memo: dict):
        self._font, self._size, self._memo = font, size, memo

    def __getattr__(self, name):
        return getattr(self._font, name)

    def _layout(self, s, *args, **kwargs):
        key = ("shape", self._font, self._size, s, args, tuple(sorted(kwargs.items())))
        try:
            found = self._memo.get(key)
        except TypeError:  # an option that is not hashable: shaped as always
            return self._font._layout(s, *args, **kwargs)
        if found is None:
            if len(self._memo) >= TEXT_LAYOUTS_KEPT:
                self._memo.clear()
            found = self._memo[key] = self._font._layout(s, *args, **kwargs)
        return found


def keep_shapes(renderer, memo: dict) -> None:
    """`renderer` (one Agg renderer, not its class) shapes each string once per font, size
    and DPI (RendererAgg.draw_text shapes the string anew at every draw: 0.5 ms a tick
    label); for matplotlib versions whose draw_text shapes with FT2Font._layout, else nothing
    changes."""
    from matplotlib.ft2font import FT2Font

    if not hasattr(FT2Font, "_layout") or renderer.__dict__.get("_kept_shapes") is memo:
        return
    prepare = type(renderer)._prepare_font

    def prepare_font(prop):
        return ShapedFont(prepare(renderer, prop), (prop.get_size_in_points(), renderer.dpi), memo)

    renderer._prepare_font = prepare_font  # this instance's: any other renderer is untouched
    renderer._kept_shapes = memo


class FrameCanvas:
    """The one Figure every frame of a movie is drawn into, and the strip with the time
    stamp. The figure function draws each frame into the axes it made for the first one
    (ReusedFigure), emptied; the constrained layout is run again, from a new figure's
    places, only when what it depends on changed (the size, the tick labels and how far the
    end ones reach past their axis, the axis labels, the legends' entries), else the last
    frame's is kept. A frame laid out anew is the figure function's PNG at the movie's DPI
    pixel for pixel, a frame in a kept layout the same but for a few anti-aliased pixels
    (tested). What matplotlib works out again and again to the same result is kept while
    the frames are drawn (ticks, tick label boxes, text layouts and shapings: the memos
    above), which changes no pixel."""

    def __init__(self, dpi: float):
        self.dpi = float(dpi)
        self.fig = None
        self.reuse: ReusedFigure | None = None
        self.drawn: tuple | None = None  # (panel, size, style) of the figure's last frame
        self.layout_key: tuple | None = None
        self.text_layouts: dict = {}  # texts_laid_out_once's memo, for frames of one `drawn`
        self.shapes: dict = {}  # keep_shapes's memo (of both figures)
        self.stamp_fig = None
        self.stamp_texts = None
        self.stamp_made: tuple | None = None  # (width, style) the stamp's figure was made for
        self.stamp_note: tuple | None = None  # (text, RGBA, left edge in px) of the right text alone
        self.stamp_right: str | None = None  # the right text of the frame before

    def figure_rgba(self, frame: Frame) -> np.ndarray:
        """The frame's figure as its PNG's pixels, RGBA (a view of the canvas's buffer, valid
        until its next draw). In the frame's rc_context."""
        import matplotlib

        rc = matplotlib.rcParams
        if rc["savefig.transparent"] or rc["savefig.bbox"] is not None:
            # a style that saves otherwise than the figure is drawn: savefig's own way
            return figure_rgba(frame.fig, frame.style, self.dpi)
        fig = self.draw_panel(frame, rc)
        faces = {"facecolor": rc["savefig.facecolor"], "edgecolor": rc["savefig.edgecolor"]}
        for key, value in faces.items():
            if value != "auto":
                getattr(fig, f"set_{key}")(value)
        fig.set_dpi(self.dpi)
        self.draw_laid_out(fig)
        return np.asarray(fig.canvas.buffer_rgba())

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
        if drawn != self.drawn:  # another style: the fonts and hinting may differ
            self.text_layouts = {}
        self.drawn, self.layout_key = drawn, None
        return self.fig

    def draw_laid_out(self, fig) -> None:
        """One draw, with the constrained layout run from a new figure's places when its
        inputs changed since it last ran, else in the last layout."""
        keep_shapes(fig.canvas.get_renderer(), self.shapes)
        key = None if self.reuse is None or self.layout_key is None else self.reuse.layout_key()
        if key is not None and key == self.layout_key:
            engine = fig.get_layout_engine()
            fig.set_layout_engine("none")
            with ticks_worked_out_once(fig), texts_laid_out_once(fig, self.text_layouts):
                fig.canvas.draw()
            fig.set_layout_engine(engine)
            return
        if self.reuse is not None:
            self.reuse.reset_positions()
        with ticks_worked_out_once(fig), texts_laid_out_once(fig, self.text_layouts):
            fig.canvas.draw()
        self.layout_key = None if self.reuse is None else self.reuse.layout_key()

    def stamp_rgba(self, left: str, right: str, width: int, style: dict) -> np.ndarray:
        """The strip under a frame: the simulated time on the left, how it was reached (the
        solver, the step) on the right, in the figure's font, on the colour the figure is
        saved on; RGBA, `width` wide or less. In the frame's rc_context.

        The right text changes seldom (never for the exact flow): once it is the same as the
        frame before's, it is drawn alone, and each frame draws the left text alone and takes
        the columns right of the gap between the two from that drawing, when there is a gap
        of 2 STAMP_GAP pixels (else both are drawn); each text's pixels are the same drawn
        alone or together."""
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        made = (width, style)
        if self.stamp_fig is None or self.stamp_made != made:
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
            self.stamp_fig, self.stamp_made, self.stamp_note = fig, made, None
            self.stamp_right = None
        fig, (left_text, right_text) = self.stamp_fig, self.stamp_texts
        renderer = fig.canvas.get_renderer()
        keep_shapes(renderer, self.shapes)
        note = self.stamp_note
        if right == self.stamp_right and (note is None or note[0] != right):
            # the same right text as the frame before: drawn alone, once
            left_text.set_text("")
            right_text.set_text(right)
            fig.canvas.draw()
            x0 = right_text.get_window_extent(renderer).x0 if right else float(width)
            note = self.stamp_note = (right, np.array(fig.canvas.buffer_rgba()), x0)
        self.stamp_right = right
        left_text.set_text(left)
        if note is not None and note[0] == right:
            right_text.set_text("")
            fig.canvas.draw()
            left_x1 = left_text.get_window_extent(renderer).x1 if left else 0.0
            if left_x1 + 2 * STAMP_GAP <= note[2]:
                rgba = np.array(fig.canvas.buffer_rgba())
                split = int((left_x1 + note[2]) / 2)
                rgba[:, split:] = note[1][:, split:]
                return rgba[:, :width]
        right_text.set_text(right)  # a new right text, or the texts meet: drawn together
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())
        return rgba[:, :width]

    def image_rgba(self, frame: Frame) -> np.ndarray:
        """The figure's PNG pixels with the time stamp below, even-sized (padded with white;
        a stamp narrower than the figure, with black), opaque RGBA."""
        import matplotlib

        from sparsity_gui.figures.save import shared_mathtext

        # one rc context for both figures: entering one costs
        with shared_mathtext.active(), matplotlib.rc_context(frame.style):
            top = self.figure_rgba(frame)
            h, w = top.shape[:2]
            strip = self.stamp_rgba(frame.stamp, frame.note, w, frame.style)
            rows = h + strip.shape[0]
            out = np.full((rows + rows % 2, w + w % 2, 4), 255, np.uint8)
            flatten_into(out[:h, :w], top)
            flatten_into(out[h:rows, : strip.shape[1]], strip)
            out[h:rows, strip.shape[1] : w, :3] = 0
        return out

    def image(self, frame: Frame) -> np.ndarray:
        """image_rgba's RGB."""
        return self.image_rgba(frame)[..., :3]


def frame_image(frame: Frame, dpi: float) -> np.ndarray:
    """One frame alone (a canvas of its own): the figure's PNG pixels, the stamp below."""
    return FrameCanvas(dpi).image(frame)
