"""Real PyTorch files numpy cannot hold, or that are not checkpoints, given as W(0): each
is one `error:` line (exit 2) saying what the file holds and what to save instead, with no
warning of torch's, no terminal escape and no traceback, and nothing written. The files
are written here by torch itself (torch==2.13.0, the test extra)."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings

import pytest
from helpers import COMMAND, ENV

torch = pytest.importorskip("torch")

DEEP = 100_000  # containers nested this deep: a RecursionError in a recursive walk


def deep_dict(path):
    """torch.save of a dict nested DEEP levels, in a thread with room for the recursion."""
    done = []

    def save():
        d = cur = {}
        for _ in range(DEEP):
            cur["a"] = {}
            cur = cur["a"]
        cur["w"] = torch.ones(8)
        torch.save(d, path)
        done.append(True)

    limit = sys.getrecursionlimit()
    size = threading.stack_size(1 << 30)
    sys.setrecursionlimit(DEEP * 10)
    try:
        worker = threading.Thread(target=save)
        worker.start()
        worker.join()
    finally:
        sys.setrecursionlimit(limit)
        threading.stack_size(size)
    assert done, "torch could not write the deep file"


def files(folder) -> dict:
    """{case: (path, words its error line must hold)}."""
    dense = torch.randn(4, 8, dtype=torch.float64)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's beta and deprecation notes
        cases = {
            "sparse_csr": ({"w": dense.to_sparse_csr()}, "sparse (sparse_csr): save it dense"),
            "sparse_coo": ({"w": dense.to_sparse()}, "sparse (sparse_coo)"),
            "quantized": (
                {"w": torch.quantize_per_tensor(dense.float(), 0.1, 0, torch.qint8)},
                "quantized: save it dequantized",
            ),
            "nested": (
                {"w": torch.nested.nested_tensor([torch.randn(3), torch.randn(5)], layout=torch.jagged)},
                "nested (jagged)",
            ),
            "complex": ({"w": torch.randn(4, 8, dtype=torch.complex64)}, "is complex"),
            "module": (torch.nn.Linear(8, 4), "torch.nn.modules.linear.Linear, not only tensors"),
        }
        for name, (obj, words) in cases.items():
            path = folder / f"{name}.pt"
            torch.save(obj, path)
            out[name] = (path, words)
        path = folder / "protocol5.pt"
        torch.save({"w": dense}, path, pickle_protocol=5)
        out["protocol5"] = (path, "default pickle protocol")
    path = folder / "deep.pt"
    deep_dict(path)
    out["deep"] = (path, "nested over 64 deep")
    return out


def assert_one_clean_line(name, status, out, err, words) -> None:
    assert status == 2, (name, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: w0: "), (name, err)
    assert words in lines[0], (name, lines[0])
    assert "\x1b" not in err and "Traceback" not in err and out == "", (name, err)
    assert len(lines[0]) < 300, (name, lines[0])


@pytest.fixture(scope="module")
def torch_files(tmp_path_factory) -> dict:
    return files(tmp_path_factory.mktemp("in"))


# the real process for the entry point (exit status, its whole stderr: torch imported there,
# its warnings and anything its C++ layer writes to fd 2): the sparse CSR file, whose loading
# makes torch warn ("support is in beta"); every case runs in-process below
IN_A_PROCESS = "sparse_csr"


def test_an_unusable_torch_file_in_a_real_process(torch_files, tmp_path):
    path, words = torch_files[IN_A_PROCESS]
    proc = subprocess.run(
        [*COMMAND, "run", "--w0", str(path), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert_one_clean_line(IN_A_PROCESS, proc.returncode, proc.stdout, proc.stderr, words)
    assert list(tmp_path.iterdir()) == [], "a refused run left something"


def test_each_unusable_torch_file_is_one_clean_error_line(torch_files, tmp_path, monkeypatch, capfd):
    """Every case through __main__.main in this process: capfd reads fd 1 and 2 (torch's C++
    layer too), and no Python warning is raised (pytest would otherwise keep it off stderr)."""
    from helpers import command_in_process

    for name, (path, words) in torch_files.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            argv = ["run", "--w0", path, "--out", tmp_path / f"out-{name}"]
            status, out, err = command_in_process(argv, tmp_path, monkeypatch, capfd)
        assert_one_clean_line(name, status, out, err, words)
        assert [str(w.message) for w in caught] == [], name
    assert list(tmp_path.iterdir()) == [], "a refused run left something"
