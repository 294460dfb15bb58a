"""The interference window's exports: every panel (the sweep's too) or the whole window as
PNG or SVG, and the shown run's data: the history of the counts (CSV), W (.npy) and the
active features per neuron (CSV), all from the snapshot on screen."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PySide6 import QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes
from sparsity_gui.core.interference.files import history_csv, neuron_counts_csv
from sparsity_gui.ui.window import UNCHANGED, PanelExports

DATA_KINDS = {
    # kind: (file name, menu text, dialog filter)
    "history": ("interference_history.csv", "History of the counts (CSV)…", "CSV (*.csv)"),
    "weights": ("W.npy", "Weights W, n × m (.npy)…", "NumPy array (*.npy)"),
    "counts": ("neuron_counts.csv", "Active features per neuron (CSV)…", "CSV (*.csv)"),
}


class InterferenceExports(PanelExports):
    WINDOW_FIGURE = "interference_window"

    def build_menus(self, file_menu: QtWidgets.QMenu) -> None:
        file_menu.addMenu(self.figure_menu())
        menu = file_menu.addMenu("Export data")
        menu.setObjectName("menu_export_data")
        for kind, (_name, text, _filter) in DATA_KINDS.items():
            act = menu.addAction(text)
            act.triggered.connect(lambda _c=False, k=kind: self.export_data_dialog(k))

    def data_bytes(self, kind: str) -> bytes:
        """The shown snapshot's data: history (CSV), weights (W as .npy), counts (CSV)."""
        snap = self.win.snapshot
        if snap is None:
            raise InputError("", "the run is still starting; try again in a moment")
        if kind == "history":
            return history_csv(snap.history).encode("utf-8")
        if kind == "weights":
            buf = io.BytesIO()
            np.save(buf, snap.W, allow_pickle=False)
            return buf.getvalue()
        if kind == "counts":
            return neuron_counts_csv(snap.counts).encode("utf-8")
        raise InputError("", f"unknown kind of data {kind!r}")

    def export_data(self, kind: str, path) -> bool:
        path = Path(path)
        try:
            atomic_write_bytes(path, self.data_bytes(kind))
        except InputError as exc:
            return self.win.fail("Cannot export data", exc.message)
        except OSError as exc:
            return self.win.fail("Cannot export data", f"{path}: {exc.strerror or exc}. {UNCHANGED}")
        return self.win.done(f"Wrote {path}")

    def export_data_dialog(self, kind: str) -> None:
        name, _text, flt = DATA_KINDS[kind]
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self.win, "Export data", name, f"{flt};;All files (*)"
        )
        if path:
            self.export_data(kind, path)
