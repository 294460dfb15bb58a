"""The icon, the assets API and the desktop integration files in resources/ (fast; no build).
The wheel's own copy of the icon is checked in tests/packaging/test_wheel.py."""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sparsity_gui import assets

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
RESOURCES = ROOT / "resources"
ICONS = RESOURCES / "icons"
APP_ID = assets.APP_ID
DESKTOP = RESOURCES / f"{APP_ID}.desktop"
METAINFO = RESOURCES / f"{APP_ID}.metainfo.xml"


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("size", assets.ICON_SIZES)
def test_each_png_icon_has_its_size(size):
    path = assets.icon_path(size)
    assert path == ICONS / f"icon-{size}.png"  # a checkout reads resources/icons/ itself
    assert _png_size(path.read_bytes()) == (size, size)
    assert assets.read_asset(f"icon-{size}.png") == path.read_bytes()


def test_svg_icon_is_the_source_in_resources():
    assert assets.icon_path() == ICONS / "icon.svg"
    assert assets.read_asset("icon.svg") == (ICONS / "icon.svg").read_bytes()
    # the package folder holds the code only: the build copies the icon in (setup.py)
    assert not list((ROOT / "sparsity_gui" / "assets").glob("icon*"))


def test_resources_hold_the_top_level_resources():
    names = {p.relative_to(RESOURCES).as_posix() for p in RESOURCES.rglob("*") if p.is_file()}
    assert {f"{APP_ID}.desktop", f"{APP_ID}.metainfo.xml", "icons/icon.svg"} <= names
    assert {f"icons/icon-{n}.png" for n in assets.ICON_SIZES} <= names
    assert not list(PACKAGING.glob("*.desktop")) and not list(PACKAGING.glob("*.metainfo.xml"))


def test_metainfo_screenshots_are_files_of_resources():
    """Each screenshot the metainfo names is resources/screenshots/<name> on the main branch,
    a PNG of the size the metainfo states; the default one comes first."""
    root = ET.parse(METAINFO).getroot()
    shots = root.findall("screenshots/screenshot")
    assert len(shots) >= 2 and shots[0].get("type") == "default"
    homepage = root.findtext("url[@type='homepage']")
    assert homepage and homepage.startswith("https://github.com/")
    raw = homepage.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"
    for shot in shots:
        assert shot.findtext("caption").strip()
        image = shot.find("image")
        assert image.text.startswith(raw), image.text
        path = ROOT / image.text.removeprefix(raw)
        assert path.parent == RESOURCES / "screenshots" and path.is_file(), path
        assert _png_size(path.read_bytes()) == (int(image.get("width")), int(image.get("height"))), path


def test_pngs_are_rendered_from_the_current_svg():
    proc = subprocess.run(
        [sys.executable, str(PACKAGING / "make_icons.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_icon_size_picks_the_nearest_larger_png():
    assert assets.icon_name(1) == "icon-16.png"
    assert assets.icon_name(20) == "icon-24.png"
    assert assets.icon_name(512) == "icon-512.png"
    assert assets.icon_name(4096) == "icon-512.png"
    for bad in (0, -3, 2.5, True, "64"):
        with pytest.raises(ValueError):
            assets.icon_name(bad)


def test_read_asset_rejects_missing_and_escaping_names():
    with pytest.raises(FileNotFoundError):
        assets.read_asset("no-such-file.qss")
    for bad in ("", "../cli.py", "/etc/passwd"):
        with pytest.raises(ValueError):
            assets.read_asset(bad)
    assert assets.read_asset("icon.svg").startswith(b"<?xml")


def test_assets_module_does_not_import_qt():
    code = (
        "import sys, sparsity_gui.assets as r\n"
        "r.icon_path(); r.icon_paths(); r.read_asset('icon.svg')\n"
        "assert not [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_app_icon_has_every_size(qapp):
    icon = assets.app_icon()
    assert not icon.isNull()
    assert sorted(s.width() for s in icon.availableSizes()) == list(assets.ICON_SIZES)


def test_desktop_entry_matches_the_app():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(DESKTOP, encoding="utf-8")
    group = entry["Desktop Entry"]
    assert group["Type"] == "Application"
    assert group["Exec"].split()[0] == "sparsity-gui"
    assert group["Icon"] == APP_ID
    assert group["Terminal"] == "false"


def test_metainfo_matches_the_app():
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("provides/binary") == "sparsity-gui"
    import sparsity_gui

    versions = [r.get("version") for r in root.iter("release")]
    assert sparsity_gui.__version__ in versions, "add a <release> for the new version"


@pytest.mark.skipif(
    not shutil.which("desktop-file-validate"),
    reason="desktop-file-validate not installed (apt-get install desktop-file-utils)",
)
def test_desktop_entry_validates():
    proc = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "error" not in proc.stdout.lower(), proc.stdout + proc.stderr


@pytest.mark.skipif(
    not shutil.which("appstreamcli"), reason="appstreamcli not installed (apt-get install appstream)"
)
def test_metainfo_validates():
    proc = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(METAINFO)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
