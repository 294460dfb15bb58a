"""The figures' style, chosen in either window (Export figure → Figure style): paper, talk
or a matplotlib .mplstyle file on top of the paper style; remembered in the settings (one
choice for both windows) and saved in sessions. Every exported figure and movie uses it.
And the formats Export all writes its figures in (chosen in its folder dialog), remembered
the same way."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtGui, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.ui.dialogs import settings

STYLE_KEY = "figures/style"  # "paper", "talk" or a .mplstyle file's path
FORMATS_KEY = "figures/formats"  # Export all's: a comma list, "png,svg,pdf"
BUILT_IN = ("paper", "talk")


def chosen_formats() -> tuple[str, ...]:
    """The figure formats Export all writes: the last choice (kept in the settings across
    launches, one for both windows), else all three; a stored value figures/save.py's check
    refuses (an edited settings file) counts as none."""
    from sparsity_gui.figures.save import FORMATS, figure_formats

    value = settings().value(FORMATS_KEY)
    try:
        return figure_formats(value) if isinstance(value, str) else FORMATS
    except InputError:
        return FORMATS


def remember_formats(formats) -> tuple[str, ...]:
    """``formats`` checked (InputError, TypeError) and kept as the next Export all's."""
    from sparsity_gui.figures.save import figure_formats

    formats = figure_formats(formats)
    s = settings()
    s.setValue(FORMATS_KEY, ",".join(formats))
    s.sync()
    return formats


class FigureStyleChoice:
    """Mixed into a window's exports (which have `win`): style(), set_style() and the
    Figure style menu."""

    def style(self) -> str:
        """The figure style the user chose: "paper", "talk" or a .mplstyle file."""
        value = settings().value(STYLE_KEY)
        return value if isinstance(value, str) and value else "paper"

    def set_style(self, style: str | Path) -> bool:
        """Use `style` for every exported figure and movie; a style file that cannot be
        used is refused with its reason, the choice unchanged."""
        from sparsity_gui.figures.style import style_params

        style = str(style)
        try:
            style_params(style)
        except InputError as exc:
            self._mark_style()
            return self.win.fail("Cannot use the figure style", exc.message)
        settings().setValue(STYLE_KEY, style)
        self._mark_style()
        return self.win.done(f"Figures in the {Path(style).name} style")

    def add_style_menu(self, menu: QtWidgets.QMenu) -> None:
        style_menu = menu.addMenu("Figure style")
        style_menu.setObjectName("menu_figure_style")
        self._style_actions: dict[str, QtGui.QAction] = {}
        group = QtGui.QActionGroup(style_menu)
        for key, text, tip in (
            ("paper", "Paper", "A journal's column: 3.5 in wide, 8 pt text, thin lines"),
            ("talk", "Talk", "Slides: larger text and lines"),
            ("file", "Style file…", "A matplotlib .mplstyle file on top of the paper style"),
        ):
            a = style_menu.addAction(text)
            a.setCheckable(True)
            a.setToolTip(tip)
            group.addAction(a)
            self._style_actions[key] = a
            if key == "file":
                a.triggered.connect(lambda _c=False: self.style_file_dialog())
            else:
                a.triggered.connect(lambda _c=False, k=key: self.set_style(k))
        style_menu.setToolTipsVisible(True)
        self._mark_style()

    def _mark_style(self) -> None:
        actions = getattr(self, "_style_actions", None)
        if not actions:
            return
        style = self.style()
        key = style if style in BUILT_IN else "file"
        actions[key].setChecked(True)
        actions["file"].setText(f"Style file: {Path(style).name}…" if key == "file" else "Style file…")

    def style_file_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self.win, "Figure style", "", "matplotlib style (*.mplstyle);;All files (*)"
        )
        if path:
            self.set_style(path)
        else:
            self._mark_style()
