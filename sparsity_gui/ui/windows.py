"""The app's windows: at most one per model, and the Model menu's way between them.

Neither window imports the other: each gets this registry and asks it to open the other
model's window. The first window opened is the main one; closing it closes the others
(each joins its own threads).
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.ui.interference.window import InterferenceWindow
from sparsity_gui.ui.note.window import NoteWindow

WINDOW_TYPES: dict[str, type] = {"note": NoteWindow, "interference": InterferenceWindow}


class ModelWindows:
    def __init__(self) -> None:
        self._windows: dict[str, QtWidgets.QMainWindow] = {}
        self.main: QtWidgets.QMainWindow | None = None

    def window(self, model: str) -> QtWidgets.QMainWindow | None:
        """The model's open window, or None."""
        win = self._windows.get(model)
        return None if win is None or win.closed else win

    def open(self, model: str, *args, **kwargs) -> QtWidgets.QMainWindow:
        """Show and raise the model's window, building it first (with ``args``) if it is
        not open."""
        win = self.window(model)
        if win is None:
            stale = self._windows.pop(model, None)
            if stale is not None and stale is not self.main:
                stale.deleteLater()
            win = WINDOW_TYPES[model](*args, windows=self, **kwargs)
            self._windows[model] = win
            if self.main is None:
                self.main = win
        win.show()
        if QtGui.QGuiApplication.platformName() not in ("offscreen", "minimal"):
            win.raise_()  # (these platforms warn that they cannot)
        win.activateWindow()
        return win

    def closing(self, win: QtWidgets.QMainWindow) -> None:
        """A window is shutting down: the main window takes the others with it."""
        if win is not self.main:
            return
        for model, other in list(self._windows.items()):
            if other is not win:
                del self._windows[model]
                other.close()
                other.deleteLater()


def delete_widgets(app, *widgets) -> None:
    """Close and delete widgets now, not at interpreter exit (a pyqtgraph widget still
    alive then can crash the process)."""
    for widget in widgets:
        widget.close()
        widget.deleteLater()
    app.processEvents()
    app.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete.value)
    app.processEvents()
