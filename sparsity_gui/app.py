"""The composition root: parse options, set up Qt, build the window, run."""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import sys
import traceback

from sparsity_gui.cli.common import fail
from sparsity_gui.cli.gui_options import check_automation, gui_params
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes
from sparsity_gui.core.text import printable


def _excepthook(exc_type, exc, tb) -> None:
    """An uncaught exception on the GUI thread: show it, keep the app alive."""
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    sys.stderr.write(text)
    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance()
    if app is not None:
        box = QtWidgets.QMessageBox(
            QtWidgets.QMessageBox.Icon.Critical, "Unexpected error", f"{exc_type.__name__}: {exc}"
        )
        box.setDetailedText(text)
        box.exec()


def gui_main(args: argparse.Namespace) -> int:
    try:
        check_automation(args)
        model, params, w0 = gui_params(args)
    except InputError as exc:
        fail(str(exc))

    faulthandler.enable()
    from PySide6 import QtCore, QtWidgets

    from sparsity_gui.plots import qtmessages
    from sparsity_gui.plots.qt_setup import prepare_qt
    from sparsity_gui.ui.windows import delete_widgets

    qtmessages.install()
    prepare_qt()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    app.setApplicationName("sparsity-gui")
    app.setOrganizationName("sparsity-gui")
    from sparsity_gui import assets

    app.setDesktopFileName(assets.APP_ID)  # matches the .desktop entry (Wayland docks)
    with contextlib.suppress(OSError):  # the icon is cosmetic; a missing one must not stop the app
        app.setWindowIcon(assets.app_icon())
    sys.excepthook = _excepthook

    from sparsity_gui.ui.windows import ModelWindows

    if model == "interference":
        win = ModelWindows().open("interference", params, playing=not args.paused, w0_file=w0)
    else:
        win = ModelWindows().open("note", params, w0, playing=not args.paused, speed=args.speed)

    failed: list[int] = []  # the status of a screenshot that could not be written
    if args.quit_after is not None:

        def finish() -> None:
            if args.screenshot:
                app.processEvents()
                from sparsity_gui.ui.figure_export import png_bytes

                try:  # whole or not at all, with the user's umask, as every file written
                    atomic_write_bytes(args.screenshot, png_bytes(win.grab()))
                except (OSError, RuntimeError) as exc:
                    sys.stderr.write(f"error: --screenshot: {printable(str(exc))}\n")
                    failed.append(2)
            win.close()
            app.quit()

        QtCore.QTimer.singleShot(args.quit_after, finish)

    rc = app.exec() or (failed[0] if failed else 0)
    win.shutdown()  # also closes the other model's window if this one opened it
    delete_widgets(app, win)
    return rc
