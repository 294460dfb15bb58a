"""W(0) from checkpoints on the command line: `run --w0 FILE --w0-tensor NAME --w0-row R`
and `interference --w0 FILE --w0-tensor NAME`. Good files give the weights bit for bit;
bad ones one `error:` line, exit status 2, and nothing left behind."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import interference_oracles as IO
import numpy as np
import pytest
from helpers import cli, command_result
from safetensors.numpy import save_file

from sparsity_gui.__main__ import main

RNG = np.random.default_rng(11)
ENCODER = (RNG.standard_normal((6, 8)) / 2.5).astype(np.float32)  # n = 6 features, m = 8 neurons


def checkpoint(folder: Path) -> Path:
    """A small model's weights as a trainer would save them: several tensors."""
    path = folder / "model.safetensors"
    save_file(
        {
            "encoder.weight": ENCODER,
            "encoder.bias": np.zeros(6, np.float32),
            "embed": RNG.standard_normal((3, 4, 5)).astype(np.float16),
        },
        str(path),
    )
    return path


def test_run_takes_a_row_of_a_checkpoint_tensor(tmp_path, monkeypatch, capsys):
    ck = checkpoint(tmp_path)
    out = tmp_path / "out"
    args = ["run", "--w0", str(ck), "--w0-tensor", "encoder.weight", "--w0-row", "2"]
    argv = [*args, "--lam", "0.05", "--samples", "3", "--format", "npz", "--out", str(out)]
    proc = command_result(argv, tmp_path, monkeypatch, capsys)
    assert proc.returncode == 0, proc.stderr
    with np.load(out / "weights.npz") as w:
        np.testing.assert_array_equal(w["w0"], ENCODER[2].astype(np.float64))
    meta = json.loads((out / "run.json").read_text())
    assert meta["parameters"]["m"] == 8 and meta["parameters"]["w0_path"] == str(ck)


def test_interference_trains_from_a_checkpoint_matrix(tmp_path, monkeypatch, capsys):
    ck = checkpoint(tmp_path)
    out = tmp_path / "out"
    lr, l1, steps = 0.1, 0.04, 40
    proc = command_result(
        [
            "interference",
            *("--w0", str(ck), "--w0-tensor", "encoder.weight", "--optimizer", "gd-zero"),
            *("--lr", str(lr), "--l1", str(l1), "--steps", str(steps), "--samples", "3", "--out", str(out)),
        ],
        tmp_path,
        monkeypatch,
        capsys,
    )
    assert proc.returncode == 0, proc.stderr
    assert "n = 6, m = 8" in proc.stdout  # the file set n and m
    w0 = np.load(out / "w0.npy")
    np.testing.assert_array_equal(w0, ENCODER.astype(np.float64))
    W, done, unstable = IO.gd_zero_reference(w0, lr, l1, steps)
    assert done == steps and not unstable
    np.testing.assert_allclose(np.load(out / "w_final.npy"), W, rtol=0, atol=1e-12)
    meta = json.loads((out / "run.json").read_text())
    assert meta["w0"] == {"source": "file", "path": str(ck), "tensor": "encoder.weight", "dtype": "F32"}
    assert (meta["parameters"]["n"], meta["parameters"]["m"]) == (6, 8)


def test_a_bad_file_in_a_fresh_process_is_one_line(tmp_path):
    png = tmp_path / "model.safetensors"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    before = sorted(tmp_path.iterdir())
    for command in ("run", "interference"):
        proc = cli([command, "--w0", str(png), "--out", str(tmp_path / "out")], cwd=tmp_path)
        assert proc.returncode == 2
        assert proc.stderr == f"error: w0: {png}: not a valid .safetensors file (it is a PNG image)\n"
        assert sorted(tmp_path.iterdir()) == before


# --- every kind of bad file: in-process (the same code path, no interpreter start-up each) ---------
def _bad_files(tmp: Path) -> None:
    good = checkpoint(tmp)
    data = good.read_bytes()
    (tmp / "truncated.safetensors").write_bytes(data[: len(data) - 40])
    (tmp / "garbage.safetensors").write_bytes(
        b"\x30\x00\x00\x00\x00\x00\x00\x00{" + bytes(range(128, 175)) + bytes(9)
    )
    (tmp / "photo.safetensors").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    with zipfile.ZipFile(tmp / "model.pt", "w") as z:  # torch.save's layout, made without torch
        z.writestr("model/data.pkl", b"\x80\x02}q\x00.")
        z.writestr("model/version", "3\n")
    nan = ENCODER.copy()
    nan[1, 5] = np.nan
    save_file({"W": nan}, str(tmp / "nan.safetensors"))
    full = tmp / "full_dir"
    full.mkdir()
    (full / "keep.txt").write_text("earlier result")


CK = "{tmp}/model.safetensors"
BAD = [
    # (command and arguments, words of the message)
    (["run", "--w0", CK], "holds 3 tensors ('embed', 'encoder.bias', 'encoder.weight'); name one"),
    (["run", "--w0", CK, "--w0-tensor", "decoder"], "no tensor named 'decoder'"),
    (["run", "--w0", CK, "--w0-tensor", "encoder.weight"], "6x8 matrix is not a single row or column"),
    (["run", "--w0", CK, "--w0-tensor", "encoder.weight", "--w0-row", "6"], "row 6 is out of range (0 to 5)"),
    (["run", "--w0", CK, "--w0-tensor", "embed"], "expected a 1-D array, got 3 dimensions"),
    (["run", "--w0-tensor", "embed"], "w0-tensor: needs --w0 FILE"),
    (["run", "--w0", "{tmp}/truncated.safetensors"], "truncated"),
    (["run", "--w0", "{tmp}/garbage.safetensors"], "the header is not JSON text"),
    (["run", "--w0", "{tmp}/photo.safetensors"], "(it is a PNG image)"),
    (["run", "--w0", "{tmp}/model.pt"], "needs PyTorch, which is not installed"),
    (["run", "--w0", "{tmp}/nan.safetensors", "--w0-row", "1"], "weight 5 is nan"),
    (["run", "--w0", CK, "--w0-tensor", "encoder.bias", "--out", "{tmp}/full_dir"], "not empty"),
    (["interference", "--w0", CK], "name one"),
    (["interference", "--w0", CK, "--w0-tensor", "encoder.bias"], "W(0) is a matrix n x m"),
    (["interference", "--w0", CK, "--w0-tensor", "encoder.weight", "--n", "8", "--m", "6"], "its transpose"),
    (["interference", "--w0", CK, "--w0-tensor", "encoder.weight", "--m", "16"], "needs n x m = n x 16"),
    (["interference", "--w0", CK, "--w0-tensor", "encoder.weight", "--seed", "3"], "does not go with --w0"),
    (["interference", "--w0-tensor", "x"], "needs --w0 FILE"),
    (["interference", "--w0", "{tmp}/model.pt"], "needs PyTorch"),
    (["interference", "--w0", "{tmp}/nan.safetensors"], "the weight at (1, 5) is nan"),
    (["interference", "--w0", "{tmp}/truncated.safetensors"], "truncated"),
]


@pytest.mark.parametrize("args, needle", BAD, ids=[" ".join(a).replace("{tmp}/", "") for a, _ in BAD])
def test_bad_w0_files_are_one_error_line(tmp_path, capsys, monkeypatch, args, needle):
    monkeypatch.setitem(sys.modules, "torch", None)  # as without torch, installed or not
    _bad_files(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "out")]
    before = {p: p.read_bytes() if p.is_file() else None for p in sorted(tmp_path.rglob("*"))}
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err
    assert {p: p.read_bytes() if p.is_file() else None for p in sorted(tmp_path.rglob("*"))} == before
