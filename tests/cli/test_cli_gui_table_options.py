"""The app's launch options for the interference window come from the model's settings
rows (core/interference/settings.py), as the `interference` command's do: every row that is
an option or a grid axis (the mechanisms' --sparsity --k --l0 --bandwidth --threshold-init
--threshold-param, Adam's --beta1 --beta2 --eps) opens the window with it; a bad value is
one `error:` line, exit 2, before any window. (The real launch with them:
test_cli_gui_options.py.)"""

from __future__ import annotations

import pytest
from helpers import assert_refused_in_process

from sparsity_gui.cli.gui_options import build_gui_parser, gui_params
from sparsity_gui.cli.interference import build_interference_parser
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS


def parse(*argv):
    return gui_params(build_gui_parser().parse_args(list(argv)))


def dests(parser) -> set[str]:
    return {a.dest for a in parser._actions}


def test_every_option_row_of_the_table_is_a_launch_option_as_in_the_command():
    rows = {s.name for s in INTERFERENCE_SETTINGS if s.option or s.axis}
    assert rows <= dests(build_interference_parser())
    assert rows <= dests(build_gui_parser())
    mechanisms = ("sparsity", "k", "l0", "bandwidth", "threshold_init", "threshold_param")
    for name in (*mechanisms, "beta1", "beta2", "eps"):
        assert name in rows  # the rows this issue is about are rows of the table


def test_the_mechanisms_and_adams_constants_open_the_window_with_them():
    _, params, _ = parse(
        *("--model", "interference", "--n", "8", "--m", "16", "--sparsity", "jumprelu"),
        *("--l0", "0.02", "--bandwidth", "0.05", "--threshold-init", "0.1", "--threshold-param", "log"),
        *("--optimizer", "adam", "--beta1", "0.8", "--beta2", "0.99", "--eps", "1e-6"),
    )
    assert params == InterferenceParams(
        n=8, m=16, l1=0.0, optimizer="adam", beta1=0.8, beta2=0.99, eps=1e-6, sparsity="jumprelu",
        l0=0.02, bandwidth=0.05, threshold_init=0.1, threshold_param="log",
    )  # fmt: skip
    _, params, _ = parse("--model", "interference", "--sparsity", "topk", "--k", "3")
    assert (params.sparsity, params.k, params.l1) == ("topk", 3, 0.0)  # topk has no penalty


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--sparsity", "bogus"], "sparsity: must be one of l1, topk, jumprelu"),
        (["--sparsity", "topk"], "k: topk needs k"),
        (["--sparsity", "topk", "--k", "2000"], "k: must be a whole number from 1 to m = 1024"),
        (["--l0", "0.1"], "l0: goes with --sparsity jumprelu"),
        (["--sparsity", "jumprelu", "--bandwidth", "0"], "bandwidth: must be"),
        (["--sparsity", "jumprelu", "--threshold-param", "exp"], "threshold_param: must be one of"),
        (["--beta1", "1.5"], "beta1: must be"),
        (["--optimizer", "gd", "--eps", "1e-6"], "eps: goes with --optimizer adam or adamw"),
        (["--k", "x"], "argument --k: not a whole number"),
    ],
)
def test_a_bad_launch_option_is_one_error_line_and_exit_2(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_refused_in_process(["--model", "interference", *argv], words, tmp_path, capsys)


def test_the_notes_window_refuses_the_interference_models_options(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for flag, value in (("--sparsity", "topk"), ("--beta1", "0.8")):
        words = f"{flag} is an option of --model interference"
        assert_refused_in_process([flag, value], words, tmp_path, capsys)
