"""Entry point: `sparsity-gui` (desktop app) and `sparsity-gui run` (headless)."""
from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "run":
        from .cli import run_command

        return run_command(argv[1:])
    from .app import gui_main  # imports Qt

    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
