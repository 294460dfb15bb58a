import threading

import pytest


@pytest.fixture(autouse=True)
def _private_settings(tmp_path, monkeypatch):
    """Each test gets its own settings file (window geometry, presets)."""
    monkeypatch.setenv("SPARSITY_GUI_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("SPARSITY_GUI_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    before = {t.ident for t in threading.enumerate()}
    yield
    left = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not left, f"test left threads running: {[t.name for t in left]}"


@pytest.fixture
def make_window(qtbot):
    """Build MainWindows that are closed (thread joined, timer stopped) after the test."""
    import pyqtgraph as pg

    from sparsity_gui.core.params import SimParams
    from sparsity_gui.ui.mainwindow import MainWindow

    pg.setConfigOptions(background="w", foreground="k", antialias=False)
    windows = []

    def make(params=None, **kwargs):
        win = MainWindow(params or SimParams(m=200, lam=1e-2), **kwargs)
        qtbot.addWidget(win)
        win.show()
        windows.append(win)
        return win

    yield make
    for win in windows:
        win.close()
        assert not win.thread.is_alive(), "closing the window must join the simulation thread"
        assert not win.paint_timer.isActive()
