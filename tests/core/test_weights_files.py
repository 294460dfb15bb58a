"""Weights files (core/weights_files.py): .safetensors written by the safetensors package or
byte by byte here, PyTorch files, the format told by content, and every damaged or foreign
file refused with a message that names the file and the reason."""

import json
import pickle
import struct
import sys
import zipfile

import numpy as np
import pytest
from safetensors.numpy import save_file

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.weights_files import ArrayInfo, detect_format, list_arrays, read_array

RNG = np.random.default_rng(7)
MATRIX = RNG.standard_normal((5, 12)) / 3


def safetensors_bytes(tensors: dict[str, tuple[str, list[int], bytes]], metadata=None) -> bytes:
    """A .safetensors file laid out by hand from the format's definition: an 8-byte
    little-endian header length, the JSON header, then the tensors' bytes."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def refused(path, match, **kw):
    with pytest.raises(InputError) as info:
        read_array(path, **kw)
    text = str(info.value)
    assert info.value.field == "w0" and str(path) in text, text
    assert match in text, text
    assert "Traceback" not in text and "\n" not in text
    return text


# --- .safetensors ------------------------------------------------------------------------------
def test_safetensors_round_trip_is_exact_for_each_float_type(tmp_path):
    path = tmp_path / "model.safetensors"
    save_file(
        {
            "layer.weight": MATRIX.astype(np.float32),
            "layer.bias": MATRIX[0].astype(np.float16),
            "w64": MATRIX,
            "steps": np.arange(4, dtype=np.int32),
        },
        str(path),
        metadata={"framework": "test"},
    )
    kind, infos = list_arrays(path)
    assert kind == "safetensors"
    assert {i.name: (i.shape, i.dtype) for i in infos} == {
        "layer.weight": ((5, 12), "F32"),
        "layer.bias": ((12,), "F16"),
        "w64": ((5, 12), "F64"),
        "steps": ((4,), "I32"),
    }
    w, info = read_array(path, "layer.weight")
    assert w.dtype == np.float64 and w.flags.c_contiguous and info.shape == (5, 12)
    # float32 -> float64 is exact: the same numbers as numpy's own widening
    np.testing.assert_array_equal(w, MATRIX.astype(np.float32).astype(np.float64))
    bias = MATRIX[0].astype(np.float16).astype(float)
    np.testing.assert_array_equal(read_array(path, "layer.bias")[0], bias)
    np.testing.assert_array_equal(read_array(path, "w64")[0], MATRIX)
    np.testing.assert_array_equal(read_array(path, "steps")[0], [0.0, 1.0, 2.0, 3.0])


def test_a_row_of_a_safetensors_matrix(tmp_path):
    path = tmp_path / "w.safetensors"
    save_file({"W": MATRIX.astype(np.float32)}, str(path))
    for r in (0, 3, 4):
        row, _ = read_array(path, row=r)  # the only tensor: no name needed
        np.testing.assert_array_equal(row, MATRIX[r].astype(np.float32).astype(float))
    refused(path, "row 5 is out of range (0 to 4)", row=5)
    save_file({"v": MATRIX[0]}, str(tmp_path / "v.safetensors"))
    refused(tmp_path / "v.safetensors", "only in a 2-D array", row=0)


def test_bf16_is_widened_exactly(tmp_path):
    # bit patterns of bfloat16 and the numbers they are (sign, 8-bit exponent, 7-bit fraction)
    known = {0x3F80: 1.0, 0xC000: -2.0, 0x3E20: 0.15625, 0x4040: 3.0, 0x3B80: 1 / 256, 0xBF00: -0.5}
    bits = np.array(list(known), dtype="<u2")
    path = tmp_path / "bf.safetensors"
    path.write_bytes(safetensors_bytes({"w": ("BF16", [len(known)], bits.tobytes())}))
    np.testing.assert_array_equal(read_array(path)[0], list(known.values()))
    # random float32 values with the low 16 bits cleared are exactly bfloat16 numbers
    f32 = RNG.standard_normal((4, 9)).astype(np.float32)
    exact = (f32.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    top = (f32.view(np.uint32) >> np.uint32(16)).astype("<u2")
    ones = np.ones(2, "<f4").tobytes()
    path.write_bytes(safetensors_bytes({"a": ("F32", [2], ones), "W": ("BF16", [4, 9], top.tobytes())}))
    _, infos = list_arrays(path)
    assert ArrayInfo("W", (4, 9), "BF16") in infos
    np.testing.assert_array_equal(read_array(path, "W")[0], exact.astype(float))
    np.testing.assert_array_equal(read_array(path, "W", row=2)[0], exact[2].astype(float))


def test_several_tensors_need_a_name(tmp_path):
    path = tmp_path / "m.safetensors"
    save_file({"a": np.ones(3), "b": np.zeros((2, 2))}, str(path))
    refused(path, "holds 2 tensors ('a', 'b'); name one")
    refused(path, "no tensor named 'c' (it holds a, b)", name="c")


@pytest.mark.parametrize(
    ("make", "match"),
    [
        # cut inside the data: the header promises more bytes than there are
        (lambda good: good[:-10], "truncated"),
        # cut inside the header
        (lambda good: good[:20], "truncated"),
        (lambda good: good[:5], "too short"),
        # a plausible length, then bytes that are not JSON
        (lambda good: struct.pack("<Q", 40) + b"{" + bytes(range(200, 239)) + b"x" * 64, "not JSON"),
        # random bytes: an absurd header length
        (lambda good: bytes(RNG.integers(0, 256, 300, dtype=np.uint8)), "not plausible"),
        (lambda good: b"\x89PNG\r\n\x1a\n" + bytes(100), "it is a PNG image"),
    ],
)
def test_damaged_safetensors_say_why(tmp_path, make, match):
    good_path = tmp_path / "good.safetensors"
    save_file({"W": MATRIX}, str(good_path))
    path = tmp_path / "bad.safetensors"
    path.write_bytes(make(good_path.read_bytes()))
    text = refused(path, match)
    assert "not a valid .safetensors file" in text


def test_safetensors_headers_that_lie_about_shapes(tmp_path):
    path = tmp_path / "x.safetensors"
    raw = np.ones(6, "<f4").tobytes()
    path.write_bytes(safetensors_bytes({"W": ("F32", [2, 4], raw)}))  # 24 bytes for 8 values
    refused(path, "24 bytes for a F32 tensor of shape (2, 4) (needs 32)")
    path.write_bytes(safetensors_bytes({"W": ("F32", [2, -3], raw)}))
    refused(path, "is not a list of sizes")
    path.write_bytes(safetensors_bytes({"W": (7, [6], raw)}))
    refused(path, "is not a type name")
    path.write_bytes(safetensors_bytes({"W": ("F8_E4M3", [24], raw)}))
    assert list_arrays(path)[1] == [ArrayInfo("W", (24,), "F8_E4M3")]  # listed, but
    refused(path, "dtype F8_E4M3, which is not read")
    text = json.dumps(["not", "an", "object"]).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text)
    refused(path, "not a JSON object")


def test_non_finite_weights_are_refused(tmp_path):
    v = MATRIX[0].copy()
    v[2] = np.nan
    save_file({"v": v}, str(tmp_path / "v.safetensors"))
    refused(tmp_path / "v.safetensors", "weight 2 is nan (all weights must be finite)")
    m = MATRIX.astype(np.float16)
    m[1, 3] = np.inf
    save_file({"m": m}, str(tmp_path / "m.safetensors"))
    refused(tmp_path / "m.safetensors", "the weight at (1, 3) is inf")
    np.testing.assert_array_equal(read_array(tmp_path / "m.safetensors", row=2)[0], m[2].astype(float))


# --- the format is in the content ---------------------------------------------------------------
def test_format_by_content_not_by_name(tmp_path):
    save_file({"W": MATRIX}, str(tmp_path / "weights.bin"))
    np.save(tmp_path / "a.npy", MATRIX)
    (tmp_path / "a.npy").rename(tmp_path / "array.dat")
    np.savez(tmp_path / "z.npz", first=MATRIX[0], W=MATRIX)
    (tmp_path / "z.npz").rename(tmp_path / "z.weights")
    (tmp_path / "w.dat").write_text("# a comment\nw\n0.5\n-0.25\n")
    assert detect_format(tmp_path / "weights.bin") == "safetensors"
    assert detect_format(tmp_path / "array.dat") == "npy"
    assert detect_format(tmp_path / "z.weights") == "npz"
    assert detect_format(tmp_path / "w.dat") == "text"
    np.testing.assert_array_equal(read_array(tmp_path / "weights.bin")[0], MATRIX)
    np.testing.assert_array_equal(read_array(tmp_path / "array.dat", row=1)[0], MATRIX[1])
    assert [i.name for i in list_arrays(tmp_path / "z.weights")[1]] == ["first", "W"]
    np.testing.assert_array_equal(read_array(tmp_path / "z.weights")[0], MATRIX[0])  # a .npz: its first
    np.testing.assert_array_equal(read_array(tmp_path / "z.weights", "W", row=4)[0], MATRIX[4])
    np.testing.assert_array_equal(read_array(tmp_path / "w.dat")[0], [[0.5], [-0.25]])


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(40)


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("photo.png", PNG, "a PNG image, not weights"),
        ("weights.csv", PNG, "a PNG image, not weights"),
        ("weights.npy", PNG, "not a valid .npy file (it is a PNG image)"),
        ("model.pt", PNG, "not a valid PyTorch checkpoint file (it is a PNG image)"),
        ("w.npz", b"%PDF-1.7\n" + bytes(50), "it is a PDF document"),
        ("w.gz", b"\x1f\x8b\x08" + bytes(50), "unpack it first"),
        ("w.h5", b"\x89HDF\r\n\x1a\n" + bytes(50), "HDF5"),
        ("empty.safetensors", b"", "the file is empty"),
        ("bin.dat", bytes([0, 1, 2, 255, 254]) * 30, "not a text file"),
        ("obj.pkl", pickle.dumps({"W": [1.0, 2.0]}, protocol=4), "pickles are not read"),
    ],
)
def test_foreign_files_are_named(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_bytes(content)
    refused(path, match)


def test_a_zip_that_is_no_npz(tmp_path):
    with zipfile.ZipFile(tmp_path / "docs.npz", "w") as z:
        z.writestr("readme.txt", "hello")
    refused(tmp_path / "docs.npz", "neither a .npz nor a PyTorch checkpoint")
    np.savez(tmp_path / "w.npz", W=MATRIX)
    data = (tmp_path / "w.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    refused(tmp_path / "cut.npz", "not a valid .npz file (a damaged or truncated zip archive)")


def test_text_with_a_byte_order_mark_keeps_its_first_number(tmp_path):
    (tmp_path / "w.csv").write_bytes(b"\xef\xbb\xbf0.5\n-0.25\n")
    np.testing.assert_array_equal(read_array(tmp_path / "w.csv")[0], [[0.5], [-0.25]])


# --- PyTorch ------------------------------------------------------------------------------------
def torch_zip_without_torch(path):
    """The layout torch.save has written since PyTorch 1.6 (a zip with <name>/data.pkl and
    <name>/data/<key> storages), enough to be recognised; made without torch."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("model/data.pkl", b"\x80\x02}q\x00.")
        z.writestr("model/version", "3\n")
        z.writestr("model/data/0", bytes(16))


def test_a_pytorch_file_without_torch_gets_one_clear_message(tmp_path, monkeypatch):
    # None in sys.modules makes `import torch` fail, whether or not torch is installed
    monkeypatch.setitem(sys.modules, "torch", None)
    torch_zip_without_torch(tmp_path / "model.pt")
    legacy = tmp_path / "legacy.pth"
    legacy.write_bytes(b"\x80\x02\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little") + b".")
    for path in (tmp_path / "model.pt", legacy):
        assert detect_format(path) == "torch"
        for call in (lambda p: list_arrays(p), lambda p: read_array(p)):
            with pytest.raises(InputError) as info:
                call(path)
            text = str(info.value)
            assert str(path) in text and "needs PyTorch, which is not installed" in text, text
            assert ".safetensors or .npy" in text


class PickledThing:  # not a tensor: weights_only=True refuses to unpickle it (and torch.save
    pass  # pickles only a class it can import by name, so it lives at module level)


def test_a_pytorch_state_dict_when_torch_is_installed(tmp_path):
    torch = pytest.importorskip("torch")
    W = torch.tensor(MATRIX, dtype=torch.float32)
    state = {
        "model": {"enc.weight": W, "enc.bias": torch.zeros(5, dtype=torch.bfloat16)},
        "epoch": 3,
        "steps": [torch.arange(3)],
    }
    torch.save(state, tmp_path / "ckpt.pt")
    kind, infos = list_arrays(tmp_path / "ckpt.pt")
    assert kind == "torch"
    shapes = {i.name: i.shape for i in infos}
    assert shapes == {"model.enc.weight": (5, 12), "model.enc.bias": (5,), "steps.0": (3,)}
    got, info = read_array(tmp_path / "ckpt.pt", "model.enc.weight")
    np.testing.assert_array_equal(got, MATRIX.astype(np.float32).astype(float))
    assert info.dtype == "float32"
    np.testing.assert_array_equal(read_array(tmp_path / "ckpt.pt", "model.enc.weight", row=3)[0], got[3])
    np.testing.assert_array_equal(read_array(tmp_path / "ckpt.pt", "model.enc.bias")[0], np.zeros(5))

    torch.save({"w": W, "thing": PickledThing()}, tmp_path / "code.pt")
    refused(tmp_path / "code.pt", "PyTorch cannot load it safely")
