"""Help opens the documentation (docs/guide.md, README.md, docs/theory.md, ...) in both
windows, rendered in the app's docs viewer, and a link between pages is followed with the
keyboard as a person would (Tab to the link, Enter; Back returns). From an installed wheel
the same pages come from the package's own copy: tests/packaging/test_wheel.py checks
that in a fresh virtual environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.ui.help import DOCS, docs_root

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.qt_log_ignore("does not support raise")  # (the offscreen platform)


def first_heading(rel: str) -> str:
    line = next(x for x in (ROOT / rel).read_text(encoding="utf-8").splitlines() if x.startswith("# "))
    return line.removeprefix("# ").strip()


def help_action(win, key: str) -> QtGui.QAction:
    menu = win.findChild(QtWidgets.QMenu, "menu_help")
    acts = {a.objectName(): a for a in menu.actions()}
    assert f"act_doc_{key}" in acts, sorted(acts)
    return acts[f"act_doc_{key}"]


def test_the_checkout_has_the_docs_help_opens():
    assert docs_root() == ROOT  # an editable install reads the checkout's own files


@pytest.mark.parametrize("model", ["note", "interference"])
def test_help_opens_each_page_in_both_windows(qtbot, make_window, make_iwindow, model):
    win = make_window(SimParams(m=200, lam=2e-2), playing=False) if model == "note" else make_iwindow()
    for key, rel, _text in DOCS:
        help_action(win, key).trigger()
        viewer = win.docs_viewer
        assert viewer is not None and viewer.isVisible()
        assert Path(viewer.browser.source().toLocalFile()) == ROOT / rel
        text = viewer.browser.toPlainText()
        assert text.startswith(first_heading(rel)), text[:80]  # rendered: no "# " left
        assert len(text) > 2000
        assert viewer.windowTitle() == f"sparsity-gui — {Path(rel).name}"
    viewer.close()


def test_a_link_from_the_guide_to_the_theory_is_followed_with_the_keyboard(qtbot, make_window):
    win = make_window(SimParams(m=200, lam=2e-2), playing=False)
    help_action(win, "guide").trigger()
    browser = win.docs_viewer.browser
    browser.setFocus()
    for _ in range(60):  # Tab moves through the page's links
        qtbot.keyClick(browser, QtCore.Qt.Key.Key_Tab)
        if browser.textCursor().charFormat().anchorHref() == "theory.md":
            break
    else:
        pytest.fail("no link to theory.md reached with Tab")
    qtbot.keyClick(browser, QtCore.Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: browser.source().toLocalFile().endswith("docs/theory.md"), timeout=5000)
    assert browser.toPlainText().startswith(first_heading("docs/theory.md"))
    assert browser.isBackwardAvailable()
    browser.backward()
    assert Path(browser.source().toLocalFile()) == ROOT / "docs" / "guide.md"
    # the guide's screenshots are shown, scaled down to the viewer's width
    widths = image_widths(browser.document())
    assert len(widths) >= 3 and max(widths) <= browser.viewport().width(), widths
    win.docs_viewer.close()


def image_widths(doc: QtGui.QTextDocument) -> list[float]:
    widths = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                image = doc.resource(
                    QtGui.QTextDocument.ResourceType.ImageResource, fmt.toImageFormat().name()
                )
                assert isinstance(image, QtGui.QImage | QtGui.QPixmap) and not image.isNull()  # found
                widths.append(fmt.toImageFormat().width())
            it += 1
        block = block.next()
    return widths
