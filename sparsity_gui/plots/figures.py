"""Figures drawn headless, from data rather than from a window: the note model's six
panels of a sampled run (`FigureSet`, `write_figures` for `run --figures` and *Export all*)
and the interference sweep's figure (`sweep_figure_files`). Qt runs offscreen; no widget
outlives a call."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_bytes
from sparsity_gui.core.interference.sweep import SweepRow, SweepSpec
from sparsity_gui.core.note.files import tracked_csv
from sparsity_gui.core.note.runner import Snapshot, snapshot_of
from sparsity_gui.plots.render import (
    DEFAULT_SCALE,
    PANEL_SIZE,
    antialiased,
    delete_widgets,
    ensure_app,
    render_panel,
    render_widget,
    slug,
)


def sweep_figure_files(
    spec: SweepSpec | None,
    rows: Sequence[SweepRow],
    size: tuple[int, int] | None = None,
    scale: float | None = None,
    cancelled: bool = False,
) -> dict[str, bytes]:
    """{sweep.png, sweep.svg: bytes}: the SweepPanel drawn offscreen (creates a QApplication
    on the offscreen platform if there is none; leaves no widget alive). Rows fewer than
    the spec's runs are marked on the figure as incomplete (``cancelled``: as cancelled)."""
    try:
        from PySide6 import QtCore

        from sparsity_gui.plots.sweep import SweepPanel
    except ImportError as exc:
        raise InputError("figures", f"drawing the figure needs PySide6 and pyqtgraph ({exc})") from None
    app, _created = ensure_app()
    with antialiased():
        panel = SweepPanel()
    try:
        panel.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        panel.resize(*(size or PANEL_SIZE))
        panel.show()
        app.processEvents()
        if spec is not None:
            panel.show_rows(
                rows,
                n=spec.base.n,
                m_values=spec.m_values,
                planned_runs=len(spec.runs()),
                cancelled=cancelled,
            )
        else:
            panel.show_rows(rows)
        app.processEvents()
        scale = DEFAULT_SCALE if scale is None else scale
        return {f"sweep.{fmt}": render_panel(panel, fmt, scale) for fmt in ("png", "svg")}
    except RuntimeError as exc:
        raise InputError("figures", str(exc)) from None
    finally:
        delete_widgets(app, panel)


LAYOUT_SIZE = (1800, 1040)  # px of the headless six-panel layout


# --- headless panels from a run's rows -------------------------------------------------
def sampled_snapshot(run) -> Snapshot:
    """A Snapshot (what the panels draw) of a sampled run: its rows as the history and its
    final state for the weight panels."""
    return snapshot_of(
        run.sim, run.sim.params, run_id=1, seq=1, state="finished", history=run.rows, fit=run.fit
    )


def panel_view_state(panel) -> dict:
    """The user's view choices on a panel (toggles, tracked count), to copy onto a fresh one."""
    from PySide6 import QtWidgets

    state: dict = {"checks": [b.isChecked() for b in panel.findChildren(QtWidgets.QCheckBox)]}
    count = getattr(panel, "count", None)
    if isinstance(count, QtWidgets.QSpinBox):
        state["count"] = count.value()
    return state


def _apply_view_state(panel, state: dict | None) -> None:
    from PySide6 import QtWidgets

    if not state:
        return
    boxes = panel.findChildren(QtWidgets.QCheckBox)
    for box, checked in zip(boxes, state.get("checks", ()), strict=False):
        box.blockSignals(True)
        box.setChecked(checked)
        box.blockSignals(False)
    if "count" in state and isinstance(getattr(panel, "count", None), QtWidgets.QSpinBox):
        panel.count.blockSignals(True)
        panel.count.setValue(state["count"])
        panel.count.blockSignals(False)
    panel.apply_toggles()


def _hide_controls(panel) -> None:
    """A figure shows the plots only: the toggles and the tracked count (their state is
    applied) are hidden, so the layout image has no check boxes or spin boxes."""
    toggles = panel.toggles
    for i in range(toggles.count()):
        widget = toggles.itemAt(i).widget()
        if widget is not None:
            widget.hide()


class FigureSet:
    """The note's panels drawn from one snapshot: the six of the grid in a hidden host
    widget laid out like the window's centre, the tabbed ones (the phase plane) on their
    own; with ``pins`` (pinned runs) and ``pin_labels`` (number -> legend text), the pinned
    runs' curves too. Use as a context manager: the widgets are deleted on exit."""

    def __init__(
        self,
        snap,
        view_states: list[dict] | None = None,
        layout_size: tuple[int, int] = LAYOUT_SIZE,
        pins=(),
        pin_labels: dict[int, str] | None = None,
    ):
        from PySide6 import QtCore, QtWidgets

        from sparsity_gui.plots.note import GRID_PANELS, PANEL_TYPES

        self.app, _ = ensure_app()
        with antialiased():
            self.host = QtWidgets.QWidget()
            self.host.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
            self.host.setStyleSheet("background: white;")
            grid = QtWidgets.QGridLayout(self.host)
            grid.setContentsMargins(2, 2, 2, 2)
            grid.setSpacing(3)
            self.panels = [cls() for cls in PANEL_TYPES]
        for i, panel in enumerate(self.panels):
            if i < GRID_PANELS:
                grid.addWidget(panel, i // 3, i % 3)
            else:  # a tab in the window: drawn on its own, outside the layout figure
                panel.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
                panel.resize(*PANEL_SIZE)
                panel.show()
            if view_states and i < len(view_states):
                _apply_view_state(panel, view_states[i])
            _hide_controls(panel)
        self.host.resize(*layout_size)
        self.host.show()
        self.app.processEvents()
        for panel in self.panels:
            panel.update_from(snap)
            if pins:
                panel.show_pins(list(pins), dict(pin_labels or {}))
        self.app.processEvents()

    def render_panel(
        self, panel, fmt: str, scale: float = DEFAULT_SCALE, size: tuple[int, int] = PANEL_SIZE
    ) -> bytes:
        """A panel on its own at `size` px: taken out of the grid while it is rendered."""
        from PySide6 import QtCore

        layout = self.host.layout()
        index = layout.indexOf(panel)
        if index < 0:  # not in the grid
            panel.resize(*size)
            self.app.processEvents()
            return render_panel(panel, fmt, scale)
        pos = layout.getItemPosition(index)
        layout.removeWidget(panel)
        panel.setParent(None)
        panel.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        panel.resize(*size)
        panel.show()
        self.app.processEvents()
        try:
            return render_panel(panel, fmt, scale)
        finally:
            panel.hide()
            layout.addWidget(panel, pos[0], pos[1])
            panel.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, False)
            panel.show()
            self.app.processEvents()

    def tracked_shown(self) -> int | None:
        """How many tracked weights the threshold panel draws (tracked.csv holds those)."""
        return next((p.count.value() for p in self.panels if hasattr(p, "shown_tracked")), None)

    def render_layout(self, fmt: str = "png", scale: float = DEFAULT_SCALE) -> bytes:
        grid = self.host.layout()
        return render_widget(self.host, fmt, scale, [p for p in self.panels if grid.indexOf(p) >= 0])

    def files(
        self,
        formats: Iterable[str] = ("png", "svg"),
        scale: float = DEFAULT_SCALE,
        layout_name: str | None = "layout",
    ) -> dict[str, bytes]:
        """{file name: bytes} of every panel in each format, and the layout as PNG."""
        out: dict[str, bytes] = {}
        for panel in self.panels:
            for fmt in formats:
                out[f"{slug(panel.title)}.{fmt}"] = self.render_panel(panel, fmt, scale)
        if layout_name:
            out[f"{layout_name}.png"] = self.render_layout("png", scale=1.0)
        return out

    def close(self) -> None:
        panels, self.panels = self.panels, []
        delete_widgets(self.app, *panels, self.host)

    def __enter__(self) -> FigureSet:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_figures(
    run, folder: str | Path, view_states: list[dict] | None = None, scale: float = DEFAULT_SCALE
) -> list[Path]:
    """`run --figures`: each panel as PNG and SVG and the whole layout as PNG in `folder`,
    plus tracked.csv (the threshold panel's tracked weights, the one figure input that is
    not in timeseries.csv). Works without a display; leaves no widget alive."""
    from sparsity_gui.core.errors import InputError

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        app, created = ensure_app()
        snap = sampled_snapshot(run)
        with FigureSet(snap, view_states) as figs:
            files = figs.files(("png", "svg"), scale)
            shown = figs.tracked_shown()
    except ImportError as exc:
        raise InputError("figures", f"drawing figures needs PySide6 and pyqtgraph ({exc})") from None
    except RuntimeError as exc:
        raise InputError("figures", str(exc)) from None
    written = []
    for name, data in files.items():
        atomic_write_bytes(folder / name, data)
        written.append(folder / name)
    atomic_write_bytes(folder / "tracked.csv", tracked_csv(run, shown).encode("utf-8"))
    written.append(folder / "tracked.csv")
    if created:
        app.processEvents()
    return written
