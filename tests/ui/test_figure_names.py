"""A figure's file name is data, never code: exported from either window under names with
quotes, braces (an f-string's code), backslashes, a newline and non-ASCII letters, each
figure's script runs in a clean Python, redraws the PNG pixel for pixel and creates
nothing else. A damaged data file gives the script one `error:` line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams

TIMEOUT = 30_000
# each name is a class of hostile text; the braces' content would create a file if it ran
NAMES = {
    "quotes": "it's \"quoted\" '''",
    "braces": "fig {open('PWNED', 'w').write('x')} {{x}}",
    "backslash": "back\\slash \\n \\x00",
    "newline": "two\nlines",
    "non_ascii": "Gewichte λ ünd 重み",
}


def run_script(folder: Path, stem: str) -> subprocess.CompletedProcess:
    """`python -I <stem>.py` in `folder` (no user site, no PYTHONPATH)."""
    return subprocess.run(**script_call(folder, stem), capture_output=True, text=True, timeout=120)


def script_call(folder: Path, stem: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {"args": [sys.executable, "-I", str(folder / f"{stem}.py")], "cwd": folder, "env": env}


def assert_scripts_redraw(folders: dict[str, Path]) -> None:
    """Each folder's <stem>.py, run side by side, writes <stem>.png again, pixel for pixel,
    and nothing else."""
    from tests.figures.figure_files import assert_same_pixels

    exported, before, procs = {}, {}, {}
    for stem, folder in folders.items():
        png = folder / f"{stem}.png"
        exported[stem] = png.read_bytes()
        before[stem] = sorted(p.name for p in folder.iterdir())
        png.unlink()
    for stem, folder in folders.items():
        procs[stem] = subprocess.Popen(
            **script_call(folder, stem), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    for stem, folder in folders.items():
        _, err = procs[stem].communicate(timeout=180)
        assert procs[stem].returncode == 0, (stem, err)
        assert sorted(p.name for p in folder.iterdir()) == before[stem], "the script made other files"
        assert_same_pixels((folder / f"{stem}.png").read_bytes(), exported[stem], repr(stem))
        assert not (folder / "PWNED").exists()


def finished(qtbot, win) -> None:
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "finished", timeout=TIMEOUT)


def test_note_window_figures_under_hostile_names(qtbot, note_window, tmp_path):
    win = note_window(SimParams(m=200, lam=1e-2, t_end=40.0), speed=50.0)
    finished(qtbot, win)
    folders = {}
    for kind, stem in NAMES.items():
        folders[stem] = tmp_path / kind
        folders[stem].mkdir()
        path = folders[stem] / f"{stem}.png"
        assert win.exports.export_figure(win.panels[0], path, dpi=60), win.last_error
        assert {p.name for p in folders[stem].iterdir()} == {f"{stem}.png", f"{stem}.json", f"{stem}.py"}
    assert_scripts_redraw(folders)


def test_interference_window_figures_under_hostile_names(qtbot, make_iwindow, tmp_path):
    win = make_iwindow(InterferenceParams(n=16, m=8, steps=300))
    finished(qtbot, win)
    folders = {}
    for kind, stem in NAMES.items():
        folders[stem] = tmp_path / kind
        folders[stem].mkdir()
        assert win.exports.export_figure(0, folders[stem] / f"{stem}.png", scale=0.5), win.last_error
    assert_scripts_redraw(folders)


def test_a_renamed_figure_finds_its_data_and_a_damaged_one_says_so(qtbot, note_window, tmp_path):
    """The script reads the JSON of its own name: renamed together, the files still redraw;
    a truncated or foreign JSON is one `error:` line naming it."""
    win = note_window(SimParams(m=200, lam=1e-2, t_end=40.0), speed=50.0)
    finished(qtbot, win)
    assert win.exports.export_figure(win.panels[2], tmp_path / "first.png", dpi=60), win.last_error
    for suffix in (".png", ".json", ".py"):
        (tmp_path / f"first{suffix}").rename(tmp_path / f"renamed.v2{suffix}")
    assert_scripts_redraw({"renamed.v2": tmp_path})

    data = tmp_path / "renamed.v2.json"
    text = data.read_text(encoding="utf-8")
    for damaged in (text[: len(text) // 2], '{"not": "this figure"}', "[" * 100_000):
        data.write_text(damaged, encoding="utf-8")
        proc = run_script(tmp_path, "renamed.v2")
        assert proc.returncode == 1
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("error: ") and "renamed.v2.json" in lines[0], proc.stderr
        assert "Traceback" not in proc.stderr
