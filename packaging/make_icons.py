"""Render the app icon's PNG sizes from its SVG source.

    .venv/bin/python packaging/make_icons.py          # write the PNGs
    .venv/bin/python packaging/make_icons.py --check  # exit 1 if they are out of date

Source: resources/icons/icon.svg. Output, committed beside it (the build copies both into
the package): resources/icons/icon-<N>.png for every N in SIZES. Rendered with Qt's own
QSvgRenderer on the offscreen platform, so no display, Inkscape or cairo is needed.
`--check` compares pixels, not bytes, and tolerates the small anti-aliasing differences
between Qt releases (see _same_picture).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "resources" / "icons"
SOURCE = OUT / "icon.svg"


def render(svg: Path, size: int):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"error: cannot parse {svg}")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
    renderer.render(painter)
    painter.end()
    return image


def _pixels(image):
    import numpy as np
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    w, h = image.width(), image.height()
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())
    return rows[:, : 4 * w].reshape(h, w, 4).astype(np.int16)


def _same_picture(old, new) -> bool:
    """True if `old` shows what `new` shows: same size, and at most 1 % of the pixels differ
    by more than 24/255 in a channel (another Qt release may anti-alias edges a bit
    differently; an edited SVG changes far more than that)."""
    if old.isNull() or old.size() != new.size():
        return False
    diff = abs(_pixels(old) - _pixels(new)).max(axis=2)
    return float((diff > 24).mean()) <= 0.01


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if a PNG is missing or stale",
    )
    args = parser.parse_args(argv)

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication, QImage

    _app = QGuiApplication.instance() or QGuiApplication([])  # kept alive while drawing

    stale: list[str] = []
    for size in SIZES:
        image = render(SOURCE, size)
        path = OUT / f"icon-{size}.png"
        if args.check:
            if not _same_picture(QImage(str(path)), image):
                stale.append(str(path.relative_to(ROOT)))
        elif not image.save(str(path), "PNG"):
            raise SystemExit(f"error: cannot write {path}")
    if args.check:
        if stale:
            print("out of date (run packaging/make_icons.py):", *stale, sep="\n  ")
            return 1
        print(f"icons up to date ({len(SIZES)} PNGs)")
    else:
        print(f"wrote {OUT.relative_to(ROOT)}/icon-{{{','.join(map(str, SIZES))}}}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
