"""core/files.py directly: atomic writes and ResultDir give files and folders the mode a
plain open()/mkdir() gives under the umask, and leave no temporary file behind."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import pytest

from sparsity_gui.core.files import ResultDir, atomic_write_bytes, atomic_write_chunks, atomic_write_text


@contextlib.contextmanager
def umask(mask: int):
    """The process's umask for the block (the tests run on one thread; nothing else
    creates files meanwhile)."""
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def everything(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


UMASKS = [0o022, 0o077, 0o002, 0o027]


@pytest.mark.parametrize("mask", UMASKS, ids=[f"umask{m:03o}" for m in UMASKS])
def test_atomic_writes_get_the_umask_mode(tmp_path, mask):
    with umask(mask):
        atomic_write_bytes(tmp_path / "a.bin", b"\x00\x01")
        atomic_write_chunks(tmp_path / "b.csv", iter(["x,y\n", "1,2\n"]))
        atomic_write_text(tmp_path / "c.txt", "text")
        # replacing a file of another mode: the new file has the umask's mode
        old = tmp_path / "d.txt"
        old.write_text("old")
        old.chmod(0o640 if mask != 0o027 else 0o600)
        atomic_write_text(old, "new")
    for name in ("a.bin", "b.csv", "c.txt", "d.txt"):
        assert mode(tmp_path / name) == 0o666 & ~mask, name
    assert (tmp_path / "b.csv").read_text() == "x,y\n1,2\n"
    assert old.read_text() == "new"
    assert everything(tmp_path) == ["a.bin", "b.csv", "c.txt", "d.txt"]  # no temporary file left


@pytest.mark.parametrize("mask", UMASKS, ids=[f"umask{m:03o}" for m in UMASKS])
def test_result_dir_folders_and_files_get_the_umask_mode(tmp_path, mask):
    out = tmp_path / "res"
    with umask(mask):
        rd = ResultDir(out, force=False)
        assert mode(rd.tmp) == 0o777 & ~mask  # the temporary folder, renamed into place
        rd.write_text("a.csv", "1\n")
        rd.path("b.npy").write_bytes(b"\x93NUMPY")  # how interference writes
        atomic_write_bytes(rd.path("figures/p.png"), b"png")  # how figures are written
        rd.commit()
    assert mode(out) == 0o777 & ~mask
    assert mode(out / "figures") == 0o777 & ~mask
    for name in ("a.csv", "b.npy", "figures/p.png"):
        assert mode(out / name) == 0o666 & ~mask, name
    assert everything(tmp_path) == ["res", "res/a.csv", "res/b.npy", "res/figures", "res/figures/p.png"]
