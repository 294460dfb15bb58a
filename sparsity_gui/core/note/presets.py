"""Parameter presets: four built in, and the user's own, kept as JSON in the config folder.

The folder is $SPARSITY_GUI_CONFIG_DIR if set, else the platform's user config folder
(~/.config/sparsity-gui on Linux). Qt-free.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from sparsity_gui.core.checks import read_json_file
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.files import atomic_write_text, json_text
from sparsity_gui.core.note.params import SETTING_FIELDS, SimParams

FORMAT = "sparsity-gui presets"
VERSION = 1
FILE_NAME = "presets.json"
NAME_MAX = 80
MAX_PRESETS = 1000
MAX_BYTES = 4 * 2**20  # a thousand presets take about 300 KiB


@dataclass(frozen=True)
class Preset:
    name: str
    values: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    builtin: bool = False

    def params(self) -> SimParams:
        """The preset's parameters (fields it does not set come from SimParams' defaults,
        never from the current run); W(0) is a normal draw."""
        values = {k: v for k, v in self.values.items() if k in SETTING_FIELDS}
        return SimParams(**values)


# what each built-in preset shows, by its name
BUILTIN_TEXT = {
    "The note's setting": "m = 10⁵, λ = 1e-5, σ = 0.9: the simulation of the research note",
    "Quick demo": "m = 1000, λ = 1e-2: a small run, every step of the argument in about 20 s",
    "Network-style start": "σ = 1 as a network's usual initialisation: ‖W(0)‖² ≈ 1, so about half the "
    "rows start by shrinking",
    "Large run": "m = 10⁷: after one sort the exact solver's cost does not grow with m",
}
# name, m, λ, σ: each the exact method from seed 0
BUILTIN: tuple[Preset, ...] = tuple(
    Preset(name, {"m": m, "lam": lam, "sigma": sigma, "seed": 0, "method": "exact"}, BUILTIN_TEXT[name], True)
    for name, m, lam, sigma in (
        ("The note's setting", 100_000, 1e-5, 0.9),
        ("Quick demo", 1000, 1e-2, 0.9),
        ("Network-style start", 10_000, 1e-3, 1.0),
        ("Large run", 10_000_000, 1e-4, 0.9),
    )
)


def config_dir() -> Path:
    """$SPARSITY_GUI_CONFIG_DIR, else the platform's user config folder (platformdirs:
    $XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support on macOS, the
    roaming %APPDATA% on Windows), with a sparsity-gui folder in it."""
    env = os.environ.get("SPARSITY_GUI_CONFIG_DIR")
    if env:
        return Path(env)
    return platformdirs.user_config_path("sparsity-gui", appauthor=False, roaming=True)


def presets_path(directory: str | Path | None = None) -> Path:
    return Path(directory if directory is not None else config_dir()) / FILE_NAME


def preset_values(params: SimParams) -> dict[str, Any]:
    return params.settings()


def _problem(path: Path, message: str) -> InputError:
    return InputError("presets", f"{path}: {message}")


def load_user_presets(directory: str | Path | None = None) -> list[Preset]:
    """The user's presets (none if the file does not exist yet). A damaged file raises
    InputError naming the problem; it is never overwritten silently."""
    path = presets_path(directory)
    if not os.path.lexists(path):
        return []
    obj = read_json_file(path, "presets", "presets file", MAX_BYTES)
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise _problem(path, f'not a presets file (no "format": "{FORMAT}" field)')
    if type(obj.get("version")) is not int or obj["version"] != VERSION:  # true == 1 in Python
        raise _problem(
            path,
            f"presets format version {obj.get('version')!r} is not supported; this "
            f"sparsity-gui reads version {VERSION}",
        )
    items = obj.get("presets")
    if not isinstance(items, list):
        raise _problem(path, "field 'presets' must be a list")
    if len(items) > MAX_PRESETS:
        raise _problem(path, f"{len(items)} presets; at most {MAX_PRESETS} are read")
    out: list[Preset] = []
    for i, item in enumerate(items):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(item.get("parameters"), dict)
        ):
            raise _problem(path, f"presets[{i}] must have a 'name' and 'parameters'")
        if not 0 < len(item["name"].strip()) <= NAME_MAX:
            raise _problem(path, f"presets[{i}]: a name has 1 to {NAME_MAX} characters")
        values = {k: v for k, v in item["parameters"].items() if k in SETTING_FIELDS}
        try:
            SimParams(**values)
        except (InputError, TypeError) as exc:
            raise _problem(path, f"preset {item['name']!r}: {exc}") from None
        desc = item.get("description", "")
        out.append(Preset(item["name"], values, desc if isinstance(desc, str) else ""))
    return out


def all_presets(directory: str | Path | None = None) -> list[Preset]:
    return [*BUILTIN, *load_user_presets(directory)]


def find_preset(name: str, directory: str | Path | None = None) -> Preset:
    """The preset ``name``: a built-in one needs no user file (which may be damaged)."""
    for preset in BUILTIN:
        if preset.name == name:
            return preset
    for preset in load_user_presets(directory):
        if preset.name == name:
            return preset
    raise InputError("preset", f"no preset named {name!r}")


def _write(presets: list[Preset], directory: str | Path | None) -> None:
    path = presets_path(directory)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(
            path,
            json_text(
                {
                    "format": FORMAT,
                    "version": VERSION,
                    "presets": [
                        {"name": p.name, "description": p.description, "parameters": p.values}
                        for p in presets
                    ],
                }
            ),
        )
    except OSError as exc:
        raise _problem(path, f"cannot write ({exc.strerror or exc})") from None


def save_user_preset(
    name: str, params: SimParams, description: str = "", directory: str | Path | None = None
) -> Preset:
    """Add (or replace) the user's preset `name` with the parameters of `params`."""
    name = name.strip()
    if not name:
        raise InputError("preset", "a preset needs a name")
    if len(name) > NAME_MAX:
        raise InputError("preset", f"a preset name has at most {NAME_MAX} characters")
    if any(p.name == name for p in BUILTIN):
        raise InputError("preset", f"{name!r} is a built-in preset; choose another name")
    presets = [p for p in load_user_presets(directory) if p.name != name]
    preset = Preset(name, preset_values(params), description)
    presets.append(preset)
    _write(presets, directory)
    return preset


def delete_user_preset(name: str, directory: str | Path | None = None) -> None:
    presets = load_user_presets(directory)
    kept = [p for p in presets if p.name != name]
    if len(kept) == len(presets):
        raise InputError("preset", f"no user preset named {name!r}")
    _write(kept, directory)
