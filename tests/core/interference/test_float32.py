"""The interference model in float32 (the paper's precision): the parameter, the arrays, a
short trajectory against float64, the sparse path in float32, and the counts of many seeds
against float64's in distribution (Mann-Whitney U, two-sided, at the 1 % level), with a
check that the same test does tell apart two sizes whose counts differ."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams, needs_restart
from sparsity_gui.core.interference.run import InterferenceRun, initial_weights

LEVEL = 0.01  # the significance level of the two-sample tests
SEEDS = range(40)


def test_dtype_is_validated_and_starts_a_new_run():
    p = InterferenceParams(n=4, m=8, dtype="float32")
    assert p.dtype == "float32" and p.as_dict()["dtype"] == "float32"
    assert InterferenceParams().dtype == "float64"
    for bad in ("float16", "f4", 32, None):
        with pytest.raises(InputError) as err:
            InterferenceParams(dtype=bad)
        assert err.value.field == "dtype"
    assert needs_restart(p, p.with_changes(dtype="float64"))


@pytest.mark.parametrize("optimizer", ["gd-zero", "gd", "adam", "adamw"])
def test_float32_arrays_and_a_short_trajectory_close_to_float64(optimizer):
    """W, W(0) and the optimizer's state are float32; W(0) is float64's draw rounded; after
    60 steps with interference W is within float32 rounding of the float64 run's."""
    p64 = InterferenceParams(n=12, m=24, optimizer=optimizer, lr=0.01, l1=0.01, seed=3, steps=100)
    p32 = p64.with_changes(dtype="float32")
    r64, r32 = InterferenceRun(p64), InterferenceRun(p32)
    assert r32.W.dtype == r32.w0.dtype == np.float32 and r64.W.dtype == np.float64
    np.testing.assert_array_equal(r32.w0, initial_weights(p64).astype(np.float32))
    r64.advance(60)
    r32.advance(60)
    assert r32.W.dtype == np.float32 and r32.failure is None
    assert np.max(np.abs(r32.W - r64.W)) < 1e-4
    meas = r32.measure()
    assert np.isfinite(meas.loss) and meas.nonzero == np.count_nonzero(r32.W)


def test_float32_sparse_path_equals_float32_dense_to_float32_rounding():
    p = InterferenceParams(n=48, m=128, optimizer="gd-zero", l1=0.2, lr=0.05, steps=800, dtype="float32")
    run, dense = InterferenceRun(p), InterferenceRun(p)
    dense.sparse_below = 0.0
    run.advance(800)
    dense.advance(800)
    assert run.sparse_steps > 700 and dense.sparse_steps == 0
    np.testing.assert_allclose(run.W, dense.W, rtol=1e-5, atol=1e-6)
    assert run.measure().polysemantic == dense.measure().polysemantic


def final_counts(dtype: str, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Polysemantic neurons and active weights at the end of AdamW runs, n = 24, one per seed."""
    poly, active = [], []
    for seed in SEEDS:
        p = InterferenceParams(n=24, m=m, lr=1e-2, l1=1e-3, steps=3000, seed=seed, dtype=dtype)
        run = InterferenceRun(p, history_capacity=16)
        run.advance(p.steps)
        assert run.failure is None
        meas = run.measure(with_loss=False)
        poly.append(meas.polysemantic)
        active.append(meas.active)
    return np.array(poly), np.array(active)


def test_float32_counts_agree_with_float64_in_distribution():
    """40 seeds of AdamW at n = 24, m = 48 in each precision: a two-sided Mann-Whitney U
    test does not reject equal distributions of the polysemantic count nor of the active
    weights at the 1 % level. The same test at the same size of sample does reject between
    m = 48 and m = 24 (n^2/(4m) = 3 against 6), so it is not blind at this size."""
    poly64, active64 = final_counts("float64", 48)
    poly32, active32 = final_counts("float32", 48)
    assert mannwhitneyu(poly32, poly64, alternative="two-sided").pvalue > LEVEL
    assert mannwhitneyu(active32, active64, alternative="two-sided").pvalue > LEVEL
    assert 1.0 <= poly64.mean() <= 6.0  # about n^2/(4m) = 3: the runs did train
    poly_small_m, _ = final_counts("float64", 24)
    assert mannwhitneyu(poly_small_m, poly64, alternative="two-sided").pvalue < LEVEL
