"""The app starts with a presets file it cannot read: it says so (a non-modal box and the
status bar, and the Presets menu while it lasts), leaves the file as it is and goes on
(the run plays, the built-in presets work, saving a preset is refused without touching
the file). Through the real window (pytest-qt) and the real entry point in a subprocess
(`--quit-after`), a FIFO included there (a reader that blocked would hit the timeout)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

DEEP = "[" * 100_000 + "]" * 100_000
CORRUPT = {
    "nested 10^5 deep": (DEEP, "nested more than 32 deep"),
    "binary": ("\x89PNG\r\n\x1a\n\x00\x00", "binary data"),
    "a list": ("[1, 2]", "not a presets file"),
    "presets of the wrong type": (
        '{"format": "sparsity-gui presets", "version": 1, "presets": {"a": 1}}',
        "field 'presets' must be a list",
    ),
    "truncated": ('{"format": "sparsity-gui presets", "version": 1, "pre', "not valid JSON"),
}


def _presets_file() -> Path:
    config = Path(os.environ["SPARSITY_GUI_CONFIG_DIR"])  # tests/ui/conftest.py: per test
    config.mkdir(parents=True, exist_ok=True)
    return config / "presets.json"


@pytest.mark.parametrize("case", CORRUPT)
def test_the_window_starts_says_why_and_keeps_the_file(qtbot, make_window, case):
    text, reason = CORRUPT[case]
    path = _presets_file()
    path.write_text(text)
    before = path.read_bytes()
    win = make_window()
    assert str(path) in win.last_error and reason in win.last_error, win.last_error
    assert "left as it is" in win.last_error
    assert win.error_box is not None and not win.error_box.isModal()
    assert reason in win.error_box.text() or reason in win.error_box.informativeText()
    assert str(path) in win.statusBar().currentMessage()
    win.files.presets_menu.aboutToShow.emit()  # the menu as it opens
    texts = {a.text(): a for a in win.files.presets_menu.actions()}
    assert not texts["(your presets file cannot be read)"].isEnabled()
    assert reason in texts["(your presets file cannot be read)"].toolTip()
    # the app goes on: the run plays, a built-in preset starts a run
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0, timeout=30_000)
    assert win.files.apply_preset("Quick demo"), win.last_error
    assert win.params.lam == 1e-2 and win.params.m == 1000
    # saving a preset would rewrite the file: refused, the file untouched
    assert not win.files.save_preset("mine")
    assert str(path) in win.last_error
    assert path.read_bytes() == before


def test_a_readable_file_says_nothing(make_window):
    path = _presets_file()
    path.write_text('{"format": "sparsity-gui presets", "version": 1, "presets": []}')
    win = make_window()
    assert win.files.presets_problem == "" and win.last_error == ""


def _app(config: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        SPARSITY_GUI_CONFIG_DIR=str(config),
        SPARSITY_GUI_SETTINGS=str(tmp_path / "settings.ini"),
    )
    return subprocess.run(
        [sys.executable, "-m", "sparsity_gui", "--m", "500", "--quit-after", "1500"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.parametrize("kind", ["nested", "fifo"])
def test_the_app_starts_and_quits_with_a_corrupt_presets_file(tmp_path, kind):
    config = tmp_path / "config"
    config.mkdir()
    path = config / "presets.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_text(DEEP)
    proc = _app(config, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr, proc.stderr
    if kind == "fifo":
        assert stat.S_ISFIFO(os.stat(path).st_mode), "the FIFO is left as it was"
    else:
        assert path.read_text() == DEEP
    assert sorted(p.name for p in config.iterdir()) == ["presets.json"], "nothing else written there"
