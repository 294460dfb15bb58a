"""Writes the SAE training runs under tests/data/sae/ with the libraries' own trainers
(versions in README.md beside this script): tiny SAEs on synthetic activations made here
(sparse features in d_in dimensions plus noise; no downloads), so the suite can read real
SAELens and dictionary_learning output without installing either library.

    python make_fixtures.py OUT_FOLDER      (in a venv with sae-lens and dictionary-learning)

What it writes (each run's manifest.json records what the trainer itself said at every
checkpoint: its optimizer's update count, n_training_steps, n_training_samples):
  saelens_standard/checkpoints/<id>/<samples>/..., final_<samples>/  SAETrainer, standard SAE
  saelens_topk/checkpoints/<id>/...                                  SAETrainer, TopK SAE, bf16
  saelens_saved/<step>/                                              save_model by hand each few steps
  saelens_multi/checkpoints/<id>/<samples>/<sae_name>/...            MultiSAETrainer, two SAEs
  dictlearn/trainer_0/checkpoints/ae_<step>.pt, config.json, ae.pt   trainSAE, StandardTrainer
"""

from __future__ import annotations

import json
import shutil
import sys
import types
from pathlib import Path

import torch

D_IN, D_SAE, N_FEATURES = 16, 64, 48
BATCH = 32
STEPS = 60
CHECKPOINTS = 4  # and the final one: 5 snapshots
RUNS = ("saelens_standard", "saelens_topk", "saelens_saved", "saelens_multi", "dictlearn")


def activations(seed: int, features: torch.Tensor):
    """Endless batches [BATCH, D_IN]: each sample a sparse sum of feature directions."""
    gen = torch.Generator().manual_seed(seed)
    while True:
        on = (torch.rand(BATCH, N_FEATURES, generator=gen) < 0.08).float()
        size = torch.rand(BATCH, N_FEATURES, generator=gen)
        noise = 0.01 * torch.randn(BATCH, D_IN, generator=gen)
        yield (on * size) @ features + noise


def feature_directions(seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    f = torch.randn(N_FEATURES, D_IN, generator=gen)
    return f / f.norm(dim=1, keepdim=True)


def optimizer_steps(optimizer: torch.optim.Optimizer) -> int:
    """The optimizer's own count of updates (Adam keeps one per parameter)."""
    counts = {int(s["step"]) for s in optimizer.state.values() if "step" in s}
    assert len(counts) <= 1, counts
    return counts.pop() if counts else 0


def saelens_run(out: Path, architecture: str, dtype: str, seed: int) -> None:
    from sae_lens import (
        SAETrainer,
        StandardTrainingSAE,
        StandardTrainingSAEConfig,
        TopKTrainingSAE,
        TopKTrainingSAEConfig,
    )
    from sae_lens.config import SAETrainerConfig

    torch.manual_seed(seed)
    if architecture == "standard":
        sae = StandardTrainingSAE(
            StandardTrainingSAEConfig(d_in=D_IN, d_sae=D_SAE, l1_coefficient=0.5, dtype=dtype)
        )
    else:
        sae = TopKTrainingSAE(TopKTrainingSAEConfig(d_in=D_IN, d_sae=D_SAE, k=4, dtype=dtype))
    manifest = {"architecture": architecture, "dtype": dtype, "batch": BATCH, "checkpoints": {}}

    def record(checkpoint_path):
        manifest["checkpoints"][checkpoint_path.name] = {
            "optimizer_steps": optimizer_steps(trainer.optimizer),
            "n_training_steps": trainer.n_training_steps,
            "n_training_samples": trainer.n_training_samples,
        }

    cfg = SAETrainerConfig(
        total_training_samples=STEPS * BATCH,
        train_batch_size_samples=BATCH,
        lr=1e-3,
        lr_end=1e-3,
        n_checkpoints=CHECKPOINTS,
        checkpoint_path=str(out / "checkpoints" / "run0"),
        save_final_checkpoint=True,
        dead_feature_window=20,
        feature_sampling_window=20,
    )
    data = (x.to(getattr(torch, dtype)) for x in activations(seed, feature_directions()))
    trainer = SAETrainer(cfg=cfg, sae=sae, data_provider=data, save_checkpoint_fn=record)
    trainer.fit()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def saelens_saved(out: Path, seed: int) -> None:
    """save_model by hand every 15 optimizer steps of torch's Adam, folders named by step
    (what a user who writes their own loop gets)."""
    from sae_lens import StandardTrainingSAE, StandardTrainingSAEConfig
    from sae_lens.saes.sae import TrainStepInput

    torch.manual_seed(seed)
    sae = StandardTrainingSAE(StandardTrainingSAEConfig(d_in=D_IN, d_sae=D_SAE, l1_coefficient=0.5))
    opt = torch.optim.Adam(sae.parameters(), lr=1e-3)
    data = activations(seed, feature_directions())
    for step in range(STEPS + 1):
        if step % 15 == 0:
            sae.save_model(out / str(step))
        if step == STEPS:
            break
        output = sae.training_forward_pass(
            TrainStepInput(
                sae_in=next(data),
                coefficients={"l1": 0.5},
                dead_neuron_mask=None,
                n_training_steps=step,
                is_logging_step=False,
            )
        )
        opt.zero_grad()
        output.loss.backward()
        opt.step()


def saelens_multi(out: Path, seed: int) -> None:
    from sae_lens import StandardTrainingSAE, StandardTrainingSAEConfig
    from sae_lens.config import SAETrainerConfig
    from sae_lens.training.multi_sae_trainer import MultiSAETrainer

    torch.manual_seed(seed)
    saes = {
        name: StandardTrainingSAE(StandardTrainingSAEConfig(d_in=D_IN, d_sae=32, l1_coefficient=coef))
        for name, coef in (("layer0", 0.5), ("layer1", 1.0))
    }
    cfg = SAETrainerConfig(
        total_training_samples=40 * BATCH,
        train_batch_size_samples=BATCH,
        lr=1e-3,
        lr_end=1e-3,
        n_checkpoints=2,
        checkpoint_path=str(out / "checkpoints" / "multi0"),
        save_final_checkpoint=True,
    )
    streams = activations(seed, feature_directions())
    data = ({"hook0": x, "hook1": x.flip(1)} for x in streams)
    trainer = MultiSAETrainer(
        cfg=cfg, saes=saes, hook_names={"layer0": "hook0", "layer1": "hook1"}, data_provider=data
    )
    trainer.fit()


def dictlearn_run(out: Path, seed: int) -> None:
    # dictionary_learning's package imports nnsight (a language-model tracer, unused by
    # trainSAE on a plain iterator of tensors): it is installed without its dependencies,
    # so an empty module stands in for it here, in this script only
    sys.modules.setdefault("nnsight", types.SimpleNamespace(LanguageModel=object))
    from dictionary_learning.dictionary import AutoEncoder
    from dictionary_learning.trainers.standard import StandardTrainer
    from dictionary_learning.training import trainSAE

    torch.manual_seed(seed)
    config = {
        "trainer": StandardTrainer,
        "dict_class": AutoEncoder,
        "activation_dim": D_IN,
        "dict_size": D_SAE,
        "lr": 1e-3,
        "l1_penalty": 0.1,
        "warmup_steps": 0,
        "sparsity_warmup_steps": None,
        "resample_steps": None,
        "steps": STEPS,
        "seed": seed,
        "device": "cpu",
        "layer": 0,
        "lm_name": "synthetic",
    }
    trainSAE(
        data=activations(seed, feature_directions()),
        trainer_configs=[config],
        steps=STEPS,
        save_steps=[0, 15, 30, 45],
        save_dir=str(out),
        device="cpu",
    )


def main() -> None:
    out = Path(sys.argv[1])
    for name in RUNS:
        shutil.rmtree(out / name, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    saelens_run(out / "saelens_standard", "standard", "float32", seed=1)
    saelens_run(out / "saelens_topk", "topk", "bfloat16", seed=2)
    saelens_saved(out / "saelens_saved", seed=3)
    saelens_multi(out / "saelens_multi", seed=4)
    dictlearn_run(out / "dictlearn", seed=5)


if __name__ == "__main__":
    main()
