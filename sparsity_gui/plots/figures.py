"""The interference sweep's figure drawn headless by Qt (`sweep_figure_files`), offscreen;
no widget outlives a call. (The note model's figures are matplotlib's: figures/note.py.)"""

from __future__ import annotations

from collections.abc import Sequence

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.sweep import SweepRow, SweepSpec
from sparsity_gui.plots.render import (
    DEFAULT_SCALE,
    PANEL_SIZE,
    antialiased,
    delete_widgets,
    ensure_app,
    render_panel,
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
