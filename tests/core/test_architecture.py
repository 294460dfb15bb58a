"""The core and the headless CLI never import Qt."""
import pkgutil
import subprocess
import sys

import sparsity_gui.core


def test_core_and_cli_import_without_qt():
    # every module of the core package, found on disk (a new module is covered by itself)
    modules = sorted(f"sparsity_gui.core.{info.name}"
                     for info in pkgutil.iter_modules(sparsity_gui.core.__path__))
    assert "sparsity_gui.core.interference" in modules and len(modules) >= 15
    code = (
        "import importlib, sys\n"
        f"for name in {modules + ['sparsity_gui.cli']!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'))\n"
        "assert not bad, bad\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
