"""What a run says about its optimizer (the optimizer lab): when it became sparse, whether
Adam moved its shrinking weights at the learning rate (the "rail", where the size of the L1
coefficient no longer matters), and how far the survivors sit from the exact fixed point.

A run is **sparse** when every feature's second-largest |w| is below SPARSE_RATIO of its
largest (a dead feature counts as sparse): unlike a count of exact zeros, this does not
depend on an optimizer's chatter around zero (Adam never sets a weight exactly to zero).
Both readouts are taken every `check_period(steps)` steps (about a thousand times a run),
at the same steps however the run is chunked, so a sweep's row equals `interference`'s.
"""

from __future__ import annotations

import math

import numpy as np

SPARSE_RATIO = 0.1
SPARSE_DEFINITION = (
    f"every feature's second-largest |w| below {SPARSE_RATIO:g} of its largest "
    "(checked every check_period steps: steps/1000, at least 1)"
)
RAIL_DEFINITION = (
    "among the weights that shrink at a step and were more than 2 lr from zero, the share "
    "whose step was at least lr/2 (Adam at its maximum rate)"
)
SATURATED_ABOVE = 0.5  # a mean rail share above this: the l1 coefficient is saturated


def check_period(steps: int) -> int:
    """Steps between two checks of the readouts: about a thousand checks a run."""
    return max(1, math.ceil(steps / 1000))


def is_sparse(W: np.ndarray) -> bool:
    a = np.abs(np.asarray(W, float))
    if a.shape[1] < 2:
        return True
    top2 = np.partition(a, a.shape[1] - 2, axis=1)[:, -2:]
    second, largest = top2[:, 0], top2[:, 1]
    return bool(np.all((second < SPARSE_RATIO * largest) | (largest == 0.0)))


def rail_share(before: np.ndarray, after: np.ndarray, lr: float) -> float:
    """RAIL_DEFINITION for one step from ``before`` to ``after`` (NaN when nothing shrank)."""
    b = np.abs(np.asarray(before, float))
    shrinking = (np.abs(np.asarray(after, float)) < b) & (b > 2.0 * lr)
    count = int(np.count_nonzero(shrinking))
    if count == 0:
        return math.nan
    moved = np.abs(np.asarray(after, float) - np.asarray(before, float))[shrinking]
    return float(np.count_nonzero(moved >= 0.5 * lr)) / count


def fixed_point_norm2(l1: float) -> float:
    """w*², the largest root of (1 - w²) w = l1/4 (one weight alone at balance under the
    flow); NaN when there is none (l1/4 above 2/(3√3))."""
    lam = l1 / 4.0
    roots = np.roots([-1.0, 0.0, 1.0, -lam])
    real = [r.real for r in roots if abs(r.imag) < 1e-12 and r.real > 0.0]
    return max(real) ** 2 if real else math.nan


def shrinkage(W: np.ndarray, l1: float) -> tuple[float, float, float]:
    """(mean |W_i|² of the features with one active weight (0.8 <= |w| <= 1.2), w*², their
    ratio); NaN where there is no such feature."""
    a = np.abs(np.asarray(W, float))
    single = ((a >= 0.8) & (a <= 1.2)).sum(axis=1) == 1
    star = fixed_point_norm2(l1)
    if not single.any():
        return math.nan, star, math.nan
    mean = float(np.mean(np.sum(a[single] ** 2, axis=1)))
    return mean, star, mean / star if star > 0 else math.nan


def saturation_line(mean_rail: float) -> str | None:
    """The one line that says the l1 coefficient is saturated, or None."""
    if not (mean_rail > SATURATED_ABOVE):
        return None
    return (
        f"l1 saturated: {mean_rail:.0%} of the shrinking weights moved at the learning rate; "
        "a larger l1 will not sparsify faster"
    )


def readouts(l1: float, W: np.ndarray, steps_to_sparse: int | None, rail_mean: float) -> dict:
    """run.json's "readouts": when the run became sparse, the mean rail share of its
    sparsification phase (and the line that says l1 saturated), the shrinkage."""
    mean, star, ratio = shrinkage(W, l1)
    finite = math.isfinite(rail_mean)
    return {
        "steps_to_sparse": steps_to_sparse,
        "sparse_definition": SPARSE_DEFINITION,
        "rail_share": rail_mean if finite else None,
        "rail_definition": RAIL_DEFINITION,
        "saturation": saturation_line(rail_mean),
        "shrinkage": {
            "mean_norm2_single": mean if math.isfinite(mean) else None,
            "fixed_point_norm2": star if math.isfinite(star) else None,
            "ratio": ratio if math.isfinite(ratio) else None,
        },
    }


def readouts_text(
    l1: float, W: np.ndarray, steps_to_sparse: int | None, rail_mean: float, finished_at: int | None = None
) -> str:
    """The readouts of a run so far in one line, as the window's dock shows them: when it
    became sparse (or not yet; or, for a run that finished at step ``finished_at``, not by
    then), its mean rail share, its shrinkage against the fixed point."""
    if steps_to_sparse is not None:
        sparse = f"sparse at step {steps_to_sparse:,}"
    elif finished_at is not None:
        sparse = f"not sparse by step {finished_at:,}"
    else:
        sparse = "not sparse yet"
    rail = f"rail share {rail_mean:.2f}" if math.isfinite(rail_mean) else "rail share —"
    ratio = shrinkage(W, l1)[2]
    shrunk = f"‖W_i‖²/w*² {ratio:.4f}" if math.isfinite(ratio) else "‖W_i‖²/w*² —"
    return f"{sparse} · {rail} · {shrunk}"


# --- TopK's and JumpReLU's readouts (core/interference/mechanisms.py) ----------------------


NOTE_THRESHOLD_COLUMNS = ("step", "threshold_median", "threshold_p10", "threshold_p90", "threshold_tracked")


def note_thresholds(W: np.ndarray, l1: float) -> np.ndarray:
    """The note's moving threshold of each feature, theta_i = (l1/4)/(1 - |W_i|^2): a weight of
    row i below it in size shrinks (exact for a row no interference acts on); NaN for a row with
    |W_i| >= 1, where every weight shrinks (no finite threshold)."""
    W = np.asarray(W, dtype=float)
    with np.errstate(all="ignore"):
        room = 1.0 - np.einsum("ij,ij->i", W, W)
        return np.where(room > 0.0, 0.25 * l1 / room, np.nan)


def threshold_summary(values: np.ndarray) -> tuple[float, float, float, float]:
    """(median, 10th, 90th percentile over the finite values; the first value): how the
    Thresholds panel draws every threshold of a step."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return (math.nan, math.nan, math.nan, float(values[0]) if values.size else math.nan)
    p10, median, p90 = np.percentile(finite, [10.0, 50.0, 90.0])
    return (float(median), float(p10), float(p90), float(values[0]))


def l0_per_input(mask: np.ndarray) -> float:
    """The mean over inputs (features) of the hidden units kept: TopK's K, JumpReLU's L0."""
    return float(np.mean(np.count_nonzero(np.asarray(mask), axis=1)))


def dead_units(mask: np.ndarray) -> int:
    """Hidden units (neurons) kept by no input."""
    return int(np.count_nonzero(~np.any(np.asarray(mask) != 0, axis=0)))


def threshold_rail_share(moved: int, at_rail: int) -> float:
    """mechanisms.THRESHOLD_RAIL_DEFINITION over a run's threshold steps (NaN: none moved)."""
    return at_rail / moved if moved else math.nan


def threshold_saturation_line(share: float) -> str | None:
    """The one line that says the L0 coefficient is saturated, or None."""
    if not (share > SATURATED_ABOVE):
        return None
    return (
        f"l0 saturated: {share:.0%} of the threshold steps moved at the learning rate; "
        "a larger l0 will not move the thresholds faster"
    )


def mechanism_readouts(mechanism) -> dict:
    """run.json's "sparsity" readouts of a TopK or JumpReLU run (mechanisms.MechanismState,
    its mask at the final W): L0 per input, dead units, and for JumpReLU the thresholds'
    rail share over the run, its saturation line and how often a step went past the rail."""
    from sparsity_gui.core.interference.mechanisms import THRESHOLD_RAIL_DEFINITION

    found: dict = {
        "sparsity": mechanism.sparsity,
        "l0_per_input": l0_per_input(mechanism.mask),
        "dead_units": dead_units(mechanism.mask),
    }
    if mechanism.jump:
        moved, at_rail, past = (int(v) for v in mechanism.moves)
        share = threshold_rail_share(moved, at_rail)
        theta = mechanism.theta
        found.update(
            threshold_rail_share=share if math.isfinite(share) else None,
            threshold_rail_definition=THRESHOLD_RAIL_DEFINITION,
            threshold_steps=moved,
            threshold_steps_past_rail=past,
            threshold_saturation=threshold_saturation_line(share),
            threshold_median=float(np.median(theta)),
        )
    else:
        found["kth_largest_median"] = float(np.median(mechanism.kth))
    return found


def run_readouts(run) -> dict:
    """run.json's "readouts" of an InterferenceRun: `readouts`, and under TopK or JumpReLU
    its mechanism's at the final W ("sparsity")."""
    found = readouts(run.params.l1, run.W, run.steps_to_sparse, run.rail_share_mean)
    if run.mechanism is not None:
        run.mechanism.update_mask(run.W)
        found["sparsity"] = mechanism_readouts(run.mechanism)
    return found


def mechanism_text(found: dict) -> str:
    """mechanism_readouts in one line: 'jumprelu: 3.2 units kept per input, 5 dead units,
    threshold rail share 0.41 (12 steps past the rail)'."""
    kept, dead = found["l0_per_input"], found["dead_units"]
    text = f"{found['sparsity']}: {kept:.4g} units kept per input, {dead} dead units"
    if found["sparsity"] == "jumprelu":
        share = found["threshold_rail_share"]
        text += ", threshold rail share " + ("—" if share is None else f"{share:.2f}")
        text += f" ({found['threshold_steps_past_rail']:,} threshold steps past the rail)"
    return text
