"""core/warm_up.py: a model's numba kernels compiled once into numba's on-disk cache, and
what the status bar says before: "compiling … about N s" when the cache does not hold these
sources' kernels, "loading …" when it does. A real numba kernel in a module of the test's
own folder, so its cache (beside it, or $NUMBA_CACHE_DIR) starts empty."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from sparsity_gui.core import warm_up
from sparsity_gui.core.interference.worker import INTERFERENCE_KERNELS
from sparsity_gui.core.note.runner import NOTE_KERNELS
from sparsity_gui.core.warm_up import KernelSet

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "import numba\n\n\n@numba.njit(cache=True)\ndef double(x):\n    return 2.0 * x\n"


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))  # the marker's folder
    source = tmp_path / "tiny_kernels.py"
    source.write_text(KERNEL, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("tiny_kernels", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls = []

    def compile_all():
        calls.append(module.double(3.0))

    return KernelSet("tiny", "a tiny kernel", (source,), compile_all, typical_seconds=42.0), calls


def test_a_first_launch_says_it_compiles_and_for_about_how_long(tiny):
    kernels, calls = tiny
    assert not kernels.cached()
    assert kernels.status() == (
        "compiling a tiny kernel with numba, once: about 42 s (later launches load them from the cache)"
    )
    seconds = kernels.warm_up()
    assert calls == [6.0] and seconds > 0  # the kernel ran, compiled
    assert kernels.cached()
    assert kernels.status() == "loading a tiny kernel from numba's cache"
    # a compile under LOAD_SECONDS (this one) does not replace the estimate of a real one
    assert kernels.estimate() == 42.0


def test_an_edited_source_compiles_again(tiny):
    kernels, _ = tiny
    kernels.warm_up()
    source = kernels.sources[0]
    source.write_text(KERNEL + "# edited\n", encoding="utf-8")  # numba's stamp: mtime and size
    assert not kernels.cached() and kernels.status().startswith("compiling a tiny kernel")


def test_a_compile_s_time_is_the_next_estimate(tiny, monkeypatch):
    kernels, _ = tiny
    monkeypatch.setattr(warm_up, "LOAD_SECONDS", 0.0)  # count this compile as a slow one
    seconds = kernels.warm_up()
    marker = json.loads(kernels.marker_path().read_text(encoding="utf-8"))
    assert marker["compile_seconds"] == round(seconds, 2) == kernels.estimate()
    kernels.sources[0].write_text(KERNEL + "# edited\n", encoding="utf-8")
    assert seconds < 10  # a tiny kernel: said to a tenth of a second
    assert f"with numba, once: about {round(seconds, 2):.1f} s" in kernels.status()


def test_an_unwritable_marker_folder_changes_nothing(tiny, monkeypatch, tmp_path):
    kernels, calls = tiny
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocker))
    kernels.warm_up()
    assert calls == [6.0] and not kernels.cached()


@pytest.mark.parametrize("kernels", [NOTE_KERNELS, INTERFERENCE_KERNELS], ids=lambda k: k.name)
def test_each_model_declares_every_file_of_its_cached_kernels(kernels):
    folder = ROOT / "sparsity_gui" / "core" / kernels.name
    cached = {p for p in folder.glob("*.py") if re.search(r"cache\s*=\s*True", p.read_text(encoding="utf-8"))}
    assert cached and {p.resolve() for p in kernels.sources} == {p.resolve() for p in cached}
