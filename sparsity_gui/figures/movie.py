"""Movies of a run: frames drawn one at a time by the figure functions and streamed to
the encoder, MP4 (H.264, yuv420p: every player and slide tool plays it) or GIF.

A frame (figures/frames.py) is the figure's PNG pipeline (`savefig` at the movie's DPI, as
raw RGBA instead of PNG) with a strip below it stamping the simulated time. No frame is
kept after it is encoded, so the memory of a movie is that of one figure whatever its
length.

The encoder is PyAV (FFmpeg's libraries in its wheels), the optional extra `[movie]`;
`require_encoder()` raises MovieExtraMissing, an ImportError naming the extra, when it is
not installed. The frame times of both models come from `frame_times`; the model modules
(note/movie.py, interference/movie.py) replay a run and hand each frame's figure here."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_with
from sparsity_gui.core.text import printable
from sparsity_gui.figures.frames import Frame, FrameCanvas

FORMATS = ("mp4", "gif")
SPACINGS = ("linear", "log")
DEFAULT_FPS = 30
DEFAULT_SECONDS = 10.0
DEFAULT_MOVIE_DPI = 150  # 3.5 in: 525 px; the talk style's 6.4 in: 960 px
MAX_FRAMES = 36_000  # 20 minutes at 30 fps
LOG_DECADES = 3.0  # log spacing: the first frame after t = 0 is 10^-3 of the span
INSTALL_HINT = "pip install 'sparsity-gui[movie]'"
MISSING_TEXT = f"movies need the PyAV encoder, which is not installed: {INSTALL_HINT}"
GIF_COLOURS = 256


class MovieExtraMissing(ImportError):
    """PyAV (the `[movie]` extra) is not installed; the message says how to install it."""


class MovieCancelled(Exception):
    """The export was cancelled: nothing was written."""


def require_encoder() -> None:
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

    def add(self, rgba: np.ndarray) -> None:
        """One frame, opaque RGBA (FrameCanvas.image_rgba)."""
        height, width = rgba.shape[:2]
        rgb = rgba[..., :3]
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
            # written straight into the frame's plane (from_ndarray copies RGBA pixel by
            # pixel); the encoder converts to yuv420p as it would from RGB, to the same bytes
            frame = self.av.VideoFrame(width, height, "rgba")
            plane = frame.planes[0]
            rows = np.frombuffer(plane, np.uint8, count=height * plane.line_size).reshape(height, -1)
            rows[:, : width * 4].reshape(height, width, 4)[...] = rgba
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
            with contextlib.suppress(Exception):  # the file is removed anyway; the first error tells
                self.container.close()
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
            encoder.add(canvas.image_rgba(frame))
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
    if write_with is None:
        target = Path(path)
        if target.is_dir():
            raise InputError("path", f"{printable(str(target))} is a folder; give the movie's file name")
        if not target.parent.is_dir():
            raise InputError("path", f"{printable(str(target.parent))}: no such folder")
    size: list[tuple[int, int]] = []

    def write(f) -> None:
        size.append(encode_frames(f, frames(), count, settings, cancelled, progress))

    if write_with is None:
        atomic_write_with(path, write)
    else:
        write_with(path, write)
    return size[0]
