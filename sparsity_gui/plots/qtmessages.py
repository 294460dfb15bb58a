"""One Qt message handler for the app and the headless figures: Qt's warnings go to
stderr, except notices known to be harmless."""

from __future__ import annotations

import sys

BENIGN_QT_MESSAGES = (
    # the offscreen/minimal platforms cannot resize a native window to a size hint
    "This plugin does not support propagateSizeHints",
)


def _qt_message(mode, context, message: str) -> None:
    if not any(m in message for m in BENIGN_QT_MESSAGES):
        sys.stderr.write(f"{message}\n")


def install() -> None:
    from PySide6 import QtCore

    QtCore.qInstallMessageHandler(_qt_message)
