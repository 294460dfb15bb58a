"""A series asked for by either window (core/checkpoints/series_pin.py with each model's
SeriesModel): the training checks both windows share refuse alike, naming the field; each
model's own refusals come in their place (the interference window's fitted time scale before
the series is even opened, the note's matrix after its headers are read); and a pinned
series follows the live run only while what it predicts is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from sparsity_gui.core.checkpoints.series_pin import interference_request, note_request, series_pin
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.series import SeriesOptions

REQUESTS = {
    "note": (note_request, SimParams(m=3, lam=1e-2, seed=5)),
    "interference": (interference_request, InterferenceParams(n=2, m=3, seed=5)),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Three snapshots of a 2 x 3 matrix, trained by hand: W shrinks by the L1 step."""
    path = tmp_path_factory.mktemp("series")
    W = np.array([[0.9, -0.4, 0.2], [0.1, 0.7, -0.3]])
    for step in (0, 10, 20):
        np.save(path / f"step_{step:03d}.npy", W * (1.0 - 0.01 * step))
    return path


def options(folder, **kw) -> SeriesOptions:
    return SeriesOptions(**{"path": str(folder), "l1": 0.01, "lr": 0.01, "optimizer": "sgd", **kw})


@pytest.mark.parametrize("model", REQUESTS)
@pytest.mark.parametrize(
    "bad, field",
    [
        (dict(optimizer="rmsprop"), "optimizer"),
        (dict(zero_tol=-1.0), "zero_tol"),
        (dict(zero_tol=float("nan")), "zero_tol"),
        (dict(lr=-0.01), "lr"),
        (dict(l1=float("inf")), "l1"),
    ],
)
def test_both_windows_refuse_the_same_training_before_reading_the_series(tmp_path, model, bad, field):
    request, live = REQUESTS[model]
    gone = tmp_path / "no such folder"  # refused before the series is looked for
    with pytest.raises(InputError) as caught:
        request(options(gone, **bad), live)
    assert caught.value.field == field


def test_each_model_refuses_what_it_cannot_take_in_its_place(folder, tmp_path):
    with pytest.raises(InputError) as caught:  # before the (missing) series is opened
        interference_request(
            options(tmp_path / "gone", row=0, fit_time_scale=True), REQUESTS["interference"][1]
        )
    assert caught.value.field == "fit_time_scale"
    with pytest.raises(InputError) as caught:
        note_request(options(folder, all_rows=True), REQUESTS["note"][1])
    assert caught.value.field == "pick" and "one row" in caught.value.message
    with pytest.raises(InputError) as caught:
        note_request(options(folder, row=0, optimizer="adam"), REQUESTS["note"][1])
    assert caught.value.field == "optimizer" and "fit a time scale" in caught.value.message


def test_the_live_parameters_are_each_models_own(folder):
    note = note_request(options(folder, row=1), REQUESTS["note"][1])
    assert (note.params.m, note.params.lam, note.params.seed) == (3, 0.01 / 4, 5)
    assert note.params.t_end == pytest.approx(4 * 0.01 * 20) and note.params.eta == pytest.approx(0.04)
    inter = interference_request(options(folder, all_rows=True), REQUESTS["interference"][1])
    p = inter.params
    assert (p.n, p.m, p.l1, p.lr, p.optimizer, p.steps, p.seed) == (2, 3, 0.01, 0.01, "gd", 20, 5)


@pytest.mark.parametrize("model", REQUESTS)
def test_a_pinned_series_follows_the_live_run_while_its_prediction_holds(folder, model):
    request, live = REQUESTS[model]
    pin = series_pin(
        request(options(folder, row=1) if model == "note" else options(folder, all_rows=True), live)
    )
    assert pin.model == model and pin.count == 3
    first = np.load(folder / "step_000.npy")
    assert np.array_equal(pin.first, first[1] if model == "note" else first)
    assert pin.follows(pin.params) and pin.follows(pin.params.with_changes(seed=9))
    assert not pin.follows(pin.params, w0_kept=False)
    other = dict(lam=0.02) if model == "note" else dict(l1=0.02)
    assert not pin.follows(pin.params.with_changes(**other))
    # the snapshots sit where the live run's axis puts them: t = 4 lr (step - step0), or steps
    expected = [0.0, 0.4, 0.8] if model == "note" else [0.0, 10.0, 20.0]
    assert pin.positions == pytest.approx(expected)
