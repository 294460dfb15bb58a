"""Benchmark of W(0) from checkpoint files (core/weights_files.py).

Run from the project root:

    .venv/bin/python benchmarks/bench_w0_files.py            # an embedding-sized tensor
    .venv/bin/python benchmarks/bench_w0_files.py --quick    # a small one (a second)

It writes a temporary .safetensors file holding an embedding-sized matrix (50257 x 768, as
GPT-2's token embedding) in F32 and BF16 and prints, beside a baseline from the same run:

1. one row (the note's W(0)) read with read_array, against the whole tensor read by the
   safetensors package's own numpy loader (safetensors.numpy.load_file);
2. the whole F32 tensor as float64 with the checks (read_array), against the package's
   loader plus numpy's astype(float64);
3. the whole BF16 tensor widened here (numpy has no bfloat16), against the F32 read above.

Best of several repeats (the file is in the page cache after the first). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from safetensors.numpy import load_file, save_file  # noqa: E402

from sparsity_gui.core.weights_files import read_array  # noqa: E402


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a 5000 x 768 matrix instead of 50257 x 768")
    args = ap.parse_args()
    rows, cols = (5000, 768) if args.quick else (50257, 768)
    repeats = 5
    rng = np.random.default_rng(0)
    W = rng.standard_normal((rows, cols), dtype=np.float32) * 0.02
    with tempfile.TemporaryDirectory() as tmp:
        f32 = Path(tmp) / "emb_f32.safetensors"
        save_file({"wte.weight": W}, str(f32))
        bf16 = Path(tmp) / "emb_bf16.safetensors"
        bits = (W.view(np.uint32) >> np.uint32(16)).astype("<u2")
        entry = {"dtype": "BF16", "shape": [rows, cols], "data_offsets": [0, bits.nbytes]}
        header = json.dumps({"wte.weight": entry})
        bf16.write_bytes(struct.pack("<Q", len(header)) + header.encode() + bits.tobytes())
        mb = f32.stat().st_size / 1e6
        print(f"tensor {rows} x {cols}: F32 file {mb:.0f} MB, BF16 file {bf16.stat().st_size / 1e6:.0f} MB")

        whole_pkg = best(lambda: load_file(str(f32))["wte.weight"], repeats)
        one_row = best(lambda: read_array(f32, row=rows // 2), repeats)
        print(
            f"1. one row (read_array, row={rows // 2}): {one_row * 1e3:8.2f} ms   "
            f"baseline, the whole tensor (safetensors load_file): {whole_pkg * 1e3:8.2f} ms   "
            f"({whole_pkg / one_row:.0f}x)"
        )
        whole_ours = best(lambda: read_array(f32), repeats)
        whole_pkg64 = best(lambda: load_file(str(f32))["wte.weight"].astype(np.float64), repeats)
        print(
            f"2. whole tensor as float64, checked (read_array): {whole_ours * 1e3:8.1f} ms   "
            f"baseline, load_file + astype(float64): {whole_pkg64 * 1e3:8.1f} ms"
        )
        whole_bf16 = best(lambda: read_array(bf16), repeats)
        print(
            f"3. whole BF16 tensor widened to float64 (read_array): {whole_bf16 * 1e3:8.1f} ms   "
            f"baseline, the F32 file (read_array): {whole_ours * 1e3:8.1f} ms"
        )


if __name__ == "__main__":
    main()
