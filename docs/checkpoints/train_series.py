"""Write the series that README's "Your training run against the theory" compares: one
feature's encoding (m = 64 weights, W(0) ~ N(0, 0.8²/m)) trained alone by torch's plain SGD
on the paper's loss with l1 = 0.04, lr = 2e-3 for 20,000 steps, saved every 1,000 as PyTorch state_dicts
(ckpt-<step>.pt, {"enc.weight": [1, m]}). Needs torch (the test extra installs it).

    .venv/bin/python docs/checkpoints/train_series.py FOLDER
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

M, L1, LR, STEPS, EVERY, SEED = 64, 0.04, 2e-3, 20000, 1000, 0


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=False)
    w0 = np.random.default_rng(SEED).normal(0.0, 0.8 / np.sqrt(M), (1, M))
    W = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([W], lr=LR)
    for step in range(STEPS + 1):
        if step % EVERY == 0:
            torch.save({"enc.weight": W.detach().clone()}, out / f"ckpt-{step}.pt")
        opt.zero_grad()
        norm2 = (W * W).sum(dim=1)
        loss = ((1 - norm2) ** 2).sum() + L1 * W.abs().sum()  # one feature: no interference term
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main(sys.argv[1])
