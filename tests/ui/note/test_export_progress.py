"""Export all runs in a worker thread behind a progress bar with Cancel: the window keeps
running and painting meanwhile (its own event loop: no nested one), a second export is
refused while one runs, Cancel leaves the folder as it was (a new one is not left behind),
and the chosen figure style is used and remembered."""

from __future__ import annotations

import json

from PySide6 import QtWidgets

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.dialogs import settings
from sparsity_gui.ui.figure_style import STYLE_KEY

TIMEOUT = 20_000


def _running(qtbot, win, t=1.0):
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > t, timeout=TIMEOUT)


def test_cancel_leaves_nothing_and_the_run_goes_on(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=3000, lam=1e-2, seed=2), speed=5.0)
    _running(qtbot, win)
    for folder in (tmp_path / "new", tmp_path / "earlier"):
        if folder.name == "earlier":
            folder.mkdir()
            (folder / "weights_sorted.png").write_bytes(b"earlier figure")
        assert win.exports.export_all(folder, wait=False)  # started: the menu's way
        job, progress = win.exports.job, win.exports.progress
        assert job is not None and job.running and progress is not None
        assert progress.bar.isVisible() and progress.bar.maximum() > 0
        # one export at a time: the second is refused with a message, the first goes on
        assert not win.exports.export_figure(3, tmp_path / "x.png", wait=False)
        assert "an export is running" in win.last_error and job.running
        before = win.snapshot.t
        qtbot.waitUntil(lambda t=before: win.snapshot.t > t, timeout=TIMEOUT)  # it paints on meanwhile
        progress.button.click()
        qtbot.waitUntil(lambda: win.exports.job is None, timeout=TIMEOUT)
        assert job.outcome is not None and job.outcome.cancelled
        assert win.last_error == "Export cancelled"
        if folder.name == "new":
            assert not folder.exists()
        else:
            assert sorted(p.name for p in folder.iterdir()) == ["weights_sorted.png"]
            assert (folder / "weights_sorted.png").read_bytes() == b"earlier figure"
        assert win.exports.progress is None
        shown = [w for w in win.statusBar().findChildren(QtWidgets.QProgressBar) if w.isVisible()]
        assert not shown  # taken out of the status bar (deleted later)
    assert not (tmp_path / "x.png").exists()
    # the run went on while the export was made, and paints on
    t = win.snapshot.t
    qtbot.waitUntil(lambda: win.snapshot.t > t, timeout=TIMEOUT)
    assert win.snapshot.state == "running"


def test_the_style_chosen_is_used_and_remembered(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=1e-2, seed=1), speed=20.0)
    _running(qtbot, win)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    bad = tmp_path / "bad.mplstyle"
    bad.write_text("lines.linewidth: thick\n")
    assert not win.exports.set_style(bad)
    assert "bad.mplstyle" in win.last_error and win.exports.style() == "paper"
    good = tmp_path / "wide.mplstyle"
    good.write_text("lines.linewidth: 2.2\n")
    try:
        assert win.exports.set_style(good)
        assert settings().value(STYLE_KEY) == str(good)
        assert win.exports._style_actions["file"].isChecked()
        assert win.exports.export_figure(3, tmp_path / "decay.png", dpi=100)
        script = (tmp_path / "decay.py").read_text()
        assert "'lines.linewidth': 2.2" in script
        drawn = json.loads((tmp_path / "decay.json").read_text())
        assert len(drawn["t"]) == len(win.current_script()[0].sample_times())
    finally:
        settings().remove(STYLE_KEY)


def test_a_session_keeps_the_figure_style(qtbot, make_window, tmp_path):
    """Save session writes the style chosen; opening it chooses that style again. A session
    whose style file is gone still opens, and says why its style is not used."""
    win = make_window(SimParams(m=200, lam=1e-2, seed=1), speed=20.0)
    _running(qtbot, win)
    win.set_playing(False)
    qtbot.waitUntil(lambda: win.snapshot.state == "paused", timeout=TIMEOUT)
    try:
        assert win.exports.set_style("talk"), win.last_error
        session = tmp_path / "talk.json"
        assert win.files.save_session(session), win.last_error
        saved = json.loads(session.read_text())
        assert saved["style"] == "talk"
        assert win.exports.set_style("paper") and win.exports.style() == "paper"
        assert win.files.open_session(session), win.last_error
        assert win.exports.style() == "talk" and settings().value(STYLE_KEY) == "talk"
        assert win.exports._style_actions["talk"].isChecked()
        gone = tmp_path / "gone.json"
        gone.write_text(json.dumps({**saved, "style": str(tmp_path / "none.mplstyle")}))
        assert win.files.open_session(gone), win.last_error
        message = win.statusBar().currentMessage()
        assert "figure style is not used" in message and "none.mplstyle" in message
        assert win.exports.style() == "talk"
        qtbot.waitUntil(lambda: win.snapshot.t == saved["t"], timeout=TIMEOUT)
    finally:
        settings().remove(STYLE_KEY)
