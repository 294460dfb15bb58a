"""docs/optimizers/adam_ratio.py, the |m̂/√v̂| numbers docs/interference.md states: the
script's statistic against an independent AdamW loop written here in PyTorch (the network's
loss by its forward pass and autograd, the optimizer by the update torch documents), and the
docs' ranges against the table the script wrote (adam_ratio.csv), one row of which is
recomputed."""

from __future__ import annotations

import csv
import importlib.util
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.run import InterferenceRun

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "docs" / "optimizers"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("adam_ratio", FOLDER / "adam_ratio.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_check_ratios(W0: np.ndarray, l1: float, lr: float, steps: int) -> list[tuple[int, float]]:
    """AdamW (β = 0.9, 0.999, ε = 1e-8, weight decay 0.01) on the tied autoencoder's summed
    squared error over the n basis inputs plus l1 |W|_1; every steps/1000 steps (at least
    1): (step, the median |m̂|/(√v̂ + ε) of the weights that shrank in that step from more
    than 2 lr), until every feature's second-largest |w| is below a tenth of its largest."""
    beta1, beta2, eps, decay = 0.9, 0.999, 1e-8, 0.01
    W = torch.tensor(W0, dtype=torch.float64, requires_grad=True)
    X = torch.eye(W0.shape[0], dtype=torch.float64)  # the n inputs, one a row
    m1 = torch.zeros_like(W)
    m2 = torch.zeros_like(W)
    period = max(1, math.ceil(steps / 1000))
    ratios = []
    for t in range(1, steps + 1):
        loss = ((torch.relu(X @ W @ W.T) - X) ** 2).sum() + l1 * W.abs().sum()
        (grad,) = torch.autograd.grad(loss, W)
        with torch.no_grad():
            before = W.abs().clone()
            W.mul_(1.0 - lr * decay)
            m1 = beta1 * m1 + (1.0 - beta1) * grad
            m2 = beta2 * m2 + (1.0 - beta2) * grad * grad
            m_hat = m1 / (1.0 - beta1**t)
            v_hat = m2 / (1.0 - beta2**t)
            W.sub_(lr * m_hat / (v_hat.sqrt() + eps))
        if t % period:
            continue
        a = W.detach().abs()
        shrank = (a < before) & (before > 2.0 * lr)
        if shrank.any():  # numpy's median (torch's takes the lower of the middle two)
            ratios.append((t, float(np.median((m_hat[shrank].abs() / (v_hat[shrank].sqrt() + eps)).numpy()))))
        top2 = a.topk(2, dim=1).values
        if bool(((top2[:, 1] < 0.1 * top2[:, 0]) | (top2[:, 0] == 0)).all()):
            break
    return ratios


@pytest.mark.parametrize(
    "l1, seed, n, m, steps",
    [(0.1, 0, 32, 128, 30_000), (0.01, 1, 16, 48, 600)],  # the script's runs; a small l1, cut short
)
def test_the_script_measures_what_an_independent_adamw_loop_does(script, l1, seed, n, m, steps):
    torch.set_num_threads(1)  # small products: threads only contend
    W0 = InterferenceRun(InterferenceParams(n=n, m=m, seed=seed)).W.copy()  # the same draw
    expected = torch_check_ratios(W0, l1, script.LR, steps)
    got = script.check_ratios(l1, seed, n, m, steps)
    assert len(expected) > 50
    assert [k for k, _ in got] == [k for k, _ in expected]
    np.testing.assert_allclose([r for _, r in got], [r for _, r in expected], rtol=1e-9)
    assert script.median_ratio(l1, seed, n, m, steps) == pytest.approx(np.median([r for _, r in expected]))


def table() -> list[dict]:
    with open(FOLDER / "adam_ratio.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_a_row_of_the_table_is_what_the_script_computes(script):
    row = next(r for r in table() if (float(r["l1"]), r["seed"]) == (0.1, "2"))
    assert script.median_ratio(0.1, 2) == float(row["median_ratio"])


def test_the_docs_state_the_tables_ranges():
    by_l1 = defaultdict(list)
    for r in table():
        by_l1[float(r["l1"])].append(float(r["median_ratio"]))
    assert all(len(v) == 3 for v in by_l1.values())

    def span(values: list[float]) -> str:
        return f"{min(values):.2f}–{max(values):.2f}"

    low = span([v for l1, vs in by_l1.items() if l1 <= 0.01 for v in vs])
    text = re.sub(r"\s+", " ", (ROOT / "docs" / "interference.md").read_text(encoding="utf-8"))
    stated = (
        f"is {low} at `l1 ≤ 0.01`, {span(by_l1[0.03])} at 0.03, {span(by_l1[0.1])} at 0.1 and "
        f"{span(by_l1[0.3])} at 0.3 (three seeds each; `docs/optimizers/adam_ratio.py`"
    )
    assert stated in text
