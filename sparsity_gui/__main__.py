"""Entry point: `sparsity-gui` (desktop app) and the headless commands `sparsity-gui run`,
`sparsity-gui sweep`, `sparsity-gui interference` and `sparsity-gui scaling`."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "run":
        from sparsity_gui.cli.note import run_command

        return run_command(argv[1:])
    if argv and argv[0] == "sweep":
        from sparsity_gui.cli.interference import sweep_command

        return sweep_command(argv[1:])
    if argv and argv[0] == "interference":
        from sparsity_gui.cli.interference import interference_command

        return interference_command(argv[1:])
    if argv and argv[0] == "scaling":
        from sparsity_gui.cli.scaling import scaling_command

        return scaling_command(argv[1:])
    from sparsity_gui.cli.gui_options import build_gui_parser

    args = build_gui_parser().parse_args(argv)  # --help and --version need no Qt
    from sparsity_gui.app import gui_main  # imports Qt

    return gui_main(args)


if __name__ == "__main__":
    sys.exit(main())
