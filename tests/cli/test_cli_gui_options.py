"""The GUI's options choose a model and its parameters (parsed without Qt)."""

import pytest

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
        (["--model", "interference", "--w0", "w.npy"], "w0"),
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
