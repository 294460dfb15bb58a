"""The GUI's options choose a model and its parameters (parsed without Qt), and W(0) from
a file for either model: a vector for the note's, the whole matrix for --model interference."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from safetensors.numpy import save_file

from sparsity_gui.__main__ import main
from sparsity_gui.cli.gui_options import build_gui_parser, gui_params
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams


def parse(*argv):
    return gui_params(build_gui_parser().parse_args(list(argv)))


def test_note_model_keeps_its_defaults():
    model, params, w0 = parse()
    assert model == "note" and w0 is None
    assert params == SimParams(m=1000, lam=1e-3, sigma=0.9, seed=0)
    model, params, _ = parse("--m", "500", "--sigma", "0.5", "--seed", "7")
    assert (params.m, params.sigma, params.seed) == (500, 0.5, 7)


def test_interference_model_takes_its_options_and_the_shared_ones():
    model, params, w0 = parse("--model", "interference")
    assert model == "interference" and w0 is None
    assert params == InterferenceParams()  # the paper's n = 256, m = 1024, AdamW
    _, params, _ = parse(
        "--model",
        "interference",
        "--n",
        "24",
        "--m",
        "48",
        "--seed",
        "3",
        "--sigma",
        "0.8",
        "--optimizer",
        "gd-zero",
        "--lr",
        "0.01",
        "--l1",
        "0.02",
        "--steps",
        "900",
        "--no-interference",
        "--weight-decay",
        "0",
    )
    assert params == InterferenceParams(
        n=24,
        m=48,
        seed=3,
        sigma=0.8,
        optimizer="gd-zero",
        lr=0.01,
        l1=0.02,
        steps=900,
        interference=False,
        weight_decay=0.0,
    )


@pytest.mark.parametrize(
    "argv, field",
    [
        (["--n", "24"], "n"),  # an interference option without --model interference
        (["--no-interference"], "no-interference"),
        (["--model", "interference", "--lam", "0.1"], "lam"),  # a note option with it
        (["--model", "interference", "--method", "gd"], "method"),
        (["--model", "interference", "--w0-row", "1"], "w0-row"),  # W(0) is the whole matrix
        (["--model", "interference", "--w0-tensor", "W"], "w0-tensor"),  # without --w0
        (["--model", "interference", "--w0", "w.npy", "--seed", "2"], "seed"),  # a random draw's
        (["--model", "interference", "--w0", "/nonexistent/w.npy"], "w0"),
        (["--model", "interference", "--lr", "-1"], "lr"),
        (["--model", "interference", "--m", "70000"], "m"),
    ],
)
def test_an_option_of_the_other_model_or_a_bad_value_is_refused(argv, field):
    with pytest.raises(InputError) as err:
        parse(*argv)
    assert err.value.field == field


def test_an_interference_run_that_does_not_fit_is_refused_before_any_window(tmp_path):
    """--model interference with W too big for the memory limit: one error line, status 2,
    before Qt starts (the window would otherwise wait for a run that can never start)."""
    import resource
    import subprocess
    import sys

    def limit():  # 3 GiB of address space for the child; n x m = 4096 x 32768 needs ~8 GiB
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    out = subprocess.run(
        [sys.executable, "-m", "sparsity_gui", "--model", "interference", "--n", "4096", "--m", "32768"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: m:") and "GiB" in lines[0]


# --- --model interference --w0 FILE: the window's first W(0) -------------------------------
MATRIX = np.random.default_rng(5).standard_normal((6, 10)) / 3  # n = 6 features, m = 10 neurons


def checkpoint(folder):
    path = folder / "ae.safetensors"
    save_file({"enc.weight": MATRIX.astype(np.float32), "enc.bias": np.zeros(6, np.float32)}, str(path))
    return path


def test_interference_takes_w0_from_a_file_which_sets_n_and_m(tmp_path):
    path = checkpoint(tmp_path)
    model, params, w0 = parse(
        "--model", "interference", "--w0", str(path), "--w0-tensor", "enc.weight", "--optimizer", "gd-zero"
    )
    assert model == "interference"
    assert params == InterferenceParams(n=6, m=10, optimizer="gd-zero")  # seed and sigma: the defaults
    matrix, name, _ = w0
    np.testing.assert_array_equal(matrix, MATRIX.astype(np.float32).astype(np.float64))
    assert name == "ae.safetensors [enc.weight]"
    np.save(tmp_path / "w.npy", MATRIX)
    _, params, (matrix, name, _) = parse(
        "--model", "interference", "--w0", str(tmp_path / "w.npy"), "--m", "10"
    )
    assert (params.n, params.m, name) == (6, 10, "w.npy") and np.array_equal(matrix, MATRIX)


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--w0-tensor", "enc.weight", "--n", "10", "--m", "6"],
            "the run needs n x m = 10 x 6 (its transpose would fit)",
        ),
        ([], "holds 2 tensors ('enc.bias', 'enc.weight'); name one"),
        (["--w0-tensor", "enc.bias"], "W(0) is a matrix n x m (features x neurons), not 1-D, shape (6,)"),
    ],
)
def test_a_w0_that_does_not_fit_is_the_interference_commands_error(tmp_path, capsys, argv, message):
    path = checkpoint(tmp_path)
    with pytest.raises(InputError) as err:
        parse("--model", "interference", "--w0", str(path), *argv)
    assert err.value.field == "w0" and message in err.value.message
    with pytest.raises(SystemExit):  # `interference --w0` says the same
        main(["interference", "--w0", str(path), *argv, "--out", str(tmp_path / "res")])
    assert capsys.readouterr().err == f"error: {err.value}\n"


def _python(*args, cwd):
    """A fresh interpreter in ``cwd``, its settings there too (a first launch)."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SPARSITY_GUI_SETTINGS": str(cwd / "s.ini")},
    )


LAUNCH = """
import json, sys
from PySide6 import QtCore, QtWidgets
from sparsity_gui.__main__ import main

app = QtWidgets.QApplication([sys.argv[0]])
seen = {}

def look():
    win = [w for w in app.topLevelWidgets() if w.objectName() == "InterferenceWindow"]
    snap = win[0].snapshot if win else None
    if snap is None or snap.latest is None:
        QtCore.QTimer.singleShot(50, look)
        return
    p = snap.params
    seen.update(SEEN)
    win[0].close()
    app.quit()

QtCore.QTimer.singleShot(0, look)
rc = main(sys.argv[1:])
print(json.dumps(seen))
sys.exit(rc)
"""


def launched(argv: list[str], seen: str, cwd) -> dict:
    """`python -m sparsity_gui ARGV` (the real entry point, in a fresh interpreter): ``seen``
    (keyword arguments of a dict, from the interference window ``win[0]``, its snapshot
    ``snap`` and parameters ``p``) once its first run has a state."""
    proc = _python("-c", LAUNCH.replace("SEEN", seen), *argv, cwd=cwd)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_the_app_opens_the_interference_window_on_the_files_w0_with_the_launch_options(tmp_path):
    """The real entry point (one launch for both): the window's first run starts from the
    file's matrix, and the launch options from the settings rows (the mechanisms', Adam's
    constants) reach its run."""
    path = checkpoint(tmp_path)
    argv = ["--model", "interference", "--w0", str(path), "--w0-tensor", "enc.weight", "--paused"]
    argv += ["--sparsity", "topk", "--k", "3"]
    argv += ["--optimizer", "adam", "--beta1", "0.8", "--beta2", "0.99", "--eps", "1e-6"]
    seen = launched(
        argv,
        "W=snap.W.tolist(), n=p.n, m=p.m, line=win[0].w0_line.text(), sparsity=p.sparsity, k=p.k,"
        " optimizer=p.optimizer, beta1=p.beta1, beta2=p.beta2, eps=p.eps",
        tmp_path,
    )
    assert (seen.pop("n"), seen.pop("m")) == (6, 10)
    np.testing.assert_array_equal(np.array(seen.pop("W")), MATRIX.astype(np.float32).astype(np.float64))
    assert seen.pop("line").startswith("W(0): ae.safetensors [enc.weight], 6 × 10")
    assert seen == {"sparsity": "topk", "k": 3, "optimizer": "adam", "beta1": 0.8, "beta2": 0.99, "eps": 1e-6}


def test_a_bad_w0_file_is_one_error_line_before_any_window(tmp_path, monkeypatch, capsys):
    """In-process (the window's real entry point: the launch above): no top-level window
    is made before the refusal."""
    from helpers import command_in_process
    from PySide6 import QtWidgets

    bad = tmp_path / "w.npy"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    before = sorted(tmp_path.iterdir())
    windows = set(QtWidgets.QApplication.topLevelWidgets())
    monkeypatch.setenv("SPARSITY_GUI_SETTINGS", str(tmp_path / "s.ini"))
    status, out, err = command_in_process(
        ["--model", "interference", "--w0", bad], tmp_path, monkeypatch, capsys
    )
    assert status == 2 and out == ""
    assert err == f"error: w0: {bad}: not a valid .npy file (it is a PNG image)\n"
    assert set(QtWidgets.QApplication.topLevelWidgets()) == windows
    assert sorted(tmp_path.iterdir()) == before
