"""`python -m sparsity_gui.cli.precompile`: compile both models' numba kernels into numba's
cache now (`make run` does, once, after installing), so the first window loads them instead
of compiling them for tens of seconds. Says what it compiles and how long it took."""

from __future__ import annotations

import sys


def main() -> int:
    # importing core points numba's cache where the app will read it (core/numba_env.py)
    from sparsity_gui.core.interference.worker import INTERFERENCE_KERNELS
    from sparsity_gui.core.note.runner import NOTE_KERNELS

    for kernels in (NOTE_KERNELS, INTERFERENCE_KERNELS):
        print(kernels.status(), flush=True)
        seconds = kernels.warm_up()
        print(f"  done in {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
