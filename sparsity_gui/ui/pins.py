"""Pinned runs in a window (XPPAUT's "freeze"): *Pin run* (toolbar, the run menu, Ctrl+P)
keeps the run on screen, faded, on every panel that draws its history, while the
parameters change and new runs start. The *Pinned runs* menu removes one, clears them all,
or writes their data (a CSV per pinned run and pins.json naming them).

`PinControl` holds the window's core.pins.PinBoard: each pinned run is a read-only copy of
the snapshot's history (never a reference into the worker). Both models' windows use it
with their own columns, parameters and names (see NoteWindow and InterferenceWindow).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_text, json_text
from sparsity_gui.core.pins import PinBoard, PinnedRun
from sparsity_gui.ui.dialogs import UNCHANGED, last_folder, remember_folder


class PinControl(QtCore.QObject):
    def __init__(
        self,
        window,
        columns: tuple[str, ...],
        params_of: Callable[[object], dict],
        label_of: Callable[[PinnedRun, object], str],
        csv_of: Callable[[PinnedRun], str],
        instant_of: Callable[[object], str],
    ):
        """``params_of(params)``: the parameters a pinned run keeps; ``label_of(pin, live
        params)``: its legend text; ``csv_of(pin)``: its rows as the model's CSV;
        ``instant_of(snapshot)``: where the run was when pinned ('t = 12.5')."""
        super().__init__(window)
        self.win = window
        self.columns = columns
        self.params_of = params_of
        self.label_of = label_of
        self.csv_of = csv_of
        self.instant_of = instant_of
        self.board = PinBoard()
        self._live = None  # the live parameters the labels were made against
        self.labels: dict[int, str] = {}
        self.act_pin = window.action(
            "act_pin",
            "Pin run",
            self.pin,
            "Ctrl+P",
            "Keep this run's curves on the panels, faded, to compare the next runs with (Ctrl+P)",
        )
        self.act_pin.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        self.menu = QtWidgets.QMenu("Pinned runs", window)
        self.menu.setObjectName("menu_pinned_runs")
        self.menu.aboutToShow.connect(self.fill_menu)
        self.fill_menu()

    # --- commands ---------------------------------------------------------------------------
    def pin(self) -> bool:
        """Pin the run on screen as it is now."""
        win = self.win
        snap = win.snapshot
        if snap is None or snap.run_id != win.run_id or snap.history.shape[0] == 0:
            return win.fail("Cannot pin the run", "the run is still starting; try again in a moment")
        try:
            # the snapshot is already a copy; the board copies again, read-only
            pin = self.board.add(
                self.params_of(snap.params), self.columns, snap.history[:, : len(self.columns)]
            )
        except InputError as exc:
            return win.fail("Cannot pin the run", exc.message)
        self.refresh()
        return win.done(
            f"Pinned the run as pin {pin.number} ({self.instant_of(snap)}): change a parameter and run "
            "again to compare"
        )

    def remove(self, number: int) -> bool:
        if self.board.remove(number) is None:
            return self.win.fail("Cannot remove the pinned run", f"there is no pin {number}")
        self.refresh()
        return self.win.done(f"Removed pin {number}")

    def clear(self) -> bool:
        count = len(self.board)
        self.board.clear()
        self.refresh()
        return self.win.done(f"Removed {count} pinned run(s)")

    def restore(self, pins) -> None:
        """The pinned runs of a session, in place of these."""
        self.board.replace(pins)
        self.refresh()

    @property
    def pins(self) -> list[PinnedRun]:
        return list(self.board)

    # --- names and drawing ------------------------------------------------------------------
    def follow(self, live_params) -> None:
        """Rename the pins when the live parameters changed (cheap when they did not)."""
        if live_params != self._live:
            self.refresh()

    def refresh(self) -> None:
        """Names against the live parameters, and every panel drawing exactly these pins."""
        self._live = self.win.params
        self.labels = {p.number: self.label_of(p, self._live) for p in self.board}
        pins = self.pins
        for panel in self.win.all_panels():
            show = getattr(panel, "show_pins", None)
            if show is not None:
                show(pins, self.labels)
        self.act_pin.setEnabled(not self.board.full)

    def fill_menu(self) -> None:
        """Remove 'pin 2: …' per pinned run, Clear all, Export."""
        menu = self.menu
        menu.clear()
        for pin in self.pins:
            act = menu.addAction(f"Remove '{self.labels.get(pin.number, f'pin {pin.number}')}'")
            act.triggered.connect(lambda _c=False, n=pin.number: self.remove(n))
        if not len(self.board):
            menu.addAction("(no pinned runs: Pin run, Ctrl+P)").setEnabled(False)
        menu.addSeparator()
        act = menu.addAction("Clear all")
        act.setObjectName("act_clear_pins")
        act.setEnabled(bool(len(self.board)))
        act.triggered.connect(lambda _c=False: self.clear())
        act = menu.addAction("Export pinned runs (CSV)…")
        act.setEnabled(bool(len(self.board)))
        act.triggered.connect(lambda _c=False: self.export_dialog())

    def add_to(self, menu: QtWidgets.QMenu, toolbar: QtWidgets.QToolBar) -> None:
        menu.addSeparator()
        menu.addAction(self.act_pin)
        menu.addMenu(self.menu)
        toolbar.addSeparator()
        toolbar.addAction(self.act_pin)

    # --- data -------------------------------------------------------------------------------
    def files(self) -> dict[str, str]:
        """pin_<n>.csv per pinned run (its rows as drawn) and pins.json (what each one is)."""
        if not len(self.board):
            return {}
        out = {f"pin_{p.number}.csv": self.csv_of(p) for p in self.board}
        out["pins.json"] = json_text(
            [
                {
                    "number": p.number,
                    "label": self.labels.get(p.number, f"pin {p.number}"),
                    "file": f"pin_{p.number}.csv",
                    "parameters": p.param_dict,
                    "rows": int(p.rows.shape[0]),
                }
                for p in self.board
            ]
        )
        return out

    def export(self, folder: str | Path) -> bool:
        win = self.win
        folder = Path(folder)
        files = self.files()
        if not files:
            return win.fail("Cannot export the pinned runs", "no run is pinned (Pin run, Ctrl+P)")
        if folder.exists() and not folder.is_dir():
            return win.fail("Cannot export the pinned runs", f"{folder} is a file, not a folder")
        written = 0
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                atomic_write_text(folder / name, text)
                written += 1
        except OSError as exc:
            return win.fail(
                "Cannot export the pinned runs",
                f"{getattr(exc, 'filename', None) or folder}: {exc.strerror or exc}. "
                f"{written} of {len(files)} files were written. {UNCHANGED}",
            )
        return win.done(f"Exported {len(files)} files to {folder}")

    def export_dialog(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(
            self.win, "Export pinned runs into folder", last_folder()
        )
        remember_folder(folder)
        if folder:
            self.export(folder)
