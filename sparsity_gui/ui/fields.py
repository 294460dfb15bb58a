"""Input widgets both parameter docks use: `Field` (a typed line edit that shows a refused
value and its reason at the field), `LogSlider`, and the text parsers they share."""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.checks import parse_whole
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.settings import END, LIVE, NEW_RUN, Setting

SLIDER_STEPS = 600
# what a change of a setting does, as a tooltip ends (its row's ``change``)
CHANGE_TEXTS = {
    LIVE: "Applies live.",
    END: "Applies live: it moves the run's end.",
    NEW_RUN: "Starts a new run.",
}


def setting_tip(setting: Setting, what: str, more: str = "") -> str:
    """A dock field's tooltip from its settings row: 'l1: the L1 coefficient (from 0 to 4;
    default 1.0e-3). Applies live.', so its bounds and default are those the field refuses by."""
    return " ".join(
        part for part in (f"{what} ({setting.accepts()}).", more, CHANGE_TEXTS[setting.change]) if part
    )


class LogSlider(QtWidgets.QSlider):
    """A horizontal slider over [lo, hi] on a logarithmic scale."""

    valueChangedLog = QtCore.Signal(float)

    def __init__(self, lo: float, hi: float, parent=None):
        super().__init__(QtCore.Qt.Orientation.Horizontal, parent)
        self.lo, self.hi = lo, hi
        self.setRange(0, SLIDER_STEPS)
        self.valueChanged.connect(self._emit)

    def to_value(self, pos: int) -> float:
        return 10 ** (math.log10(self.lo) + pos / SLIDER_STEPS * (math.log10(self.hi) - math.log10(self.lo)))

    def set_log_value(self, value: float) -> None:
        value = min(max(value, self.lo), self.hi)
        pos = round(
            (math.log10(value) - math.log10(self.lo))
            / (math.log10(self.hi) - math.log10(self.lo))
            * SLIDER_STEPS
        )
        self.blockSignals(True)
        self.setValue(pos)
        self.blockSignals(False)

    @QtCore.Slot(int)
    def _emit(self, pos: int) -> None:
        self.valueChangedLog.emit(float(f"{self.to_value(pos):.3g}"))


def error_label(name: str) -> QtWidgets.QLabel:
    """The red line under a field (or under a row of fields) that gives a refusal's reason."""
    label = QtWidgets.QLabel()
    label.setObjectName(f"error_{name}")
    label.setStyleSheet("color: #c0392b; font-size: 8pt;")
    label.setWordWrap(True)
    label.hide()
    return label


class Field(QtWidgets.QWidget):
    """A typed field whose text is checked on Enter / focus-out; a refused value keeps the
    last good one in force and shows the reason under the field in red (or, given
    ``error``, on that line: one under a row of narrow fields, which they share)."""

    accepted = QtCore.Signal(object)

    def __init__(
        self,
        name: str,
        parse: Callable[[str], object],
        tooltip: str,
        parent=None,
        error: QtWidgets.QLabel | None = None,
    ):
        super().__init__(parent)
        self.name = name
        self._parse = parse
        self.edit = QtWidgets.QLineEdit()
        self.edit.setObjectName(f"field_{name}")
        self.help = tooltip
        self.edit.setToolTip(tooltip)
        self.error = error_label(name) if error is None else error
        self._shared = error is not None
        self._message = ""  # the reason this field shows (a shared line may show another's)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(1)
        lay.addWidget(self.edit)
        if error is None:
            lay.addWidget(self.error)
        self.edit.returnPressed.connect(self._commit_on_enter)
        self.edit.editingFinished.connect(self.commit)
        self._good_text = ""
        self._previous_text = ""

    def set_text(self, text: str) -> None:
        self.edit.setText(text)
        self._good_text = text
        self.clear_error()

    def text(self) -> str:
        return self.edit.text()

    def show_error(self, message: str) -> None:
        if self._shared:  # a row's line: which field, as the command's error names the option
            message = f"{self.name}: {message}"
        self._message = message
        self.error.setText(message)
        self.error.show()
        self.edit.setStyleSheet("border: 1px solid #c0392b; background: #fdecea;")
        self.edit.setToolTip(message)

    def clear_error(self) -> None:
        if self.error.text() == self._message:  # not another field's reason on a shared line
            self.error.hide()
            self.error.setText("")
        self._message = ""
        self.edit.setStyleSheet("")
        self.edit.setToolTip(self.help)

    @QtCore.Slot()
    def _commit_on_enter(self) -> None:
        """Enter: commit, and if the value was taken give the keyboard back to the window,
        so that its shortcuts (Space, Right, Ctrl+R, Ctrl+E, Ctrl+S) work at once instead of
        editing the text. A refused value keeps the focus, to be corrected."""
        if self.commit() and self.error.isHidden():
            self.edit.clearFocus()

    @QtCore.Slot()
    def commit(self) -> bool:
        text = self.edit.text().strip()
        try:
            value = self._parse(text)
        except InputError as exc:
            self.show_error(exc.message)
            return False
        except (ValueError, OverflowError):
            self.show_error(f"not a valid number: {text!r}")
            return False
        self.clear_error()
        if text != self._good_text:
            self._previous_text, self._good_text = self._good_text, text
            self.accepted.emit(value)
        return True

    def refuse(self, message: str) -> None:
        """The window refused the value this field just accepted (a rule over several
        fields, such as the work of a run): show why, and take the value back, so that
        committing the same text again is checked again (Enter commits twice: on
        returnPressed and on editingFinished)."""
        self._good_text = self._previous_text
        self.show_error(message)


def parse_float(text: str) -> float:
    """A finite number from a field (ValueError for text that is no number)."""
    value = float(text)
    if not math.isfinite(value):
        raise InputError("", f"must be finite, got {text}")
    return value


parse_int = parse_whole  # a whole number from a field: '250', '1e6' or '2.0'


def parse_int_in(name: str, lo: int, hi: int) -> Callable[[str], int]:
    """A field parser for a whole number from lo to hi."""

    def parse(text: str) -> int:
        value = parse_int(text)
        if not lo <= value <= hi:
            raise InputError(name, f"must be a whole number from {lo} to {hi}, got {value}")
        return value

    return parse
