"""SAE training runs written by the libraries' own trainers (tests/data/sae/, written by
make_fixtures.py there with SAELens 6.54.12 and dictionary_learning 0.1.0): their real
optimizer steps, their layouts, what the comparison says it is, and every refusal of a
crafted or careless series (one line, exit 2, nothing written; a ValueError in the API).
The prediction from the right steps is checked against torch's own Adam loop, written here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_refused_in_process

from sparsity_gui import api
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.series import open_series

torch = pytest.importorskip("torch")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

DATA = Path(__file__).resolve().parents[1] / "data" / "sae"
STANDARD = DATA / "saelens_standard" / "checkpoints" / "run0"
TOPK = DATA / "saelens_topk" / "checkpoints" / "run0"
MULTI = DATA / "saelens_multi" / "checkpoints" / "multi0"
DICTLEARN = DATA / "dictlearn" / "trainer_0"


def manifest(run: str) -> dict:
    return json.loads((DATA / run / "manifest.json").read_text(encoding="utf-8"))["checkpoints"]


def refused_by_the_command(
    series: Path, options: list[str], words: str, tmp_path, monkeypatch, capsys
) -> None:
    """`checkpoints SERIES OPTIONS` in an empty folder: one error line holding ``words``,
    exit 2, nothing written."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = [
        "checkpoints",
        str(series),
        *options,
        "--l1",
        "1e-3",
        "--lr",
        "1e-3",
        "--optimizer",
        "adam",
        "--out",
        "o",
    ]
    assert_refused_in_process(argv, words, work, capsys)


def test_a_saelens_trainer_series_is_at_its_optimizer_steps_not_its_samples():
    counted = manifest("saelens_standard")
    series = open_series(STANDARD, latent=3)
    by_folder = {s.path.parent.name: s.step for s in series.snapshots}
    # the trainer's own count of updates at each checkpoint, recorded when it saved it
    assert by_folder == {name: c["optimizer_steps"] for name, c in counted.items()}
    # the final checkpoint is the last, at the trainer's n_training_steps (the earlier ones
    # are saved before SAETrainer advances that counter: one short of their updates)
    assert series.snapshots[-1].path.parent.name == "final_1920"
    assert series.steps[-1] == counted["final_1920"]["n_training_steps"] == 60
    for name, c in counted.items():
        assert c["n_training_samples"] == c["optimizer_steps"] * 32  # samples / batch agrees
        assert int(name.removeprefix("final_")) == c["n_training_samples"]
    assert "trainer_state.pt" in series.step_note
    assert series.model == {"library": "SAELens", "architecture": "standard", "l1_coefficient": 0.5}


def test_the_prediction_from_the_right_steps_is_torchs_own_adam_loop(tmp_path):
    """latent 3 of the SAELens run: the reference (the paper's model from the first
    snapshot) at the snapshots' optimizer steps equals torch.optim.Adam on the paper's loss
    from the same start, step for step, to 1e-9."""
    l1, lr = 0.05, 1e-3
    result = api.compare_checkpoints(STANDARD, latent=3, l1=l1, lr=lr, optimizer="adam")
    series = open_series(STANDARD, latent=3)
    w = torch.tensor(np.asarray(series.read(0), np.float64)[None, :], requires_grad=True)
    opt = torch.optim.Adam([w], lr=lr)
    offsets = [int(s - series.steps[0]) for s in series.steps]
    want = {}
    for step in range(offsets[-1] + 1):
        if step in offsets:
            want[step] = w.detach().numpy()[0].copy()
        gram = w @ w.T
        diag = torch.diagonal(gram)
        loss = (
            ((1 - diag) ** 2).sum()
            + (torch.relu(gram - torch.diag_embed(diag)) ** 2).sum()
            + l1 * w.abs().sum()
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert list(result.steps) == [13, 25, 37, 49, 60]
    for k, offset in enumerate(offsets):
        W = want[offset]
        assert result.column("norm1_pred")[k] == pytest.approx(np.abs(W).sum(), rel=1e-9, abs=1e-12)
        assert result.column("norm2_pred")[k] == pytest.approx((W**2).sum(), rel=1e-9, abs=1e-12)
    # a standard SAE is not the paper's model: said once, with the coefficient it disagrees with
    assert any("a reference, not a prediction of this run" in s for s in result.statements)
    assert any("its files say 0.5" in s for s in result.statements)
    out = result.save(tmp_path / "out")
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert meta["x_axis"] == "optimizer step" and "trainer_state.pt" in meta["series"]["steps"]
    assert meta["what_the_curves_are"] == list(result.statements)
    assert "2 lr: under adam a dead weight chatters by about lr" in meta["zero_tolerance"]
    header = (out / "compare.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("optimizer_step,")


def test_a_topk_series_in_bf16_has_no_l1_coefficient_to_borrow():
    series = open_series(TOPK, latent=0)
    first = series.read(0)
    from safetensors.torch import load_file

    stored = load_file(str(series.snapshots[0].path))["W_enc"]  # torch's own reading of it
    assert stored.dtype == torch.bfloat16
    np.testing.assert_array_equal(first, stored.float().numpy()[:, 0])
    assert series.model["architecture"] == "topk" and series.model["l1_coefficient"] is None
    result = api.compare_checkpoints(TOPK, latent=0, l1=0.01, lr=1e-3, optimizer="adam")
    assert any(
        "TopK SAE has no L1 coefficient" in s and "only the reference's setting" in s
        for s in result.statements
    )


def test_multisaetrainer_runs_are_read_one_sae_at_a_time(tmp_path, monkeypatch, capsys):
    series = open_series(MULTI, latent=2, sae="layer1")
    assert [s.path.parent.name for s in series.snapshots] == ["layer1"] * 3
    assert list(series.steps) == [14, 27, 40]
    assert series.model["l1_coefficient"] == 1.0
    monkeypatch.chdir(tmp_path)
    args = ["--latent", "2", "--l1", "1", "--lr", "1e-3", "--optimizer", "adam", "--out", "out"]
    assert_refused_in_process(
        ["checkpoints", str(MULTI), *args], "name one with --sae NAME (layer0, layer1)", tmp_path, capsys
    )
    assert_refused_in_process(
        ["checkpoints", str(MULTI), "--sae", "nope", *args], "no SAE named 'nope'", tmp_path, capsys
    )
    # SAELens' checkpoints/ folder: the run lies one level down
    assert_refused_in_process(
        ["checkpoints", str(STANDARD.parent), *args], "one level down", tmp_path, capsys
    )


def test_an_unnumbered_checkpoint_folder_is_refused_by_name(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    shutil.copytree(STANDARD, run)
    shutil.copytree(run / "800", run / "best")
    with pytest.raises(ValueError, match="best"):
        api.compare_checkpoints(run, latent=0, l1=0.5, lr=1e-3, optimizer="adam")
    words = f"{run / 'best'}: a SAELens checkpoint not named by its samples"
    refused_by_the_command(run, ["--latent", "0"], words, tmp_path, monkeypatch, capsys)


def test_dictionary_learning_trainer_folders_are_their_own_layout():
    series = open_series(DICTLEARN, latent=5)
    assert series.layout == "dictionary_learning"
    assert list(series.steps) == [0, 15, 30, 45, 60]  # ae.pt after config.json's 60 steps
    assert series.snapshots[-1].path.name == "ae.pt"
    for snap in series.snapshots:
        enc = torch.load(snap.path, weights_only=True)["encoder.weight"].numpy()
        assert enc.shape == (64, 16)  # a latent is a row
        np.testing.assert_array_equal(
            open_series(DICTLEARN, latent=5).read(series.snapshots.index(snap)), enc[5]
        )
    assert series.model["trainer"] == "StandardTrainer" and series.model["l1_coefficient"] == 0.1
    with pytest.raises(InputError, match="one of them \\(trainer_0\\)"):
        open_series(DICTLEARN.parent, latent=5)


def test_a_dead_latent_is_named_not_compared():
    series = open_series(DICTLEARN, latent=7)
    assert all(np.array_equal(series.read(0), series.read(i)) for i in range(len(series.snapshots)))
    with pytest.raises(ValueError, match="latent 7 never changes over the 5 snapshots"):
        api.compare_checkpoints(DICTLEARN, latent=7, l1=0.1, lr=1e-3, optimizer="adam")
    whole = api.compare_checkpoints(DICTLEARN, all_rows=True, l1=0.1, lr=1e-3, optimizer="adam")
    matrix = open_series(DICTLEARN, all_rows=True)
    snaps = [matrix.read(i) for i in range(len(matrix.snapshots))]
    dead = sum(all(np.array_equal(snaps[0][k], w[k]) for w in snaps) for k in range(64))  # rows
    assert dead == 20
    assert any(f"{dead} of 64 latents never change" in s for s in whole.statements)


# --- weights files and steps ------------------------------------------------------------------
def test_a_saelens_folder_without_w_enc_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    for step in ("100", "200"):
        (run / step).mkdir(parents=True)
        (run / step / "cfg.json").write_text('{"architecture": "standard"}', encoding="utf-8")
        safetensors_numpy.save_file(
            {"W_dec": np.ones((4, 3), np.float32)}, str(run / step / "sae_weights.safetensors")
        )
    with pytest.raises(ValueError, match="no tensor named 'W_enc' \\(it holds W_dec\\)"):
        api.compare_checkpoints(run, latent=0, l1=0.5, lr=1e-3, optimizer="adam")
    words = "sae_weights.safetensors: no tensor named 'W_enc'"
    refused_by_the_command(run, ["--latent", "0"], words, tmp_path, monkeypatch, capsys)


def test_a_step_saved_as_a_plain_int_in_a_pt_file_is_read(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    for k, step in enumerate((30, 70)):
        torch.save(
            {"step": step, "W": torch.full((3,), 0.5 + k, dtype=torch.float64)}, folder / f"snap-{'ab'[k]}.pt"
        )
    series = open_series(folder, "W")
    assert list(series.steps) == [30, 70]


def test_a_version_suffix_does_not_override_the_step(tmp_path):
    folder = tmp_path / "v"
    folder.mkdir()
    for step in (100, 200, 300):
        np.save(folder / f"ckpt_step{step}_v2.npy", np.full(3, step / 1000))
    series = open_series(folder)
    assert list(series.steps) == [100, 200, 300]  # the number that differs, not the 2
    assert "differs" in series.step_note
    np.save(folder / "ckpt_step400_v3.npy", np.full(3, 0.4))
    with pytest.raises(InputError, match="do not tell which is the step"):
        open_series(folder)


# --- crafted files (issue 48): one line naming the file, exit 2, nothing written ----------------
def _npz_claiming(path: Path, shape: tuple[int, ...]) -> None:
    """A tiny .npz whose one member's header claims ``shape`` of float64."""
    import zipfile

    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = shape
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("W.npy", buf.getvalue() + b"\0" * 64)


CRAFTED = ("npz_149_gib", "deep_cfg", "step_in_name", "step_in_npz", "step_in_pt", "step_in_cfg")


def _crafted(kind: str, root: Path) -> tuple[Path, list[str], str]:
    """(the series, its options, words of the refusal) of one crafted input."""
    series = root / kind
    series.mkdir()
    latent = ["--latent", "0"]
    if kind == "npz_149_gib":
        _npz_claiming(series / "step_1.npz", (20_000, 1_000_000))  # 149 GiB of float64
        _npz_claiming(series / "step_2.npz", (20_000, 1_000_000))
        assert (series / "step_1.npz").stat().st_size < 500
        return series, ["--all-rows"], "GiB of memory"
    if kind in ("deep_cfg", "step_in_cfg"):
        for step in ("1", "2"):
            (series / step).mkdir()
            safetensors_numpy.save_file(
                {"W_enc": np.ones((3, 2), np.float32)}, str(series / step / "sae_weights.safetensors")
            )
            text = (
                "[" * 100_000 + "]" * 100_000 if kind == "deep_cfg" else '{"step": 99999999999999999999999}'
            )
            (series / step / "cfg.json").write_text(text, encoding="utf-8")
        if kind == "step_in_cfg":  # one SAELens folder: its step from cfg.json
            series = series / "1"
        return series, latent, "nested more than" if kind == "deep_cfg" else "outside 0 to 2^63 - 1"
    if kind == "step_in_name":
        np.save(series / "step_1.npy", np.ones(3))
        np.save(series / "step_99999999999999999999999.npy", np.ones(3))
        return series, [], "outside 0 to 2^63 - 1"
    if kind == "step_in_npz":
        path = root / "stacked.npz"
        np.savez(path, W=np.ones((2, 3)), steps=np.array([1, 2**64 - 1], dtype=np.uint64))
        return path, [], "outside 0 to 2^63 - 1"
    torch.save({"step": 2**70, "W": torch.ones(3, dtype=torch.float64)}, series / "a.pt")
    torch.save({"step": 1, "W": torch.ones(3, dtype=torch.float64)}, series / "b.pt")
    return series, ["--tensor", "W"], "outside 0 to 2^63 - 1"


@pytest.mark.parametrize("kind", CRAFTED)
def test_a_crafted_series_is_refused_in_one_line(kind, tmp_path, monkeypatch, capsys):
    root = tmp_path / "in"
    root.mkdir()
    series, options, words = _crafted(kind, root)
    refused_by_the_command(series, options, words, tmp_path, monkeypatch, capsys)
    kwargs = {"tensor": "W"} if "--tensor" in options else {}
    kwargs |= {"latent": 0} if "--latent" in options else {}
    kwargs |= {"all_rows": True} if "--all-rows" in options else {}
    with pytest.raises(ValueError, match=words.replace("^", "\\^")):
        api.compare_checkpoints(series, l1=1e-3, lr=1e-3, optimizer="adam", **kwargs)


def test_without_trainer_state_the_steps_are_samples_over_the_batch_or_said_to_be_names(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(STANDARD, run)
    for state in run.glob("*/trainer_state.pt"):
        state.unlink()
    series = open_series(run, latent=0)
    # SAELens' trainer names folders by samples: taken as steps only with a line saying so
    assert list(series.steps) == [416, 800, 1184, 1568, 1920]
    assert "folder names are taken as optimizer steps" in series.step_note
    for cfg in run.glob("*/cfg.json"):
        obj = json.loads(cfg.read_text(encoding="utf-8"))
        cfg.write_text(json.dumps({**obj, "train_batch_size_tokens": 32}), encoding="utf-8")
    series = open_series(run, latent=0)
    counted = manifest("saelens_standard")
    assert list(series.steps) == sorted(c["optimizer_steps"] for c in counted.values())
    assert "the batch size 32 (cfg.json)" in series.step_note


def test_save_model_folders_named_by_step_are_read_and_said_to_be_names():
    series = open_series(DATA / "saelens_saved", latent=1)  # save_model every 15 Adam steps
    assert list(series.steps) == [0, 15, 30, 45, 60]
    assert "folder names are taken as optimizer steps" in series.step_note
