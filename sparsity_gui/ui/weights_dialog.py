"""The dialog that picks W(0) in a weights file: which array or tensor (a checkpoint holds
many), and for the note's model which row of a matrix. Both models' File menus use it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.weights_files import FORMAT_NAMES, ArrayInfo

WEIGHT_WORDS = ("weight", "kernel", "encoder", "embed", "proj")  # a name that says "weights"
NOT_WEIGHT_WORDS = ("bias", "norm", "scale", "running", "mask", "step", "decoder")


def _says_weight(name: str | None) -> bool:
    if name is None:
        return True  # a file's only array
    words = name.lower().replace(".", "_").replace("/", "_").split("_")
    last = words[-1] if words else ""
    return last in ("w", "w0", "weight", "weights") or any(w in name.lower() for w in WEIGHT_WORDS)


def likeliest(infos: list[ArrayInfo], usable: Callable[[ArrayInfo], str | None]) -> tuple[int, str] | None:
    """The index of the array most likely to be the weight matrix W(0) comes from, and why:
    a usable array whose name says weights (W, weight, kernel, encoder; not a bias, norm or
    decoder), then a matrix over a vector, then the most elements. None if none is usable."""

    def rank(info: ArrayInfo) -> tuple:
        name = (info.name or "").lower()
        avoid = any(w in name for w in NOT_WEIGHT_WORDS)
        return (_says_weight(info.name) and not avoid, not avoid, len(info.shape) == 2, info.size)

    candidates = [i for i, info in enumerate(infos) if not usable(info)]
    if not candidates:
        return None
    best = max(candidates, key=lambda i: (rank(infos[i]), -i))
    info = infos[best]
    says, clean, matrix, _size = rank(info)
    reasons = []
    if says:
        reasons.append("its name says weights")
    elif not clean:
        reasons.append("no usable array is named as weights")
    if matrix:
        reasons.append("a matrix")
    bigger = sum(1 for i in candidates if infos[i].size > info.size)
    if bigger == 0 and len(candidates) > 1:
        reasons.append("the largest usable array")
    what = info.name if info.name is not None else "the array"
    why = ", ".join(reasons or ["the only usable array"])
    return best, f"Preselected {what} ({_shape_text(info)}): {why}."


def _shape_text(info: ArrayInfo) -> str:
    return " × ".join(str(s) for s in info.shape) if info.shape else "scalar"


class ArrayChoiceDialog(QtWidgets.QDialog):
    """A table of the file's arrays (name, shape, dtype); those W(0) cannot come from are
    greyed out with the reason as their tooltip. With ``rows``, a spin box picks the row of
    a matrix. ``usable(info)`` returns None or why the array cannot be W(0); ``needs_row``
    tells a matrix whose row must be chosen; ``explain(info, row)`` says what W(0) will be."""

    def __init__(
        self,
        parent: QtWidgets.QWidget | None,
        path: str | Path,
        kind: str,
        infos: list[ArrayInfo],
        *,
        usable: Callable[[ArrayInfo], str | None],
        explain: Callable[[ArrayInfo, int | None], str],
        needs_row: Callable[[ArrayInfo], bool] | None = None,
        selected: str | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("array_choice_dialog")
        self.setWindowTitle("Choose W(0)")
        self.infos = infos
        self._usable = usable
        self._explain = explain
        self._needs_row = needs_row
        lay = QtWidgets.QVBoxLayout(self)
        noun = "arrays" if kind == "npz" else "tensors" if kind in ("safetensors", "torch") else "arrays"
        head = QtWidgets.QLabel(
            f"<b>{Path(path).name}</b> ({FORMAT_NAMES.get(kind, kind)}) holds {len(infos)} {noun}. "
            "Which one is W(0)?"
        )
        head.setWordWrap(True)
        lay.addWidget(head)
        self.table = QtWidgets.QTreeWidget()
        self.table.setObjectName("array_table")
        self.table.setHeaderLabels(["name", "shape", "dtype"])
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setAlternatingRowColors(True)
        first_usable = None
        guess = likeliest(infos, usable)
        items = []
        for i, info in enumerate(infos):
            item = QtWidgets.QTreeWidgetItem(
                [info.name if info.name is not None else "(the array)", _shape_text(info), info.dtype]
            )
            item.setData(0, QtCore.Qt.ItemDataRole.UserRole, i)
            why = usable(info)
            if why:
                item.setFlags(item.flags() & ~QtCore.Qt.ItemFlag.ItemIsEnabled)
                for col in range(3):
                    item.setToolTip(col, why)
            elif info.name == selected:
                first_usable = item  # the choice made last time
            self.table.addTopLevelItem(item)
            items.append(item)
        self.preselected_reason = ""
        if first_usable is None and guess is not None:
            first_usable = items[guess[0]]
            self.preselected_reason = guess[1]
        header = self.table.header()
        header.setStretchLastSection(False)
        self.table.resizeColumnToContents(0)
        for col in (1, 2):  # shapes and dtypes are never cut
            header.setSectionResizeMode(col, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumWidth(min(900, max(420, self.table.header().length() + 40)))
        lay.addWidget(self.table, 1)
        row_box = QtWidgets.QHBoxLayout()
        self.row_label = QtWidgets.QLabel("Row:")
        self.row = QtWidgets.QSpinBox()
        self.row.setObjectName("row")
        self.row.setToolTip("W(0) is this row of the matrix (0-based): one unit's weights")
        row_box.addWidget(self.row_label)
        row_box.addWidget(self.row)
        row_box.addStretch(1)
        lay.addLayout(row_box)
        if needs_row is None:
            self.row_label.hide()
            self.row.hide()
        self.reason = QtWidgets.QLabel(self.preselected_reason)
        self.reason.setObjectName("preselected_reason")
        self.reason.setWordWrap(True)
        self.reason.setVisible(bool(self.preselected_reason))
        lay.addWidget(self.reason)
        self.summary = QtWidgets.QLabel("")
        self.summary.setObjectName("summary")
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Ok | QtWidgets.QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.table.currentItemChanged.connect(lambda *_: self._update())
        self.row.valueChanged.connect(lambda *_: self._update())
        self.table.itemDoubleClicked.connect(lambda *_: self.accept() if self._ok() else None)
        if first_usable is not None:
            self.table.setCurrentItem(first_usable)
        self._update()

    # --- the choice ---------------------------------------------------------------------
    def current_info(self) -> ArrayInfo | None:
        item = self.table.currentItem()
        if item is None or not item.flags() & QtCore.Qt.ItemFlag.ItemIsEnabled:
            return None
        return self.infos[item.data(0, QtCore.Qt.ItemDataRole.UserRole)]

    def select(self, name: str | None) -> None:
        for i in range(self.table.topLevelItemCount()):
            item = self.table.topLevelItem(i)
            if self.infos[item.data(0, QtCore.Qt.ItemDataRole.UserRole)].name == name:
                self.table.setCurrentItem(item)
                return
        raise KeyError(name)

    def choice(self) -> tuple[str | None, int | None]:
        """(the array's name, the row or None)."""
        info = self.current_info()
        assert info is not None
        return info.name, self._row_of(info)

    def _row_of(self, info: ArrayInfo) -> int | None:
        return self.row.value() if self._needs_row is not None and self._needs_row(info) else None

    def _ok(self) -> bool:
        return self.current_info() is not None

    def _update(self) -> None:
        info = self.current_info()
        needs = info is not None and self._needs_row is not None and self._needs_row(info)
        self.row.setEnabled(needs)
        self.row_label.setEnabled(needs)
        if needs:
            self.row.setRange(0, info.shape[0] - 1)
            self.row.setSuffix(f"   (0 to {info.shape[0] - 1})")
        text = self._explain(info, self._row_of(info)) if info is not None else "Choose an array."
        self.summary.setText(text)
        self.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).setEnabled(info is not None)
