"""Interference sessions (core/interference/session.py): every field survives a save and a
load, opening replays the run to the last digit, and a damaged file is refused naming what
is wrong."""

import json

import numpy as np
import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.interference.pins import PIN_COLUMNS, pin_params
from sparsity_gui.core.interference.run import InterferenceRun, initial_weights
from sparsity_gui.core.interference.session import (
    FORMAT,
    InterferenceScript,
    LiveChange,
    load_session,
    replay,
    save_session,
    session_dict,
)
from sparsity_gui.core.pins import PinBoard
from sparsity_gui.core.series import SeriesOptions

NOISY = InterferenceParams(
    n=12,
    m=24,
    optimizer="adamw",
    l1=2e-3,
    lr=3e-3,
    steps=400,
    seed=5,
    sigma=0.8,
    l1_schedule=((0.0, 0.0), (100.0, 2e-3)),
    lr_warmup=20,
    lr_decay="cosine",
    lr_decay_steps=50,
    noise="bernoulli",
    noise_sigma=0.1,
)
SOURCE = {"source": "file", "path": "/data/ckpt.npz", "tensor": "encoder.weight", "dtype": "float32"}


def trained(params, w0=None, chunks=(7, 1, 13, 29), change_at=None, change=None, to=None):
    """A run trained straight, in uneven chunks, with one live change at ``change_at``."""
    run = InterferenceRun(params, w0=w0)
    targets = [(change_at, change)] if change_at is not None else []
    for target, values in (*targets, (to, None)):
        k = 0
        while run.step < target and not run.finished:
            run.advance(min(chunks[k % len(chunks)], target - run.step))
            k += 1
        if values:
            run.params = run.params.with_live_change(**values)
    return run


def pinned():
    board = PinBoard()
    run = trained(NOISY, to=60)
    board.add(pin_params(NOISY), PIN_COLUMNS, run.history_array())
    series = SeriesOptions("/data/run", 1e-3, 2e-3, "adamw", tensor="W", all_rows=True)
    board.add(
        pin_params(NOISY), PIN_COLUMNS, run.history_array()[:2], marks="points", name="run", series=series
    )
    return list(board)


def test_every_field_survives_a_round_trip(tmp_path):
    w0 = np.random.default_rng(3).standard_normal((12, 24)).astype(np.float32)
    params = NOISY.with_changes(dtype="float32")
    changes = (
        LiveChange(50, (("l1", 3e-3),)),
        LiveChange(50, (("noise_sigma", 0.2), ("weight_decay", 0.0))),
        LiveChange(120, (("lr", 1e-3), ("steps", 500))),
    )
    script = InterferenceScript(params, w0.astype(np.float64), changes, 150)
    pins = pinned()
    path = tmp_path / "s.json"
    save_session(path, script, SOURCE, pins, style="talk")
    s = load_session(path)
    assert s.script.params == params and s.script.params.weight_decay is None
    assert s.script.changes == changes and s.script.step == 150
    np.testing.assert_array_equal(s.script.w0, w0)
    assert s.source == SOURCE
    assert s.style == "talk"
    (pin,) = s.pins
    assert pin.number == 1 and pin.columns == PIN_COLUMNS and pin.param_dict == pin_params(NOISY)
    np.testing.assert_array_equal(pin.rows, pins[0].rows)
    assert s.series == ((2, pins[1].series),)
    final = s.params
    assert (final.l1, final.lr, final.steps, final.noise_sigma, final.weight_decay) == (
        3e-3,
        1e-3,
        500,
        0.2,
        0.0,
    )
    assert final.l1_schedule == () and final.lr_warmup == 0 and final.lr_decay == "none"  # ended live
    assert final.noise == "bernoulli"
    # the file is the format's, readable: parameters as run.json writes them
    obj = json.loads(path.read_text())
    assert obj["format"] == FORMAT and obj["version"] == 1
    assert obj["parameters"]["noise"] == "bernoulli" and obj["parameters"]["l1_schedule"] == [
        [0.0, 0.0],
        [100.0, 2e-3],
    ]
    assert obj["changes"][0] == {"step": 50, "values": {"l1": 3e-3}}
    assert obj["w0"]["tensor"] == "encoder.weight" and obj["w0"]["encoding"] == "list"


def test_a_normal_draw_is_rebuilt_from_the_seed(tmp_path):
    script = InterferenceScript(NOISY, None, (), 0)
    save_session(tmp_path / "s.json", script, {"source": "normal"})
    obj = json.loads((tmp_path / "s.json").read_text())
    assert obj["w0"] == {"source": "normal"} and "weights" not in obj["w0"]
    s = load_session(tmp_path / "s.json")
    assert s.script.w0 is None and s.source == {"source": "normal"} and s.pins == () and s.style is None
    np.testing.assert_array_equal(s.script.initial_w0(), initial_weights(NOISY))


def test_a_large_w0_is_embedded_as_base64(tmp_path):
    params = InterferenceParams(n=400, m=300, steps=10)
    w0 = np.random.default_rng(0).standard_normal((400, 300))
    save_session(tmp_path / "s.json", InterferenceScript(params, w0, (), 0), SOURCE)
    assert json.loads((tmp_path / "s.json").read_text())["w0"]["encoding"] == "base64-float64-le"
    np.testing.assert_array_equal(load_session(tmp_path / "s.json").script.w0, w0)


@pytest.mark.parametrize("file_w0", [False, True])
def test_opening_replays_the_run_to_the_last_digit(tmp_path, file_w0):
    params = NOISY if not file_w0 else NOISY.with_changes(noise="none", noise_sigma=0.0, optimizer="gd-zero")
    w0 = np.random.default_rng(8).standard_normal((12, 24)) * 0.3 if file_w0 else None
    straight = trained(params, w0, change_at=90, change={"l1": 4e-3}, to=230)
    script = InterferenceScript(params, w0, (LiveChange(90, (("l1", 4e-3),)),), straight.step)
    source = SOURCE if file_w0 else {"source": "normal"}
    save_session(tmp_path / "s.json", script, source)
    again = replay(load_session(tmp_path / "s.json").script)
    assert again.step == straight.step == 230
    assert again.params == straight.params
    np.testing.assert_array_equal(again.W, straight.W)  # to the last digit
    # the history rows are the run's own measurements
    assert again.history_array()[-1][0] == 230


def test_replay_stops_when_asked():
    from sparsity_gui.core.interference.session import ReplayStopped

    with pytest.raises(ReplayStopped):
        replay(InterferenceScript(NOISY, None, (), 300), should_stop=lambda: True)


def good_dict():
    script = InterferenceScript(NOISY, None, (LiveChange(40, (("l1", 3e-3),)),), 100)
    return session_dict(script, {"source": "normal"}, pinned(), "paper")


def file_dict():
    w0 = np.random.default_rng(1).standard_normal((12, 24))
    return session_dict(InterferenceScript(NOISY, w0, (), 10), SOURCE)


def edit(obj, path, value):
    *keys, last = path
    target = obj
    for k in keys:
        target = target[k]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return obj


DELETE = object()

BAD = [
    ("format", good_dict, ["format"], "sparsity-gui session", "session of the note's window"),
    ("no format", good_dict, ["format"], DELETE, 'no "format"'),
    ("version", good_dict, ["version"], 2, "version 2 is not supported (saved by a newer"),
    ("no parameters", good_dict, ["parameters"], DELETE, "missing field 'parameters'"),
    ("missing n", good_dict, ["parameters", "n"], DELETE, "missing field 'parameters.n'"),
    ("unknown", good_dict, ["parameters", "alpha"], 1, "'parameters.alpha' is not a parameter"),
    ("l1", good_dict, ["parameters", "l1"], -1, "'parameters.l1': must be from 0 to 4"),
    ("noise", good_dict, ["parameters", "noise"], "pink", "'parameters.noise': must be one of"),
    ("noise sigma", good_dict, ["parameters", "noise_sigma"], 11, "'parameters.noise_sigma'"),
    ("schedule", good_dict, ["parameters", "l1_schedule"], [[0, 0], [5, 1]], "'parameters.l1_schedule'"),
    ("optimizer", good_dict, ["parameters", "optimizer"], ["adam"], "'parameters.optimizer'"),
    ("source", good_dict, ["w0", "source"], "uniform", "'w0.source' must be 'normal' or 'file'"),
    ("seed", good_dict, ["w0_sha256"], "0" * 64, "drawn from seed 5 differs"),
    ("weights", file_dict, ["w0", "weights", 3], "x", "'w0.weights': item 3"),
    ("count", file_dict, ["w0", "weights"], [1.0] * 5, "'w0.weights' holds 5 weights, not n × m = 12 × 24"),
    ("shape", file_dict, ["w0", "n"], 13, "W(0) is 13 × 24 but the parameters say"),
    ("digest", file_dict, ["w0", "weights", 0], 0.5, "does not match 'w0_sha256'"),
    ("encoding", file_dict, ["w0", "encoding"], "hex", "'w0.encoding'"),
    ("step", good_dict, ["step"], -3, "'step' must be >= 0"),
    ("step type", good_dict, ["step"], "ten", "'step' must be a whole number"),
    ("after end", good_dict, ["step"], 10**6, "after the run's end"),
    (
        "change late",
        good_dict,
        ["changes", 0, "step"],
        101,
        "'changes[0].step' = 101 is after the session's step",
    ),
    ("change field", good_dict, ["changes", 0, "values"], {"n": 3}, "'changes[0].values.n': only l1"),
    ("change value", good_dict, ["changes", 0, "values"], {"lr": 2.0}, "'changes[0].values.lr': must be > 0"),
    ("change empty", good_dict, ["changes", 0, "values"], {}, "'changes[0].values' changes nothing"),
    ("changes", good_dict, ["changes"], {"step": 1}, "'changes' must be a list"),
    ("pin", good_dict, ["pins", 0, "columns"], ["step"], "'pins[0].columns' must be"),
    ("pin data", good_dict, ["pins", 0, "data"], "AAAA", "'pins[0].data' holds 3 bytes"),
    ("series", good_dict, ["series", 0, "l1"], "x", "'series[0].l1' must be a finite number"),
    ("series pin", good_dict, ["series", 0, "number"], 1, "'series[0].number': pin 1 is taken twice"),
    ("style", good_dict, ["style"], 3, "field 'style' must be paper, talk"),
]


@pytest.mark.parametrize("name,make,path,value,words", BAD, ids=[b[0] for b in BAD])
def test_each_kind_of_damaged_file_is_refused_naming_it(tmp_path, name, make, path, value, words):
    path_ = tmp_path / "bad.json"
    path_.write_text(json.dumps(edit(make(), path, value)))
    with pytest.raises(InputError) as err:
        load_session(path_)
    assert err.value.field == "session"
    assert str(path_) in err.value.message and words in err.value.message, err.value.message


def test_out_of_order_changes_are_refused(tmp_path):
    obj = good_dict()
    obj["changes"] = [{"step": 50, "values": {"l1": 1e-3}}, {"step": 20, "values": {"l1": 2e-3}}]
    (tmp_path / "s.json").write_text(json.dumps(obj))
    with pytest.raises(InputError, match=r"'changes\[1\].step' = 20 comes before the previous change"):
        load_session(tmp_path / "s.json")


@pytest.mark.parametrize(
    "content,words",
    [
        (b"", "the file is empty"),
        (b"\x00\x01\x02 binary", "not a session file"),
        (b"{ not json", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
    ],
)
def test_files_that_are_not_sessions_are_refused(tmp_path, content, words):
    path = tmp_path / "s.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=words):
        load_session(path)


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(InputError) as err:
        load_session(tmp_path / "nowhere.json")
    assert "nowhere.json" in err.value.message


def test_a_w0_too_large_to_embed_is_refused_on_saving():
    from sparsity_gui.core.interference.session import MAX_EMBEDDED_WEIGHTS

    assert MAX_EMBEDDED_WEIGHTS >= 2**20  # a 1024 x 1024 matrix fits
    huge = np.broadcast_to(0.1, (4096, 2048))  # no memory: refused before it is read
    script = InterferenceScript(InterferenceParams(n=4096, m=2048), huge, (), 0)
    with pytest.raises(InputError, match="a session embeds at most"):
        session_dict(script, SOURCE)
