"""File → Compare with checkpoints…, in both windows: a training run's series of snapshots
beside the live run started from its first snapshot.

`SeriesDialog` takes what the `checkpoints` command takes (the series, its tensor, a row, a
SAELens latent or the whole matrix, the run's l1, lr, optimizer and weight decay; for the
note's window a fitted time scale), prefilled from the window's parameters. Accepting checks
the series up front (core/checkpoints/series_pin.py: headers only) and then reads and compares it
beside the GUI, with progress and Cancel in the dialog; every refusal is shown in the
dialog and leaves the window's run as it is. On success `CheckpointsControl` starts the live
run from the first snapshot (the prediction: the note's exact flow of the row, or the
interference model trained from the matrix), pins the snapshots as points named after the
series' folder, and its dock says how far the snapshots the live run has reached are from
the prediction (the largest relative difference of |W|_1, as compare.csv computes it), and
the series' diagnostics (core/checkpoints/diagnostics.py): the saturation verdict, the deaths and the
death forecast's rank correlation, a line each.

Each window gives the model's part: ``request(options)`` (the checks, with the window's
parameters), ``start(pin)`` (the live run from the first snapshot) and ``position(snap)``
(where a snapshot of its live run is: t or the step).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.checkpoints.compare import COMPARE_OPTIMIZERS
from sparsity_gui.core.checkpoints.series_pin import SeriesPin, SeriesRequest, series_pin
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.series import SeriesOptions
from sparsity_gui.core.weights_files import FILE_FILTER
from sparsity_gui.ui.background import BackgroundJob, JobOutcome
from sparsity_gui.ui.dialogs import last_folder, remember_folder

TITLE = "Cannot compare with the checkpoints"
PICKS = {"matrix": "whole matrix", "row": "row", "latent": "SAELens latent"}
UPDATE_MS = 250  # the dock's distance follows the live run 4 times a second


def _number(text: str, name: str, optional: bool = False) -> float | None:
    text = text.strip()
    if not text and optional:
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(name, f"must be a number, got {text!r}") from None


class SeriesDialog(QtWidgets.QDialog):
    """The series and how it was trained; accepting compares it (see the module)."""

    def __init__(self, control: CheckpointsControl, picks: tuple[str, ...], fit: bool, prefill: dict):
        super().__init__(control.win)
        self.control = control
        self.setObjectName("checkpoints_dialog")
        self.setWindowTitle("Compare with checkpoints")
        self.job: BackgroundJob | None = None
        lay = QtWidgets.QVBoxLayout(self)
        intro = QtWidgets.QLabel(
            "A series of snapshots from your training run: a folder of files named with their step "
            "(step_000100.safetensors, ckpt-100.pt, 100.npy, …), a folder of SAELens checkpoints, "
            "or one file with a stacked tensor [T, n, m] or [T, m] and a vector 'steps'. The live "
            "run starts from its first snapshot; the snapshots are drawn as points over it."
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)
        form = QtWidgets.QFormLayout()
        lay.addLayout(form)

        self.path = QtWidgets.QLineEdit(prefill.get("path", ""))
        self.path.setObjectName("checkpoints_path")
        folder = QtWidgets.QPushButton("Folder…")
        folder.clicked.connect(self._choose_folder)
        file = QtWidgets.QPushButton("File…")
        file.clicked.connect(self._choose_file)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(folder)
        row.addWidget(file)
        form.addRow("series", row)

        self.tensor = QtWidgets.QLineEdit(prefill.get("tensor") or "")
        self.tensor.setObjectName("checkpoints_tensor")
        self.tensor.setPlaceholderText("the file's only tensor")
        self.tensor.setToolTip("The tensor of each file (needed when a file holds several, as a state_dict)")
        form.addRow("tensor", self.tensor)

        self.pick = QtWidgets.QComboBox()
        self.pick.setObjectName("checkpoints_pick")
        for key in picks:
            self.pick.addItem(PICKS[key], key)
        self.index = QtWidgets.QSpinBox()
        self.index.setObjectName("checkpoints_index")
        self.index.setRange(0, 10**8)
        self.index.setToolTip("The row (one feature's encoding) or the SAELens latent (a column of W_enc)")
        self.pick.currentIndexChanged.connect(self._pick_changed)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.pick, 1)
        row.addWidget(self.index)
        form.addRow("take", row)
        self._pick_changed()

        self.l1 = QtWidgets.QLineEdit(prefill.get("l1", ""))
        self.l1.setObjectName("checkpoints_l1")
        form.addRow("l1", self.l1)
        self.lr = QtWidgets.QLineEdit(prefill.get("lr", ""))
        self.lr.setObjectName("checkpoints_lr")
        form.addRow("lr", self.lr)
        self.optimizer = QtWidgets.QComboBox()
        self.optimizer.setObjectName("checkpoints_optimizer")
        self.optimizer.addItems(list(COMPARE_OPTIMIZERS))
        self.optimizer.setCurrentText(prefill.get("optimizer", "sgd"))
        self.optimizer.setToolTip("sgd: torch.optim.SGD (the model's gd); adam, adamw: torch's")
        form.addRow("optimizer", self.optimizer)
        self.weight_decay = QtWidgets.QLineEdit(prefill.get("weight_decay", ""))
        self.weight_decay.setObjectName("checkpoints_weight_decay")
        self.weight_decay.setPlaceholderText("torch's default")
        form.addRow("weight decay", self.weight_decay)
        self.zero_tol = QtWidgets.QLineEdit("")
        self.zero_tol.setObjectName("checkpoints_zero_tol")
        self.zero_tol.setPlaceholderText("2·lr·l1 (SGD), 2·lr (Adam)")
        self.zero_tol.setToolTip("A weight counts as zero when |w| ≤ this (m′ of the snapshots)")
        form.addRow("zero tolerance", self.zero_tol)
        self.fit = QtWidgets.QCheckBox("fit a time scale (FITTED t per step, not predicted)")
        self.fit.setObjectName("checkpoints_fit")
        self.fit.setToolTip(
            "Under Adam no time maps steps to the note's flow: this places the snapshots at "
            "t = τ·(step − step₀) with τ fitted to their ‖W‖₁ (labelled fitted wherever shown)"
        )
        self.fit_allowed = fit  # the note's flow only
        if fit:
            form.addRow("", self.fit)
        else:
            self.fit.hide()

        self.progress = QtWidgets.QProgressBar()
        self.progress.setObjectName("checkpoints_progress")
        self.progress.hide()
        lay.addWidget(self.progress)
        self.error = QtWidgets.QLabel("")
        self.error.setObjectName("checkpoints_error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c0392b;")
        self.error.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()
        lay.addWidget(self.error)
        buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Ok | QtWidgets.QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Compare")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.resize(560, self.sizeHint().height())

    # --- fields ---------------------------------------------------------------------------
    def _pick_changed(self) -> None:
        self.index.setEnabled(self.pick.currentData() != "matrix")

    def _choose_folder(self) -> None:
        path = QtWidgets.QFileDialog.getExistingDirectory(self, "The series' folder", last_folder())
        remember_folder(path)
        if path:
            self.path.setText(path)

    def _choose_file(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "A stacked series", last_folder(), FILE_FILTER)
        remember_folder(path)
        if path:
            self.path.setText(path)

    def set_pick(self, pick: str, index: int = 0) -> None:
        """Take the "matrix", a "row" or a "latent" (and its index)."""
        self.pick.setCurrentIndex(self.pick.findData(pick))
        self.index.setValue(index)

    def options(self) -> SeriesOptions:
        """What the fields say; InputError names the field that cannot be read."""
        path = self.path.text().strip()
        if not path:
            raise InputError("series", "choose a folder of snapshots or a stacked file")
        path = os.path.abspath(os.path.expanduser(path))  # a session finds it from anywhere
        pick = self.pick.currentData()
        index = self.index.value()
        return SeriesOptions(
            path=path,
            l1=_number(self.l1.text(), "l1"),
            lr=_number(self.lr.text(), "lr"),
            optimizer=self.optimizer.currentText(),
            tensor=self.tensor.text().strip() or None,
            row=index if pick == "row" else None,
            latent=index if pick == "latent" else None,
            all_rows=pick == "matrix",
            weight_decay=_number(self.weight_decay.text(), "weight decay", optional=True),
            zero_tol=_number(self.zero_tol.text(), "zero tolerance", optional=True),
            fit_time_scale=self.fit_allowed and self.fit.isChecked(),
        )

    def refuse(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    # --- accepting: checked, then compared beside the GUI -----------------------------------
    def accept(self) -> None:
        """Check the series (the reason shown here on a refusal), then compare it beside the
        GUI; the dialog closes once the live run and the pin are in place."""
        if self.job is not None:
            return
        self.error.hide()
        try:
            request = self.control.request(self.options())
        except InputError as exc:
            self.refuse(exc.message if exc.field in ("checkpoints", "pin", "pick", "") else str(exc))
            return
        self.ok.setEnabled(False)
        self.progress.setRange(0, len(request.series.snapshots))
        self.progress.setValue(0)
        self.progress.show()
        self.job = self.control.run(request, self._progress, self._done)

    def _progress(self, state) -> None:
        done, total = state
        self.progress.setValue(done)
        self.progress.setFormat(f"snapshot {done} of {total}")

    def _done(self, outcome: JobOutcome) -> None:
        self.job = None
        self.progress.hide()
        self.ok.setEnabled(True)
        if outcome.cancelled:
            super().reject()
            return
        if outcome.ok and self.control.place(outcome.value):
            super().accept()
            return
        error = outcome.error
        self.refuse(self.control.win.last_error if outcome.ok else _reason(error))

    def reject(self) -> None:
        """Cancel: a comparison under way stops (its dialog closes when it has)."""
        if self.job is not None:
            self.job.cancel()
            return
        super().reject()

    def wait(self, timeout: float | None = None) -> None:
        """Join the comparison under way (tests)."""
        if self.job is not None:
            self.job.wait(timeout)


def _reason(error: BaseException | None) -> str:
    if isinstance(error, InputError):
        return error.message
    if isinstance(error, (OSError, MemoryError, ValueError)):
        return f"{type(error).__name__}: {error}"
    raise error if error is not None else RuntimeError("the comparison stopped")


def _reread(kept, first) -> bool:
    """Whether a window's W(0) (a W0File) is a series' first snapshot read again: named
    after a series' step, and equal to it."""
    matrix = kept.matrix
    return (
        kept.source.get("series_step") is not None
        and getattr(matrix, "shape", None) == getattr(first, "shape", None)
        and bool((matrix == first).all())
    )


class CheckpointsControl(QtCore.QObject):
    """A window's series of snapshots: the menu action, the dialog, the pins (pin number ->
    SeriesPin) and the dock that says how far the snapshots are from the prediction."""

    def __init__(
        self,
        window,
        *,
        picks: tuple[str, ...],
        fit: bool,
        prefill: Callable[[], dict],
        request: Callable[[SeriesOptions], SeriesRequest],
        start: Callable[[SeriesPin], None],
        position: Callable[[object], float | None],
    ):
        super().__init__(window)
        self.win = window
        self.picks, self.fit = picks, fit
        self._prefill, self._request, self._start, self._position = prefill, request, start, position
        self.series: dict[int, SeriesPin] = {}  # pin number -> the series it pins
        self._pinned: dict[int, object] = {}  # pin number -> its PinnedRun (a pin replaced: dropped)
        self.last: SeriesOptions | None = None
        self.job: BackgroundJob | None = None  # a session's series being read again
        self.dialog: SeriesDialog | None = None
        self.dock: QtWidgets.QDockWidget | None = None
        self.label: QtWidgets.QLabel | None = None
        self.text = ""
        self.act_compare = window.action(
            "act_compare_checkpoints",
            "Compare with checkpoints…",
            lambda _checked=False: self.open_dialog(),
            None,
            "Your training run's snapshots (a folder or a stacked file) as points over the live run "
            "started from the first of them",
        )
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(UPDATE_MS)
        self.timer.timeout.connect(self.update_dock)

    # --- asking -------------------------------------------------------------------------------
    def open_dialog(self) -> SeriesDialog:
        """The dialog, shown (window-modal, not blocking); tests fill it and accept it."""
        prefill = self._prefill()
        if self.last is not None:
            prefill.setdefault("path", self.last.path)
            prefill.setdefault("tensor", self.last.tensor)
        dialog = SeriesDialog(self, self.picks, self.fit, prefill)
        dialog.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        if self.last is not None:
            pick = "matrix" if self.last.all_rows else "latent" if self.last.latent is not None else "row"
            if pick in self.picks:
                dialog.set_pick(pick, self.last.latent or self.last.row or 0)
        self.dialog = dialog
        dialog.open()
        return dialog

    def request(self, options: SeriesOptions) -> SeriesRequest:
        """The series checked for this window (InputError: why not); nothing changes."""
        if self.win.pin_control.board.full:
            raise InputError("pin", "8 runs are pinned already; remove one first (Pinned runs)")
        return self._request(options)

    def run(self, request: SeriesRequest, on_progress, on_done) -> BackgroundJob:
        """Read and compare the series beside the GUI (core/series_pin.series_pin)."""

        def work(job: BackgroundJob) -> SeriesPin:
            return series_pin(request, job.cancelled, lambda done, total: job.report((done, total)))

        return BackgroundJob(self, work, name="checkpoints", on_done=on_done, on_progress=on_progress).start()

    # --- showing -------------------------------------------------------------------------------
    def place(self, pin: SeriesPin, number: int | None = None, start: bool = True) -> bool:
        """Pin the snapshots (points, named after the series) and, with ``start``, start the
        live run from the first snapshot. False (the window's run as it was) if it cannot."""
        win = self.win
        if win.closed:
            return False
        try:
            pinned = win.pin_control.board.add(
                win.pin_control.params_of(pin.params),
                pin.columns,
                pin.rows,
                number,
                marks="points",
                name=pin.label,
                series=pin.options,
            )
        except InputError as exc:
            return win.fail(TITLE, exc.message)
        self.series[pinned.number] = pin
        self._pinned[pinned.number] = pinned
        self.last = pin.options
        if start:
            self._start(pin)
        win.pin_control.refresh()
        self._show_dock()
        self.update_dock()
        if start:
            note = f"; {pin.comparison.flow_note}" if pin.comparison.time_fitted else ""
            win.done(
                f"Pinned {pin.count} snapshots of {pin.label} as pin {pinned.number}; the live run "
                f"starts from its first{note}"
            )
        return True

    def unreadable(self, entries) -> str:
        """Why a session's series that is there cannot be read (a crafted or damaged folder:
        its headers and steps checked, nothing read whole), "" when each can or is gone (a
        series gone is said when the session opens without it). Asked before the session's
        run starts, so that a refusal leaves the current run as it was."""
        for _number, options in entries:
            if not os.path.exists(options.path):
                continue
            try:
                options.open()
            except InputError as exc:
                return f"its series {options.path} cannot be read: {exc.message}"
            except (OSError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
                return f"its series {options.path} cannot be read: {type(exc).__name__}: {exc}"[:400]
        return ""

    def reopen(self, entries, wait: bool = False) -> str:
        """A session's series read again (``entries``: (pin number, SeriesOptions)), without
        a new live run (the session's run is it). Returns what cannot be shown, one line
        ("" when all can); what can is read beside the GUI (``wait``: at once)."""
        problems = []
        requests = []
        for number, options in entries:
            try:
                requests.append((number, self._request(options)))
            except InputError as exc:
                problems.append(f"its series {options.path} is not shown: {exc.message}")
        if requests:

            def work(job: BackgroundJob):
                return [(n, series_pin(r, job.cancelled)) for n, r in requests]

            def done(outcome: JobOutcome) -> None:
                self.job = None
                if outcome.ok:
                    for number, pin in outcome.value:
                        self.place(pin, number, start=False)
                elif not outcome.cancelled and not self.win.closed:
                    why = _reason(outcome.error)
                    self.win.fail(TITLE, f"the session's series cannot be read again: {why}")

            self.job = BackgroundJob(self, work, name="checkpoints", on_done=done).start()
            if wait:
                self.job.wait()
        return "; ".join(problems)

    def saved(self) -> list:
        """The pins that are series: (number, options), what a session keeps of them."""
        return [(p.number, p.series) for p in self.win.pin_control.pins if p.series is not None]

    def _show_dock(self) -> None:
        if self.dock is not None:
            self.dock.show()
            return
        win = self.win
        self.label = QtWidgets.QLabel("")
        self.label.setObjectName("checkpoints_distance")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setMargin(4)
        self.label.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop)
        scroll = QtWidgets.QScrollArea()  # a narrow dock: the text scrolls, never cut
        scroll.setWidget(self.label)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.dock = QtWidgets.QDockWidget("Checkpoints against the theory", win)
        self.dock.setObjectName("dock_checkpoints")
        self.dock.setWidget(scroll)
        win.addDockWidget(QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
        win.splitDockWidget(win.param_dock, self.dock, QtCore.Qt.Orientation.Vertical)
        self.timer.start()

    def live(self) -> SeriesPin | None:
        """The series whose prediction the live run is (the newest such), or None."""
        for number in sorted(self.series, reverse=True):
            pin = self.series[number]
            if self.follows(pin):
                return pin
        return None

    def follows(self, pin: SeriesPin) -> bool:
        win = self.win
        if pin.model == "interference":
            kept = getattr(win, "w0_file", None)
            if kept is None or not pin.follows(win.params):
                return False
            if kept.matrix is not pin.first and _reread(kept, pin.first):
                # a session's run: its W(0) is the series' first snapshot, read back from
                # the session; the window keeps the series' own from now on
                win.w0_file = kept = kept._replace(matrix=pin.first)
            return kept.matrix is pin.first
        return pin.follows(win.params)

    def reached(self, pin: SeriesPin) -> float | None:
        """Where the live run is on the series' axis (None: not the series' run)."""
        snap = self.win.snapshot
        if not self.follows(pin) or snap is None or snap.run_id != self.win.run_id:
            return None
        return self._position(snap)

    def distance(self, number: int) -> tuple[float | None, int]:
        """The pinned series' largest relative difference of |W|_1 from the prediction over
        the snapshots the live run has reached (all, when the live run is not its), and how
        many those are: what the dock says."""
        pin = self.series[number]
        at = self.reached(pin)
        return pin.distance(at) if at is not None else pin.distance(None)

    def update_dock(self) -> None:
        """The dock's text, for each pinned series (one that was unpinned is dropped)."""
        pinned = {p.number: p for p in self.win.pin_control.pins}
        for number in [n for n in self.series if pinned.get(n) is not self._pinned[n]]:
            del self.series[number], self._pinned[number]
        if self.dock is None:
            return
        if not self.series:
            self.dock.hide()
            self.timer.stop()
            return
        if not self.timer.isActive():
            self.timer.start()
        lines = []
        for number in sorted(self.series):
            pin = self.series[number]
            at = self.reached(pin)
            head = f"pin {number}: {pin.label}, {pin.count} snapshots"
            if pin.comparison.time_fitted:
                head += f" (FITTED time scale: t = {pin.comparison.time_per_step:.4g} per step)"
            text = pin.distance_text(at)
            said = [*pin.comparison.statements, pin.comparison.zero_tol_note]  # what the curves are
            if pin.comparison.series.step_note:
                said.insert(0, f"steps: {pin.comparison.series.step_note}")
            head += "\n" + "\n".join(s for s in said if s)
            if at is None:
                text += "; the live run is not its prediction now (its parameters or W(0) changed)"
            diagnostics = pin.comparison.diagnostics  # any trainer's: the rail, deaths, forecast
            if diagnostics is not None:
                text += "\n" + "\n".join(diagnostics.lines())
            lines.append(f"{head}\n{text}")
        text = "\n\n".join(lines)
        if text != self.text:
            self.text = text
            assert self.label is not None
            self.label.setText(text)
