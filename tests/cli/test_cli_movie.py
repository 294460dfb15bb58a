"""`run --movie PANEL` and `interference --movie PANEL` in subprocesses: DIR/movies/PANEL.mp4
(or .gif) decodes to the frames asked; bad options and a write that fails (a file size
limit) are one `error:` line, status 2, and no DIR."""

from __future__ import annotations

import os
import resource
import signal

import pytest
from helpers import cli, command_in_process

av = pytest.importorskip("av", reason="the [movie] extra (PyAV) is not installed")


def frames_of(path):
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        rate = stream.average_rate
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    return frames, rate


SMALL = ["--movie-seconds", "1", "--movie-fps", "5", "--movie-dpi", "50"]


def test_run_movie_writes_each_panel_asked(tmp_path):
    proc = cli(
        [
            "run",
            "--m",
            "150",
            "--lam",
            "0.02",
            "--samples",
            "31",
            "--movie",
            "l1_decay",
            "--movie",
            "layout",
            *SMALL,
            "--out",
            "res",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path / "res" / "movies")) == ["l1_decay.mp4", "layout.mp4"]
    frames, rate = frames_of(tmp_path / "res" / "movies" / "l1_decay.mp4")
    assert len(frames) == 5 and rate == 5
    assert frames[0].shape[1] == 176  # 3.5 in at 50 dpi, made even
    layout, _ = frames_of(tmp_path / "res" / "movies" / "layout.mp4")
    assert len(layout) == 5 and layout[0].shape[1] == 350  # the layout's 7 in


def test_interference_movie_as_gif(tmp_path):
    proc = cli(
        [
            "interference",
            "--n",
            "10",
            "--m",
            "20",
            "--steps",
            "120",
            "--samples",
            "13",
            "--movie",
            "kept",
            *SMALL,
            "--movie-format",
            "gif",
            "--movie-spacing",
            "log",
            "--out",
            "res",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    frames, _ = frames_of(tmp_path / "res" / "movies" / "kept.gif")
    assert len(frames) == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--movie", "nope"], "error: --movie: unknown panel 'nope'; use one of weights_sorted, "),
        (["--movie", "layout", "--movie-fps", "0"], "error: --movie-fps: must be a whole number"),
        (["--movie", "layout", "--movie-spacing", "cubic"], "error: --movie-spacing: must be linear or log"),
        (["--movie", "layout", "--movie-format", "avi"], "error: --movie-format: must be mp4 or gif"),
    ],
)
def test_bad_movie_options_are_one_error_line(tmp_path, monkeypatch, capsys, args, message):
    """In this process (the refusal is argparse's and the options' checks; a movie command's
    process of its own: the tests above and below)."""
    code, _out, err = command_in_process(
        ["run", "--m", "20", *args, "--out", "res"], tmp_path, monkeypatch, capsys
    )
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), err
    assert os.listdir(tmp_path) == []


def limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def test_a_movie_past_the_file_size_limit_leaves_nothing(tmp_path):
    proc = cli(
        [
            "run",
            "--m",
            "150",
            "--lam",
            "0.02",
            "--samples",
            "21",
            "--no-weights",
            "--movie",
            "threshold_crossing",
            "--movie-seconds",
            "1",
            "--movie-fps",
            "8",
            "--out",
            "res",
        ],
        tmp_path,
        preexec_fn=limit_file_size,
    )
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert (
        lines[0].startswith("error: cannot write res/movies/threshold_crossing.mp4: ")
        and "nothing was written" in lines[0]
    )
    assert os.listdir(tmp_path) == []
