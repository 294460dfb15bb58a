"""The user's folders (platformdirs): the config folder of the presets and numba's cache
folder, with the environment overrides that win over them. Expected paths are written here
from the XDG Base Directory rules, not taken from platformdirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sparsity_gui.core.note import presets as P
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.numba_env import user_cache_dir

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rules are Linux's")


def test_the_config_override_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSITY_GUI_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert P.config_dir() == tmp_path / "cfg"


@linux
def test_presets_go_to_the_xdg_config_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARSITY_GUI_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert P.config_dir() == tmp_path / "xdg" / "sparsity-gui"
    P.save_user_preset("mine", SimParams(m=321, lam=4e-3), "in the XDG folder")
    assert (tmp_path / "xdg" / "sparsity-gui" / "presets.json").is_file()
    assert P.find_preset("mine").params().m == 321


@linux
def test_without_xdg_the_config_folder_is_under_home(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARSITY_GUI_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert P.config_dir() == tmp_path / ".config" / "sparsity-gui"


@linux
def test_numbas_cache_folder_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert user_cache_dir() == tmp_path / "cache" / "sparsity-gui" / "numba"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_cache_dir() == tmp_path / ".cache" / "sparsity-gui" / "numba"


def _cache_of_a_frozen_start(env: dict[str, str]) -> str:
    """NUMBA_CACHE_DIR as a frozen app (a bundle) sets it on importing the core."""
    code = "import os, sys\nsys.frozen = True\nimport sparsity_gui.core\nprint(os.environ['NUMBA_CACHE_DIR'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@linux
def test_a_frozen_app_caches_in_the_user_folder_unless_told_otherwise(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    folder = Path(_cache_of_a_frozen_start(env))
    assert folder == tmp_path / "cache" / "sparsity-gui" / "numba" and folder.is_dir()
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "mine")
    assert _cache_of_a_frozen_start(env) == str(tmp_path / "mine")
