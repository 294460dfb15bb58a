"""The API's saved files against the CLI's (tests/api): save(dir) must write what the CLI
command it records writes, byte for byte apart from the wall-clock fields. The CLI runs
for real, through __main__.main in this process."""

from __future__ import annotations

import json
import os

from sparsity_gui.__main__ import main

JSON_FILES = ("run.json", "sweep.json", "scaling.json")


def run_cli(capsys, *argv: str):
    assert main(list(argv)) == 0
    return capsys.readouterr()


def same_dir_both_ways(tmp_path, capsys, save, command: str) -> tuple:
    """The API's files and the CLI's, each written to the same path `res` in the current
    folder, tmp_path (so that the recorded command lines can be equal): the API's folder is
    moved aside to `api` first. Returns (api folder, CLI folder)."""
    save("res")
    os.rename("res", "api")
    line = json.loads(_json(tmp_path / "api"))["command_line"]
    assert line.startswith(f"sparsity-gui {command} ") and line.endswith(" --out res")
    argv = line.split()[1:]  # no spaces or quotes in these options
    run_cli(capsys, *argv)
    return tmp_path / "api", tmp_path / "res"


def _json(folder) -> str:
    names = [n for n in JSON_FILES if (folder / n).exists()]
    return (folder / names[0]).read_text()


def assert_same_files(api_dir, cli_dir, clock_fields=(), csv_clock_column=None) -> None:
    """The same file names and bytes; in JSON the ``clock_fields`` (floats) left out, in
    CSV the column ``csv_clock_column``."""
    names = sorted(p.name for p in cli_dir.iterdir())
    assert sorted(p.name for p in api_dir.iterdir()) == names
    for name in names:
        a, c = (api_dir / name).read_bytes(), (cli_dir / name).read_bytes()
        if name.endswith(".json"):
            ja, jc = json.loads(a), json.loads(c)
            for field in clock_fields:
                assert isinstance(ja.pop(field), float) and isinstance(jc.pop(field), float)
            assert ja == jc, name
            # the same digits: the texts differ only in the clock fields' lines
            assert [x for x in a.splitlines() if not any(f.encode() in x for f in clock_fields)] == [
                x for x in c.splitlines() if not any(f.encode() in x for f in clock_fields)
            ]
        elif csv_clock_column is not None and name.endswith(".csv"):
            la, lc = a.decode().splitlines(), c.decode().splitlines()
            col = la[0].split(",").index(csv_clock_column)
            assert la[0] == lc[0] and len(la) == len(lc)
            for ra, rc in zip(la[1:], lc[1:], strict=True):
                fa, fc = ra.split(","), rc.split(",")
                del fa[col], fc[col]
                assert fa == fc
        else:
            assert a == c, name
