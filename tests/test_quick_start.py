"""The README's Quick start works as written: the make targets it names exist, and its one
command line and its one Python line run (in-process: the entry point's own subprocess is
tested in tests/ui/test_entry_point.py and tests/cli/)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from sparsity_gui.__main__ import main

ROOT = Path(__file__).resolve().parents[1]


def quick_start() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## Quick start", 1)[1].split("\n## ", 1)[0]


def shell_lines() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)\n```", quick_start(), re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]


def test_the_make_targets_exist():
    targets = {line.split(" ")[1] for line in shell_lines() if line.startswith("make ")}
    assert targets == {"run", "test"}
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in targets:
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "compiles the app's numba kernels once" in quick_start()


def test_the_command_line_runs(tmp_path, monkeypatch, capsys):
    (line,) = [x for x in shell_lines() if x.startswith(".venv/bin/sparsity-gui ")]
    argv = shlex.split(line)[1:]
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    out = tmp_path / argv[argv.index("--out") + 1]
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["parameters"]["m"] == 10000 and run["parameters"]["lam"] == 1e-3
    assert "1 nonzero weight" in capsys.readouterr().out


def test_the_python_line_runs(capsys):
    (line,) = [x for x in shell_lines() if x.startswith(".venv/bin/python -c ")]
    code = shlex.split(line)[2]
    exec(compile(code, "README.md", "exec"), {})
    t_one = float(capsys.readouterr().out)
    from sparsity_gui import api

    assert t_one == api.simulate(m=10000, lam=1e-3).t_one  # the line prints the run's t_one
    assert 0 < t_one < float("inf")
