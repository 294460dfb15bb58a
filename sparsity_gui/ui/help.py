"""Help's documentation: the guide (docs/guide.md, the manual), README.md and the pages of
docs/ they link to, shown in a window of the app (Markdown rendered by Qt, links between the
pages followed in place).

An installed wheel or bundle carries them as sparsity_gui/docs/ (setup.py,
packaging/sparsity-gui.spec); a source checkout (an editable install) has them at its root.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

import sparsity_gui

# (key, path from the docs' root, menu text)
DOCS = (
    ("guide", "docs/guide.md", "Guide: using sparsity-gui"),
    ("commands", "docs/commands.md", "Commands: the headless commands and the Python API"),
    ("readme", "README.md", "Read me: what sparsity-gui is, and what it found"),
    ("theory", "docs/theory.md", "Theory: the formulas behind the panels"),
    ("results", "docs/results.md", "Results: what the grids measured"),
    ("files", "docs/files.md", "Files: every output column, and W(0) files"),
    ("interference", "docs/interference.md", "Interference: the second model in full"),
    ("figures", "docs/figures.md", "Figures: restyling them, and movies"),
    ("benchmarks", "docs/benchmarks.md", "Benchmarks: measured speed and memory"),
    ("architecture", "docs/architecture.md", "Architecture: how the code is laid out"),
)


def docs_root() -> Path | None:
    """The folder holding README.md and docs/: the package's own copy, else the checkout
    the package was imported from; None when neither has every page."""
    package = Path(sparsity_gui.__file__).resolve().parent
    for root in (package / "docs", package.parent):
        if all((root / rel).is_file() for _key, rel, _text in DOCS):
            return root
    return None


class DocsViewer(QtWidgets.QMainWindow):
    """One page at a time, with Back and Forward; links to the other pages open here,
    links to the web in the browser."""

    def __init__(self, root: Path, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent, QtCore.Qt.WindowType.Window)
        self.setObjectName("docs_viewer")
        self.root = root
        self.browser = QtWidgets.QTextBrowser()
        self.browser.setObjectName("docs_browser")
        self.browser.setOpenExternalLinks(True)
        self.browser.setSearchPaths([str(root)])
        self.browser.sourceChanged.connect(self._show_title)
        self.setCentralWidget(self.browser)
        bar = self.addToolBar("Navigation")
        bar.setMovable(False)
        back = bar.addAction("Back", self.browser.backward)
        back.setShortcut(QtGui.QKeySequence.StandardKey.Back)
        self.browser.backwardAvailable.connect(back.setEnabled)
        forward = bar.addAction("Forward", self.browser.forward)
        forward.setShortcut(QtGui.QKeySequence.StandardKey.Forward)
        self.browser.forwardAvailable.connect(forward.setEnabled)
        back.setEnabled(False)
        forward.setEnabled(False)
        # a viewer window closes as others do: Ctrl+W, and Esc as a dialog would
        close = QtGui.QAction("Close", self)
        close.setObjectName("docs_close")
        close.setShortcuts([QtGui.QKeySequence("Ctrl+W"), QtGui.QKeySequence(QtCore.Qt.Key.Key_Escape)])
        close.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        close.triggered.connect(self.close)
        self.addAction(close)
        for key, rel, text in DOCS:
            act = bar.addAction(text.split(":")[0], lambda r=rel: self.open_page(r))
            act.setObjectName(f"docs_go_{key}")
            act.setToolTip(text)
        avail = self.screen().availableGeometry()
        self.resize(min(900, avail.width() - 40), min(1000, avail.height() - 60))

    def open_page(self, rel: str) -> None:
        self.browser.setSource(
            QtCore.QUrl.fromLocalFile(str(self.root / rel)), QtGui.QTextDocument.ResourceType.MarkdownResource
        )

    def _show_title(self, url: QtCore.QUrl) -> None:
        self.setWindowTitle(f"sparsity-gui — {Path(url.toLocalFile()).name}")
        self.fit_images()

    def fit_images(self) -> None:
        """Scale the pages' screenshots down to the viewer's width (they are 1500 px wide)."""
        doc = self.browser.document()
        room = max(self.browser.viewport().width() - 30, 200)
        block = doc.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                fmt = fragment.charFormat()
                if fragment.isValid() and fmt.isImageFormat():
                    image_fmt = fmt.toImageFormat()
                    image = doc.resource(QtGui.QTextDocument.ResourceType.ImageResource, image_fmt.name())
                    size = image.size() if isinstance(image, QtGui.QImage | QtGui.QPixmap) else None
                    if size is not None and size.width() > 0:
                        width = min(size.width(), room)
                        image_fmt.setWidth(width)
                        image_fmt.setHeight(size.height() * width / size.width())
                        cursor = QtGui.QTextCursor(doc)
                        cursor.setPosition(fragment.position())
                        cursor.setPosition(
                            fragment.position() + fragment.length(), QtGui.QTextCursor.MoveMode.KeepAnchor
                        )
                        cursor.setCharFormat(image_fmt)
                it += 1
            block = block.next()
