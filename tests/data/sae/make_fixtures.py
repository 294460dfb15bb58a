"""Writes the SAE training runs under tests/data/sae/ with the libraries' own trainers
(versions in README.md beside this script): tiny SAEs on synthetic activations made here
(sparse features in d_in dimensions plus noise; no downloads), so the suite can read real
SAELens and dictionary_learning output without installing either library.

    python make_fixtures.py OUT_FOLDER      (in a venv with sae-lens and dictionary-learning)
    python make_fixtures.py OUT_FOLDER --runs saelens_jumprelu    (that run only; the others stay)

What it writes (each run's manifest.json records what the trainer itself said at every
checkpoint: its optimizer's update count, n_training_steps, n_training_samples):
  saelens_standard/checkpoints/<id>/<samples>/..., final_<samples>/  SAETrainer, standard SAE
  saelens_topk/checkpoints/<id>/...                                  SAETrainer, TopK SAE, bf16
  saelens_jumprelu/checkpoints/<id>/...                              SAETrainer, JumpReLU SAE, L0 warm-up
  saelens_saved/<step>/                                              save_model by hand each few steps
  saelens_multi/checkpoints/<id>/<samples>/<sae_name>/...            MultiSAETrainer, two SAEs
  dictlearn/trainer_0/checkpoints/ae_<step>.pt, config.json, ae.pt   trainSAE, StandardTrainer
"""

from __future__ import annotations

import argparse
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
RUNS = ("saelens_standard", "saelens_topk", "saelens_jumprelu", "saelens_saved", "saelens_multi", "dictlearn")
# the JumpReLU run's settings: decoder rows of norm 0.4 (W_enc starts as W_dec's transpose,
# entries about 0.1) and thresholds from 0.1, so that about half of them are kept, and far
# enough from 0 (SAELens 6.54 trains the thresholds as they are, projected onto >= 0) that
# 60 steps of Adam at lr 1e-3 do not reach it; the L0 coefficient warmed up over 20 steps
# (the series' first snapshot, at step 13, lies inside the warm-up)
JUMPRELU = dict(
    decoder_init_norm=0.4,
    jumprelu_init_threshold=0.1,
    jumprelu_bandwidth=0.05,
    l0_coefficient=0.2,
    l0_warm_up_steps=20,
)


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
        JumpReLUTrainingSAE,
        JumpReLUTrainingSAEConfig,
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
    elif architecture == "jumprelu":
        sae = JumpReLUTrainingSAE(JumpReLUTrainingSAEConfig(d_in=D_IN, d_sae=D_SAE, dtype=dtype, **JUMPRELU))
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


WRITERS = {
    "saelens_standard": lambda out: saelens_run(out, "standard", "float32", seed=1),
    "saelens_topk": lambda out: saelens_run(out, "topk", "bfloat16", seed=2),
    "saelens_jumprelu": lambda out: saelens_run(out, "jumprelu", "float32", seed=6),
    "saelens_saved": lambda out: saelens_saved(out, seed=3),
    "saelens_multi": lambda out: saelens_multi(out, seed=4),
    "dictlearn": lambda out: dictlearn_run(out, seed=5),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder the runs go in (tests/data/sae)")
    parser.add_argument(
        "--runs", default=",".join(RUNS), help=f"the runs to (re)write, comma-separated: {','.join(RUNS)}"
    )
    args = parser.parse_args()
    names = [name for name in args.runs.split(",") if name]
    unknown = sorted(set(names) - set(RUNS))
    if unknown:
        parser.error(f"no run named {', '.join(unknown)} (the runs: {', '.join(RUNS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:  # each run in its own seed, so writing one leaves the others' bytes alone
        shutil.rmtree(args.out / name, ignore_errors=True)
        WRITERS[name](args.out / name)


if __name__ == "__main__":
    main()
