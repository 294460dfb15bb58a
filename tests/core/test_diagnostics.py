"""The diagnostics that hold for any trainer (core/checkpoints/diagnostics.py) against own torch loops
on the paper's loss: the rail share from the snapshots' deltas against each weight's
per-step path, the saturation verdict on a saturating and a non-saturating run, the death
forecast of the note's flow against the deaths of torch's SGD, and SAELens' latents."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sparsity_gui import api
from sparsity_gui.core.checkpoints.diagnostics import RAIL_BAND, SATURATION_SHARE, SATURATION_TAIL

torch = pytest.importorskip("torch")
safetensors_numpy = pytest.importorskip("safetensors.numpy")


def paper_loss(W, l1):
    """sum_i (1 - |W_i|^2)^2 + sum_{i != j} ReLU(W_i . W_j)^2 + l1 |W|_1."""
    G = W @ W.T
    diag = torch.diagonal(G)
    off = G - torch.diag_embed(diag)
    return ((1 - diag) ** 2).sum() + (torch.relu(off) ** 2).sum() + l1 * W.abs().sum()


def trajectory(n, m, l1, lr, steps, optimizer, seed=3) -> np.ndarray:
    """W after every step 0..steps of torch's optimizer, [steps + 1, n, m] float64."""
    w0 = np.random.default_rng(seed).normal(0.0, 1.0 / np.sqrt(m), (n, m))
    W = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    opt = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}[optimizer]([W], lr=lr)
    out = np.empty((steps + 1, n, m))
    for step in range(steps + 1):
        out[step] = W.detach().numpy()
        if step == steps:
            break
        opt.zero_grad()
        paper_loss(W, l1).backward()
        opt.step()
    return out


def stacked(tmp_path, traj: np.ndarray, spacing: int, name: str):
    steps = np.arange(0, traj.shape[0], spacing)
    path = tmp_path / f"{name}-{spacing}.npz"
    W = traj[steps] if traj.shape[1] > 1 else traj[steps, 0]
    np.savez(path, W=W, steps=steps)
    return path, steps


def path_truth(traj: np.ndarray, steps: np.ndarray, lr: float) -> np.ndarray:
    """Per pair of snapshots, the share of weights whose per-step moves, summed along the
    path and divided by the steps, lie within the band of lr: the per-step truth."""
    moves = np.abs(np.diff(traj.reshape(traj.shape[0], -1), axis=0))
    out = []
    for a, b in zip(steps[:-1], steps[1:], strict=True):
        speed = moves[a:b].sum(axis=0) / (b - a)
        out.append(np.mean(np.abs(speed - lr) <= RAIL_BAND * lr))
    return np.array(out)


SATURATING = dict(n=4, m=16, l1=1.0, lr=2e-4, steps=500)
GENTLE = dict(n=4, m=16, l1=0.01, lr=2e-4, steps=500)


@pytest.fixture(scope="module")
def adam_runs():
    return {
        name: trajectory(c["n"], c["m"], c["l1"], c["lr"], c["steps"], "adam")
        for name, c in (("saturating", SATURATING), ("gentle", GENTLE))
    }


@pytest.mark.parametrize("name", ["saturating", "gentle"])
def test_the_rail_share_from_deltas_is_the_per_step_truth_of_torch_adam(tmp_path, adam_runs, name):
    cfg = SATURATING if name == "saturating" else GENTLE
    traj = adam_runs[name]
    flat = traj.reshape(traj.shape[0], -1)
    per_step = np.mean(np.abs(np.abs(np.diff(flat, axis=0)) - cfg["lr"]) <= RAIL_BAND * cfg["lr"], axis=1)
    assert per_step[0] == 1.0  # Adam's first step is lr for every weight: the rail is real
    for spacing in (1, 10, 100):
        path, steps = stacked(tmp_path, traj, spacing, name)
        result = api.compare_checkpoints(path, l1=cfg["l1"], lr=cfg["lr"], optimizer="adam", all_rows=True)
        got = result.rail_share
        assert np.isnan(got[0])
        truth = path_truth(traj, steps, cfg["lr"])
        assert np.max(np.abs(got[1:] - truth)) <= 0.05, (spacing, np.max(np.abs(got[1:] - truth)))
        if spacing == 1:  # a pair is one step: the per-step share itself
            np.testing.assert_array_equal(got[1:], per_step)
        assert list(result.column("rail_share")[1:]) == list(got[1:])


def tail_share(traj: np.ndarray, lr: float, tol: float) -> float:
    """The shrinking weights that moved at the rate, step by step over the last
    SATURATION_TAIL of the steps: the per-step truth of the verdict's K."""
    flat = traj.reshape(traj.shape[0], -1)
    first = int(round((1 - SATURATION_TAIL) * (flat.shape[0] - 1)))
    before, after = np.abs(flat[first:-1]), np.abs(flat[first + 1 :])
    shrinking = (after < before) & (before > tol)
    on_rail = np.abs(np.abs(flat[first + 1 :] - flat[first:-1]) - lr) <= RAIL_BAND * lr
    return float((shrinking & on_rail).sum() / shrinking.sum())


def test_the_saturation_verdict_appears_when_and_only_when_the_share_is_above_its_threshold(
    tmp_path, adam_runs
):
    verdicts = {}
    for name, cfg in (("saturating", SATURATING), ("gentle", GENTLE)):
        traj = adam_runs[name]
        path, _ = stacked(tmp_path, traj, 20, name)
        result = api.compare_checkpoints(path, l1=cfg["l1"], lr=cfg["lr"], optimizer="adam", all_rows=True)
        truth = tail_share(traj, cfg["lr"], result.zero_tol)
        assert abs(result.saturation_share - truth) <= 0.1, (name, result.saturation_share, truth)
        assert result.saturated is (result.saturation_share >= SATURATION_SHARE)
        said = "a larger coefficient will not sparsify faster" in result.saturation_verdict
        assert said is result.saturated
        verdicts[name] = (result.saturated, truth)
        out = tmp_path / f"out-{name}"
        result.save(out)
        meta = json.loads((out / "run.json").read_text())
        assert meta["diagnostics"]["saturation"]["saturated"] is result.saturated
    # the runs are on either side of the threshold, by the per-step truth too
    assert verdicts["saturating"][0] is True and verdicts["saturating"][1] >= SATURATION_SHARE + 0.1
    assert verdicts["gentle"][0] is False and verdicts["gentle"][1] <= SATURATION_SHARE - 0.1
    # under SGD there is no rail to judge
    traj = adam_runs["saturating"]
    path, _ = stacked(tmp_path, traj, 20, "as-sgd")
    result = api.compare_checkpoints(path, l1=1.0, lr=2e-4, optimizer="sgd", all_rows=True)
    assert result.saturated is None and "will not sparsify faster" not in result.saturation_verdict


def ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their mean rank."""
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    sx = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sx[j + 1] == sx[i]:
            j += 1
        r[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = ranks(a) - (len(a) + 1) / 2, ranks(b) - (len(b) + 1) / 2
    return float(ra @ rb / np.sqrt((ra @ ra) * (rb @ rb)))


def test_the_flow_forecasts_the_deaths_of_one_row_under_torch_sgd(tmp_path):
    m, l1, lr, steps = 48, 0.2, 1e-3, 2000
    traj = trajectory(1, m, l1, lr, steps, "sgd", seed=5)[:, 0]
    tol = 2 * lr * l1  # the comparison's default: a dead weight chatters within lr l1
    dead = np.abs(traj) <= tol
    # per step: the first step from which a weight stays within the tolerance
    stays = np.flip(np.logical_and.accumulate(np.flip(dead, axis=0), axis=0), axis=0)
    died = stays[-1] & ~dead[0]
    observed = np.argmax(stays, axis=0).astype(float)
    assert died.sum() >= 20  # enough deaths to rank
    path, snap_steps = stacked(tmp_path, traj[:, None, :], 25, "row")
    result = api.compare_checkpoints(path, l1=l1, lr=lr, optimizer="sgd")
    assert result.forecast_kind == "flow"
    forecast = result.death_forecast
    both = died & np.isfinite(forecast)
    assert both.sum() >= died.sum() - 2
    rho = spearman(forecast[both], observed[both])
    assert rho >= 0.95, rho
    assert result.forecast_spearman >= 0.95
    # the observed death of each weight is the snapshot at or after its step's
    seen = result.observed_deaths
    assert np.all(seen[died] >= observed[died]) and np.all(seen[died] - observed[died] < 25)
    # the dead share of each snapshot and the step deaths begin at
    np.testing.assert_array_equal(result.dead_share, dead[snap_steps].mean(axis=1))
    first_dead = snap_steps[np.argmax((dead[snap_steps] & ~dead[0]).any(axis=1))]
    assert result.deaths_begin == first_dead
    out = tmp_path / "out"
    result.save(out)
    rows = np.loadtxt(out / "deaths.csv", delimiter=",", skiprows=1)
    assert rows.shape == (m, 5)
    np.testing.assert_array_equal(rows[:, 1], traj[0])


def test_under_adam_the_rail_bound_is_the_earliest_death(tmp_path, adam_runs):
    cfg = SATURATING
    traj = adam_runs["saturating"]
    path, _ = stacked(tmp_path, traj, 10, "adam")
    result = api.compare_checkpoints(path, l1=cfg["l1"], lr=cfg["lr"], optimizer="adam", all_rows=True)
    assert result.forecast_kind == "rail"
    w0 = traj[0].reshape(-1)
    forecast, seen = result.death_forecast, result.observed_deaths
    inside = np.isfinite(forecast)
    np.testing.assert_allclose(forecast[inside], np.abs(w0[inside]) / cfg["lr"], rtol=1e-12)
    both = np.isfinite(seen) & inside
    assert both.sum() >= 10
    # a weight moves at most about lr a step: it cannot die before |w|/lr (a snapshot's
    # spacing of slack for where between snapshots it died)
    assert np.all(seen[both] >= forecast[both] - 10)


def write_saelens(folder, steps, weights, log_sparsity):
    """SAELens' checkpoints, as its trainer lays them out: a folder per step with cfg.json,
    sae_weights.safetensors and sparsity.safetensors (log10 of each latent's frequency)."""
    for step, W, s in zip(steps, weights, log_sparsity, strict=True):
        sub = folder / str(step)
        sub.mkdir(parents=True)
        (sub / "cfg.json").write_text(json.dumps({"d_in": W.shape[0], "d_sae": W.shape[1]}))
        safetensors_numpy.save_file({"W_enc": W.astype(np.float32)}, str(sub / "sae_weights.safetensors"))
        safetensors_numpy.save_file({"sparsity": s.astype(np.float32)}, str(sub / "sparsity.safetensors"))


def test_saelens_latents_that_never_fire_are_counted_per_checkpoint(tmp_path):
    rng = np.random.default_rng(0)
    d_in, d_sae = 8, 20
    steps = [100, 200, 300, 400]
    weights = [rng.normal(size=(d_in, d_sae)) for _ in steps]
    freq = rng.uniform(1e-3, 1e-1, size=(len(steps), d_sae))
    freq[2:, :3] = 0.0  # three latents stop firing from step 300
    freq[3, 3] = 0.0  # and one more at 400
    log_sparsity = np.log10(freq + 1e-10)  # as SAELens stores it
    folder = tmp_path / "checkpoints"
    write_saelens(folder, steps, weights, log_sparsity)
    result = api.compare_checkpoints(folder, l1=1.0, lr=1e-3, optimizer="adam", latent=0)
    np.testing.assert_allclose(result.dead_latent_share, [0, 0, 3 / 20, 4 / 20])
    assert result.latent_deaths_begin == 300


def test_a_real_saelens_topk_run_counts_the_latents_its_trainer_saw_never_fire():
    """SAELens' own SAETrainer (tests/data/sae: a TopK SAE in bf16): each checkpoint's share
    of latents that never fired, as its sparsity.safetensors says (read here with the
    safetensors library), and the first checkpoint where a latent firing at the first does not."""
    from pathlib import Path

    run = Path(__file__).parents[1] / "data" / "sae" / "saelens_topk" / "checkpoints" / "run0"
    result = api.compare_checkpoints(run, l1=1.0, lr=1e-3, optimizer="adam", latent=0)
    folders = sorted((p for p in run.iterdir() if p.is_dir()), key=lambda p: int(p.name.split("_")[-1]))
    logs = [safetensors_numpy.load_file(str(p / "sparsity.safetensors"))["sparsity"] for p in folders]
    never = [log <= np.log10(1e-10) + 1e-6 for log in logs]  # SAELens: log10(frequency + 1e-10)
    assert sum(n.sum() for n in never) > 0  # the TopK run has dead latents
    np.testing.assert_allclose(result.dead_latent_share, [n.mean() for n in never], rtol=1e-15)
    first = next(k for k, n in enumerate(never) if (n & ~never[0]).any())
    assert result.latent_deaths_begin == result.steps[first]


def test_under_signsgd_every_step_is_on_the_rail_until_a_weight_turns(tmp_path):
    """signSGD (w -= lr sign(grad), written here on torch's gradient): every step is lr, so
    a weight is on the rail over a pair when it never turned inside it (a dead weight chatters
    by lr a step: its path runs at lr, its net move does not). The rail share from the deltas
    against that per-step truth, and the verdict judged as under Adam."""
    n, m, l1, lr, steps = 4, 24, 0.5, 5e-4, 300
    W = torch.tensor(np.random.default_rng(2).normal(0.0, 1 / np.sqrt(m), (n, m)), requires_grad=True)
    traj = np.empty((steps + 1, n, m))
    for step in range(steps + 1):
        traj[step] = W.detach().numpy()
        W.grad = None
        paper_loss(W, l1).backward()
        with torch.no_grad():
            W -= lr * torch.sign(W.grad)
    path, kept = stacked(tmp_path, traj, 10, "signsgd")
    result = api.compare_checkpoints(path, l1=l1, lr=lr, optimizer="signsgd", all_rows=True)
    moves = np.diff(traj.reshape(steps + 1, -1), axis=0)
    truth = [
        np.mean(np.all(np.sign(moves[a:b]) == np.sign(moves[a]), axis=0))
        for a, b in zip(kept[:-1], kept[1:], strict=True)
    ]
    assert np.max(np.abs(result.rail_share[1:] - truth)) <= 0.05
    assert result.rail_share[1] >= 0.95  # the first 10 steps: nearly every weight on the rail
    assert result.saturated is not None and result.forecast_kind == "rail"
