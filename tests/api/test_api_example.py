"""docs/commands.md's Python API example runs as written (the ```python block under its marker)."""

import re
from pathlib import Path

import numpy as np

PAGE = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
MARKER = "<!-- api-example: tests/api/test_api_example.py runs this block -->"


def example() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(MARKER) == 1
    found = re.match(r"\s*```python\n(.*?)\n```", text.split(MARKER, 1)[1], re.S)
    assert found, "no ```python block right after the marker"
    return found.group(1)


def test_api_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(example(), str(PAGE), "exec"), namespace)
    run, live, net, swept = (namespace[k] for k in ("run", "live", "net", "swept"))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].split()[0] == "1" and run.nonzero_final == 1
    assert run.t_one < run.t_end == 1.1 * run.t_one  # the default end: one weight left, plus 10 %
    assert namespace["norm1"].shape == (501,)
    grid = namespace["grid"]
    assert (
        grid.m.tolist() == [1000, 10000]
        and grid.lam.tolist() == [1e-2, 1e-2]
        and grid.runs.tolist() == [2, 2]
    )
    assert np.array_equal(grid.rows["lam_t_one"], 1e-2 * grid.rows["t_one"])  # 4 runs, one weight left
    assert [c[1] for c in live.schedule] == ["lam", "method", "eta"] and live.t_end == 150.0
    assert lines[1].endswith(f"predicted n^2/(4m) = {32 * 32 / (4 * 64)}")
    assert list(swept.m) == [16, 32] and list(swept.predicted) == [4.0, 2.0]
    assert (tmp_path / "run-result" / "timeseries.csv").exists()
    assert (tmp_path / "l1_decay.pdf").read_bytes().startswith(b"%PDF")  # run.plot's figure
    assert sorted(p.name for p in (tmp_path / "sweep-result").iterdir()) == ["sweep.csv", "sweep.json"]
