import pytest
from PySide6 import QtWidgets

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


# --- one window for a module's tests ------------------------------------------------------
# Building a window and closing it costs one to three seconds of CPU; tests that only drive
# the parameters, the transport and the files share one window per module instead, each
# starting from a new run of its own parameters (see `note_window`, `interference_window`).
# Tests that resize the window, move its docks, rewire its timers, pin runs or close it keep
# `make_window` / `make_iwindow`.
SHARED_TIMEOUT = 30_000


@pytest.fixture(scope="module")
def _module_window_settings(tmp_path_factory):
    """A module's shared window has its own settings file and config folder (it is built
    before the test's own, `_private_settings`, are in force)."""
    patch = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("shared_window")
    patch.setenv("SPARSITY_GUI_SETTINGS", str(folder / "settings.ini"))
    patch.setenv("SPARSITY_GUI_CONFIG_DIR", str(folder / "config"))
    yield
    patch.undo()


def _module_window(build, check_closed):
    prepare_qt()
    win = build()
    win.show()
    yield win
    win.close()
    # (closing joins with a deadline; on a loaded machine the worker may be drawing a large
    # run's W(0) a while longer: its end is waited for here, the close's own join is
    # test_closing_during_a_fast_run_joins_the_thread's)
    win.thread.join(60)
    check_closed(win)
    win.deleteLater()


def _check_note_closed(win):
    assert not win.thread.is_alive(), "closing the window must join the simulation thread"
    assert not win.paint_timer.isActive()


def _check_interference_closed(win):
    assert not win.thread.is_alive(), "closing the window must join the worker thread"
    assert win.sweep.job is None or not win.sweep.job.worker.is_alive()
    assert not win.paint_timer.isActive() and not win.sweep.running


@pytest.fixture(scope="module")
def _module_note_window(qapp, _module_window_settings):
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.ui.windows import ModelWindows

    def build():
        return ModelWindows().open("note", SimParams(m=200, lam=1e-2), playing=False)

    yield from _module_window(build, _check_note_closed)


@pytest.fixture(scope="module")
def _module_interference_window(qapp, _module_window_settings):
    from sparsity_gui.ui.windows import ModelWindows

    yield from _module_window(
        lambda: ModelWindows().open("interference", playing=False), _check_interference_closed
    )


def _leave_idle(win):
    """After a test: the shared window paused, its boxes closed, its own tab shown."""
    if win.closed:
        return
    win.set_playing(False)
    for box in (win.error_box, getattr(win, "shortcuts_box", None)):
        if box is not None:
            box.close()
    win.tabs.setCurrentIndex(0)
    # the keyboard back to the window (a field typed in would take Space and the arrows)
    focused = QtWidgets.QApplication.focusWidget()
    if focused is not None and focused is not win:
        focused.clearFocus()
    win.activateWindow()
    win.setFocus()


def _first_frame(qtbot, win):
    """The new run's first snapshot painted on every panel (a running run reaches one
    panel a frame): a test's waits and looks then see its own run only."""
    qtbot.waitUntil(
        lambda: (
            win.snapshot is not None
            and win.snapshot.run_id == win.run_id
            and all(p.run_drawn == win.run_id for p in win.painted_panels())
        ),
        timeout=SHARED_TIMEOUT,
    )


@pytest.fixture
def note_window(qtbot, _module_note_window):
    """The module's NoteWindow, as `make_window` would build it: ``note_window(params,
    speed=..., playing=...)`` starts a new run of ``params`` (the controls showing them,
    no error box, the live tab) and returns the window once that run's first frame is
    painted."""
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.core.note.runner import default_speed

    win = _module_note_window
    assert not win.closed, "a test closed the shared window: give it make_window"

    def fresh(params=None, *, speed=None, playing=True):
        params = params or SimParams(m=200, lam=1e-2)
        _leave_idle(win)
        win.last_error = ""
        speed = default_speed(params.lam) if speed is None else speed
        win.on_speed_changed(speed)
        win.controls.show_params(params, speed)
        win.set_playing(playing)
        win.start_run(params, stop_at_one=params.t_end is None)
        _first_frame(qtbot, win)
        return win

    yield fresh
    _leave_idle(win)


@pytest.fixture
def interference_window(qtbot, _module_interference_window):
    """The module's InterferenceWindow: ``interference_window(params, playing=...)``
    starts a new run of ``params`` (as `make_iwindow` would open with them) and returns the
    window once that run's first frame is painted."""
    win = _module_interference_window
    assert not win.closed, "a test closed the shared window: give it make_iwindow"

    def fresh(params, *, playing=True):
        _leave_idle(win)
        win.last_error = ""
        win.weights_panel.order.setChecked(False)  # the heatmap's columns as W has them
        win.set_playing(playing)
        win.start_run(params)
        _first_frame(qtbot, win)
        return win

    yield fresh
    _leave_idle(win)


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
