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


def test_each_unusable_torch_file_is_one_clean_error_line(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    cases = files(inputs)
    procs = {
        name: subprocess.Popen(
            [*COMMAND, "run", "--w0", str(path), "--out", str(tmp_path / f"out-{name}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for name, (path, _) in cases.items()
    }
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 2, (name, err)
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: w0: "), (name, err)
        assert cases[name][1] in lines[0], (name, lines[0])
        assert "\x1b" not in err and "Traceback" not in err and out == "", (name, err)
        assert len(lines[0]) < 300, (name, lines[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"], "a refused run left something"
