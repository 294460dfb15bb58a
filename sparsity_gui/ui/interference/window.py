"""The second model's window: n encodings with interference (incidental polysemanticity).

Same shape as the note's NoteWindow: six panels in the centre, the parameters in a dock,
a worker thread running the core's Qt-free InterferenceWorker, and a paint timer that draws
the latest snapshot (latest wins at both ends). A second tab holds the sweep (a grid of runs).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.blas import limit_blas_threads
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.files import history_csv
from sparsity_gui.core.interference.initial import W0File, file_source, load_w0_matrix, w0_label
from sparsity_gui.core.interference.params import (
    M_MAX,
    N_MAX,
    PRESETS,
    InterferenceParams,
    check_memory,
    check_training_work,
)
from sparsity_gui.core.interference.pins import PIN_COLUMNS, interference_pin_label, pin_params, w0_name
from sparsity_gui.core.interference.readouts import readouts_text, saturation_line
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS as SETTINGS
from sparsity_gui.core.interference.settings import live_change
from sparsity_gui.core.interference.worker import InterferenceSnapshot, InterferenceWorker
from sparsity_gui.core.weights_files import FILE_FILTER, ArrayInfo, list_arrays
from sparsity_gui.plots.base import Panel
from sparsity_gui.plots.interference.panels import INTERFERENCE_PANEL_TYPES
from sparsity_gui.ui.dialogs import last_folder, remember_folder
from sparsity_gui.ui.interference.checkpoints import interference_checkpoints
from sparsity_gui.ui.interference.controls import InterferenceControls
from sparsity_gui.ui.interference.dock_text import status_head
from sparsity_gui.ui.interference.export import InterferenceExports
from sparsity_gui.ui.interference.movie_dialog import interference_movie_source
from sparsity_gui.ui.interference.session_menu import InterferenceSessionMenu
from sparsity_gui.ui.interference.sweep_tab import SweepWidget
from sparsity_gui.ui.movie_dialog import add_movie_action
from sparsity_gui.ui.pins import PinControl
from sparsity_gui.ui.weights_dialog import ArrayChoiceDialog
from sparsity_gui.ui.window import LiveWindow

STATUS_SECONDS = 0.1  # the status line is read, not watched: 10 Hz


class InterferenceWindow(LiveWindow, QtWidgets.QMainWindow):
    LAYOUT_KEY = "interference"
    STOPPED_TITLE = "Training stopped"
    MODEL = "interference"
    # NEW_RUN_PANELS stays None (every panel takes a new run at once): the panels find live
    # changes by comparing the snapshots they see, and one that took the run late would
    # miss a change made before it did

    def __init__(
        self,
        params: InterferenceParams | None = None,
        *,
        playing: bool = True,
        windows=None,
        blas_threads: int | None = None,
        w0_file: W0File | None = None,
        parent=None,
    ):
        """``w0_file``: the first run's W(0), n x m as ``params`` says, and its name (a
        file and its tensor: `sparsity-gui --model interference --w0 FILE`)."""
        super().__init__(parent)
        params = params if params is not None else InterferenceParams()
        self.setWindowTitle("sparsity-gui: interference and incidental polysemanticity")
        self.setObjectName("InterferenceWindow")
        self.params = params
        self.playing = playing
        self.snapshot: InterferenceSnapshot | None = None
        self.windows = windows  # ui.windows.ModelWindows: the Model menu opens the other model
        self.run_id = 1  # the run the window asked for; snapshots of others are dropped
        self._status_due = 0.0
        self._shown_error: tuple[int, str] | None = None
        self._sweep_paused_live = False
        self._readouts_of: tuple[int, int] | None = None  # the snapshot the readouts line is of
        self._readouts_line = ""
        # W(0) loaded from a file, (matrix, where it came from), kept through restarts until
        # n, m, seed or sigma change (they describe a normal draw) or a preset is applied
        self.w0_file = w0_file
        # where the W(0) of the run on screen came from, as run.json says it
        self.run_w0_source: dict = {"source": "normal"} if w0_file is None else w0_file.source

        # --- centre: the live panels and the sweep, as tabs -------------------------------
        live, grid = self.panel_grid()
        self.panels: list[Panel] = [cls() for cls in INTERFERENCE_PANEL_TYPES]
        # two rows of three; the Thresholds panel is a tab in the Sparsification cell
        self.tabbed_panel_grid(grid, tabbed=5, in_grid=6)
        grid.setColumnStretch(0, 4)  # the heatmap gets the widest column
        grid.setColumnStretch(1, 3)
        grid.setColumnStretch(2, 3)
        (
            self.weights_panel,
            self.active_panel,
            self.poly_panel,
            self.kept_panel,
            self.signs_panel,
            self.sparsity_panel,
            self.thresholds_panel,
        ) = self.panels
        # no x links across panels: pyqtgraph aligns linked views by screen position, which
        # shifts the ranges of panels in columns of different widths; every step panel
        # draws the same history, so their ranges agree anyway
        self.sweep = SweepWidget(lambda: self.params)
        self.central_tabs(live, self.sweep, "sweep", "Sweep")
        self.sweep.started.connect(self._sweep_started)
        self.sweep.finished.connect(self._sweep_finished)
        self.sweep.statusChanged.connect(self._sweep_status)
        self.tabs.currentChanged.connect(self._tab_changed)

        # --- the parameter dock -----------------------------------------------------------
        self.controls = InterferenceControls(params, lambda: self.params)
        self.controls.changed.connect(self.on_params_changed)
        self.controls.newSeedRequested.connect(self.new_seed)
        box = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(box)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.controls)
        buttons = QtWidgets.QHBoxLayout()
        self.play_button = QtWidgets.QToolButton()
        self.step_button = QtWidgets.QToolButton()
        self.restart_button = QtWidgets.QToolButton()
        for b in (self.play_button, self.step_button, self.restart_button):
            b.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay.addLayout(buttons)
        self.status_line = QtWidgets.QLabel("starting…")
        self.status_line.setObjectName("status_line")
        self.status_line.setWordWrap(True)
        self.status_line.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status_line.setToolTip("step / steps, steps per second, state")
        self.failure_line = QtWidgets.QLabel("")
        self.failure_line.setObjectName("failure_line")
        self.failure_line.setWordWrap(True)
        self.failure_line.setStyleSheet("color: #c0392b;")
        self.failure_line.hide()
        self.w0_line = QtWidgets.QLabel("")
        self.w0_line.setObjectName("w0_line")
        self.w0_line.setWordWrap(True)
        self.w0_line.setToolTip("Where W(0) comes from (File > Load W(0) from file…)")
        lay.addWidget(self.status_line)
        lay.addWidget(self.w0_line)
        lay.addWidget(self.failure_line)
        lay.addStretch(1)
        self.parameters_dock(box, "dock_interference_parameters").setMinimumWidth(290)

        self._build_actions()
        self._build_status_bar()
        self.sweep.set_base(params)
        self._show_w0_source(params)

        # --- the worker -----------------------------------------------------------------
        # One BLAS thread per product (core/blas.py): OpenBLAS's default pool of a thread per
        # core spun against the GUI thread; at n = 256, m = 1024 on a busy 2-core machine the
        # window ran 11-13 steps/s with it against 76-90 with one thread, and 140-215 with
        # one thread on a quieter machine (measured).
        self.blas_threads = 1 if blas_threads is None else int(blas_threads)
        self.blas_limited = limit_blas_threads(self.blas_threads)
        self.worker = InterferenceWorker(
            params, playing=playing, w0=None if w0_file is None else w0_file[0], run_id=self.run_id
        )
        self.start_engine(self.worker, "interference")
        self.finish_setup()
        self.set_playing(playing)

    # ------------------------------------------------------------------------------
    def _build_actions(self) -> None:
        sp = QtWidgets.QStyle.StandardPixmap
        self.transport_actions(
            "Play / pause the training (Space)", "One optimizer step (Right arrow); pauses the run"
        )
        self.act_restart = self.action(
            "act_restart",
            "Restart",
            self.restart,
            "Ctrl+R",
            "Train again from W(0) with the current parameters (Ctrl+R)",
            sp.SP_BrowserReload,
        )
        for act in (self.act_play, self.act_step, self.act_restart):
            act.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        self.play_button.setDefaultAction(self.act_play)
        self.step_button.setDefaultAction(self.act_step)
        self.restart_button.setDefaultAction(self.act_restart)

        tb = self.addToolBar("Training")
        tb.setObjectName("toolbar_interference")
        tb.addAction(self.act_play)
        tb.addAction(self.act_step)
        tb.addAction(self.act_restart)
        self.toolbar = tb

        menu = self.menuBar()
        m_file = menu.addMenu("&File")
        self.act_open_w0 = m_file.addAction("Load W(0) from file…")
        self.act_open_w0.setObjectName("act_open_w0")
        tip = (
            "Start from W(0) in a file: a matrix n × m (features × neurons) from .npy, .npz, "
            ".safetensors, a PyTorch state_dict or CSV; sets n and m"
        )
        self.act_open_w0.setToolTip(tip)
        self.act_open_w0.setStatusTip(tip)
        self.act_open_w0.triggered.connect(self.open_w0_dialog)
        self.checkpoints = interference_checkpoints(self)  # File → Compare with checkpoints…
        m_file.addAction(self.checkpoints.act_compare)
        m_file.addSeparator()
        self.exports = InterferenceExports(self)
        self.exports.build_menus(m_file)
        add_movie_action(self, m_file, None, lambda: interference_movie_source(self))
        m_file.addSeparator()
        self.act_close = m_file.addAction("&Close")
        self.act_close.setShortcut(QtGui.QKeySequence.StandardKey.Close)
        self.act_close.triggered.connect(self.close)
        self.act_quit = self.quit_action()
        m_file.addAction(self.act_quit)
        self.sessions = InterferenceSessionMenu(self, m_file)  # Open/Save session…, Open recent, at the top
        m_run = menu.addMenu("&Training")
        for act in (self.act_play, self.act_step, self.act_restart):
            m_run.addAction(act)
        self.pin_control = PinControl(
            self,
            PIN_COLUMNS,
            lambda params: pin_params(params, w0_name(self.run_w0_source)),
            lambda pin, live: interference_pin_label(pin, live, w0_name(self.run_w0_source)),
            lambda pin: history_csv(pin.rows),
            lambda snap: f"step {snap.step:,}",
        )
        self.pin_control.add_to(m_run, tb)
        m_presets = menu.addMenu("&Presets")
        m_presets.setObjectName("menu_presets")
        for name, tip, preset in PRESETS:
            act = m_presets.addAction(name)
            act.setToolTip(tip)
            act.setStatusTip(tip)
            act.triggered.connect(lambda _c=False, p=preset: self.apply_preset(p))
        m_presets.setToolTipsVisible(True)
        self.model_menu(menu)
        m_view = menu.addMenu("&View")
        m_view.addAction(self.param_dock.toggleViewAction())
        m_view.addAction(tb.toggleViewAction())
        act = m_view.addAction("Sweep")
        act.triggered.connect(lambda _c=False: self.tabs.setCurrentWidget(self.sweep))
        act = m_view.addAction("Live run")
        act.triggered.connect(lambda _c=False: self.tabs.setCurrentIndex(0))
        m_view.addSeparator()
        act = m_view.addAction("Reset layout")
        act.triggered.connect(self.reset_layout)
        self.help_menu(menu)

    def _build_status_bar(self) -> None:
        self.status_labels_for(
            (
                ("sweep", "the sweep"),
                ("poly", "polysemantic neurons now / predicted n²/(4m)"),
                ("sps", "optimizer steps per second"),
                ("fps", "frames drawn per second"),
            ),
            70,
        )

    def all_panels(self) -> list:
        """The panels with a figure: the seven live ones and the sweep's."""
        return [*self.panels, self.sweep.panel]

    def shown_panels(self) -> list:
        return self.painted_panels() if self.tabs.currentIndex() == 0 else [self.sweep.panel]

    # --- commands ----------------------------------------------------------------------
    @QtCore.Slot()
    def restart(self) -> None:
        self._request(self.params, restart=True)

    def apply_preset(self, params: InterferenceParams) -> None:
        """Start a new run from a preset (the fields show its values; the seed is kept; W(0)
        a normal draw)."""
        self.w0_file = None
        self._request(params.with_changes(seed=self.params.seed), restart=True)

    @QtCore.Slot()
    def new_seed(self) -> None:
        seed = random.SystemRandom().randrange(0, 2**31 - 1)
        self.on_params_changed({"seed": seed})

    def start_run(self, params: InterferenceParams, w0: np.ndarray | None = None, script=None) -> None:
        """A new run (W(0) drawn from the parameters unless given); snapshots of older
        runs are dropped from now on. ``script``: a session's run, which the worker trains
        again to its step (``params``: the parameters there)."""
        self.run_id += 1
        self._shown_error = None
        self.failure_line.hide()
        self.params = params
        self.worker.start_run(params, self.run_id, w0=w0, script=script)
        if w0 is None:
            self.run_w0_source = {"source": "normal"}
        else:  # a file's (start_run is given only a file's W(0))
            self.run_w0_source = self.w0_file.source if self.w0_file is not None else {"source": "given"}
        self.worker.play(self.playing)  # the new run follows the Play button
        self.pace_painting(idle=False)
        self.controls.show_params(params, self.run_w0_source)
        self.sweep.set_base(params)
        size = f"{SETTINGS['n'].text(params.n)}, {SETTINGS['m'].text(params.m)}"
        self.status_line.setText(f"preparing run {self.run_id} ({size})")
        self._show_w0_source(params)

    def _show_w0_source(self, params: InterferenceParams) -> None:
        if self.w0_file is None:
            drawn = f"{SETTINGS['seed'].text(params.seed)}, {SETTINGS['sigma'].text(params.sigma)}"
            self.w0_line.setText(f"W(0): normal draw ({drawn})")
        else:
            shape = f"{SETTINGS['n'].fmt(params.n)} × {SETTINGS['m'].fmt(params.m)}"
            self.w0_line.setText(f"W(0): {self.w0_file[1]}, {shape}; a new n, m, seed or σ draws it again")

    def _kept_w0(self, params: InterferenceParams) -> np.ndarray | None:
        """The file's W(0) for a new run with ``params``, while n, m, seed and sigma stay."""
        if self.w0_file is None:
            return None
        same = (params.n, params.m, params.seed, params.sigma) == (
            self.params.n,
            self.params.m,
            self.params.seed,
            self.params.sigma,
        )
        if not same:
            self.w0_file = None
            return None
        return self.w0_file[0]

    # --- W(0) from a file -----------------------------------------------------------------
    def load_w0(self, path: str | Path, tensor: str | None = None) -> bool:
        """Start a run from W(0) in a file: a matrix whose shape sets n and m. A file with
        several arrays or tensors asks which (unless ``tensor`` says). A bad file shows
        why; the current run goes on."""
        path = str(path)
        try:
            if tensor is None:
                kind, infos = list_arrays(path)
                if len(infos) > 1:
                    dialog = ArrayChoiceDialog(
                        self, path, kind, infos, usable=_usable_matrix, explain=_explain_matrix
                    )
                    if dialog.exec() != QtWidgets.QDialog.DialogCode.Accepted:
                        return False
                    tensor, _row = dialog.choice()
            w0, info = load_w0_matrix(path, tensor)
            params = self.params.with_changes(n=w0.shape[0], m=w0.shape[1])
        except InputError as exc:
            return self.fail("Cannot load W(0)", exc.message)
        where = w0_label(path, info.name)
        self.w0_file = W0File(w0, where, file_source(path, info))
        self.start_run(params, w0)
        return self.done(f"W(0) from {where}: n = {params.n}, m = {params.m}")

    @QtCore.Slot()
    def open_w0_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Load W(0)", last_folder(), FILE_FILTER)
        remember_folder(path)
        if path:
            self.load_w0(path)

    def _request(self, params: InterferenceParams, restart: bool = False) -> None:
        """Send parameters: a new run when ``restart`` (core/interference/settings.py:
        live_change decides), else a live change."""
        if restart:
            self.start_run(params, self._kept_w0(params))
            return
        self.params = params
        self.worker.set_params(params)
        self.pace_painting(idle=False)  # its snapshot, at once
        self.controls.show_params(params)
        self.sweep.set_base(params)

    @QtCore.Slot(dict)
    def on_params_changed(self, changes: dict) -> None:
        """Validated edits from the dock: live for LIVE_FIELDS, a new run otherwise. A
        refused value is shown at its field."""
        try:
            params, restart = live_change(self.params, changes)
            if "n" in changes or "m" in changes:
                check_memory(params.n, params.m)
            check_training_work(params)
        except InputError as exc:
            field = self.controls.fields.get(exc.field) or self.controls.fields.get(next(iter(changes)))
            if field is not None:
                field.refuse(exc.message)
            else:
                self.fail("Invalid parameter", str(exc))
                self.controls.show_params(self.params)
            return
        if params == self.params:
            return
        self._request(params, restart)

    # --- the sweep and the live run ------------------------------------------------------
    @QtCore.Slot(bool)
    def _sweep_started(self, pause_live: bool) -> None:
        self._sweep_paused_live = pause_live and self.playing
        if self._sweep_paused_live:
            self.set_playing(False)

    @QtCore.Slot()
    def _sweep_finished(self) -> None:
        if self._sweep_paused_live and not self.closed and not self.playing:
            self.set_playing(True)
        self._sweep_paused_live = False

    @QtCore.Slot(str)
    def _sweep_status(self, text: str) -> None:
        self.status_labels["sweep"].setText(text)

    # --- painting --------------------------------------------------------------------------
    @QtCore.Slot()
    def paint_latest(self) -> None:
        snap = self.worker.take_latest()
        if snap is None or snap.run_id != self.run_id:
            self.pace_painting(idle=False)  # a new run on its way
            return  # nothing yet, or a snapshot from before a restart: dropped
        old = self.snapshot
        if old is not None and snap.seq == old.seq and snap.run_id == old.run_id:
            # nothing new: an idle run sends nothing until a command (which wakes the timer)
            self.pace_painting(idle=snap.state in ("paused", "finished", "error"))
            if self.tabs.currentIndex() == 0:
                self.paint_owed(snap)
            return
        self.pace_painting(idle=False)
        if snap.state == "compiling":  # a first launch: what is compiled, for about how long
            self.status_line.setText(snap.message)
            return
        if snap.latest is None:  # no run could be built: keep what is on screen, say why
            self._show_failure(snap)
            return
        self.snapshot = snap
        if old is None or old.state != snap.state:
            self.show_transport()
        if self.tabs.currentIndex() == 0:
            self.paint_panels(snap)
            self.pin_control.follow(self.params)  # pins are named by what differs from the live run
        now = self.frame_drawn()
        # an idle run's last snapshot is always shown (no other will come)
        if now >= self._status_due or old is None or snap.state != "running":
            self._status_due = now + STATUS_SECONDS
            self._update_status(snap)
        self._show_failure(snap)

    def _show_failure(self, snap: InterferenceSnapshot) -> None:
        """An error (a run that could not start, a diverged run): pause, show it at the dock
        and, once per run and message, in a dialog."""
        if snap.state != "error":
            return
        if self.playing:
            self.set_playing(False)
        if snap.message:
            first = snap.message.partition("\n\n")[0]
            self.failure_line.setText(f"{first}\n(Change the parameters, then Restart: Ctrl+R.)")
            self.failure_line.show()
            if (snap.run_id, snap.message) != self._shown_error:
                self._shown_error = (snap.run_id, snap.message)
                self.show_error(snap.message)

    @QtCore.Slot(int)
    def _tab_changed(self, index: int) -> None:
        if index == 0:  # the live panels were not drawn while hidden
            self.repaint_now()

    def repaint_now(self) -> None:
        """Draw the current snapshot on every panel with ranges (after a tab switch, exports)."""
        if self.snapshot is not None:
            for panel in self.panels:
                panel.update_from(self.snapshot)

    def _update_status(self, snap: InterferenceSnapshot) -> None:
        p = snap.params
        text = status_head(snap.step, p, snap.latest.t)
        rate = f"{snap.steps_per_second:,.0f} steps/s" if snap.state == "running" else "— steps/s"
        fps = f"{self.fps:.0f} fps" if snap.state == "running" else "— fps"  # idle: nothing painted
        text += f"\n{rate} · {fps} · {snap.state}"
        text += f" · run {snap.run_id}"
        self.status_line.setText(text)
        key = (snap.run_id, snap.step, snap.state)
        if key != self._readouts_of:  # a pass over W: once per new snapshot, not per frame
            self._readouts_of = key
            finished_at = snap.step if snap.state == "finished" else None
            self._readouts_line = readouts_text(
                p.l1, snap.W, snap.steps_to_sparse, snap.rail_share_mean, finished_at
            )
        self.controls.show_in_force(snap.latest, saturation_line(snap.rail_share_mean), self._readouts_line)
        L = self.status_labels
        L["poly"].setText(f"polysemantic {snap.latest.polysemantic} / {p.prediction:.3g} predicted")
        L["sps"].setText(rate)
        L["fps"].setText(fps)
        if snap.state != "error":
            self.failure_line.hide()

    # --- shutdown ----------------------------------------------------------------------------
    def grid_tab(self):
        return self.sweep


def _usable_matrix(info: ArrayInfo) -> str | None:
    """Why an array cannot be the interference model's W(0) (n x m), or None."""
    if len(info.shape) != 2:
        return f"{len(info.shape)}-D: W(0) is a matrix n × m (features × neurons)"
    if not (1 <= info.shape[0] <= N_MAX and 1 <= info.shape[1] <= M_MAX):
        return f"n must be 1 to {N_MAX} and m 1 to {M_MAX}"
    return None


def _explain_matrix(info: ArrayInfo, _row: int | None) -> str:
    return f"W(0) = {info.name}: n = {info.shape[0]:,} features × m = {info.shape[1]:,} neurons"
