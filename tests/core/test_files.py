"""core/files.py directly: atomic writes and ResultDir give files and folders the mode a
plain open()/mkdir() gives under the umask, name the target (not a temporary name) when a
write fails, refuse an output location that cannot be used, and never leave anything
behind."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sparsity_gui.core.errors import InputError
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
        rd.write_bytes("b.npy", b"\x93NUMPY")
        atomic_write_bytes(rd.path("figures/p.png"), b"png")  # how figures are written
        rd.commit()
    assert mode(out) == 0o777 & ~mask
    assert mode(out / "figures") == 0o777 & ~mask
    for name in ("a.csv", "b.npy", "figures/p.png"):
        assert mode(out / name) == 0o666 & ~mask, name
    assert everything(tmp_path) == ["res", "res/a.csv", "res/b.npy", "res/figures", "res/figures/p.png"]


def test_a_failed_write_names_the_target_and_leaves_the_old_file(tmp_path):
    target = tmp_path / "w.csv"
    target.write_text("earlier")

    def chunks():
        yield "k,w\n"
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as write() on a full disk: no name

    with pytest.raises(OSError) as info:
        atomic_write_chunks(target, chunks())
    assert info.value.errno == errno.ENOSPC
    assert info.value.filename == str(target)
    assert "No space left on device" in str(info.value) and str(target) in str(info.value)
    assert target.read_text() == "earlier"
    assert everything(tmp_path) == ["w.csv"]


def test_a_write_into_a_missing_or_file_folder_names_the_target(tmp_path):
    (tmp_path / "a_file").write_text("x")
    for target, err in (
        (tmp_path / "nope" / "w.csv", errno.ENOENT),
        (tmp_path / "a_file" / "w.csv", errno.ENOTDIR),
    ):
        with pytest.raises(OSError) as info:
            atomic_write_bytes(target, b"data")
        assert info.value.errno == err
        assert info.value.filename == str(target)  # not the temporary name
    assert everything(tmp_path) == ["a_file"]


def _bad_locations(tmp: Path) -> list[tuple[str, str]]:
    (tmp / "a_file").write_text("x")
    (tmp / "full").mkdir()
    (tmp / "full" / "keep.txt").write_text("keep")
    (tmp / "loop").symlink_to("loop")
    cases = [
        (str(tmp / "a_file"), "exists and is not a folder"),
        (str(tmp / "a_file" / "out"), "a_file is not a folder"),
        (str(tmp / "a_file" / "sub" / "out"), "a_file is not a folder"),
        (str(tmp / "missing" / "out"), "missing does not exist"),
        (str(tmp / "full"), "not empty"),
        (str(tmp / "loop" / "out"), "Too many levels of symbolic links"),
        (str(tmp / ("x" * 300)), "File name too long"),
        (".", "not a folder name"),
        ("", "not a folder name"),
        (str(tmp / ".."), "not a folder name"),
        ("/", "not a folder name"),
    ]
    if Path("/proc/self").is_dir():
        cases.append(("/proc/sparsity_test_out", "cannot create /proc/sparsity_test_out"))
        cases.append(("/proc/sparsity_test/out", "/proc/sparsity_test does not exist"))
    if Path("/sys/kernel").is_dir():
        cases.append(("/sys/kernel/sparsity_test_out", "/sys/kernel"))
    return cases


def test_result_dir_refuses_every_unusable_location_and_leaves_nothing(tmp_path):
    for out, needle in _bad_locations(tmp_path):
        before = everything(tmp_path)
        with pytest.raises(InputError) as info:
            ResultDir(out, force=False)
        assert info.value.field == "out", out
        assert needle in str(info.value), (out, str(info.value))
        assert everything(tmp_path) == before, out
    assert not list(Path("/proc").glob(".sparsity_test*"))


def test_result_dir_keeps_a_long_valid_name(tmp_path):
    """A 250-character DIR is legal; its temporary names are shortened to stay legal."""
    out = tmp_path / ("y" * 250)
    rd = ResultDir(out, force=False)
    rd.write_text("a.txt", "a")
    rd.commit()
    out2 = ResultDir(out, force=True)
    out2.write_text("b.txt", "b")
    out2.commit()
    assert everything(tmp_path) == [out.name, f"{out.name}/b.txt"]


def test_write_errors_are_described_by_their_place_in_dir(tmp_path):
    out = tmp_path / "res"
    rd = ResultDir(out, force=False)
    exc = OSError(errno.EFBIG, os.strerror(errno.EFBIG), str(rd.tmp / "figures" / "a.png"))
    assert rd.describe(exc) == f"cannot write {out / 'figures' / 'a.png'}: File too large"
    assert rd.describe(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))) == (
        f"cannot write {out}: No space left on device"
    )
    rd.abort()
    assert everything(tmp_path) == []


def test_a_commit_that_fails_names_dir_and_puts_the_old_one_back(tmp_path, monkeypatch):
    out = tmp_path / "res"
    out.mkdir()
    (out / "old.txt").write_text("earlier result")
    rd = ResultDir(out, force=True)
    rd.write_text("new.txt", "new")
    real_replace = os.replace

    def replace(src, dst):
        if Path(src) == rd.tmp:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), str(src), str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError) as info:
        rd.commit()
    monkeypatch.undo()
    assert info.value.filename == str(out)
    assert rd.describe(info.value) == f"cannot write {out}: Invalid cross-device link"
    rd.abort()
    assert everything(tmp_path) == ["res", "res/old.txt"]
    assert (out / "old.txt").read_text() == "earlier result"


def test_a_dir_made_meanwhile_is_not_overwritten(tmp_path):
    out = tmp_path / "res"
    rd = ResultDir(out, force=False)
    rd.write_text("new.txt", "new")
    out.mkdir()  # another program wrote there while the results were computed
    (out / "theirs.txt").write_text("theirs")
    with pytest.raises(OSError) as info:
        rd.commit()
    assert info.value.filename == str(out)
    rd.abort()
    assert everything(tmp_path) == ["res", "res/theirs.txt"]


def test_an_empty_dir_is_replaced_without_force(tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    rd = ResultDir(out, force=False)
    rd.write_text("a.txt", "a")
    rd.commit()
    assert everything(tmp_path) == ["res", "res/a.txt"]


def test_an_empty_dir_filled_meanwhile_is_not_overwritten(tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    rd = ResultDir(out, force=False)  # empty now: allowed without --force
    rd.write_text("new.txt", "new")
    (out / "theirs.txt").write_text("theirs")
    with pytest.raises(OSError) as info:
        rd.commit()
    assert info.value.filename == str(out)
    assert rd.describe(info.value) == f"cannot write {out}: Directory not empty"
    rd.abort()
    assert everything(tmp_path) == ["res", "res/theirs.txt"]


# A child that starts an atomic write of `target`, says so, and waits mid-write to be killed.
_WRITER = """
import sys, time
from sparsity_gui.core.files import atomic_write_with

def write(f):
    f.write(b"half of it")
    f.flush()
    print("writing", flush=True)
    time.sleep(120)

atomic_write_with(sys.argv[1], write)
"""


def _start_writer(target: Path) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "writing\n"
    return child


def test_a_write_killed_outright_leaves_a_file_the_next_write_removes(tmp_path):
    """SIGKILL (or power loss) mid-write leaves `.NAME.tmp-PID-RANDOM`; the next atomic write of
    the same NAME removes it once its process is gone, and leaves a live writer's alone."""
    target = tmp_path / "session.json"
    killed = _start_writer(target)
    killed.kill()
    killed.wait(timeout=30)
    killed.stdout.close()
    (left,) = list(tmp_path.iterdir())
    assert left.name.startswith(f".session.json.tmp-{killed.pid}-") and left.read_bytes() == b"half of it"

    live = _start_writer(target)
    try:
        atomic_write_text(target, "whole")
        assert target.read_text() == "whole"
        names = sorted(p.name for p in tmp_path.iterdir())
        assert names[0].startswith(f".session.json.tmp-{live.pid}-"), names
        assert names[1:] == ["session.json"], "the killed writer's file is gone, the live one's kept"
    finally:
        live.kill()
        live.wait(timeout=30)
        live.stdout.close()
    atomic_write_text(tmp_path / "other.json", "x")  # another name's leftovers are not its own
    assert len([p for p in tmp_path.iterdir() if p.name.startswith(".session.json.tmp-")]) == 1
    atomic_write_text(target, "again")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.json", "session.json"]


@pytest.mark.parametrize("pid", ["0", "99999999999", "9" * 40, "4194305"])
def test_a_leftover_name_no_process_can_have_blocks_nothing(tmp_path, pid):
    """Anyone who can write the folder can make `.NAME.tmp-<pid>-<hex>` or `.NAME.old-<pid>`
    with an id out of range (os.kill raised OverflowError on each write there): such
    entries are not ours, so the writes go on and leave them alone."""
    from sparsity_gui.core.files import ResultDir

    planted = [tmp_path / f".session.json.tmp-{pid}-0123456789ab", tmp_path / f".out.old-{pid}"]
    planted[0].write_text("not ours")
    planted[1].mkdir()
    atomic_write_text(tmp_path / "session.json", "whole")
    result = ResultDir(tmp_path / "out", False)
    (result.path("a.txt")).write_text("x")
    result.commit()
    assert (tmp_path / "session.json").read_text() == "whole" and (tmp_path / "out" / "a.txt").is_file()
    assert all(p.exists() for p in planted)
