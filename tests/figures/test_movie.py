"""Movies of a run (figures/movie.py, frames.py, note_movie.py, interference_movie.py, the API's
movie()): decoded with PyAV, each frame is compared with the figure function's PNG of the
state at its time, that state computed here without the movie's replay (the solver
advanced straight to t_k, the original run's own final state)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers import command_in_process

av = pytest.importorskip("av", reason="the [movie] extra (PyAV) is not installed")

from sparsity_gui import api  # noqa: E402
from sparsity_gui.core.errors import InputError  # noqa: E402
from sparsity_gui.core.interference.run import HISTORY_COLUMNS, InterferenceRun  # noqa: E402
from sparsity_gui.core.interference.thresholds import run_threshold_curves  # noqa: E402
from sparsity_gui.core.note.runner import snapshot_of  # noqa: E402
from sparsity_gui.core.note.simulation import Simulation  # noqa: E402
from sparsity_gui.figures import save  # noqa: E402
from sparsity_gui.figures.frames import FrameCanvas, frame_image, without_settings_lines  # noqa: E402
from sparsity_gui.figures.interference.figures import PANELS as INTERFERENCE_PANELS  # noqa: E402
from sparsity_gui.figures.interference.figures import run_data  # noqa: E402
from sparsity_gui.figures.movie import GifPalette, MovieCancelled, frame_times, movie_settings  # noqa: E402
from sparsity_gui.figures.note.figures import note_figure, panel_data  # noqa: E402
from sparsity_gui.figures.note.movie import (  # noqa: E402
    note_frames,
    solver_targets,
    stamp_text,
    write_note_movie,
)
from sparsity_gui.figures.scripted import panel_size  # noqa: E402
from sparsity_gui.figures.style import style_params  # noqa: E402

DPI = 60  # small frames: the tests compare pixels, not looks
CODEC_MEAN = 3.0  # mean |difference| per channel (of 255) that H.264 at crf 18 may add
CODEC_FAR = 0.01  # the share of pixels it may move by over 64 (of 255): anti-aliased edges


@pytest.fixture(scope="module")
def note_run():
    return api.simulate(m=200, lam=1e-2, sigma=0.9, seed=3, samples=41)


@pytest.fixture(scope="module")
def training():
    return api.train(n=12, m=24, steps=300, samples=31, seed=1)


def decoded(path):
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        info = (stream.codec_context.name, stream.codec_context.pix_fmt, stream.average_rate)
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    return frames, info


def png_rgb(fig, dpi=DPI) -> np.ndarray:
    """The figure function's PNG (figures/save.py's bytes), as uint8 RGB."""
    from matplotlib.image import imread

    rgba = imread(io.BytesIO(save.figure_bytes(fig, "png", style_params(None), dpi)), format="png")
    return np.round(rgba[..., :3] * 255).astype(np.uint8)


def note_png_at(run, t: float, panel: str = "weights_sorted") -> np.ndarray:
    """The panel at time t of a fresh solve of the same W(0), advanced straight to t."""
    sim = Simulation(run.params, run.w0)
    sim.advance(t)
    return png_rgb(
        note_figure(
            panel,
            without_settings_lines(panel_data(snapshot_of(sim, sim.params, run_id=1, seq=1, state="paused"))),
        )
    )


def mean_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.abs(a.astype(np.int16) - b.astype(np.int16))))


def far_share(a: np.ndarray, b: np.ndarray, by: int = 64) -> float:
    """The share of pixels with a channel off by more than `by` (of 255)."""
    return float(np.mean(np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2) > by))


def test_frame_times_end_exactly_and_log_times_are_geometric():
    lin = frame_times(0.0, 7.3, 11, "linear")
    np.testing.assert_allclose(np.diff(lin), 0.73)
    log = frame_times(0.0, 7.3, 11, "log")
    assert lin[0] == log[0] == 0.0 and lin[-1] == log[-1] == 7.3
    ratios = log[2:] / log[1:-1]
    np.testing.assert_allclose(ratios, (1e3) ** (1 / 9))
    assert log[1] == pytest.approx(7.3e-3)


def test_a_gif_palette_keeps_the_colours_of_curves_drawn_later():
    """The palette is made from the first frame (blank axes at t = 0) and the style: a
    curve drawn later in a style colour, or a viridis shade, keeps its exact colour."""
    import matplotlib
    from matplotlib.colors import to_rgb

    first = np.full((40, 60, 3), 255, np.uint8)
    first[5:7] = 0
    palette = GifPalette(first, style_params(None))
    with matplotlib.rc_context(style_params(None)):
        later = [to_rgb(c["color"]) for c in matplotlib.rcParams["axes.prop_cycle"]]
    later.append(tuple(matplotlib.colormaps["viridis"](0.0)[:3]))
    for colour in later:
        rgb = np.round(np.array(colour) * 255).astype(np.uint8).reshape(1, 1, 3)
        assert np.array_equal(palette.colours[palette.indices(rgb)[0, 0]], rgb[0, 0]), colour
    assert np.array_equal(palette.colours[palette.indices(first)], first)


def test_settings_are_checked_with_the_field_named():
    for kwargs, field in (
        ({"fps": 0}, "fps"),
        ({"fps": 2.5}, "fps"),
        ({"seconds": -1}, "seconds"),
        ({"spacing": "cubic"}, "spacing"),
        ({"fmt": "avi"}, "format"),
        ({"seconds": 3600.0, "fps": 30}, "seconds"),
    ):
        with pytest.raises(InputError) as info:
            movie_settings(**kwargs)
        assert info.value.field == field


def test_note_frames_are_the_figure_functions_png_pixel_for_pixel(note_run):
    """Before the codec: a frame's top is exactly the figure's PNG of the solver's state at
    its time (the same stops: the rows of 41 samples and the frames); and within rounding
    of a solve straight to t (no stop on the way: a few anti-aliased pixels move)."""
    script = note_run.run.sim.script(note_run.t_end, 41)
    times = frame_times(0.0, note_run.t_end, 4, "linear")
    frames = list(note_frames(script, "weights_sorted", times))
    assert len(frames) == 4
    stops = np.union1d(np.linspace(0.0, note_run.t_end, 41), times)
    canvas = FrameCanvas(DPI)  # one canvas for every frame, as a movie draws them
    for frame, t in zip(frames, times, strict=True):
        image = canvas.image(frame)
        assert np.array_equal(image, frame_image(frame, DPI)), "a frame differs on a canvas of its own"
        sim = Simulation(note_run.params, note_run.w0)
        for stop in stops[stops <= t]:
            sim.advance(float(stop))
        snap = snapshot_of(sim, sim.params, run_id=1, seq=1, state="paused")
        ref = png_rgb(note_figure("weights_sorted", without_settings_lines(panel_data(snap))))
        top = image[: ref.shape[0], : ref.shape[1]]
        assert np.array_equal(top, ref), f"t = {t}: {np.count_nonzero(top != ref)} pixel values differ"
        straight = note_png_at(note_run, float(t))
        assert np.count_nonzero(top != straight) < 0.01 * top.size
        assert np.any(image[ref.shape[0] :] < 128), "no time stamp under the figure"


@pytest.mark.parametrize("panel", ["threshold_crossing", "layout"])
def test_frames_on_one_canvas_are_each_times_own_figure(note_run, panel):
    """A movie draws every frame into one cleared figure: each frame is still exactly the
    figure function's PNG of a new figure (stacked sub-plots, a legend above that sizes the
    figure, the six-panel layout of sub-figures), whatever was drawn before it. The layout,
    six panels a frame, in two frames: the second is drawn over the first."""
    script = note_run.run.sim.script(note_run.t_end, 41)
    times = frame_times(0.0, note_run.t_end, 2 if panel == "layout" else 3, "log")
    canvas = FrameCanvas(DPI)
    images = []
    for frame in note_frames(script, panel, times):
        image = canvas.image(frame)
        ref = png_rgb(frame.fig)
        assert np.array_equal(image[: ref.shape[0], : ref.shape[1]], ref)
        images.append(image)
    assert not np.array_equal(images[0], images[-1])


@pytest.mark.parametrize(
    ("panel", "spacing", "instants"),
    [
        ("threshold_crossing", "linear", [0, 19, 21, 22, 24, 25, 26, 27, 37, 38, 39]),
        ("phase_plane", "linear", [0, 34, 35, 36, 37, 38, 39]),
        ("sparsity_force", "log", [0, 8, 9, 10, 11, 12, 13, 39]),
    ],
)
def test_frames_drawn_into_kept_axes_and_layout_are_the_figure_functions_png(
    note_run, panel, spacing, instants
):
    """A movie's canvas keeps the first frame's axes (the figure function draws into them,
    emptied) and reruns the layout only when its inputs change (tick labels, how far the
    end labels reach past the axes, legends): frames laid out anew are the figure
    function's PNG pixel for pixel, and frames in a kept layout too, but for a few pixels of
    anti-aliasing (none moved by over 64 of 255). The instants are a 40-frame movie's first,
    its last and runs of neighbours where the layout is kept (a few neighbours show it as
    well as every frame does, at a quarter of the drawing)."""
    script = note_run.run.sim.script(note_run.t_end, 41)
    times = frame_times(0.0, note_run.t_end, 40, spacing)[instants]
    canvas = FrameCanvas(DPI)
    kept, axes = 0, None
    for k, frame in enumerate(note_frames(script, panel, times)):
        before = canvas.layout_key
        image = canvas.image(frame)
        axes = axes or [id(a) for a in canvas.fig.axes]
        assert [id(a) for a in canvas.fig.axes] == axes, f"frame {k}: new axes"
        ref = png_rgb(frame.fig)
        top = image[: ref.shape[0], : ref.shape[1]]
        if canvas.layout_key is before:  # the layout of the frame before, kept
            kept += 1
            assert mean_diff(top, ref) < 0.01 and far_share(top, ref) == 0.0, f"frame {k} (layout kept)"
        else:
            assert np.array_equal(top, ref), f"frame {k} (laid out anew)"
    assert kept >= 3  # the kept layout is exercised (the phase plane's padded limits move its ticks often)


def test_a_canvas_given_another_panel_draws_it_anew(note_run):
    """Frames of other figure functions (other axes, sub-figures) on one canvas: each is
    drawn into a cleared figure, the figure function's PNG pixel for pixel."""
    script = note_run.run.sim.script(note_run.t_end, 41)
    times = frame_times(0.0, note_run.t_end, 3, "linear")
    canvas = FrameCanvas(DPI)
    for panel, k in (("weights_sorted", 0), ("norm_balance", 1), ("layout", 2), ("weights_sorted", 2)):
        (frame,) = note_frames(script, panel, times[k : k + 1])  # only the frame drawn here
        ref = png_rgb(frame.fig)
        image = canvas.image(frame)
        assert np.array_equal(image[: ref.shape[0], : ref.shape[1]], ref), (panel, k)


@pytest.mark.parametrize("style", [None, "talk"])
def test_a_stamp_drawn_in_two_parts_is_its_two_texts_drawn_together(style):
    """The stamp's right text, the same from frame to frame, is drawn once and its columns
    joined to each frame's left text: each strip is still both texts drawn together, pixel
    for pixel, whether the right text stays (exact flow), changes at every frame (gradient
    descent's step) or meets a long left text."""
    import matplotlib

    params = style_params(style)
    canvas = FrameCanvas(DPI)
    width = round(3.5 * DPI)
    joined = 0
    with matplotlib.rc_context(params):
        for k, t in enumerate(np.concatenate([[0.0], np.geomspace(1e-6, 1e7, 24)])):
            left = stamp_text(float(t), 1e-3 * (1 + k % 3))
            right = "exact flow at t" if k < 16 else f"GD: its step at t = {t:.5g} (at or before t)"
            if k == 12:
                left = "t = 1.234     " + "λ = 0.001 " * 4  # reaches the right text
            strip = canvas.stamp_rgba(left, right, width, params).copy()
            joined += canvas.stamp_note is not None and canvas.stamp_note[0] == right and k != 12
            left_text, right_text = canvas.stamp_texts
            left_text.set_text(left)
            right_text.set_text(right)
            canvas.stamp_fig.canvas.draw()
            together = np.asarray(canvas.stamp_fig.canvas.buffer_rgba())[:, :width]
            assert np.array_equal(strip, together), (k, left, right)
    assert joined >= 10  # the two-part drawing is exercised


def test_mp4_decodes_to_the_frames_asked_each_the_figure_at_its_time(note_run, tmp_path):
    path = note_run.movie(tmp_path / "w.mp4", panel="weights_sorted", seconds=1.5, fps=4, dpi=DPI)
    frames, (codec, pix_fmt, rate) = decoded(path)
    assert (codec, pix_fmt, rate) == ("h264", "yuv420p", 4)
    assert len(frames) == 6
    fig_h, fig_w = round(2.9 * DPI), round(3.5 * DPI)  # the paper style's single column
    height = fig_h + round(0.22 * DPI)
    assert frames[0].shape == (height + height % 2, fig_w + fig_w % 2, 3)
    times = np.linspace(0.0, note_run.t_end, 6)
    refs = [note_png_at(note_run, float(t)) for t in times]
    owns = []
    for k, frame in enumerate(frames):
        top = frame[: refs[k].shape[0], : refs[k].shape[1]]
        own = mean_diff(top, refs[k])
        owns.append(own)
        assert own < CODEC_MEAN, f"frame {k}: mean difference {own:.2f} from its figure"
        assert far_share(top, refs[k]) < CODEC_FAR and far_share(top, refs[k], 128) < 0.1 * CODEC_FAR
        others = [mean_diff(top, r) for j, r in enumerate(refs) if abs(j - k) > 1]
        assert min(others) > own, f"frame {k} is as near another time's figure as its own"
    # frames differ over time (far more than the codec changes a frame), and so do their stamps
    assert mean_diff(frames[0], frames[-1]) > 3 * max(owns)
    assert all(mean_diff(a, b) > 0.1 for a, b in zip(frames[:-1], frames[1:], strict=True))
    stamp = slice(refs[0].shape[0], None)
    assert mean_diff(frames[0][stamp], frames[-1][stamp]) > 1.0


def test_first_and_last_frames_are_t0_and_the_runs_end(note_run, tmp_path):
    """Log-spaced: the last frame is the original run's own final state (not replayed)."""
    path = note_run.movie(
        tmp_path / "w.mp4", panel="weights_sorted", seconds=1, fps=5, spacing="log", dpi=DPI
    )
    frames, _ = decoded(path)
    sim = note_run.run.sim
    assert sim.t == note_run.t_end
    end = png_rgb(
        note_figure(
            "weights_sorted",
            without_settings_lines(panel_data(snapshot_of(sim, sim.params, run_id=1, seq=1, state="x"))),
        )
    )
    start = note_png_at(note_run, 0.0)
    h, w = end.shape[:2]
    own_end = mean_diff(frames[-1][:h, :w], end)
    own_start = mean_diff(frames[0][:h, :w], start)
    assert own_end < CODEC_MEAN and own_start < CODEC_MEAN
    assert mean_diff(frames[0][:h, :w], end) > 3 * max(own_end, own_start)


def test_gradient_descent_frames_show_the_step_at_or_before_t(tmp_path):
    eta = 0.7
    run = api.simulate(m=150, lam=2e-2, method="gd", eta=eta, samples=21, seed=2)
    script = run.run.sim.script(run.t_end, 21)
    times = frame_times(0.0, run.t_end, 9, "linear")
    sim = Simulation(script.params, script.w0)
    for t, target in zip(times, solver_targets(script, times), strict=True):
        sim.advance(float(target))
        assert t - eta - 1e-9 < sim.t <= t + 1e-9, (t, sim.t)
        assert abs(round(sim.t / eta) * eta - sim.t) < 1e-9  # a whole step
    frames = list(note_frames(script, "l1_decay", times[-2:]))
    assert all("GD: its step at t" in f.note for f in frames)


def test_a_cancelled_export_leaves_nothing(note_run, tmp_path):
    script = note_run.run.sim.script(note_run.t_end, 41)
    asked = []

    def cancelled():
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(MovieCancelled):
        write_note_movie(
            tmp_path / "m.mp4", script, "weights_sorted", movie_settings(2, 5, dpi=DPI), cancelled=cancelled
        )
    assert len(asked) == 4 and os.listdir(tmp_path) == []


def test_interference_gif_frames_are_the_weights_at_their_steps(training, tmp_path):
    path = training.movie(tmp_path / "w.gif", panel="weights", seconds=1, fps=5, dpi=DPI)
    frames, (codec, _pix, _rate) = decoded(path)
    assert codec == "gif" and len(frames) == 5
    steps = np.floor(np.linspace(0, 300, 5) + 1e-9).astype(int)
    style = style_params(None)
    function = INTERFERENCE_PANELS["weights"][0]
    for k, step in enumerate(steps):
        run = InterferenceRun(training.params, training.w0)  # trained straight to the step
        run.advance(int(step))
        run.measure(with_loss=False)
        if step == 300:
            assert np.array_equal(run.W, training.w_final)
        thresholds = run_threshold_curves(run)
        data = run_data(
            run.history_array(), HISTORY_COLUMNS, run.W, run.counts, training.params.n, thresholds=thresholds
        )
        ref = png_rgb(
            save.figure_of(function, without_settings_lines(data["weights"]), style, panel_size(None))
        )
        top = frames[k][: ref.shape[0], : ref.shape[1]]
        own = mean_diff(top, ref)
        assert own < 2.0, f"frame {k} (step {step})"  # a palette of 256 colours
        if k == 0:
            assert mean_diff(frames[-1][: ref.shape[0], : ref.shape[1]], ref) > 3 * own


def test_a_replay_that_misses_the_ws_on_screen_is_refused_and_writes_nothing(training, tmp_path):
    """The window's movie dialog passes the W it shows at the last step: a replay that ends
    elsewhere (here the run's W with one weight changed) is refused, and no file is left;
    the run's own final W is accepted."""
    from sparsity_gui.figures.interference.movie import write_interference_movie
    from sparsity_gui.figures.movie import MovieSettings

    settings = MovieSettings(seconds=1, fps=3, fmt="gif", dpi=DPI)
    shown = training.w_final.copy()
    shown.flat[0] += 1e-3
    with pytest.raises(InputError, match="does not reproduce the run on screen"):
        write_interference_movie(
            tmp_path / "w.gif", training.params, training.w0, "weights", settings, expect_final=shown
        )
    assert os.listdir(tmp_path) == []
    write_interference_movie(
        tmp_path / "w.gif", training.params, training.w0, "weights", settings, expect_final=training.w_final
    )
    assert os.listdir(tmp_path) == ["w.gif"]


def test_unknown_panel_and_suffix_are_refused(note_run, training, tmp_path):
    with pytest.raises(InputError, match="unknown panel"):
        note_run.movie(tmp_path / "a.mp4", panel="nope")
    with pytest.raises(InputError, match="mp4 or .gif"):
        training.movie(tmp_path / "a.avi")
    assert os.listdir(tmp_path) == []


def test_a_failing_encoder_disk_full_leaves_nothing(note_run, tmp_path):
    """A write past a file size limit (as a full disk) fails in the encoder: the OSError
    reaches the caller and no file is left. The limit is set for this process only around
    the call (`run --movie` under a limit in a process of its own: tests/cli/test_cli_movie.py)."""
    import resource
    import signal

    out = tmp_path / "out"
    out.mkdir()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (6000, hard))
    try:
        with pytest.raises(OSError):
            note_run.movie(out / "m.mp4", panel="threshold_crossing", seconds=2, fps=5, dpi=DPI)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    assert os.listdir(out) == []


NO_AV = textwrap.dedent('''
    import sys

    class _NoAv:
        """PyAV not installed, as without the [movie] extra."""
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "av":
                raise ImportError("No module named 'av'")
            return None

    sys.meta_path.insert(0, _NoAv())
''')


NO_EXTRA = "error: movies need the PyAV encoder, which is not installed: pip install 'sparsity-gui[movie]'"


def without_av(tmp_path, args):
    site = tmp_path / "noav"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(NO_AV)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )


def test_without_the_extra_the_api_raises_an_import_error_naming_it(tmp_path, monkeypatch):
    """In this process, `av` made unimportable (None in sys.modules: `import av` fails)."""
    monkeypatch.setitem(sys.modules, "av", None)
    with pytest.raises(ImportError):
        import av  # noqa: F401  (the blocker works)
    run = api.simulate(m=50, samples=5)
    with pytest.raises(ImportError) as info:
        run.movie(tmp_path / "m.mp4")
    assert type(info.value).__name__ == "MovieExtraMissing"
    assert str(info.value) == (
        "movies need the PyAV encoder, which is not installed: pip install 'sparsity-gui[movie]'"
    )
    assert os.listdir(tmp_path) == []


def test_without_the_extra_the_commands_say_one_error_line(tmp_path, monkeypatch, capsys):
    """`run` as a process of its own with PyAV blocked at its start (the entry point's
    status and stderr); `interference` in this process with `av` unimportable."""
    proc = without_av(
        tmp_path, ["-m", "sparsity_gui", "run", "--m", "20", "--movie", "layout", "--out", "res"]
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [NO_EXTRA]
    assert os.listdir(tmp_path) == ["noav"]
    monkeypatch.setitem(sys.modules, "av", None)
    argv = ["interference", "--m", "20", "--steps", "5", "--movie", "layout", "--out", "res"]
    assert command_in_process(argv, tmp_path, monkeypatch, capsys) == (2, "", NO_EXTRA + "\n")
    assert os.listdir(tmp_path) == ["noav"]


def test_run_movie_frames_are_drawn_in_the_style_asked(tmp_path, monkeypatch, capsys):
    """`run --movie --style`: the talk style's frames are as wide as its figure (6.4 in), and
    a user's style file shows in every frame (its axes' background here); --style without
    --figures or --movie is one error line. (In this process: `run --movie` as a process of
    its own is tests/cli/test_cli_movie.py's.)"""
    style = tmp_path / "pink.mplstyle"
    style.write_text("axes.facecolor: ff00ff\n")
    base = ["run", "--m", "50", "--lam", "1e-2", "--samples", "11"]
    movie = ["--movie", "weights_sorted", "--movie-seconds", "0.4", "--movie-fps", "5", "--movie-dpi", "40"]
    widths = {}
    for name, extra in (("paper", []), ("talk", ["--style", "talk"]), ("pink", ["--style", str(style)])):
        code, _out, err = command_in_process(
            [*base, *movie, *extra, "--out", name], tmp_path, monkeypatch, capsys
        )
        assert code in (0, None), err
        frames, _ = decoded(tmp_path / name / "movies" / "weights_sorted.mp4")
        assert len(frames) == 2
        widths[name] = frames[0].shape[1]
        magenta = [np.mean((f[..., 0] > 200) & (f[..., 1] < 60) & (f[..., 2] > 200)) for f in frames]
        assert (min(magenta) > 0.2) if name == "pink" else (max(magenta) == 0.0), (name, magenta)
    assert widths == {"paper": 140, "talk": 256, "pink": 140}  # 3.5 in, 6.4 in at 40 dpi
    code, out, err = command_in_process(
        [*base, "--style", "talk", "--out", "no"], tmp_path, monkeypatch, capsys
    )
    assert (
        code == 2
        and out == ""
        and err.splitlines() == ["error: style: applies to figures and movies: add --figures or --movie"]
    )
    assert not (tmp_path / "no").exists()
