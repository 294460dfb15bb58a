"""The note model's window: panels in the centre, parameters and the note in docks, a worker
thread running the core's Runner, and a paint timer that draws the latest snapshot."""

from __future__ import annotations

import gc
import random

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.changes import RunScript
from sparsity_gui.core.note.files import timeseries_csv
from sparsity_gui.core.note.params import SimParams, check_memory, check_run_work
from sparsity_gui.core.note.pins import PIN_COLUMNS, note_pin_label, pin_params
from sparsity_gui.core.note.runner import Runner, Snapshot, default_speed
from sparsity_gui.core.note.schedule import Knots, lam_at, warmup_knots
from sparsity_gui.core.note.session import DEFAULT_SAMPLES, W0Source
from sparsity_gui.core.note.settings import NOTE_SETTINGS, live_change
from sparsity_gui.core.settings import format_exact
from sparsity_gui.core.text import time_text
from sparsity_gui.core.weights_files import FILE_FILTER
from sparsity_gui.plots.base import Panel
from sparsity_gui.plots.note import GRID_PANELS, PANEL_TYPES, TABBED_WITH
from sparsity_gui.ui.dialogs import open_file_name
from sparsity_gui.ui.fields import Field
from sparsity_gui.ui.movie_dialog import add_movie_action
from sparsity_gui.ui.note.argument import NoteView
from sparsity_gui.ui.note.checkpoints import note_checkpoints
from sparsity_gui.ui.note.controls import ControlPanel
from sparsity_gui.ui.note.export import NoteExports
from sparsity_gui.ui.note.file_menu import FileMenu
from sparsity_gui.ui.note.movie_dialog import note_movie_source
from sparsity_gui.ui.note.scaling_tab import ScalingWidget
from sparsity_gui.ui.pins import PinControl
from sparsity_gui.ui.window import LiveWindow

# the widest text each status field shows in a run up to m = 10^7 (the fields' widths)
STATUS_WIDEST = {
    "state": "compiling",
    "t": "t = 8888.888",
    "nonzero": "m' = 10,000,000",
    "norm2": "‖W‖² = 0.888888",
    "norm1": "‖W‖₁ = 8888.88",
    "theta": "θ = 0.8888",
    "lam": "λ = 8.8e-88",
    "sps": "88,888,888 steps/s",
    "fps": "88 fps",
}
NOT_YET = "—"  # a status field with nothing to show yet
LAM = NOTE_SETTINGS["lam"]


def steps_per_second_text(rate: float) -> str:
    """The solver's rate, or — where there is none (a new run's first snapshot, whose
    rate is measured across the reset and can come out negative)."""
    return f"{rate:,.0f} steps/s" if np.isfinite(rate) and rate >= 0 else f"{NOT_YET} steps/s"


class NoteWindow(LiveWindow, QtWidgets.QMainWindow):
    LAYOUT_KEY = "window"
    STOPPED_TITLE = "Simulation stopped"
    MODEL = "note"
    # a new running run reaches one panel a frame (LiveWindow.paint_panels): the markers of
    # a run's live changes come from its log (Snapshot.changes), so a panel that takes the
    # run a few frames late misses none
    NEW_RUN_PANELS = 1

    def __init__(
        self,
        params: SimParams | None = None,
        w0: np.ndarray | None = None,
        *,
        playing: bool = True,
        speed: float | None = None,
        windows=None,
        parent=None,
    ):
        super().__init__(parent)
        params = SimParams() if params is None else params
        self.windows = windows  # ui.windows.ModelWindows: the Model menu opens the other model
        self.setWindowTitle("sparsity-gui: L1 regularization drives W to sparsity")
        self.setObjectName("NoteWindow")
        self.params = params
        self.w0 = w0
        self.w0_source = W0Source("normal") if params.w0_path is None else W0Source("file", params.w0_path)
        self.run_id = 1
        self.speed = default_speed(params.lam) if speed is None else speed
        self.playing = playing
        self.snapshot: Snapshot | None = None
        self._note_due = 0.0
        self._frozen_after_warm_up = False
        self._compiling_message = ""  # shown in the status bar while the kernels compile
        self._range_turn = 0
        self._shown_error: tuple[int, str] | None = None
        self._status_due = 0.0

        # --- panels --------------------------------------------------------------
        live, grid = self.panel_grid()
        self.panels: list[Panel] = [cls() for cls in PANEL_TYPES]
        # the panels past the sixth (the phase plane) are tabs in TABBED_WITH's cell
        tabbed = next(i for i, p in enumerate(self.panels[:GRID_PANELS]) if isinstance(p, TABBED_WITH))
        self.tabbed_panel_grid(grid, tabbed, GRID_PANELS)
        # the live panels and the scaling over m and lam, as tabs
        self.scaling = ScalingWidget(lambda: self.params, live=self)
        self.central_tabs(live, self.scaling, "scaling", "Scaling over m and λ")
        self.scaling.statusChanged.connect(lambda text: self.statusBar().showMessage(text, 2000))
        # time panels share one x axis
        time_plots = [p for panel in self.panels for p in panel.time_plots]
        for p in time_plots[1:]:
            p.setXLink(time_plots[0])

        # --- docks ---------------------------------------------------------------
        self.controls = ControlPanel(params, self.speed)
        self.parameters_dock(self.controls, "dock_parameters")
        self.note = NoteView()
        self.note_dock = QtWidgets.QDockWidget("The note's argument, live", self)
        self.note_dock.setObjectName("dock_note")
        self.note_dock.setWidget(self.note)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, self.note_dock)
        self.controls.changed.connect(self.on_params_changed)
        self.controls.scheduleChanged.connect(self.on_schedule_typed)
        self.controls.speedChanged.connect(self.on_speed_changed)
        self.controls.stopChanged.connect(self.on_stop_changed)
        self.controls.newSeedRequested.connect(self.new_seed)
        self.controls.loadFileRequested.connect(self.open_w0_dialog)

        # --- actions, toolbar, menus ---------------------------------------------
        self._build_actions()
        self._build_status_bar()

        # --- the worker ----------------------------------------------------------
        self.runner = Runner(
            params,
            w0,
            playing=playing,
            speed=self.speed,
            stop_at_one=params.t_end is None,
            run_id=self.run_id,
        )
        self.start_engine(self.runner, "simulation")
        self.finish_setup()

    def shown_panels(self) -> list:
        return [p for p in self.panels if p.isVisibleTo(self)]

    # ------------------------------------------------------------------------------
    def _build_actions(self) -> None:
        sp = QtWidgets.QStyle.StandardPixmap
        self.transport_actions(
            "Play / pause the simulation (Space)",
            "Single step (Right arrow): one GD step, or 1/30 s of simulated "
            "time at the current speed for the exact flow",
        )
        self.act_reset = self.action(
            "act_reset",
            "Reset",
            self.restart,
            "Ctrl+R",
            "Restart the run from W(0) with the current parameters (Ctrl+R)",
            sp.SP_BrowserReload,
        )
        self.act_open_w0 = QtGui.QAction("Load W(0) from file…", self)
        self.act_open_w0.triggered.connect(self.open_w0_dialog)
        self.act_quit = self.quit_action()
        self.act_reset_layout = QtGui.QAction("Reset layout", self)
        self.act_reset_layout.setObjectName("act_reset_layout")
        self.act_reset_layout.triggered.connect(self.reset_layout)
        for act in (self.act_play, self.act_step, self.act_reset):
            act.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)

        tb = self.addToolBar("Simulation")
        tb.setObjectName("toolbar_simulation")
        tb.addAction(self.act_play)
        tb.addAction(self.act_step)
        tb.addAction(self.act_reset)

        menu = self.menuBar()
        m_file = menu.addMenu("&File")
        m_file.addAction(self.act_open_w0)
        self.checkpoints = note_checkpoints(self)  # File → Compare with checkpoints…
        m_file.addAction(self.checkpoints.act_compare)
        m_file.addSeparator()
        m_file.addAction(self.act_quit)
        self.files = FileMenu(self, m_file)
        self.exports = NoteExports(self)
        self.exports.build_menus(m_file, self.act_quit)
        add_movie_action(self, m_file, self.act_quit, lambda: note_movie_source(self))
        m_sim = menu.addMenu("&Simulation")
        for act in (self.act_play, self.act_step, self.act_reset):
            m_sim.addAction(act)
        self.pin_control = PinControl(
            self,
            PIN_COLUMNS,
            pin_params,
            note_pin_label,
            lambda pin: timeseries_csv(pin.rows),
            lambda snap: f"t = {snap.t:.6g}",
        )
        self.pin_control.add_to(m_sim, tb)
        self.model_menu(menu)
        m_view = menu.addMenu("&View")
        m_view.addAction(self.param_dock.toggleViewAction())
        m_view.addAction(self.note_dock.toggleViewAction())
        m_view.addAction(tb.toggleViewAction())
        m_view.addSeparator()
        self.act_follow_live = QtGui.QAction("Time axes follow the live run", self)
        self.act_follow_live.setObjectName("act_follow_live")
        self.act_follow_live.setCheckable(True)
        self.act_follow_live.setChecked(True)
        self.act_follow_live.setToolTip(
            "The time axes span the live run alone (pinned runs drawn where they fall); "
            "unchecked, they hold every pinned run too"
        )
        self.act_follow_live.toggled.connect(self.set_follow_live)
        m_view.addAction(self.act_follow_live)
        m_view.addSeparator()
        m_view.addAction(self.act_reset_layout)
        self.help_menu(menu)

    def _build_status_bar(self) -> None:
        self.status_labels_for(
            (
                ("state", "simulation state"),
                ("t", "simulated time"),
                ("nonzero", "m': nonzero weights"),
                ("norm2", "‖W‖²"),
                ("norm1", "‖W‖₁"),
                ("theta", "threshold θ = λ/(1-‖W‖²)"),
                ("lam", "λ in force (it follows a schedule or warm-up)"),
                ("sps", "solver steps per second"),
                ("fps", "frames drawn per second"),
            ),
            80,
            STATUS_WIDEST,
        )
        self.status_labels["state"].setText("compiling")

    def layout_docks(self) -> list:
        return [self.param_dock, self.note_dock]

    @QtCore.Slot(bool)
    def set_follow_live(self, follow: bool) -> None:
        """View > Time axes follow the live run: on each panel, at once."""
        for panel in self.panels:
            setter = getattr(panel, "set_follow_live", None)
            if setter is not None:
                setter(follow)
                panel.redraw()

    # --- commands ----------------------------------------------------------------------
    @QtCore.Slot()
    def restart(self) -> None:
        """Reset (Ctrl+R): the same parameters again from W(0)."""
        self.start_run(self.params)

    @QtCore.Slot()
    def new_seed(self) -> None:
        seed = random.SystemRandom().randrange(0, 2**31 - 1)
        self.on_params_changed({"seed": seed, "w0_path": None})

    def start_run(
        self,
        params: SimParams,
        w0: np.ndarray | None = None,
        *,
        source: W0Source | None = None,
        script: RunScript | None = None,
        stop_at_one: bool | None = None,
    ) -> None:
        """A new run under a new id. W(0) is ``w0``, or the file's W(0) kept from before (a
        reset), or a normal draw; with ``script``, the run replayed to its time (a session)."""
        self.run_id += 1
        self.params = params
        if w0 is not None or params.w0_path is None:
            self.w0 = w0
        if source is not None:
            self.w0_source = source
        elif params.w0_path is None:
            self.w0_source = W0Source("normal")
        if stop_at_one is not None:
            self.runner.set_stop_at_one(stop_at_one)
        self.runner.start_run(params, self.run_id, w0=self.w0 if params.w0_path else None, script=script)
        self.pace_painting(idle=False)
        self.controls.show_params(params)
        # until the new run's first snapshot (W(0) drawn and sorted: seconds at m = 10^7)
        # the old run's numbers are not shown beside the new state
        self._show_preparing()

    def _show_preparing(self) -> None:
        self.set_status("state", "preparing")
        names = {"t": "t", "nonzero": "m'", "norm2": "‖W‖²", "norm1": "‖W‖₁", "theta": "θ", "lam": LAM.symbol}
        for key, name in names.items():
            self.set_status(key, f"{name} = {NOT_YET}")
        self.set_status("sps", f"{NOT_YET} steps/s")
        self.set_status("fps", f"{NOT_YET} fps")

    def current_script(self, samples: int = DEFAULT_SAMPLES) -> tuple[RunScript, W0Source]:
        """The run on screen up to the instant on screen (parameters at t = 0, W(0), live
        changes), from the snapshot: exports and sessions never read the worker's objects."""
        snap = self.snapshot
        if snap is None or snap.run_id != self.run_id:
            raise InputError("", "the run is still starting; try again in a moment")
        script = snap.script(samples)
        path = script.params.w0_path
        if path is None:
            source = W0Source("normal")
        elif self.w0_source.kind == "file" and self.w0_source.path == path:
            source = self.w0_source
        else:
            source = W0Source("file", path)
        return script, source

    @QtCore.Slot(str, object)
    def on_schedule_typed(self, name: str, value) -> None:
        """A warm-up T (0: none) or a schedule's knots ((): none) typed in its field: a new
        run under it (the other field emptied), or the reason at the field, the run going on."""
        field = getattr(self.controls, name)
        try:
            knots: Knots = value
            if name == "lam_warmup":
                if value > 0 and self.params.lam == 0:
                    raise InputError(name, "a warm-up raises λ from 0 to λ, which is 0: set λ > 0 first")
                knots = warmup_knots(value, self.params.lam) if value > 0 else ()
            lam = knots[-1][1] if knots else self.params.lam
            params = self.params.with_changes(lam=lam, lam_schedule=knots)
            t_end = params.t_end
            if knots and t_end is not None and knots[-1][0] > t_end:
                raise InputError(
                    name,
                    f"reaches its last λ at t = {format_exact(knots[-1][0])}, after "
                    f"{NOTE_SETTINGS['t_end'].text(t_end)}: "
                    "λ would never get there (shorten it, or set a later t_end)",
                )
            check_run_work(params)
        except InputError as exc:
            field.refuse(exc.message)
            return
        self.start_run(params)  # (shows the fields: the other one emptied)

    @QtCore.Slot(dict)
    def on_params_changed(self, changes: dict) -> None:
        try:
            params, restart = live_change(self.params, changes)
            if params.w0_path is None and "m" in changes:
                check_memory(params.m)
            check_run_work(params)
        except InputError as exc:
            field = getattr(self.controls, exc.field, None)
            if isinstance(field, Field) and exc.field in changes:  # at the field just typed in
                field.refuse(exc.message)
                return
            QtWidgets.QMessageBox.warning(self, "Invalid parameter", str(exc))
            self.controls.show_params(self.params)
            return
        if restart:
            self.start_run(params)
        else:
            ended = self.params.lam_schedule and not params.lam_schedule
            self.params = params
            if ended:  # the fields emptied; the λ field shows the λ now in force
                self.controls.show_schedule(params)
                self.controls.show_lam_in_force(params.lam)
            self.runner.set_params(params)
            self.pace_painting(idle=False)  # its snapshot, at once
            if "t_end" in changes:
                self.runner.set_stop_at_one(params.t_end is None)

    @QtCore.Slot(float)
    def on_speed_changed(self, speed: float) -> None:
        self.speed = speed
        self.runner.set_speed(speed)

    @QtCore.Slot(bool)
    def on_stop_changed(self, at_one: bool) -> None:
        self.runner.set_stop_at_one(at_one)

    @QtCore.Slot()
    def open_w0_dialog(self) -> None:
        path = open_file_name(self, "Load W(0)", FILE_FILTER)
        if path:
            self.files.load_w0(path)
        else:
            self.controls.show_params(self.params)

    # --- painting ----------------------------------------------------------------------
    @QtCore.Slot()
    def paint_latest(self) -> None:
        snap = self.runner.take_latest()
        if snap is None or snap.run_id != self.run_id:
            self.pace_painting(idle=False)  # a new run on its way
            return  # nothing yet, or a snapshot from before a reset: dropped
        if (
            self.snapshot is not None
            and snap.seq == self.snapshot.seq
            and snap.run_id == self.snapshot.run_id
        ):
            # nothing new: an idle run sends nothing until a command (which wakes the timer)
            idle = snap.state in ("paused", "finished", "error")
            self.pace_painting(idle=idle)
            self.paint_owed(snap)
            self.note.continue_update(self.note.pending if idle else 1)
            return
        self.pace_painting(idle=False)
        if snap.state == "compiling":  # a first launch: nothing to draw yet
            self._show_compiling(snap.message)
            return
        if not self._frozen_after_warm_up and snap.state != "compiling":
            # numba's warm-up in the worker leaves ~50k more long-lived objects: freeze
            # them too, or every full collection scans them (a 26 ms stall, measured)
            self._frozen_after_warm_up = True
            gc.freeze()
        state_changed = self.snapshot is None or self.snapshot.state != snap.state
        new_run = self.snapshot is None or self.snapshot.run_id != snap.run_id
        self.snapshot = snap
        if state_changed:
            self.show_transport()
        self.paint_panels(snap)
        self.pin_control.follow(self.params)  # pins are named by what differs from the live run
        now = self.frame_drawn()
        # numbers are read, not watched: 10 Hz is plenty, and each label change re-lays out
        # the status bar; an idle run's last snapshot is always shown (no other will come)
        idle = snap.state != "running"
        if now >= self._status_due or idle or new_run:  # a new run's first frame says so
            self._status_due = now + 0.1
            self._update_status(snap)
            self._show_lam_in_force(snap)
        if now >= self._note_due or idle:
            self._note_due = now + 0.25
            # while playing, one paragraph of the argument a frame (a frame that laid out
            # all six went over its budget); a paused or finished run's shown whole at once
            self.note.update_from(snap, spread=not idle)
        else:
            self.note.continue_update()
        if snap.state == "error":
            if self.playing:
                self.set_playing(False)
            if snap.message and (snap.run_id, snap.message) != self._shown_error:
                self._shown_error = (snap.run_id, snap.message)
                self.show_error(snap.message)

    def _show_lam_in_force(self, snap: Snapshot) -> None:
        """The λ field follows a schedule in force; not a snapshot from before the live
        change that ended it (the field then shows the λ typed)."""
        knots = self.params.lam_schedule
        if knots and snap.params.lam_schedule == knots:
            self.controls.show_lam_in_force(lam_at(knots, snap.t))

    def _update_status(self, snap: Snapshot) -> None:
        put = self.set_status
        put("state", snap.state)
        self._show_compiling("")
        put("t", f"t = {time_text(snap.t)}")
        put("nonzero", f"m' = {snap.nonzero:,}")
        put("norm2", f"‖W‖² = {snap.norm2_sq:.6f}")
        put("norm1", f"‖W‖₁ = {snap.norm1:.6g}")
        put("theta", f"θ = {snap.theta:.4g}")
        put("lam", LAM.text(snap.lam))  # as the settings table writes λ
        put("sps", steps_per_second_text(snap.steps_per_second))
        # idle, nothing is painted: the last rate would be stale
        put("fps", f"{self.fps:.0f} fps" if snap.state == "running" else f"{NOT_YET} fps")

    def _show_compiling(self, message: str) -> None:
        """While a first launch compiles the kernels the status bar says what and for about
        how long, in the room of the run's numbers (there are none yet); "" ends it."""
        if message == self._compiling_message:
            return
        self._compiling_message = message
        for key, label in self.status_labels.items():
            label.setVisible(key == "state" or not message)
        if message:
            self.set_status("state", "compiling")
            self.statusBar().showMessage(message)
        else:
            self.statusBar().clearMessage()

    # --- shutdown ----------------------------------------------------------------------
    def grid_tab(self):
        return self.scaling
