"""Sessions, replay of live changes, presets and W(0) files: the Qt-free core."""

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note import presets as P
from sparsity_gui.core.note.changes import LiveChange, RunScript
from sparsity_gui.core.note.files import timeseries_csv
from sparsity_gui.core.note.initial import draw_normal, load_array, load_w0, npz_array_names
from sparsity_gui.core.note.metrics import COLUMNS
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.sampled import replay_script, simulate_samples
from sparsity_gui.core.note.session import (
    W0Source,
    load_session,
    parse_session,
    save_session,
    session_dict,
    session_text,
)
from sparsity_gui.core.note.simulation import Simulation
from sparsity_gui.core.session_fields import LIST_WEIGHTS_MAX


def live_run(params, schedule, t_end, chunk_work=37):
    """A run driven like the GUI's worker: small chunks of work, changes applied between
    chunks whenever their wall-clock moment comes (here: the first chunk past a time)."""
    sim = Simulation(params)
    pending = list(schedule)
    while sim.t < t_end:
        sim.advance(t_end, max_work=chunk_work)
        sim.record()
        while pending and sim.t >= pending[0][0]:
            _, name, value = pending.pop(0)
            sim.apply(sim.params.with_changes(**{name: value}))
    return sim


def test_replay_without_changes_is_the_run_command():
    """simulate_samples (the `run` command) is the no-change special case of the replay."""
    params = SimParams(m=800, lam=1e-2, seed=5)
    run = simulate_samples(params, None, 201)
    script = RunScript(params, draw_normal(800, 0.9, 5), (), run.t_end, 201)
    again = replay_script(script)
    assert timeseries_csv(again.rows) == timeseries_csv(run.rows)
    np.testing.assert_array_equal(again.sim.solver.weights(), run.sim.solver.weights())


def test_live_changes_are_recorded_and_replayed_exactly():
    params = SimParams(m=600, lam=1e-2, seed=2)
    sim = live_run(
        params,
        [
            (3.0, "lam", 2e-2),
            (6.0, "method", "gd"),
            (8.0, "eta", 0.02),
            (10.0, "lam", 5e-3),
            (12.0, "method", "exact"),
        ],
        16.0,
    )
    names = [c.name for c in sim.changes]
    assert names == ["lam", "method", "eta", "lam", "method"]
    assert [c.value for c in sim.changes] == [2e-2, "gd", 0.02, 5e-3, "exact"]
    assert all(a.t <= b.t for a, b in itertools.pairwise(sim.changes))
    assert [c.lam for c in sim.lam_changes] == [1e-2, 2e-2, 5e-3]
    # a no-op change (same value) is not a change
    sim.set_eta(0.02)
    sim.set_lam(5e-3)
    assert len(sim.changes) == 5

    script = sim.script()
    assert script.params.lam == 1e-2 and script.params.method == "exact" and script.params.eta == 0.05
    assert script.final_params() == sim.params.with_changes(t_end=None)
    a, b = replay_script(script), replay_script(script)
    assert timeseries_csv(a.rows) == timeseries_csv(b.rows), "a replay is deterministic"
    assert a.rows[-1, 0] == sim.t
    # the replay is the same physical run as the chunked one (up to the solver's tolerance)
    live = sim.metrics_row()[: len(COLUMNS)]
    np.testing.assert_allclose(a.rows[-1, : len(COLUMNS)], live, rtol=1e-8, atol=1e-12)
    # a Simulation built from the script holds exactly the replayed rows
    built = Simulation.from_script(script)
    np.testing.assert_array_equal(built.history.array(), a.rows)
    assert built.t == sim.t and built.params == sim.params.with_changes(t_end=None)
    assert built.changes == sim.changes


def test_gradient_descent_replay_is_bit_identical_to_the_chunked_run():
    """GD does not depend on chunking: the replayed weights equal the live ones exactly."""
    params = SimParams(m=500, lam=2e-2, method="gd", eta=0.05, seed=7)
    sim = live_run(params, [(2.0, "eta", 0.03), (4.0, "lam", 1e-2)], 7.0, chunk_work=997)
    run = replay_script(sim.script())
    np.testing.assert_array_equal(run.sim.solver.weights(), sim.solver.weights())
    assert run.sim.t == sim.t


def test_session_round_trip_gives_the_same_time_series(tmp_path):
    params = SimParams(m=700, lam=1e-2, seed=3)
    sim = live_run(params, [(2.5, "lam", 3e-2), (5.0, "method", "gd")], 9.0)
    script = sim.script(samples=301)
    path = tmp_path / "s.json"
    save_session(path, script, W0Source("normal"))
    obj = json.loads(path.read_text())
    assert obj["version"] == 1 and obj["parameters"]["seed"] == 3 and obj["w0"] == {"source": "normal"}
    assert obj["changes"][0] == {"t": sim.changes[0].t, "name": "lam", "value": 3e-2}
    assert obj["t"] == sim.t and obj["samples"] == 301
    session = load_session(path)
    assert session.script.changes == script.changes and session.script.t == script.t
    np.testing.assert_array_equal(session.script.w0, script.w0)
    assert timeseries_csv(replay_script(session.script).rows) == timeseries_csv(replay_script(script).rows)
    # saving what was opened gives the same file
    assert session_text(session.script, session.source) == path.read_text()


@pytest.mark.parametrize("m", [50, LIST_WEIGHTS_MAX + 7])
def test_file_weights_are_embedded_exactly(tmp_path, m):
    w0 = np.random.default_rng(1).standard_normal(m) / math.sqrt(m)
    w0[3] = 0.0
    params = SimParams(m=m, lam=1e-2, w0_path="/elsewhere/w.npy")
    script = RunScript(params, w0, (LiveChange(1.0, "lam", 2e-2),), 2.0, 11)
    path = tmp_path / "f.json"
    save_session(path, script, W0Source("file", "/elsewhere/w.npy", None, 4))
    encoding = json.loads(path.read_text())["w0"]["encoding"]
    assert encoding == ("list" if m <= LIST_WEIGHTS_MAX else "base64-float64-le")
    session = load_session(path)
    np.testing.assert_array_equal(session.script.w0, w0)
    assert session.source == W0Source("file", "/elsewhere/w.npy", None, 4)
    assert session.params.w0_path == "/elsewhere/w.npy" and session.params.lam == 2e-2


def _good():
    script = RunScript(
        SimParams(m=20, lam=1e-2), draw_normal(20, 0.9, 0), (LiveChange(0.5, "lam", 2e-2),), 1.0, 11
    )
    return session_dict(script, W0Source("normal"))


def _file_session():
    w0 = np.linspace(-1, 1, 8)
    script = RunScript(SimParams(m=8, lam=1e-2, w0_path="w.npy"), w0, (), 1.0, 11)
    return session_dict(script, W0Source("file", "w.npy"))


def _edit(fn, base=_good):
    obj = base()
    fn(obj)
    return json.dumps(obj)


BAD_SESSIONS = [
    ("truncated JSON", json.dumps(_good())[:-20], "not valid JSON"),
    ("not an object", "[1, 2, 3]", "not a sparsity-gui session"),
    ("another format", json.dumps({"format": "something else", "version": 1}), "not a sparsity-gui session"),
    ("unknown version", _edit(lambda o: o.update(version=99)), "version 99 is not supported"),
    ("version as text", _edit(lambda o: o.update(version="1")), "'version' must be a whole number"),
    ("missing lam", _edit(lambda o: o["parameters"].pop("lam")), "missing field 'parameters.lam'"),
    ("missing parameters", _edit(lambda o: o.pop("parameters")), "missing field 'parameters'"),
    ("m as text", _edit(lambda o: o["parameters"].update(m="many")), "'parameters.m' must be a whole number"),
    ("lam out of range", _edit(lambda o: o["parameters"].update(lam=5)), "parameters.lam"),
    ("bad method", _edit(lambda o: o["parameters"].update(method="adam")), "parameters.method"),
    ("missing t", _edit(lambda o: o.pop("t")), "missing field 't'"),
    ("t negative", _edit(lambda o: o.update(t=-1.0)), "'t' must be >= 0"),
    ("changes not a list", _edit(lambda o: o.update(changes={"t": 1})), "'changes' must be a list"),
    ("change after t", _edit(lambda o: o["changes"][0].update(t=5.0)), "after the session's time"),
    ("unknown live field", _edit(lambda o: o["changes"][0].update(name="sigma")), "changes[0].name"),
    ("bad live value", _edit(lambda o: o["changes"][0].update(value=-3)), "changes[0].value"),
    ("unknown w0 source", _edit(lambda o: o["w0"].update(source="magic")), "'w0.source'"),
    ("seed draws other weights", _edit(lambda o: o.update(w0_sha256="0" * 64)), "differs from the one"),
    (
        "nan weight",
        _edit(lambda o: o["w0"]["weights"].__setitem__(2, float("nan")), _file_session),
        "weight 2 is nan",
    ),
    (
        "text weight",
        _edit(lambda o: o["w0"]["weights"].__setitem__(1, "x"), _file_session),
        'item 1 is "x", not a number',
    ),
    (
        "weights count",
        _edit(lambda o: o["w0"]["weights"].pop(), _file_session),
        "holds 7 weights but parameters.m is 8",
    ),
    (
        "altered weights",
        _edit(lambda o: o["w0"]["weights"].__setitem__(0, 0.5), _file_session),
        "does not match 'w0_sha256'",
    ),
    (
        "endless GD",
        _edit(
            lambda o: (o["parameters"].update(method="gd", eta=1e-9), o.update(t=1e6), o.update(changes=[]))
        ),
        "replaying to t = 1e6 would need about 1e15 steps; the limit is 1e9",
    ),
    ("style not text", _edit(lambda o: o.update(style=3)), "field 'style' must be paper, talk or"),
    ("style empty", _edit(lambda o: o.update(style=" ")), "field 'style' must be paper, talk or"),
    ("style too long", _edit(lambda o: o.update(style="a" * 5000)), "at most 4096 characters"),
]


@pytest.mark.parametrize(
    "text, needle", [(t, n) for _, t, n in BAD_SESSIONS], ids=[name for name, _, _ in BAD_SESSIONS]
)
def test_bad_session_text_names_the_problem(tmp_path, text, needle):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_session(path)
    assert needle in info.value.message and str(path) in info.value.message


def test_bad_session_files(tmp_path):
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(bytes(range(256)) * 4)
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    for path, needle in (
        (garbage, "binary data"),
        (empty, "empty"),
        (tmp_path / "none.json", "no such file"),
        (tmp_path, "is a folder"),
    ):
        with pytest.raises(InputError, match=needle):
            load_session(path)


def test_good_session_text_parses():
    session = parse_session(json.dumps(_good()))
    assert session.params.lam == 2e-2 and session.script.params.lam == 1e-2


def test_the_figure_style_is_saved_and_old_sessions_have_none(tmp_path):
    """A session keeps the figures' style as it was chosen (a name or a style file's path,
    not checked against the disk: the run opens on a machine without the file); a session
    saved before styles existed has no "style" and opens with none."""
    assert "style" not in _good() and parse_session(json.dumps(_good())).style is None
    script = parse_session(json.dumps(_good())).script
    for style in ("talk", "paper", str(tmp_path / "gone" / "mine.mplstyle")):
        save_session(tmp_path / "s.json", script, W0Source("normal"), style=style)
        assert json.loads((tmp_path / "s.json").read_text())["style"] == style
        assert load_session(tmp_path / "s.json").style == style


# --- presets --------------------------------------------------------------------------
def test_builtin_presets():
    by_name = {p.name: p.params() for p in P.BUILTIN}
    note = by_name["The note's setting"]
    assert (note.m, note.lam, note.sigma) == (10**5, 1e-5, 0.9)
    assert by_name["Network-style start"].sigma == 1.0
    assert by_name["Large run"].m == 10**7
    assert by_name["Quick demo"].m <= 2000


def test_user_presets_persist_in_the_config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARSITY_GUI_CONFIG_DIR", str(tmp_path / "cfg"))
    assert P.config_dir() == tmp_path / "cfg"
    assert P.load_user_presets() == []
    params = SimParams(m=1234, lam=2e-3, sigma=1.1, seed=9, method="gd", eta=0.1, t_end=50.0)
    P.save_user_preset("mine", params, "a test")
    assert (tmp_path / "cfg" / "presets.json").is_file()
    again = P.find_preset("mine")
    assert again.params() == params and again.description == "a test" and not again.builtin
    P.save_user_preset("mine", params.with_changes(lam=1e-2))  # replaces
    assert [p.name for p in P.load_user_presets()] == ["mine"]
    assert P.find_preset("mine").params().lam == 1e-2
    with pytest.raises(InputError, match="built-in"):
        P.save_user_preset("Quick demo", params)
    with pytest.raises(InputError, match="needs a name"):
        P.save_user_preset("  ", params)
    P.delete_user_preset("mine")
    assert P.load_user_presets() == []


def test_damaged_presets_file_is_reported_not_overwritten(tmp_path):
    path = tmp_path / "presets.json"
    path.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        P.load_user_presets(tmp_path)
    with pytest.raises(InputError):
        P.save_user_preset("x", SimParams(), directory=tmp_path)
    assert path.read_text() == "{not json"


# --- W(0) from files --------------------------------------------------------------------
def test_w0_from_npz_with_several_arrays_and_a_matrix_row(tmp_path):
    path = tmp_path / "model.npz"
    weights = np.arange(12.0).reshape(3, 4) - 5.0
    np.savez(path, bias=np.ones(4), W=weights)
    assert npz_array_names(path) == ["bias", "W"]
    assert load_array(path).tolist() == [1.0] * 4  # default: the first array
    np.testing.assert_array_equal(load_array(path, "W"), weights)
    w = load_w0(path, row=1, array="W")
    np.testing.assert_array_equal(w, weights[1])
    with pytest.raises(InputError, match="no array named 'V'"):
        load_array(path, "V")
    with pytest.raises(InputError, match="choose a row"):
        load_w0(path, array="W")


def test_sessions_and_presets_need_no_qt():
    code = (
        "import sys\n"
        "import sparsity_gui.core.note.session, sparsity_gui.core.note.presets, "
        "sparsity_gui.core.note.sampled\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'))\n"
        "assert not bad, bad\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
