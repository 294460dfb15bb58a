import pytest

from sparsity_gui.plots.qt_setup import prepare_qt

# before any test paints: Qt reads its switches at the first fill
prepare_qt()


@pytest.fixture(autouse=True)
def _private_settings(tmp_path, monkeypatch):
    """Each test gets its own settings file (window geometry, presets)."""
    monkeypatch.setenv("SPARSITY_GUI_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("SPARSITY_GUI_CONFIG_DIR", str(tmp_path / "config"))


def _windows(qtbot, build, check_closed):
    """A factory of shown windows that are closed after the test, each then checked."""
    prepare_qt()
    windows = []

    def make(*args, **kwargs):
        win = build(*args, **kwargs)
        qtbot.addWidget(win)
        win.show()
        windows.append(win)
        return win

    yield make
    for win in windows:
        win.close()
        check_closed(win)


@pytest.fixture
def make_window(qtbot):
    """NoteWindows, closed after the test (thread joined, timer stopped)."""
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.ui.windows import ModelWindows

    def check(win):
        assert not win.thread.is_alive(), "closing the window must join the simulation thread"
        assert not win.paint_timer.isActive()

    yield from _windows(
        qtbot,
        lambda params=None, **kw: ModelWindows().open("note", params or SimParams(m=200, lam=1e-2), **kw),
        check,
    )


@pytest.fixture
def make_iwindow(qtbot):
    """InterferenceWindows, closed after the test (worker and sweep threads joined, timers
    stopped)."""
    from sparsity_gui.ui.windows import ModelWindows

    def check(win):
        assert not win.thread.is_alive(), "closing the window must join the worker thread"
        assert win.sweep.job is None or not win.sweep.job.worker.is_alive()
        assert not win.paint_timer.isActive() and not win.sweep.running

    yield from _windows(qtbot, lambda *a, **kw: ModelWindows().open("interference", *a, **kw), check)


@pytest.fixture
def show_tab(qtbot):
    """Shows a grid tab (ui/grid_tab.py: the scaling tab, the sweep tab) as its window
    would; after the test shuts it down and checks that its thread and timer have ended."""
    prepare_qt()
    tabs = []

    def show(widget, width: int = 1100, height: int = 650):
        qtbot.addWidget(widget)
        widget.resize(width, height)
        widget.show()
        tabs.append(widget)
        return widget

    yield show
    for widget in tabs:
        widget.shutdown()
        assert widget.job is None or not widget.job.worker.is_alive()
        assert not widget.running
        if widget.error_box is not None:
            widget.error_box.close()
