"""The first launch fits the screen: both windows open inside the screen's available
geometry (a 1366x768 laptop's is 1366x742 under a top panel), with every panel laid out
inside its view (no title or tick label cut off), and at their full default size where
there is room. A geometry saved on a larger screen is brought back on screen.

Each case is a real app in a subprocess on Qt's offscreen platform given a screen of that
size (its JSON configuration), so that the app sees that QScreen from the start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys
from PySide6 import QtCore, QtWidgets
app = QtWidgets.QApplication([sys.argv[0]])
import pyqtgraph as pg
pg.setConfigOptions(background="w", foreground="k", antialias=False)
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.windows import ModelWindows

def rect(r):
    return [r.x(), r.y(), r.width(), r.height()]

def in_window(win, widget):
    return rect(QtCore.QRect(widget.mapTo(win, QtCore.QPoint(0, 0)), widget.size()))

def settle():
    for _ in range(5):
        app.processEvents()
        QtCore.QThread.msleep(30)

windows = ModelWindows()
note = windows.open("note", SimParams(m=300, lam=1e-2), playing=False)
note.show()
settle()
inter = windows.open("interference", playing=False)
inter.show()
settle()
out = {"available": rect(app.primaryScreen().availableGeometry())}
for name, win in (("note", note), ("interference", inter)):
    panels = []
    for panel in win.panels:
        view = panel.graphics
        panels.append({
            "name": type(panel).__name__,
            "view_width": view.width(),
            "layout_width": view.ci.geometry().width(),
            "titles": [
                (p.titleLabel.text, p.titleLabel.opts.get("size")) for p in panel.plots if p.titleLabel.text
            ],
        })
    docks = [d for d in win.findChildren(QtWidgets.QDockWidget) if d.isVisible()]
    out[name] = {
        "frame": rect(win.frameGeometry()),
        "geometry": rect(win.geometry()),
        "status_bar": in_window(win, win.statusBar()),
        "docks": [in_window(win, d) for d in docks],
        "panels": panels,
    }
print("RESULT " + json.dumps(out))
note.close()
inter.close()
"""


def open_on_screen(tmp_path, width: int, height: int, settings: str | None = None) -> dict:
    config = tmp_path / "screen.json"
    screen = {"name": "screen", "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96}
    config.write_text(json.dumps({"screens": [screen]}))
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
        "SPARSITY_GUI_SETTINGS": settings or str(tmp_path / "fresh.ini"),
    }
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def inside(inner, outer) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return x >= ox and y >= oy and x + w <= ox + ow and y + h <= oy + oh


def check_usable(result: dict) -> None:
    avail = result["available"]
    for name in ("note", "interference"):
        win = result[name]
        assert inside(win["frame"], avail), (name, win["frame"], avail)
        width, height = win["geometry"][2:]
        # the status bar and every dock (the parameters on the left, the argument) in the window
        assert inside(win["status_bar"], [0, 0, width, height]), (name, win["status_bar"])
        for dock in win["docks"]:
            assert inside(dock, [0, 0, width, height]), (name, dock)
        for panel in win["panels"]:
            # a layout wider than its view is cut off at the right: titles, last tick labels
            assert panel["layout_width"] <= panel["view_width"] + 0.5, (name, panel)


def test_first_launch_on_a_1366x768_laptop(tmp_path):
    """No saved settings, a 1366x742 work area: both windows inside it, status bars and docks
    inside the windows, every panel's plots inside their views; the long titles of the
    interference window made smaller to fit, the short ones kept at 11 pt."""
    result = open_on_screen(tmp_path, 1366, 742)
    check_usable(result)
    for name in ("note", "interference"):
        frame = result[name]["frame"]
        assert frame[2] >= 1300 and frame[3] >= 680, (name, frame)  # and it uses the room
    titles = {t: size for p in result["interference"]["panels"] for t, size in p["titles"]}
    assert titles["Share of features on their initial largest neuron"] in ("8pt", "9pt", "10pt")
    assert titles["W: features × neurons"] == "11pt"


def test_default_size_on_a_large_screen_and_a_saved_geometry_brought_back_on_screen(tmp_path):
    """On a 2560x1440 screen both windows open at their default 1500x900, every title at
    11 pt; closed there (their geometry saved) and opened again on a 1366x742 work area,
    they are inside it and usable."""
    settings = str(tmp_path / "saved.ini")
    big = tmp_path / "big"
    big.mkdir()
    large = open_on_screen(big, 2560, 1440, settings)
    check_usable(large)
    for name in ("note", "interference"):
        assert large[name]["geometry"][2:] == [1500, 900], large[name]
        titles = [size for p in large[name]["panels"] for _t, size in p["titles"]]
        assert set(titles) == {"11pt"}, titles
    check_usable(open_on_screen(tmp_path, 1366, 742, settings))
