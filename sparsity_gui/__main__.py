"""Entry point: `sparsity-gui` (desktop app) and the headless commands `sparsity-gui run`,
`sparsity-gui sweep`, `sparsity-gui interference`, `sparsity-gui scaling` and
`sparsity-gui checkpoints`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from sparsity_gui.core.versions import LIBRARIES, library_version

COMMANDS = ("run", "sweep", "interference", "scaling", "checkpoints")


def version_text() -> str:
    """`sparsity-gui --version`: the program's version, then Python's and each library's."""
    from sparsity_gui import __version__

    lines = [f"sparsity-gui {__version__}", f"Python {sys.version.split()[0]}"]
    lines += [f"{name} {library_version(name)}" for name in LIBRARIES]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The program; ``argv`` None means the process's own arguments (the command is then
    the whole process, which an interrupt may end at once once it has cleaned up)."""
    whole_process = argv is None
    argv = _command_first(list(sys.argv[1:] if argv is None else argv))
    if "--version" in argv and argv[0] not in COMMANDS:
        from sparsity_gui.cli.common import closed_pipe_status

        try:
            print(version_text(), flush=True)
        except BrokenPipeError:  # `--version | head -0`: quietly, as every command
            return closed_pipe_status()
        return 0
    if argv and argv[0] in COMMANDS:
        from sparsity_gui.cli.common import headless_command

        return headless_command(lambda: _headless_command(argv[0]), argv[1:], whole_process)
    from sparsity_gui.cli.common import parse_args_quietly
    from sparsity_gui.cli.gui_options import build_gui_parser

    args = parse_args_quietly(build_gui_parser(), argv)  # --help and --version need no Qt
    from sparsity_gui.app import gui_main  # imports Qt

    return gui_main(args)


# what may come before a command as well as after it: `sparsity-gui -q run ...`
MESSAGE_OPTIONS = ("-q", "--quiet", "-v", "--verbose")


def _command_first(argv: list[str]) -> list[str]:
    """``argv`` with message options given before a command moved after it (each command's
    parser takes them); anything else unchanged (the app's own arguments)."""
    lead = 0
    while lead < len(argv) and argv[lead] in MESSAGE_OPTIONS:
        lead += 1
    if lead and lead < len(argv) and argv[lead] in COMMANDS:
        return [argv[lead], *argv[:lead], *argv[lead + 1 :]]
    return argv


def _headless_command(name: str):
    """The function of the headless command `name` (imported once signals are handled)."""
    if name == "run":
        from sparsity_gui.cli.note import run_command

        return run_command
    if name == "interference":
        from sparsity_gui.cli.interference import interference_command

        return interference_command
    if name == "sweep":
        from sparsity_gui.cli.sweep import sweep_command

        return sweep_command
    if name == "scaling":
        from sparsity_gui.cli.scaling import scaling_command

        return scaling_command
    if name == "checkpoints":
        from sparsity_gui.cli.checkpoints import checkpoints_command

        return checkpoints_command
    raise ValueError(name)


if __name__ == "__main__":
    sys.exit(main())
