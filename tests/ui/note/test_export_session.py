"""Export, sessions, presets and W(0) files, driven through the window's path-taking
methods (the menu actions call the same methods after a file dialog)."""

import contextlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from helpers import read_number_csv
from PySide6 import QtGui

from sparsity_gui.core.note.metrics import COL, COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.presets import all_presets
from sparsity_gui.core.note.sampled import replay_script
from sparsity_gui.core.note.session import load_session

TIMEOUT = 20_000
SVG = "{http://www.w3.org/2000/svg}"
PANEL_FILES = (
    "weights_sorted",
    "threshold_crossing",
    "norm_balance",
    "l1_decay",
    "relative_variance",
    "sparsity_force",
    "phase_plane",
)


def run_with_live_changes(qtbot, win):
    """Let the run go, change lam, switch to GD, change eta, then pause."""
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 1.0, timeout=TIMEOUT)
    for change, after in (({"lam": 0.02}, 2.0), ({"method": "gd"}, 3.0), ({"eta": 0.02}, 4.0)):
        win.on_params_changed(change)
        # the worker has taken this change (else the next one would reach it in the same
        # mail, at the same instant) and the run went on past `after`
        qtbot.waitUntil(
            lambda a=after: win.snapshot.params == win.params and win.snapshot.t > a, timeout=TIMEOUT
        )
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    qtbot.wait(50)
    return win.snapshot


def check_png(path, min_size=(100, 100)):
    image = QtGui.QImage(str(path))
    assert not image.isNull(), path
    assert image.width() >= min_size[0] and image.height() >= min_size[1], (path, image.size())
    colours = {image.pixel(x, y) for x in range(0, image.width(), 5) for y in range(0, image.height(), 5)}
    assert len(colours) > 5, f"{path} is blank"
    assert image.pixel(1, 1) == QtGui.QColor("white").rgb() or path.name == "window.png"
    return image


def check_svg(path, words, min_segments=20):
    root = ET.parse(path).getroot()  # valid XML
    assert root.tag == SVG + "svg"
    # plain SVG 1.1 (no Tiny vector-effect, which librsvg draws as bands)
    assert root.get("version") == "1.1", path
    assert not any(el.get("vector-effect") for el in root.iter()), f"{path}: vector-effect left"
    curves = [
        p
        for g in root.iter(SVG + "g")
        if g.get("stroke-width") == "2"
        for p in g.findall(SVG + "path")
        if p.get("d", "").count("L") >= min_segments
    ]
    assert curves, f"{path}: no curve drawn as a vector path with the export width"
    text = " ".join((t.text or "") for t in root.iter(SVG + "text"))
    for word in words:
        assert word in text, f"{path}: {word!r} not among the text elements"
    return root, curves


def check_pdf(path):
    data = Path(path).read_bytes()
    assert data.startswith(b"%PDF-")
    assert data.rstrip().endswith(b"%%EOF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == 1
    assert re.search(rb"/Font", data), "text is kept as text (fonts embedded)"
    return data


def test_saved_session_reopens_to_the_same_time_series(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=300, lam=1e-2, seed=4), speed=20.0)
    snap = run_with_live_changes(qtbot, win)
    assert [c.name for c in win.runner.sim.changes] == ["lam", "method", "eta"]
    session = tmp_path / "run.json"
    assert win.files.save_session(session), win.last_error
    obj = json.loads(session.read_text())
    assert obj["t"] == snap.t
    assert obj["parameters"]["lam"] == 0.01 and obj["parameters"]["method"] == "exact"
    assert [(c["name"], c["value"]) for c in obj["changes"]] == [
        ("lam", 0.02),
        ("method", "gd"),
        ("eta", 0.02),
    ]
    assert win.exports.export_data("timeseries", tmp_path / "a.csv"), win.last_error

    # the exported series is the core's replay of the session, and the same run as the live one
    rows = replay_script(load_session(session).script).rows
    header, values = read_number_csv(tmp_path / "a.csv")
    assert header == list(COLUMNS)
    np.testing.assert_array_equal(values, rows[:, : len(COLUMNS)])
    assert values[-1, COL["t"]] == snap.t
    np.testing.assert_allclose(values[-1, COL["norm1"]], snap.norm1, rtol=1e-9)
    assert values[-1, COL["nonzero"]] == snap.nonzero and values[-1, COL["lam"]] == 0.02

    # open it again, after moving on: the window shows the saved run, paused at the saved time
    run_id = win.run_id
    win.on_params_changed({"lam": 0.05})
    win.set_playing(True)
    qtbot.waitUntil(lambda: win.snapshot.t > snap.t + 1, timeout=TIMEOUT)
    assert win.files.open_session(session), win.last_error
    assert win.run_id == run_id + 1 and not win.playing
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id and win.snapshot.t == snap.t, timeout=TIMEOUT)
    assert win.params.lam == 0.02 and win.params.method == "gd" and win.params.eta == 0.02
    assert win.controls.lam.text() == "0.02"
    np.testing.assert_array_equal(win.snapshot.history, rows)  # drawn = exported
    assert [c.lam for c in win.snapshot.lam_changes] == [0.01, 0.02]
    assert win.exports.export_data("timeseries", tmp_path / "b.csv")
    assert (tmp_path / "b.csv").read_bytes() == (tmp_path / "a.csv").read_bytes(), "to the last digit"
    # saving the reopened run gives the same session back; both are in Open recent
    assert win.files.save_session(tmp_path / "again.json")
    again = json.loads((tmp_path / "again.json").read_text())
    assert again == obj
    recent = win.files.recent_sessions()
    assert recent[:2] == [str((tmp_path / "again.json").resolve()), str(session.resolve())]
    # reset after opening restarts the run from the session's W(0) with the current lam
    win.restart()
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    assert win.snapshot.history[0, COL["norm1"]] == pytest.approx(rows[0, COL["norm1"]], rel=1e-13)
    assert win.snapshot.lam == 0.02 and win.snapshot.history[0, COL["t"]] == 0.0


def test_export_all_and_each_figure_format(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=400, lam=1e-2, seed=1), speed=30.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 3, timeout=TIMEOUT)
    win.on_params_changed({"lam": 0.02})
    qtbot.waitUntil(lambda: win.snapshot.t > 5, timeout=TIMEOUT)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    live_pen = win.panels[3].measured.opts["pen"]
    out = tmp_path / "export"
    out.mkdir()  # earlier files of the same names: replaced
    (out / "weights_sorted.png").write_bytes(b"earlier figure")
    (out / "session.json").write_text("earlier session")
    assert win.exports.export_all(out), win.last_error
    names = {p.name for p in out.iterdir()}
    expected = {f"{n}.{ext}" for n in PANEL_FILES for ext in ("png", "svg", "pdf", "json", "py")} | {
        "window.png",
        "timeseries.csv",
        "weights.csv",
        "deaths.csv",
        "tracked.csv",
        "run.json",
        "session.json",
    }
    assert names == expected

    # the data: the core's replay of the saved session, column for column
    run = replay_script(load_session(out / "session.json").script)
    header, ts = read_number_csv(out / "timeseries.csv")
    assert header == list(COLUMNS)
    np.testing.assert_array_equal(ts, run.rows[:, : len(COLUMNS)])
    header, weights = read_number_csv(out / "weights.csv")
    assert header == ["k", "w0", "w_final"]
    np.testing.assert_array_equal(weights[:, 1], run.sim.init.w0)
    np.testing.assert_array_equal(weights[:, 2], run.sim.solver.weights())
    assert np.count_nonzero(weights[:, 2]) == win.snapshot.nonzero
    header, deaths = read_number_csv(out / "deaths.csv")
    assert header == ["k", "u", "t_death"]
    assert len(deaths) == 400 - win.snapshot.nonzero and np.all(np.diff(deaths[:, 2]) >= 0)
    header, tracked = read_number_csv(out / "tracked.csv")
    assert header[0] == "t" and len(header) == 1 + win.panels[1].count.value()  # the weights it draws
    meta = json.loads((out / "run.json").read_text())
    assert meta["parameters"]["lam"] == 0.01 and meta["lam_changes"][1][1] == 0.02
    assert meta["t_end"] == win.snapshot.t and meta["samples"] == len(ts)
    assert meta["live_changes"] == [[win.runner.sim.changes[0].t, "lam", 0.02]]

    # the figures (matplotlib): valid, not blank, text kept as text, drawn from the data
    for name in PANEL_FILES:
        check_png(out / f"{name}.png")
        check_pdf(out / f"{name}.pdf")
    check_png(out / "window.png", (1000, 600))
    for name, words in (
        ("l1_decay", ["‖", "λ"]),
        ("relative_variance", ["run"]),
        ("threshold_crossing", ["dies"]),
    ):
        root = ET.parse(out / f"{name}.svg").getroot()
        assert root.tag == SVG + "svg" and root.get("version") == "1.1"
        texts = " ".join("".join(el.itertext()) for el in root.iter(SVG + "text"))
        assert all(w in texts for w in words), (name, texts[:300])
    drawn = json.loads((out / "l1_decay.json").read_text())
    np.testing.assert_array_equal(np.array(drawn["norm1"], float), ts[:, COL["norm1"]])

    # one panel in each format, its data and script beside it; PNG at the chosen DPI
    for dpi in (100.0, 250.0):
        assert win.exports.export_figure(2, tmp_path / f"balance{dpi:g}.png", dpi=dpi), win.last_error
        image = check_png(tmp_path / f"balance{dpi:g}.png")
        assert image.width() == round(3.5 * dpi)  # a journal's column
        assert (tmp_path / f"balance{dpi:g}.py").is_file() and (tmp_path / f"balance{dpi:g}.json").is_file()
    assert win.exports.export_figure(win.panels[4], tmp_path / "rv.svg")
    assert b"<svg" in (tmp_path / "rv.svg").read_bytes()
    assert win.exports.export_figure(0, tmp_path / "sorted.pdf")
    check_pdf(tmp_path / "sorted.pdf")
    assert win.exports.export_figure("layout", tmp_path / "grid.pdf")
    check_pdf(tmp_path / "grid.pdf")
    assert win.exports.export_figure("window", tmp_path / "window.png")
    check_png(tmp_path / "window.png", (1000, 600))
    assert not win.exports.export_figure("window", tmp_path / "window.svg")
    assert "exported as PNG" in win.last_error and not (tmp_path / "window.svg").exists()
    assert not win.exports.export_figure(1, tmp_path / "x.gif")
    assert "use .png, .svg or .pdf" in win.last_error
    # the live panels are untouched: their fast 1 px pens (width 0: Qt's 1 px line)
    measured = win.panels[3].measured
    assert measured.opts["pen"] == live_pen and measured.opts["pen"].widthF() == 0


@contextlib.contextmanager
def file_size_limit(limit):
    """Writes beyond `limit` bytes fail with EFBIG, as on a full disk."""
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
        signal.signal(signal.SIGXFSZ, handler)


def test_unwritable_or_full_destination_keeps_earlier_files(qtbot, note_window, tmp_path):
    win = note_window(SimParams(m=200, lam=1e-2), speed=20.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 1, timeout=TIMEOUT)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    blocker = tmp_path / "a_file"
    blocker.write_text("keep")
    assert not win.exports.export_all(blocker / "sub")
    assert "a_file" in win.last_error and win.error_box.isVisible()
    assert not win.exports.export_all(blocker)
    assert "is a file, not a folder" in win.last_error
    assert not win.files.save_session(blocker / "s.json")
    assert "Not a directory" in win.last_error and blocker.read_text() == "keep"

    out = tmp_path / "out"
    out.mkdir()
    (out / "weights_sorted.png").write_bytes(b"earlier figure")
    (out / "session.json").write_text("earlier session")
    with file_size_limit(20_000):
        assert not win.exports.export_all(out)
    assert "File too large" in win.last_error and "weights_sorted.png" in win.last_error
    with file_size_limit(300):
        assert not win.files.save_session(out / "session.json")
    assert "File too large" in win.last_error and "unchanged" in win.last_error
    assert (out / "weights_sorted.png").read_bytes() == b"earlier figure"
    assert (out / "session.json").read_text() == "earlier session"
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "no half-written files"
    # with room again, writing works: the failed export left nothing behind it (Export all
    # replacing earlier files of the same names: test_export_all_and_each_figure_format)
    assert win.exports.job is None and win.exports.progress is None
    assert win.files.save_session(out / "session.json"), win.last_error
    assert load_session(out / "session.json").script.params == win.params


def test_bad_session_files_change_nothing(qtbot, note_window, tmp_path):
    win = note_window(SimParams(m=200, lam=1e-2), speed=5.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0.5, timeout=TIMEOUT)
    good = tmp_path / "good.json"
    assert win.files.save_session(good)
    obj = json.loads(good.read_text())

    def variant(**edits):
        o = json.loads(json.dumps(obj))
        for key, value in edits.items():
            target = o
            *path, last = key.split("__")
            for part in path:
                target = target[part]
            if value is None:
                del target[last]
            else:
                target[last] = value
        return json.dumps(o)

    nan_weights = json.loads(good.read_text())
    nan_weights["parameters"]["m"] = 3
    nan_weights["w0"] = {"source": "file", "path": "w.npy", "weights": [0.1, float("nan"), 0.2]}
    cases = {
        "malformed.json": (good.read_text()[:40], "not valid JSON"),
        "version.json": (variant(version=7), "version 7 is not supported"),
        "missing.json": (variant(parameters__sigma=None), "missing field 'parameters.sigma'"),
        "typed.json": (variant(parameters__seed="zero"), "'parameters.seed' must be a whole number"),
        "typed_t.json": (variant(t=[1]), "field 't' must be a number"),
        "nan.json": (json.dumps(nan_weights), "weight 1 is nan"),
        "garbage.json": (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" * 50, "binary data"),
    }
    run_id, sim, params = win.run_id, win.runner.sim, win.params
    for name, (content, needle) in cases.items():
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        assert not win.files.open_session(path), name
        assert needle in win.last_error and name in win.last_error, (name, win.last_error)
        assert win.error_box.isVisible() and not win.error_box.isModal()
        assert win.run_id == run_id and win.runner.sim is sim and win.params == params, name
    assert not win.files.open_session(tmp_path / "nowhere.json")
    assert "no such file" in win.last_error
    qtbot.wait(100)
    assert win.snapshot.run_id == run_id, "the current run went on untouched"
    assert str(good.resolve()) in win.files.recent_sessions()
    assert not any(name in p for p in win.files.recent_sessions() for name in cases)


def test_presets_and_recent_sessions_survive_a_restart(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=1e-2), speed=5.0)
    assert win.files.apply_preset("Quick demo"), win.last_error
    assert (win.params.m, win.params.lam, win.params.sigma) == (1000, 1e-2, 0.9)
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.snapshot.m == 1000,
        timeout=TIMEOUT,
    )
    assert win.controls.m.text() == "1000"
    win.on_params_changed({"lam": 3e-3, "sigma": 1.1})
    assert win.files.save_preset("my setting"), win.last_error
    assert not win.files.save_preset("The note's setting")
    assert "built-in" in win.last_error
    assert not win.files.save_session(tmp_path / "s.json"), "the new run (sigma changed) has not started yet"
    assert "still starting" in win.last_error
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    assert win.files.save_session(tmp_path / "s.json")
    config = Path(os.environ["SPARSITY_GUI_CONFIG_DIR"])
    assert (config / "presets.json").is_file()
    win.close()

    again = make_window(SimParams(m=200, lam=1e-2), speed=5.0)
    names = [p.name for p in all_presets()]  # what the Presets menu offers
    assert names[:4] == ["The note's setting", "Quick demo", "Network-style start", "Large run"]
    assert "my setting" in names
    again.files.presets_menu.aboutToShow.emit()
    assert "my setting" in [a.text() for a in again.files.presets_menu.actions()]
    assert again.files.apply_preset("my setting")
    assert (again.params.m, again.params.lam, again.params.sigma) == (1000, 3e-3, 1.1)
    assert again.files.recent_sessions() == [str((tmp_path / "s.json").resolve())]
    again.files.recent_menu.aboutToShow.emit()
    assert str((tmp_path / "s.json").resolve()) in [a.text() for a in again.files.recent_menu.actions()]
    # the menu entries and their shortcuts
    actions = {a.text(): a for a in again.menuBar().actions()[0].menu().actions()}
    assert actions["Save session…"].shortcut().toString() == "Ctrl+S"
    assert actions["Open session…"].shortcut().toString() == "Ctrl+O"
    assert actions["Export all…"].shortcut().toString() == "Ctrl+E"
    assert {"Open recent", "Export figure", "Export data", "Load W(0) from file…", "Quit"} <= set(actions)


def test_load_w0_from_files(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=1e-2), speed=5.0)
    matrix = np.random.default_rng(0).standard_normal((3, 50)) * 0.1
    npz = tmp_path / "model.npz"
    np.savez(npz, bias=np.ones(3), W=matrix)
    assert win.files.load_w0(str(npz), row=2, array="W"), win.last_error
    qtbot.waitUntil(
        lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id and win.snapshot.m == 50,
        timeout=TIMEOUT,
    )
    np.testing.assert_array_equal(win.runner.sim.init.w0, matrix[2])
    assert win.params.w0_path == str(npz) and win.params.m == 50
    # a session of this run embeds the weights and says where they came from
    assert win.files.save_session(tmp_path / "s.json")
    w0 = json.loads((tmp_path / "s.json").read_text())["w0"]
    assert (w0["source"], w0["path"], w0["array"], w0["row"]) == ("file", str(npz), "W", 2)
    assert w0["weights"] == matrix[2].tolist()

    csv_path = tmp_path / "w.csv"
    csv_path.write_text("weight\n" + "\n".join(repr(float(x)) for x in matrix[0]) + "\n")
    assert win.files.load_w0(str(csv_path))
    qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    np.testing.assert_array_equal(win.runner.sim.init.w0, matrix[0])

    run_id, sim = win.run_id, win.runner.sim
    bad_npy = tmp_path / "bad.npy"
    np.save(bad_npy, np.array([0.1, np.inf, 0.2]))
    garbage = tmp_path / "garbage.npy"
    # the same bytes every run: random ones look like another format (byte 8 '{' is a
    # safetensors header) about one run in 256
    garbage.write_bytes(np.random.default_rng(20261202).bytes(300))
    text_garbage = tmp_path / "garbage.csv"
    text_garbage.write_bytes(b"\xff\xfe\x00\x01" * 40)
    for path, needle in (
        (bad_npy, "weight 1 is inf"),
        (garbage, "not a valid .npy"),
        (text_garbage, "not a text file"),
        (npz, "no array named 'V'"),
    ):
        assert not win.files.load_w0(str(path), array="V" if path == npz else None)
        assert needle in win.last_error, win.last_error
        assert win.run_id == run_id and win.runner.sim is sim


def test_run_figures_headless(tmp_path):
    """`run --figures` in a subprocess with no display and no Qt platform set."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "result"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparsity_gui",
            "run",
            "--m",
            "500",
            "--lam",
            "1e-2",
            "--samples",
            "101",
            "--figures",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,  # a loaded machine: the figures alone took 2 min of wall time there
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr
    figures = out / "figures"
    names = {p.name for p in figures.iterdir()}
    assert names == {
        f"{n}.{ext}" for n in (*PANEL_FILES, "layout") for ext in ("png", "svg", "pdf", "json", "py")
    }
    for name in PANEL_FILES:
        check_png(figures / f"{name}.png")
    check_png(figures / "layout.png", (1200, 700))
    drawn = json.loads((figures / "norm_balance.json").read_text())
    assert len(drawn["t"]) == 101, "one point per row of timeseries.csv"
    header, _ = read_number_csv(out / "timeseries.csv")
    assert header == list(COLUMNS)


def test_a_session_naming_an_unusable_style_opens_without_it(qtbot, make_window, tmp_path):
    """A session's style is read only if it is a small regular style file: a megabyte-long
    line and a device are refused with one line that does not echo them, the run opens
    and the window's style stays as it was."""
    win = make_window(SimParams(m=200, lam=1e-2, seed=3), speed=20.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.run_id == win.run_id, timeout=TIMEOUT)
    session = tmp_path / "s.json"
    assert win.files.save_session(session), win.last_error
    huge = tmp_path / "huge.mplstyle"
    huge.write_text("lines.linewidth: " + "1" * 2_000_000 + "\n")
    before = win.exports.style()
    for style in (str(huge), "/dev/zero"):
        obj = json.loads(session.read_text())
        obj["style"] = style
        named = tmp_path / "named.json"
        named.write_text(json.dumps(obj))
        assert win.files.open_session(named), win.last_error
        assert win.exports.style() == before
        said = win.statusBar().currentMessage()
        assert "its figure style is not used" in said, said
        assert "\n" not in said and len(said) < 500 and "111111" not in said, said
