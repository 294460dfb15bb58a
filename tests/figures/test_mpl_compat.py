"""matplotlib's private parts the figures replace (figures/mpl_compat.py): every one is
there in the installed matplotlib (an upgrade that removes one fails here instead of
silently making the figures slower), and none outlives the tool's own drawing: after
`plot`, an export and a movie frame, matplotlib's own functions are back in place and a
user's figure is drawn by plain matplotlib."""

from __future__ import annotations

import io
import threading

import numpy as np

from sparsity_gui.figures import frames, save
from sparsity_gui.figures.mpl_compat import OFF_SWITCH, PATCHES


def originals() -> dict[str, object]:
    return {p.name: p._owner().__dict__[p.attr] for p in PATCHES}


def test_every_touch_is_there_in_this_matplotlib():
    import matplotlib

    names = {p.name for p in PATCHES}
    assert names == {
        "matplotlib.mathtext.MathTextParser._parse_cached",
        "matplotlib.axis.Axis._update_ticks",
        "matplotlib.axis.Axis._get_ticklabel_bboxes",
        "matplotlib.text.Text._get_layout",
    }
    missing = [p.name for p in PATCHES if not p.available()]
    assert not missing, f"matplotlib {matplotlib.__version__} lacks {missing}: see figures/mpl_compat.py"


def test_no_touch_outlives_the_tools_drawing():
    from matplotlib.figure import Figure

    from sparsity_gui import api
    from sparsity_gui.figures.note.figures import note_figure_files

    before = originals()
    assert not any(p.installed() for p in PATCHES)
    run = api.simulate(m=60, lam=1e-2, samples=30)
    fig = run.plot("l1_decay")
    fig.savefig(io.BytesIO(), format="png", dpi=40)
    seen_inside = []

    def watch():  # while a file is drawn, the touches are in force
        seen_inside.append(save.shared_mathtext.installed())

    with save.shared_mathtext.active():
        watch()
    files = note_figure_files(_data(run), "paper", dpi=40, formats=("png",), names=["threshold_crossing"])
    assert files["threshold_crossing.png"].startswith(b"\x89PNG")
    assert seen_inside == [True]
    assert originals() == before and not any(p.installed() for p in PATCHES)
    # a user's own figure after ours: matplotlib's functions, unwrapped
    user = Figure(figsize=(2, 1))
    user.text(0.1, 0.5, r"$\lambda$")
    user.savefig(io.BytesIO(), format="png", dpi=40)
    assert originals() == before


def _data(run):
    from sparsity_gui.figures.note.figures import fit_constants, panel_data, run_snapshot

    return panel_data(run_snapshot(run.run), fit=fit_constants(run.run))


def test_overlapping_drawings_in_threads_put_the_originals_back_once(monkeypatch):
    before = originals()
    entered, release = threading.Barrier(3), threading.Event()

    def draw():
        with save.shared_mathtext.active(), frames._remembered_ticks.active():
            entered.wait(timeout=30)
            release.wait(timeout=30)

    workers = [threading.Thread(target=draw) for _ in range(2)]
    for w in workers:
        w.start()
    entered.wait(timeout=30)
    assert save.shared_mathtext.installed() and frames._remembered_ticks.installed()
    release.set()
    for w in workers:
        w.join(timeout=30)
    assert originals() == before

    monkeypatch.setenv(OFF_SWITCH, "1")
    with save.shared_mathtext.active():
        assert not save.shared_mathtext.installed()
    assert originals() == before


def test_the_touches_change_no_pixel(monkeypatch):
    """The same figure's PNG with the touches on and with the off switch."""
    pngs = []
    for plain in (False, True):
        if plain:
            monkeypatch.setenv(OFF_SWITCH, "1")
        fig = save.figure_of(_panel, {"x": np.linspace(0, 1, 20)}, {"font.size": 8.0}, (2.0, 1.5))
        pngs.append(save.figure_bytes(fig, "png", {"font.size": 8.0}, dpi=60))
    assert pngs[0] == pngs[1]


def _panel(fig, data, ax=None):
    ax = ax or fig.add_subplot()
    ax.plot(data["x"], data["x"] ** 2, label=r"$\theta = \lambda / (1 - \|W\|^2)$")
    ax.set_xlabel(r"$\lambda t$")
    ax.legend()


def test_every_private_name_read_directly_is_there():
    from sparsity_gui.figures.mpl_compat import missing_private_names

    assert missing_private_names() == [], "see figures/mpl_compat.py's READ_DIRECTLY"


def test_the_figures_touch_no_private_name_outside_the_register():
    """Every `obj._name` the figures package reads on something not its own (not self or
    cls) is a patched attribute (PATCHES) or a registered one (READ_DIRECTLY): a new private
    touch must be registered, and so checked by the test above."""
    import re
    from pathlib import Path

    from sparsity_gui.figures import mpl_compat

    registered = {p.attr for p in PATCHES} | {name for _owner, name, _opt in mpl_compat.READ_DIRECTLY}
    ours = {"_kept_shapes"}  # set by frames.keep_shapes on a renderer: the tool's own mark
    package = Path(mpl_compat.__file__).parent
    touched = {}
    for path in package.rglob("*.py"):
        for chain, name in re.findall(r"(?<![\w.])([\w.]+)\.(_[a-z]\w*)\b", path.read_text(encoding="utf-8")):
            if chain.split(".")[0] not in ("self", "cls"):
                touched.setdefault(name, path.name)
    unregistered = {n: f for n, f in touched.items() if n not in registered | ours}
    assert not unregistered, unregistered
    assert {"_suptitle", "_prepare_font", "_drop_tables_default"} <= set(touched)  # the scan sees them
