"""What the note's window and the interference window share: the engine's thread and the
paint timer, the process-wide settings that keep the GUI thread responsive, layout
persistence, play / pause / single step, and non-blocking warning dialogs; the frames
(ranges by turns, the paint budget, the fps) are ui/painting.py's.

A window mixes `LiveWindow` in before QMainWindow, sets ``MODEL``, ``LAYOUT_KEY``,
``panels`` and ``param_dock``, calls `start_engine` with its Qt-free engine (both follow
core.mailbox's protocol), then `finish_setup` at the end of __init__. `fail` and `done`
report every File menu action's outcome (the dialogs are ui/dialogs.py's, the figure
exports ui/figure_export.py's).
"""

from __future__ import annotations

import gc
import sys
import threading

from PySide6 import QtCore, QtGui, QtWidgets

from sparsity_gui.ui.background import BackgroundJob
from sparsity_gui.ui.dialogs import settings, show_warning
from sparsity_gui.ui.painting import PanelPainting

PAINT_HZ = 60
# while the run on screen is paused, finished or stopped by an error no snapshot comes: the
# paint timer only looks for one (a play, a step, a change), at this rate
IDLE_PAINT_HZ = 10
JOIN_SECONDS = 10.0
DEFAULT_SIZE = QtCore.QSize(1500, 900)  # the first launch on a screen with room for it
# Title bar and borders a window manager adds around a window not yet shown (its frame is
# unknown until then): enough for the common desktops' decorations.
DECORATION = QtCore.QSize(8, 40)


def fitted_size(available: QtCore.QRect, decoration: QtCore.QSize) -> QtCore.QSize:
    """DEFAULT_SIZE, or what of it fits the screen's available geometry with the frame."""
    return QtCore.QSize(
        min(DEFAULT_SIZE.width(), available.width() - decoration.width()),
        min(DEFAULT_SIZE.height(), available.height() - decoration.height()),
    )


# The Model menu: (model, label, what it opens)
MODELS = (
    ("note", "Single encoding (the note)", "One encoding W under L1, the research note's model"),
    (
        "interference",
        "Interference and polysemanticity",
        "n encodings with interference (Lecomte et al. 2023), polysemantic neurons against "
        "n²/(4m), sweeps over m",
    ),
)


class LiveWindow(PanelPainting):
    LAYOUT_KEY = "window"
    STOPPED_TITLE = "Stopped"
    MODEL = ""  # this window's entry in MODELS
    windows = None  # ui.windows.ModelWindows, through which the Model menu opens the others
    closed = False  # shut down: threads joined, timers stopped

    # --- set-up ----------------------------------------------------------------------
    def panel_grid(self) -> tuple[QtWidgets.QWidget, QtWidgets.QGridLayout]:
        """The live run's tab: a widget and the grid, closely packed, that holds its panels."""
        live = QtWidgets.QWidget()
        grid = QtWidgets.QGridLayout(live)
        grid.setContentsMargins(2, 2, 2, 2)
        grid.setSpacing(3)
        return live, grid

    def central_tabs(
        self, live: QtWidgets.QWidget, grid_tab: QtWidgets.QWidget, name: str, text: str
    ) -> None:
        """The window's centre, ``tabs``: the live run, and the model's grid of runs
        (``grid_tab``, its object ``name``, its tab's ``text`` and the widget's tooltip)."""
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setObjectName("tabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(live, "Live run")
        grid_tab.setObjectName(name)
        self.tabs.addTab(grid_tab, text)
        self.tabs.setTabToolTip(1, grid_tab.toolTip())
        self.setCentralWidget(self.tabs)

    def parameters_dock(self, widget: QtWidgets.QWidget, name: str) -> QtWidgets.QScrollArea:
        """``param_dock``: the "Parameters" dock (its object ``name``) on the left, holding
        ``widget`` in the scroll area returned."""
        scroll = QtWidgets.QScrollArea()
        scroll.setWidget(widget)
        scroll.setWidgetResizable(True)
        self.param_dock = QtWidgets.QDockWidget("Parameters", self)
        self.param_dock.setObjectName(name)
        self.param_dock.setWidget(scroll)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, self.param_dock)
        return scroll

    def start_engine(self, engine, thread_name: str) -> None:
        """Run engine.run_forever in a daemon thread and paint its snapshots at PAINT_HZ."""
        self.engine = engine
        self._fps_window: list[float] = []
        self.thread = threading.Thread(target=engine.run_forever, name=thread_name, daemon=True)
        self.thread.start()
        self.paint_timer = QtCore.QTimer(self)
        self.paint_timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
        self.paint_timer.timeout.connect(self.paint_latest)
        self.paint_timer.start(int(1000 / PAINT_HZ))

    def finish_setup(self) -> None:
        for panel in self.panels:  # a frame counts when it reaches the screen
            view = getattr(panel, "graphics", None)
            if hasattr(view, "painted"):
                view.painted = self._view_painted
        self.fit_to_screen()
        self._default_state = self.saveState()
        self._restore_layout()
        # numpy, scipy, numba and Qt leave ~10^6 long-lived Python objects; a full
        # cyclic collection scans them all and stalled the GUI thread for 100-300 ms
        # (measured). Freeze what exists now so collections only see new objects.
        gc.collect()
        gc.freeze()
        # The worker re-takes the GIL after every numba call; with the default 5 ms switch
        # interval it waits behind the painting GUI thread each time (a 10x slower run
        # at m = 10^7, measured). A short interval lets it in quickly.
        sys.setswitchinterval(0.0005)

    def action(
        self,
        name: str,
        text: str,
        slot,
        shortcut=None,
        tip: str = "",
        icon: QtWidgets.QStyle.StandardPixmap | None = None,
    ) -> QtGui.QAction:
        act = QtGui.QAction(text, self)
        if icon is not None:
            act.setIcon(self.style().standardIcon(icon))
        act.setObjectName(name)
        if shortcut is not None:
            act.setShortcut(QtGui.QKeySequence(shortcut))
        if tip:
            act.setToolTip(tip)
        act.triggered.connect(slot)
        return act

    def transport_actions(self, play_tip: str, step_tip: str) -> None:
        """act_play (Space) and act_step (Right arrow)."""
        self._play_tip = play_tip
        sp = QtWidgets.QStyle.StandardPixmap
        self.act_play = self.action(
            "act_play", "Pause", self.toggle_play, QtCore.Qt.Key.Key_Space, play_tip, sp.SP_MediaPause
        )
        self.act_play.setProperty("shortcut_text", "Play / pause")
        self.act_step = self.action(
            "act_step", "Step", self.single_step, QtCore.Qt.Key.Key_Right, step_tip, sp.SP_MediaSeekForward
        )

    def model_menu(self, menu_bar: QtWidgets.QMenuBar) -> None:
        """Model: this window's model checked, the others opened in their own window
        (act_model_note, act_model_interference)."""
        menu = menu_bar.addMenu("&Model")
        menu.setObjectName("menu_model")
        for model, label, tip in MODELS:
            here = model == self.MODEL
            act = menu.addAction(label if here else label + "…")
            act.setObjectName(f"act_model_{model}")
            act.setToolTip(tip)
            act.setCheckable(here)
            act.setChecked(here)
            if here:
                act.triggered.connect(lambda _c=False, a=act: a.setChecked(True))
            else:
                act.setEnabled(self.windows is not None)
                act.triggered.connect(lambda _c=False, m=model: self.windows.open(m))
            setattr(self, f"act_model_{model}", act)
        menu.setToolTipsVisible(True)

    def quit_action(self) -> QtGui.QAction:
        """Quit (Ctrl+Q): close every window of the app (the main one takes the others)."""
        act = self.action(
            "act_quit",
            "Quit",
            self.quit_app,
            "Ctrl+Q",  # not StandardKey.Quit: that binding is empty on some platforms
            "Close every window of sparsity-gui (Ctrl+Q)",
        )
        act.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        return act

    @QtCore.Slot()
    def quit_app(self) -> None:
        main = self.windows.main if self.windows is not None else None
        (main if main is not None and not main.closed else self).close()
        if not self.closed:
            self.close()

    def help_menu(self, menu_bar: QtWidgets.QMenuBar) -> None:
        """Help: the documentation (ui/help.DOCS; act_doc_<key>), the
        keyboard shortcuts of this window, About."""
        from sparsity_gui.ui.help import DOCS

        menu = menu_bar.addMenu("&Help")
        menu.setObjectName("menu_help")
        for key, rel, text in DOCS:
            act = menu.addAction(text)
            act.setObjectName(f"act_doc_{key}")
            act.setToolTip(rel)
            act.triggered.connect(lambda _c=False, r=rel: self.show_doc(r))
        menu.setToolTipsVisible(True)
        menu.addSeparator()
        act = menu.addAction("Keyboard shortcuts")
        act.setObjectName("act_shortcuts")
        act.triggered.connect(lambda _c=False: self.show_shortcuts())
        act = menu.addAction("About sparsity-gui")
        act.setObjectName("act_about")
        act.triggered.connect(lambda _c=False: self.about())

    def shortcuts_text(self) -> str:
        """Every action of this window that has a shortcut, as an HTML table."""
        rows = {}
        for act in self.findChildren(QtGui.QAction):
            key = act.shortcut().toString(QtGui.QKeySequence.SequenceFormat.NativeText)
            if key and act.isVisible():
                # an action whose text says its current effect (Play or Pause) is listed by
                # what its key does in every state
                text = act.property("shortcut_text") or act.text()
                rows[text.replace("&", "").rstrip("…")] = key
        by_key = sorted(rows.items(), key=lambda row: row[1])
        cells = "".join(f"<tr><td><b>{key}</b></td><td>{text}</td></tr>" for text, key in by_key)
        return (
            f"<table cellspacing=6>{cells}</table>"
            "<p>Enter in a field applies its value and gives the keys back to the window.</p>"
        )

    docs_viewer = None

    def show_doc(self, rel: str):
        """A page of the documentation (a path from the docs' root) in this window's docs
        viewer; None, with the reason shown, when this copy of the app has no docs."""
        from sparsity_gui.ui.help import DocsViewer, docs_root

        root = docs_root()
        if root is None:
            self.fail(
                "Cannot open the documentation",
                "This copy of sparsity-gui has no documentation: neither sparsity_gui/docs "
                "(an installed wheel or bundle) nor a source checkout holds it.",
            )
            return None
        if self.docs_viewer is None:
            self.docs_viewer = DocsViewer(root, self)
        self.docs_viewer.open_page(rel)
        self.docs_viewer.show()
        self.docs_viewer.raise_()
        self.docs_viewer.activateWindow()
        return self.docs_viewer

    def show_shortcuts(self) -> QtWidgets.QMessageBox:
        box = QtWidgets.QMessageBox(self)
        box.setWindowTitle("Keyboard shortcuts")
        box.setTextFormat(QtCore.Qt.TextFormat.RichText)
        box.setText(self.shortcuts_text())
        box.setModal(False)
        box.show()
        self.shortcuts_box = box
        return box

    def about(self) -> None:
        from sparsity_gui import __version__

        QtWidgets.QMessageBox.about(
            self,
            "About sparsity-gui",
            f"<b>sparsity-gui {__version__}</b><p>Simulates, live, how L1 regularization drives "
            "feature encodings to sparsity, next to the research note's argument. The formulas "
            "behind every panel are derived in Help › Theory (docs/theory.md).</p>",
        )

    def status_labels_for(self, specs, width: int, widest: dict[str, str] | None = None) -> None:
        """Permanent status-bar labels, self.status_labels[key], from (key, tooltip) pairs,
        each at least ``width`` px wide or as wide as its text in ``widest``: fields that
        keep their place as their numbers change (set_status widens, never narrows)."""
        bar = self.statusBar()
        self.status_labels: dict[str, QtWidgets.QLabel] = {}
        for key, tip in specs:
            label = QtWidgets.QLabel()
            label.setObjectName(f"status_{key}")
            label.setToolTip(tip)
            sample = (widest or {}).get(key, "")
            label.setMinimumWidth(max(width, label.fontMetrics().horizontalAdvance(sample) + 8))
            bar.addPermanentWidget(label)
            self.status_labels[key] = label

    def set_status(self, key: str, text: str) -> None:
        """A status field's text; the field only ever widens (a narrower number would
        move every field to its right)."""
        label = self.status_labels[key]
        if label.text() == text:
            return
        label.setText(text)
        need = label.sizeHint().width()
        if need > label.minimumWidth():
            label.setMinimumWidth(need)

    # --- size on screen ---------------------------------------------------------------
    def available_geometry(self) -> QtCore.QRect:
        screen = self.screen() or QtGui.QGuiApplication.primaryScreen()
        return screen.availableGeometry()

    def fit_to_screen(self) -> None:
        """The default size where the screen has room (a 1366x768 laptop has not), centred
        in the screen's available geometry (without its panels and docks)."""
        avail = self.available_geometry()
        frame = self.frameGeometry().size() - self.geometry().size()
        decoration = frame if self.isVisible() else frame.expandedTo(DECORATION)
        size = fitted_size(avail, decoration)
        self.resize(size)
        self.move(
            avail.x() + (avail.width() - size.width() - decoration.width()) // 2,
            avail.y() + (avail.height() - size.height() - decoration.height()) // 2,
        )

    def keep_on_screen(self) -> None:
        """Shrink and move the shown window (its frame now known) into the available
        geometry: a restored geometry from a larger screen, a guessed frame too small."""
        avail = self.available_geometry()
        frame = self.frameGeometry()
        if avail.contains(frame):
            return
        extra = frame.size() - self.geometry().size()
        size = self.size().boundedTo(avail.size() - extra)
        self.resize(size)
        x = min(max(frame.x(), avail.x()), avail.right() + 1 - size.width() - extra.width())
        y = min(max(frame.y(), avail.y()), avail.bottom() + 1 - size.height() - extra.height())
        self.move(x, y)

    _placed = False

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if not self._placed:
            self._placed = True
            QtCore.QTimer.singleShot(0, self.keep_on_screen)  # once the frame is known

    # --- layout persistence ----------------------------------------------------------
    def layout_docks(self) -> list:
        """Docks that Reset layout shows again."""
        return [self.param_dock]

    def _restore_layout(self) -> None:
        s = settings()
        geometry = s.value(f"{self.LAYOUT_KEY}/geometry")
        state = s.value(f"{self.LAYOUT_KEY}/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)

    def save_layout(self) -> None:
        s = settings()
        s.setValue(f"{self.LAYOUT_KEY}/geometry", self.saveGeometry())
        s.setValue(f"{self.LAYOUT_KEY}/state", self.saveState())
        s.sync()

    @QtCore.Slot()
    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        for dock in self.layout_docks():
            dock.show()
        self.fit_to_screen()

    # --- commands --------------------------------------------------------------------
    @QtCore.Slot()
    def toggle_play(self) -> None:
        """Play / pause; Play on a finished run runs it again from W(0)."""
        if self.playing and self.finished:
            self.restart()
            self.set_playing(True)
        else:
            self.set_playing(not self.playing)

    def set_playing(self, playing: bool) -> None:
        """Whether the user wants the run to go on (a new run follows it too)."""
        self.playing = playing
        self.engine.play(playing)
        self.show_transport()
        self.pace_painting(idle=False)

    def pace_painting(self, idle: bool) -> None:
        """The paint timer at PAINT_HZ, or at IDLE_PAINT_HZ while the run on screen is idle
        (paused, finished, stopped): an idle window wakes 10 times a second, not 60."""
        interval = int(1000 / (IDLE_PAINT_HZ if idle else PAINT_HZ))
        if self.paint_timer.interval() != interval:
            self.paint_timer.setInterval(interval)

    def restart(self) -> None:
        """The same parameters again from W(0) (each window's Ctrl+R)."""
        raise NotImplementedError

    @property
    def finished(self) -> bool:
        """The run on screen has ended (one weight left, t_end, its last step)."""
        snap = self.snapshot
        return snap is not None and snap.run_id == self.run_id and snap.state == "finished"

    def show_transport(self) -> None:
        """The Play action says what pressing it does: Pause while the run goes on, Play
        when it is paused or has finished."""
        running = self.playing and not self.finished
        sp = QtWidgets.QStyle.StandardPixmap
        self.act_play.setText("Pause" if running else "Play")
        self.act_play.setIcon(self.style().standardIcon(sp.SP_MediaPause if running else sp.SP_MediaPlay))
        self.act_play.setToolTip(
            "Run the same parameters again from W(0) (Space)" if self.finished else self._play_tip
        )

    @QtCore.Slot()
    def single_step(self) -> None:
        self.set_playing(False)
        self.engine.single_step()
        self.pace_painting(idle=False)

    # --- messages --------------------------------------------------------------------
    error_box: QtWidgets.QMessageBox | None = None

    def warning_box(self, title: str, message: str) -> QtWidgets.QMessageBox:
        self.error_box = show_warning(self, self.error_box, title, message)
        return self.error_box

    def show_error(self, message: str) -> None:
        self.warning_box(self.STOPPED_TITLE, message)

    last_error = ""  # the text of the last problem reported by fail (tests read it)

    def fail(self, title: str, message: str) -> bool:
        """Show a problem without blocking (a non-modal box), remember it, return False."""
        self.last_error = message
        self.warning_box(title, message)
        self.statusBar().showMessage(message.splitlines()[0], 10_000)
        return False

    def done(self, message: str) -> bool:
        self.last_error = ""
        self.statusBar().showMessage(message, 6000)
        return True

    def tabbed_panel_grid(self, grid: QtWidgets.QGridLayout, tabbed: int, in_grid: int) -> None:
        """The first ``in_grid`` panels in two rows of three, the one in cell ``tabbed``
        sharing it, as tabs (``panel_tabs``), with the panels past ``in_grid``: so every panel
        keeps its size at 1366x768. A panel in a hidden tab is not drawn each frame
        (painted_panels); it catches up when shown."""
        tabs = QtWidgets.QTabWidget()
        tabs.setObjectName("panel_tabs")
        tabs.setDocumentMode(True)
        tabs.setTabPosition(QtWidgets.QTabWidget.TabPosition.South)  # beside the toggles
        # flat tabs: the style's gradient tabs cannot be made plain SVG (the window's export)
        tabs.tabBar().setStyleSheet(
            "QTabBar::tab { background: #ececec; border: 1px solid #c8c8c8; padding: 2px 10px; }"
            "QTabBar::tab:selected { background: white; }"
        )
        for i, panel in enumerate(self.panels[:in_grid]):
            if i == tabbed:
                tabs.setTabToolTip(tabs.addTab(panel, panel.title), panel.claim)
            grid.addWidget(tabs if i == tabbed else panel, i // 3, i % 3)
        for panel in self.panels[in_grid:]:
            tabs.setTabToolTip(tabs.addTab(panel, panel.title), panel.claim)
        tabs.currentChanged.connect(self._panel_tab_shown)
        self.panel_tabs = tabs

    @QtCore.Slot(int)
    def _panel_tab_shown(self, index: int) -> None:
        panel = self.panel_tabs.widget(index)
        if self.snapshot is not None and self.snapshot.run_id == self.run_id:
            panel.update_from(self.snapshot)

    def painted_panels(self) -> list:
        """The panels each frame draws: those in a hidden tab (tabbed_panel_grid) are left out."""
        tabs = getattr(self, "panel_tabs", None)
        if tabs is None:
            return self.panels
        return [p for p in self.panels if tabs.indexOf(p) < 0 or tabs.currentWidget() is p]

    def all_panels(self) -> list:
        """Every panel an export can name by index."""
        return list(self.panels)

    def shown_panels(self) -> list:
        """The panels on screen (the whole-window figure styles these for print)."""
        return list(self.panels)

    # --- shutdown --------------------------------------------------------------------
    def grid_tab(self):
        """The window's grid of runs (ui.grid_tab.GridTab): the scaling grid or the sweep."""
        raise NotImplementedError

    def shutdown(self) -> None:
        """Stop the timers and join the engine's and the grid's threads (with a deadline)."""
        if self.closed:
            return
        self.closed = True
        self.grid_tab().shutdown()
        for job in self.findChildren(BackgroundJob):  # an export or a movie still being made
            job.shutdown()
        self.stop_engine()
        if self.windows is not None:
            self.windows.closing(self)  # the main window closes the other model's

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        self.save_layout()
        self.shutdown()
        super().closeEvent(event)

    def stop_engine(self) -> None:
        """Stop the paint timer and the engine's thread (joined with a deadline)."""
        self.paint_timer.stop()
        self.engine.stop()
        self.thread.join(JOIN_SECONDS)
