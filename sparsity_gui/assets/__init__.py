"""Runtime assets (the app icon), read through importlib.resources.

The files live in the repository's resources/icons/; the build copies them beside this
module (setup.py into the wheel, packaging/sparsity-gui.spec into the bundle), and a source
checkout (an editable install) reads resources/icons/ itself. The same calls work in all
three.

    from sparsity_gui import assets
    assets.icon_path()          # Path of the scalable icon (icon.svg)
    assets.icon_path(64)        # Path of icon-64.png (nearest size >= 64 if not exact)
    assets.read_asset("icon.svg")  # bytes
    app.setWindowIcon(assets.app_icon())  # QIcon with every PNG size (imports Qt)

Nothing here imports Qt at module level: only ``app_icon()`` does, when called.
"""

from __future__ import annotations

import atexit
import contextlib
from functools import cache
from importlib import resources as _ir
from importlib.resources.abc import Traversable
from pathlib import Path

#: Sizes (pixels) of the committed PNG icons, resources/icons/icon-<N>.png; made by
#: packaging/make_icons.py.
ICON_SIZES: tuple[int, ...] = (16, 24, 32, 48, 64, 128, 256, 512)

#: Reverse-DNS application id: the name of the .desktop file, the AppStream component id and
#: the icon name in resources/. Pass it to QGuiApplication.setDesktopFileName() so Wayland
#: compositors and docks match the running window to the installed .desktop entry.
APP_ID = "io.github.sparsitygui.SparsityGui"

_extracted = contextlib.ExitStack()  # keeps files extracted from a zip alive until exit
atexit.register(_extracted.close)


@cache
def files() -> Traversable:
    """The folder holding the icon files, as an importlib.resources Traversable: this
    package's own copy in a wheel or a bundle, else the checkout's resources/icons/."""
    package = _ir.files(__name__)
    if package.joinpath("icon.svg").is_file():
        return package
    checkout = Path(__file__).resolve().parents[2] / "resources" / "icons"
    return checkout if (checkout / "icon.svg").is_file() else package


def _entry(name: str) -> Traversable:
    if not name or name.startswith(("/", "\\")) or ".." in Path(name).parts:
        raise ValueError(f"asset name must be a plain relative name, got {name!r}")
    entry = files().joinpath(*Path(name).parts)
    if not entry.is_file():
        raise FileNotFoundError(f"sparsity_gui asset not found: {name!r}")
    return entry


def read_asset(name: str) -> bytes:
    """The bytes of the asset ``<name>``; FileNotFoundError if it is missing."""
    return _entry(name).read_bytes()


def asset_path(name: str) -> Path:
    """A real file-system path of the asset ``<name>``, valid until the process
    exits (extracted to a temporary file if the package was imported from a zip)."""
    return _as_path(name)


@cache
def _as_path(name: str) -> Path:
    entry = _entry(name)
    if isinstance(entry, Path):
        return entry
    return Path(_extracted.enter_context(_ir.as_file(entry)))


def icon_name(size: int | None = None) -> str:
    """The file name of the icon for ``size``: ``icon.svg`` for None, else ``icon-<N>.png``
    with N the smallest committed size >= ``size`` (the largest one if ``size`` exceeds it)."""
    if size is None:
        return "icon.svg"
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"icon size must be a positive int or None, got {size!r}")
    fitting = [s for s in ICON_SIZES if s >= size]
    return f"icon-{fitting[0] if fitting else ICON_SIZES[-1]}.png"


def icon_path(size: int | None = None) -> Path:
    """Path of the app icon: the SVG for ``size=None``, else the PNG of that size (or the
    nearest larger one, see icon_name)."""
    return asset_path(icon_name(size))


def icon_paths() -> list[Path]:
    """Paths of every PNG size of the icon, smallest first."""
    return [asset_path(f"icon-{s}.png") for s in ICON_SIZES]


def app_icon():
    """A QIcon holding every PNG size (needs a QGuiApplication; imports Qt).

    PNGs rather than the SVG, because the SVG icon engine is a Qt plugin that a trimmed
    bundle may lack; Qt picks the best size for title bars, task bars and docks.
    """
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QIcon

    icon = QIcon()
    for size, path in zip(ICON_SIZES, icon_paths(), strict=True):
        icon.addFile(str(path), QSize(size, size))
    return icon
