"""The app's settings file and the dialogs every window uses: file dialogs that open in
the folder used last (kept across launches), a folder chooser that takes a new folder's
name, and non-blocking warnings."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6 import QtCore, QtWidgets


def settings() -> QtCore.QSettings:
    """Window geometry and layout; SPARSITY_GUI_SETTINGS points tests at a private file."""
    path = os.environ.get("SPARSITY_GUI_SETTINGS")
    if path:
        return QtCore.QSettings(path, QtCore.QSettings.Format.IniFormat)
    return QtCore.QSettings(
        QtCore.QSettings.Format.IniFormat, QtCore.QSettings.Scope.UserScope, "sparsity-gui", "sparsity-gui"
    )


LAST_FOLDER_KEY = "dialogs/last_folder"


def last_folder() -> str:
    """The folder of the last file or folder chosen in any of the app's dialogs (kept in
    the settings across launches), or "" (Qt's default) when there is none or it is gone."""
    folder = settings().value(LAST_FOLDER_KEY)
    return str(folder) if folder and Path(str(folder)).is_dir() else ""


def remember_folder(path: str) -> None:
    """Remember the folder of ``path`` (a file, or a folder) for the next dialog."""
    if not path:
        return
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    s = settings()
    s.setValue(LAST_FOLDER_KEY, str(folder.absolute()))
    s.sync()


def in_last_folder(name: str) -> str:
    """A file name offered by a save dialog, in the last folder used."""
    folder = last_folder()
    return str(Path(folder) / name) if folder else name


def open_file_name(parent: QtWidgets.QWidget, title: str, filters: str) -> str:
    """The file the user picks to open, or "" when cancelled: the dialog opens in the last
    folder used, and the file's folder becomes the next one's."""
    path, _ = QtWidgets.QFileDialog.getOpenFileName(parent, title, last_folder(), filters)
    remember_folder(path)
    return path


def save_file_name(
    parent: QtWidgets.QWidget, title: str, name: str, filters: str, selected: str = ""
) -> tuple[str, str]:
    """(the file the user names to write, the filter chosen), or ("", ...) when cancelled:
    the dialog offers ``name`` in the last folder used, and remembers the folder chosen."""
    path, chosen = QtWidgets.QFileDialog.getSaveFileName(
        parent, title, in_last_folder(name), filters, selected
    )
    remember_folder(path)
    return path, chosen


def show_warning(
    parent: QtWidgets.QWidget, previous: QtWidgets.QMessageBox | None, title: str, message: str
) -> QtWidgets.QMessageBox:
    """A non-blocking warning box (whatever runs goes on behind it) that replaces
    ``previous``; the message's first paragraph is the text, the rest goes under Details."""
    first, _, details = message.partition("\n\n")
    if previous is not None:
        previous.close()
        previous.deleteLater()
    box = QtWidgets.QMessageBox(parent)
    box.setIcon(QtWidgets.QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    box.setText(first)
    if details:
        box.setDetailedText(details)
    box.setModal(False)
    box.show()
    return box


class FolderDialog(QtWidgets.QFileDialog):
    """A folder chooser that also takes a folder still to be made, its name typed into the
    dialog (Qt's own chooser refuses one: "Directory not found"); the export makes it. Qt's
    dialog, not the platform's, so that it behaves the same everywhere."""

    def __init__(self, parent: QtWidgets.QWidget | None, title: str):
        super().__init__(parent, title)
        self.setObjectName("folder_dialog")
        self.setOption(QtWidgets.QFileDialog.Option.DontUseNativeDialog, True)
        self.setFileMode(QtWidgets.QFileDialog.FileMode.Directory)
        self.setOption(QtWidgets.QFileDialog.Option.ShowDirsOnly, True)
        self.chosen = ""

    def accept(self) -> None:
        files = self.selectedFiles()
        if files and not Path(files[0]).exists():
            self.chosen = files[0]  # a new folder: taken as it is
            QtWidgets.QDialog.accept(self)
            return
        super().accept()  # an existing folder (a file is refused)
        if self.result() == QtWidgets.QDialog.DialogCode.Accepted:
            self.chosen = self.selectedFiles()[0]


def choose_folder(parent: QtWidgets.QWidget, title: str, dialog: FolderDialog | None = None) -> str:
    """The folder the user picks or names (maybe new), or "" when cancelled; the dialog
    (a FolderDialog, or ``dialog``: one with more to choose) opens in the last folder used."""
    dialog = dialog or FolderDialog(parent, title)
    if last_folder():
        dialog.setDirectory(last_folder())
    try:
        chosen = dialog.chosen if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted else ""
    finally:
        dialog.deleteLater()
    if chosen:
        remember_folder(str(Path(chosen).parent) if not Path(chosen).exists() else chosen)
    return chosen


# said after a write that failed
UNCHANGED = "Nothing was written; an earlier file of that name is unchanged."


class RecentMenu(QtWidgets.QMenu):
    """*Open recent*: the files last opened (at most ``most``, newest first), kept in the
    settings under ``key`` (each window its own list); choosing one calls
    ``open_file(path)``, *Clear list* empties it. Filled each time it opens."""

    def __init__(self, parent: QtWidgets.QWidget, key: str, open_file, most: int = 8):
        super().__init__("Open recent", parent)
        self.setObjectName("menu_recent")
        self.key, self.most, self.open_file = key, most, open_file
        self.aboutToShow.connect(self._fill)

    def paths(self) -> list[str]:
        value = settings().value(self.key)
        if value is None:
            return []
        if isinstance(value, str):  # QSettings gives a list of one as its item
            value = [value]
        return [str(v) for v in value if v]

    def add(self, path: str | Path) -> None:
        path = str(Path(path).resolve())
        paths = [path, *[p for p in self.paths() if p != path]][: self.most]
        s = settings()
        s.setValue(self.key, paths)
        s.sync()

    def clear_list(self) -> None:
        s = settings()
        s.remove(self.key)
        s.sync()

    def _fill(self) -> None:
        self.clear()
        paths = self.paths()
        for path in paths:
            self.addAction(path).triggered.connect(lambda _c=False, p=path: self.open_file(p))
        if not paths:
            self.addAction("(none yet)").setEnabled(False)
        self.addSeparator()
        clear = self.addAction("Clear list")
        clear.setEnabled(bool(paths))
        clear.triggered.connect(self.clear_list)
