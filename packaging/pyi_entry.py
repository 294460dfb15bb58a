"""Entry script of the PyInstaller bundle (see sparsity-gui.spec): the same main() as the
`sparsity-gui` script, so `sparsity-gui run ...`, `--version` and the GUI all work frozen."""

import sys

from sparsity_gui.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
