"""A TopK or JumpReLU SAE's reference curves use the interference model's matching mechanism
(core/checkpoints/reference.py): on the committed SAELens TopK run (tests/data/sae/, k = 4 in
its cfg.json) the reference at the snapshots' optimizer steps equals torch.optim.Adam on the
TopK loss written here, to 1e-9; run.json, the command's notes, the figures' titles and
legends say which mechanism it is. On the committed SAELens JumpReLU run (thresholds trained
as they are, an L0 warm-up that the first snapshot lies inside) the reference equals a loop
written here as SAELens 6.54's JumpReLUTrainingSAE and SAETrainer train: the paper's
pseudo-derivatives, the thresholds projected onto >= 0 before each step, the L0 coefficient
C min(1, s / T) at the SAE's update s; the log theta path (SAELens before 6.54) from a
cfg.json's fields given to the TopK series."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import command_in_process

from sparsity_gui import api
from sparsity_gui.core.checkpoints.compare import compare
from sparsity_gui.core.sae_series import saelens_model
from sparsity_gui.core.series import open_series

torch = pytest.importorskip("torch")

from torch_mechanisms import JumpReLU, Step  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "sae"
TOPK = DATA / "saelens_topk" / "checkpoints" / "run0"
JUMPRELU = DATA / "saelens_jumprelu" / "checkpoints" / "run0"
LR = 1e-3


def reconstruction(A, W):
    """sum_ij (ReLU(z_ij) - delta_ij)^2, z = A W^T: the tied model on the basis inputs."""
    Z = A @ W.T
    off = Z - torch.diag(torch.diagonal(Z))
    return ((torch.relu(torch.diagonal(Z)) - 1.0) ** 2).sum() + (torch.relu(off) ** 2).sum()


def torch_adam(w0: np.ndarray, offsets: list[int], loss_of, extra=()) -> dict[int, np.ndarray]:
    """W after each of ``offsets`` steps of torch.optim.Adam on ``loss_of(W)``."""
    W = torch.tensor(np.atleast_2d(w0), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([W, *extra], lr=LR)
    want = {}
    for step in range(offsets[-1] + 1):
        if step in offsets:
            want[step] = W.detach().numpy().copy()
        opt.zero_grad()
        loss_of(W).backward()
        opt.step()
    return want


def topk_loss(k: int):
    def loss(W):
        kept = torch.argsort(-W.detach().abs(), dim=1, stable=True)[:, :k]  # ties: the lower index
        return reconstruction(W * torch.zeros_like(W).scatter(1, kept, 1.0), W)

    return loss


def assert_reference_is(result, series, want: dict[int, np.ndarray]) -> None:
    offsets = [int(s - series.steps[0]) for s in series.steps]
    for i, offset in enumerate(offsets):
        W = want[offset]
        got = np.atleast_2d(np.asarray(series.read(i), np.float64))
        assert result.column("norm1_pred")[i] == pytest.approx(np.abs(W).sum(), rel=1e-9, abs=1e-12)
        assert result.column("norm2_pred")[i] == pytest.approx(np.mean((W**2).sum(1)), rel=1e-9, abs=1e-12)
        assert result.column("max_abs_diff")[i] == pytest.approx(np.abs(got - W).max(), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("pick", ["matrix", "row"])
def test_a_topk_saes_reference_is_torchs_topk_adam_loop(pick):
    """The whole W_enc (16 inputs x 64 latents) and one input's row (its 64 latents): k = 4
    from cfg.json, no L1 term whatever --l1 says."""
    how = dict(all_rows=True) if pick == "matrix" else dict(row=5)
    result = api.compare_checkpoints(TOPK, **how, l1=0.01, lr=LR, optimizer="adam")
    series = open_series(TOPK, **how)
    assert series.model["k"] == 4
    offsets = [int(s - series.steps[0]) for s in series.steps]
    want = torch_adam(series.read(0), offsets, topk_loss(4))
    assert_reference_is(result, series, want)
    said = " ".join(result.statements)
    assert "TopK with k = 4 (cfg.json's k)" in said and "--l1 0.01 is not used" in said
    assert "TopK (k = 4) on its hidden layer" in said


def test_a_topk_reference_is_said_in_run_json_the_notes_and_the_figures(tmp_path, capsys, monkeypatch):
    argv = ["checkpoints", str(TOPK), "--all-rows", "--l1", "0.01", "--lr", "1e-3", "--optimizer", "adam"]
    code, out, _err = command_in_process([*argv, "--out", "o"], tmp_path, monkeypatch, capsys)
    assert code == 0
    assert "note: the reference uses the interference model's TopK with k = 4" in out
    meta = json.loads((tmp_path / "o" / "run.json").read_text(encoding="utf-8"))
    assert meta["settings"]["reference"] == {"sparsity": "topk", "k": 4, "l1": 0.0}
    assert any("TopK with k = 4" in s for s in meta["what_the_curves_are"])
    assert "the flow's columns are empty" in meta["flow"] and "TopK" in meta["flow"]
    from sparsity_gui.figures.compare import comparison_data

    result = api.compare_checkpoints(TOPK, all_rows=True, l1=0.01, lr=LR, optimizer="adam")
    data = comparison_data(result.comparison, "norm1")
    assert data["pred_label"] == "the paper's model with TopK, k = 4 from step 13 (a reference)"
    assert data["title"].endswith("reference TopK, k = 4") and "l1 =" not in data["title"]


def test_one_latent_of_a_topk_sae_keeps_the_l1_reference_and_says_why():
    """TopK chooses among an input's latents: one latent's weights (a column of W_enc) hold none."""
    result = api.compare_checkpoints(TOPK, latent=0, l1=0.01, lr=LR, optimizer="adam")
    said = " ".join(result.statements)
    assert "the reference uses the L1 model: TopK chooses among an input's latents" in said
    with pytest.raises(ValueError, match="fit-time-scale.*TopK"):
        api.compare_checkpoints(TOPK, row=1, l1=0.01, lr=LR, optimizer="sgd", fit_time_scale=True)


JUMPRELU_CFG = {  # a SAELens JumpReLUTrainingSAEConfig's fields, as its cfg.json writes them
    "architecture": "jumprelu",
    "d_in": 16,
    "d_sae": 64,
    "jumprelu_init_threshold": 0.02,
    "jumprelu_bandwidth": 0.01,
    "l0_coefficient": 0.05,
    "l0_warm_up_steps": 0,
}


def saelens_jumprelu_loop(w0: np.ndarray, offsets: list[int], cfg: dict, s0: int):
    """W after each of ``offsets`` steps from ``w0`` (the SAE's W_enc after ``s0`` updates) as
    SAELens 6.54 trains a JumpReLU SAE, on the paper's basis inputs: torch's Adam on W and the
    thresholds theta themselves, theta clamped at 0 before each forward pass
    (JumpReLUTrainingSAE.training_forward_pass), the loss the reconstruction plus C_s times
    the units kept, C_s = C min(1, s / T) at the SAE's update s counted from 0 (SAETrainer's
    CoefficientScheduler: 0 at the first update). Also the smallest theta met."""
    c, eps, T = cfg["l0_coefficient"], cfg["jumprelu_bandwidth"], cfg["l0_warm_up_steps"]
    W = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    theta = torch.full(
        (w0.shape[1],), cfg["jumprelu_init_threshold"], dtype=torch.float64, requires_grad=True
    )
    opt = torch.optim.Adam([W, theta], lr=LR)
    want, lowest = {}, math.inf
    for step in range(offsets[-1] + 1):
        if step in offsets:
            want[step] = W.detach().numpy().copy()
        with torch.no_grad():
            theta.clamp_(min=0.0)
        lowest = min(lowest, float(theta.detach().min()))
        coefficient = c * min(1.0, (s0 + step) / T)
        loss = (
            reconstruction(JumpReLU.apply(W, theta, eps), W) + coefficient * Step.apply(W, theta, eps).sum()
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    return want, lowest


def test_a_real_jumprelu_saes_reference_is_saelens_jumprelu_loop():
    """The committed SAELens JumpReLU run: C, bandwidth, theta0 and the L0 warm-up from its
    cfg.json, thresholds as they are (its weights file holds ``threshold``), the warm-up's
    remaining ramp from the first snapshot's step on."""
    result = api.compare_checkpoints(JUMPRELU, all_rows=True, l1=0.01, lr=LR, optimizer="adam")
    series = open_series(JUMPRELU, all_rows=True)
    cfg = json.loads((JUMPRELU / "416" / "cfg.json").read_text(encoding="utf-8"))
    manifest = json.loads((JUMPRELU.parents[1] / "manifest.json").read_text(encoding="utf-8"))
    s0 = manifest["checkpoints"]["416"]["optimizer_steps"]  # what its trainer counted
    assert int(series.steps[0]) == s0 == 13 and cfg["l0_warm_up_steps"] == 20  # inside the warm-up
    offsets = [int(s - s0) for s in series.steps]
    want, lowest = saelens_jumprelu_loop(np.asarray(series.read(0), np.float64), offsets, cfg, s0)
    assert lowest > 0.0  # the projection onto theta >= 0 never acted (the reference has none)
    assert_reference_is(result, series, want)
    assert result.comparison.settings["reference"]["threshold_param"] == "plain"
    said = " ".join(result.statements)
    assert "trained as they are, as SAELens 6.54 trains them" in said and "--l1 0.01 is not used" in said
    assert "C = 0.13 there, 0.2 from step 20" in said
    # a warm-up that ended before the first snapshot leaves C constant, and is said
    series.model = {**series.model, "l0_warm_up_steps": 10}
    reference = compare(series, l1=0.01, lr=LR, optimizer="adam").reference
    assert (
        "l0_schedule" not in reference.settings
        and "ended before the first snapshot (step 13)" in reference.warmup
    )
    # an estimator that reaches the pre-activations is not the interference model's
    series.model = {**series.model, "jumprelu_ste_to_input": True}
    assert compare(series, l1=0.01, lr=LR, optimizer="adam").reference.sparsity == "l1"


def test_an_older_jumprelu_saes_reference_trains_log_theta():
    """log theta (SAELens' parameter before 6.54, its files' log_threshold) from cfg.json's
    init, Adam on W and log theta, the L0 step and JumpReLU with the rectangle kernel's
    pseudo-derivatives."""
    series = open_series(TOPK, all_rows=True)
    series.model = {**saelens_model(JUMPRELU_CFG), "threshold_tensor": "log_threshold"}
    result = compare(series, l1=0.3, lr=LR, optimizer="adam")
    offsets = [int(s - series.steps[0]) for s in series.steps]
    log_theta = torch.full((64,), math.log(0.02), dtype=torch.float64, requires_grad=True)

    def loss(W):
        theta = torch.exp(log_theta)
        return reconstruction(JumpReLU.apply(W, theta, 0.01), W) + 0.05 * Step.apply(W, theta, 0.01).sum()

    want = torch_adam(series.read(0), offsets, loss, extra=[log_theta])
    assert_reference_is(result, series, want)
    assert result.settings["reference"] == {
        "sparsity": "jumprelu", "l0": 0.05, "bandwidth": 0.01, "threshold_init": 0.02,
        "threshold_param": "log", "l1": 0.0,
    }  # fmt: skip
    assert any("JumpReLU with the L0 coefficient C = 0.05" in s for s in result.statements)
    # a cfg.json without the settings keeps the L1 model and names what it lacks
    series.model = saelens_model({k: v for k, v in JUMPRELU_CFG.items() if k != "jumprelu_bandwidth"})
    result = compare(series, l1=0.3, lr=LR, optimizer="adam")
    assert result.reference.sparsity == "l1"
    assert any("does not give jumprelu_bandwidth" in s for s in result.statements)


def test_a_window_trains_the_topk_reference_live_and_the_notes_refuses_it():
    """File → Compare with checkpoints…: the interference window's live run is the reference
    (TopK, k = 4, l1 = 0); the note's model, L1's alone, sends the series there."""
    from sparsity_gui.core.checkpoints.series_pin import interference_request, note_request, series_pin
    from sparsity_gui.core.interference.params import InterferenceParams
    from sparsity_gui.core.note.params import SimParams
    from sparsity_gui.core.series import SeriesOptions

    options = SeriesOptions(str(TOPK), l1=0.01, lr=LR, optimizer="adam", all_rows=True)
    pin = series_pin(interference_request(options, InterferenceParams()))
    p = pin.params
    assert (p.sparsity, p.k, p.l1, p.n, p.m) == ("topk", 4, 0.0, 16, 64)
    assert "TopK, k = 4" in pin.distance_text()
    row = SeriesOptions(str(TOPK), l1=0.01, lr=LR, optimizer="sgd", row=2)
    with pytest.raises(ValueError, match="interference window"):
        note_request(row, SimParams())
