"""The core and the headless CLI never import Qt."""
import subprocess
import sys


def test_core_and_cli_import_without_qt():
    code = (
        "import sys\n"
        "import sparsity_gui.core.simulation, sparsity_gui.core.runfiles, sparsity_gui.cli\n"
        "import sparsity_gui.core.kernels, sparsity_gui.core.files, sparsity_gui.core.initial\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'))\n"
        "assert not bad, bad\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
