"""Bad arguments: the API raises ValueError with the message the CLI prints after
`error:` (both check them in core/*/headless.py), and writes nothing."""

import numpy as np
import pytest

from sparsity_gui import api
from sparsity_gui.__main__ import main

CASES = [
    # (API call, its keyword arguments, the CLI's arguments)
    ("simulate", dict(m=0), ["run", "--m", "0"]),
    ("simulate", dict(m=10**9), ["run", "--m", "1e9"]),
    ("simulate", dict(lam=2.0), ["run", "--lam", "2"]),
    ("simulate", dict(lam=-1e-3), ["run", "--lam", "-0.001"]),
    ("simulate", dict(sigma=0.0), ["run", "--sigma", "0"]),
    ("simulate", dict(eta=3.0), ["run", "--eta", "3"]),
    ("simulate", dict(t_end=-1.0), ["run", "--t-end", "-1"]),
    ("simulate", dict(samples=1), ["run", "--samples", "1"]),
    ("simulate", dict(seed=-1), ["run", "--seed", "-1"]),
    ("simulate", dict(lam=0.0), ["run", "--lam", "0"]),  # no default end time
    ("simulate", dict(method="rk4"), ["run", "--method", "rk4"]),
    ("simulate", dict(w0_row=1), ["run", "--w0-row", "1"]),
    ("simulate", dict(w0="{tmp}/missing.npy"), ["run", "--w0", "{tmp}/missing.npy"]),
    ("simulate", dict(w0="{tmp}/bad.csv"), ["run", "--w0", "{tmp}/bad.csv"]),
    ("train", dict(n=0), ["interference", "--n", "0"]),
    ("train", dict(n=5000), ["interference", "--n", "5000"]),
    ("train", dict(m=70000), ["interference", "--m", "70000"]),
    ("train", dict(lr=0.0), ["interference", "--lr", "0"]),
    ("train", dict(l1=9.0), ["interference", "--l1", "9"]),
    ("train", dict(steps=0), ["interference", "--steps", "0"]),
    ("train", dict(sigma=0.0), ["interference", "--sigma", "0"]),
    ("train", dict(weight_decay=-1.0), ["interference", "--weight-decay", "-1"]),
    ("train", dict(samples=1), ["interference", "--samples", "1"]),
    ("train", dict(optimizer="sgd"), ["interference", "--optimizer", "sgd"]),
    ("train", dict(w0="{tmp}/bad.csv"), ["interference", "--w0", "{tmp}/bad.csv"]),
    ("train", dict(w0="{tmp}/missing.npy"), ["interference", "--w0", "{tmp}/missing.npy"]),
    ("train", dict(w0_tensor="W"), ["interference", "--w0-tensor", "W"]),
    ("train", dict(w0="{tmp}/w.csv", n=3), ["interference", "--w0", "{tmp}/w.csv", "--n", "3"]),
    ("train", dict(w0="{tmp}/w.csv", m=2), ["interference", "--w0", "{tmp}/w.csv", "--m", "2"]),
    ("train", dict(w0="{tmp}/w.csv", seed=3), ["interference", "--w0", "{tmp}/w.csv", "--seed", "3"]),
    ("train", dict(w0="{tmp}/w.csv", sigma=0.5), ["interference", "--w0", "{tmp}/w.csv", "--sigma", "0.5"]),
    (
        "train",
        dict(n=3, m=4, steps=20, optimizer="gd-zero", lr=1.0, sigma=30.0),
        [
            "interference",
            "--n",
            "3",
            "--m",
            "4",
            "--steps",
            "20",
            "--optimizer",
            "gd-zero",
            "--lr",
            "1",
            "--sigma",
            "30",
        ],
    ),  # diverges while training
    ("sweep", dict(m="64:32:8"), ["sweep", "--m", "64:32:8"]),
    ("sweep", dict(m="8:64:0"), ["sweep", "--m", "8:64:0"]),
    ("sweep", dict(m=[8, 100000]), ["sweep", "--m", "8,100000"]),
    ("sweep", dict(m="1:1e12:1"), ["sweep", "--m", "1:1e12:1"]),
    ("sweep", dict(m="1:1000:1", seeds=11), ["sweep", "--m", "1:1000:1", "--seeds", "11"]),
    ("sweep", dict(seeds=0), ["sweep", "--seeds", "0"]),
    ("sweep", dict(optimizer="adamax"), ["sweep", "--optimizer", "adamax"]),
    ("sweep", dict(jobs=0), ["sweep", "--jobs", "0"]),
    ("sweep", dict(jobs=65), ["sweep", "--jobs", "65"]),
    ("sweep", dict(paper=True, n=0), ["sweep", "--paper", "--n", "0"]),
    ("sweep", dict(scheduler="udp://x:1"), ["sweep", "--scheduler", "udp://x:1"]),
    ("sweep", dict(scheduler="local:0"), ["sweep", "--scheduler", "local:0"]),
    ("sweep", dict(scheduler="local:2", jobs=2), ["sweep", "--scheduler", "local:2", "--jobs", "2"]),
    (
        "scaling",
        dict(m="1e3", lam="1e-2", scheduler="tcp://host"),
        ["scaling", "--m", "1e3", "--lam", "1e-2", "--scheduler", "tcp://host"],
    ),
    (
        "scaling",
        dict(m="1e3", lam="1e-2", scheduler="local:2", jobs=2),
        ["scaling", "--m", "1e3", "--lam", "1e-2", "--scheduler", "local:2", "--jobs", "2"],
    ),
    (
        "scaling",
        dict(m="1e3", lam="0", scheduler="local:2"),
        ["scaling", "--m", "1e3", "--lam", "0", "--scheduler", "local:2"],
    ),
]


def _ids():
    return [" ".join(cli[:1] + [a for a in cli[1:] if "{tmp}" not in a]) for _f, _k, cli in CASES]


@pytest.mark.parametrize("fn, kwargs, cli_args", CASES, ids=_ids())
def test_same_message_as_the_cli(tmp_path, capsys, fn, kwargs, cli_args):
    (tmp_path / "bad.csv").write_text("0.1\nhello\n")
    (tmp_path / "w.csv").write_text("0.1,0.2,0.3\n0.4,0.5,0.6\n")  # n = 2 features, m = 3 neurons
    kwargs = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in kwargs.items()}
    argv = [a.format(tmp=tmp_path) for a in cli_args] + ["--out", str(tmp_path / "res")]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    cli_lines = capsys.readouterr().err.splitlines()
    assert len(cli_lines) == 1 and cli_lines[0].startswith("error: ")
    with pytest.raises(ValueError) as err:
        getattr(api, fn)(**kwargs)
    assert f"error: {err.value}" == cli_lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "w.csv"]


@pytest.mark.parametrize(
    "fn, kwargs, words",
    [
        # what the CLI's argparse refuses as text: the API names the field instead
        ("simulate", dict(m=2.5), "m: must be a whole number from 1 to 1e8, got 2.5"),
        ("simulate", dict(lam="big"), "lam: must be a number, got 'big'"),
        (
            "train",
            dict(w0=np.ones(5)),
            "w0: the array: W(0) is a matrix n x m (features x neurons), not 1-D, shape (5,)",
        ),
        ("train", dict(w0=np.ones((3, 4)), m=3), "w0: the array: W(0) is 3 x 4, the run needs n x m = n x 3"),
        (
            "train",
            dict(w0=np.array([[0.5, 0.1], [np.inf, 0.2]])),
            "w0: the array: the weight at (1, 0) is inf (all weights must be finite)",
        ),
        (
            "train",
            dict(w0=np.ones((2, 2)), w0_tensor="W"),
            "w0-tensor: names a tensor of a --w0 file; w0 is an array",
        ),
        (
            "train",
            dict(w0=np.ones((2, 2)), seed=1),
            "seed: --seed draws W(0) at random; it does not go with --w0",
        ),
        ("train", dict(w0=[[0.5, 0.1]]), "w0: must be a file's path or a numpy array, got list"),
        # simulate's W(0) as an array: checked as a file's array is
        (
            "simulate",
            dict(w0=np.ones((3, 4))),
            "w0: the array: a 3x4 matrix is not a single row or column (choose a row: --w0-row R, "
            "or the row dialog in the app)",
        ),
        ("simulate", dict(w0=np.ones((3, 4)), w0_row=5), "w0: the array: row 5 is out of range (0 to 2)"),
        (
            "simulate",
            dict(w0=np.array([0.1, np.nan])),
            "w0: the array: weight 1 is nan (all weights must be finite)",
        ),
        ("simulate", dict(w0=np.array([])), "w0: the array: holds no weights"),
        (
            "simulate",
            dict(w0=np.ones(3), w0_tensor="W"),
            "w0-tensor: names a tensor of a --w0 file; w0 is an array",
        ),
        ("simulate", dict(w0=[0.1, 0.2]), "w0: must be a file's path or a numpy array, got list"),
        (
            "sweep",
            dict(m="abc"),
            "m: expected a list like 64,128,256, powers like 1e3,1e4,1e5 or a range start:stop:step, "
            "got 'abc'",
        ),
    ],
)
def test_python_only_mistakes_name_the_field(fn, kwargs, words):
    with pytest.raises(ValueError) as err:
        getattr(api, fn)(**kwargs)
    assert str(err.value) == words


def test_a_schedule_follows_the_sessions_rules():
    with pytest.raises(ValueError, match=r"^t_end: a schedule of live changes needs an end time"):
        api.simulate(schedule=[(1.0, {"lam": 2e-3})])
    with pytest.raises(ValueError, match=r"^schedule: field 'changes\[1\]\.t' = 1\.0 comes before"):
        api.simulate(t_end=10.0, schedule=[(2.0, {"lam": 2e-3}), (1.0, {"lam": 3e-3})])
    with pytest.raises(ValueError, match=r"^schedule: field 'changes\[0\]\.name' must be one of lam, method"):
        api.simulate(t_end=10.0, schedule=[(2.0, {"sigma": 2.0})])
    with pytest.raises(ValueError, match=r"^schedule: field 'changes\[0\]\.value': lam must be from 0 to 1"):
        api.simulate(t_end=10.0, schedule=[(2.0, {"lam": 5.0})])
    with pytest.raises(ValueError, match=r"^schedule: field 'changes\[0\]\.t' = 20\.0 is after"):
        api.simulate(t_end=10.0, schedule=[(20.0, {"lam": 5e-3})])
    with pytest.raises(ValueError, match=r"^schedule: item 0 must be \(t, \{name: value\}\), got 2\.0"):
        api.simulate(t_end=10.0, schedule=[2.0])
    with pytest.raises(ValueError, match=r"^schedule: replaying to t = 1e6 would need about 1e10 steps"):
        api.simulate(t_end=1e6, method="gd", eta=1e-4, schedule=[(1.0, {"lam": 2e-3})])
    with pytest.raises(ValueError, match=r"^eta: "):  # gradient descent that diverges
        api.simulate(m=10, sigma=30.0, t_end=5.0, method="gd", eta=2.0, schedule=[(1.0, {"lam": 2e-3})])


def test_save_format_is_checked_as_the_cli_does(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["run", "--m", "20", "--format", "hdf5", "--out", str(tmp_path / "res")])
    cli_line = capsys.readouterr().err.strip()
    run = api.simulate(m=20)
    with pytest.raises(ValueError) as err:
        run.save(tmp_path / "res", format="hdf5")
    assert cli_line == f"error: {err.value}" == "error: format: must be one of auto, csv, npz, got 'hdf5'"
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def small_results():
    return api.simulate(m=50, lam=1e-2, samples=40), api.train(n=8, m=4, steps=40)


def _made(folder):
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    "call, kind, words",
    [
        (lambda r, t, d: r.plot("l1_decay", style=5), TypeError, "style must be"),
        (lambda r, t, d: t.plot("weights", style=5), TypeError, "style must be"),
        (lambda r, t, d: r.plot("l1_decay", style={"no.such.key": 1}), ValueError, "'no.such.key'"),
        (lambda r, t, d: r.plot("l1_decay", ax=42), TypeError, "ax must be a matplotlib Axes"),
        (lambda r, t, d: t.plot("weights", ax=42), TypeError, "ax must be a matplotlib Axes"),
        (lambda r, t, d: r.movie(d / "m.gif", width="huge"), ValueError, "width: must be one of single"),
        (lambda r, t, d: t.movie(d / "m.gif", width="huge"), ValueError, "width: must be one of single"),
        (lambda r, t, d: t.movie(d / "m.gif", width=7.0), ValueError, "width: must be one of single"),
        (
            lambda r, t, d: r.plot("layout", ax=_axes()),
            ValueError,
            "panel: the layout is a figure of its own",
        ),
        (
            lambda r, t, d: t.plot("layout", ax=_axes()),
            ValueError,
            "panel: the layout is a figure of its own",
        ),
        (lambda r, t, d: r.movie(d / "folder.gif"), ValueError, "is a folder"),
        (lambda r, t, d: t.movie(d / "folder.gif"), ValueError, "is a folder"),
        (lambda r, t, d: r.movie(d / "none" / "m.gif"), ValueError, "no such folder"),
        (lambda r, t, d: r.movie(d / "m.gif", style={"savefig.bbox": "tight"}), ValueError, "savefig.bbox"),
        (
            lambda r, t, d: api.simulate(m=50, lam=1e-2, t_end=5.0, schedule=np.array([[1.0, 2e-2]])),
            TypeError,
            "schedule must be a list",
        ),
    ],
)
def test_wrong_types_and_kinds_name_the_argument_and_leave_nothing(
    small_results, tmp_path, call, kind, words
):
    pytest.importorskip("av")
    r, t = small_results
    (tmp_path / "folder.gif").mkdir()
    before = _made(tmp_path)
    with pytest.raises(kind) as caught:
        call(r, t, tmp_path)
    assert words in str(caught.value), str(caught.value)
    assert _made(tmp_path) == before


def _axes():
    from matplotlib.figure import Figure

    return Figure().add_subplot()


# --- issue 48: every argument checked at the door and named ---------------------------------
def test_numpy_numbers_as_knot_times_are_taken_as_a_warm_up_takes_them():
    """np.int64, np.float32 and np.float64 knot times and values run as Python's numbers do:
    the same rows digit for digit; numpy's bool is not a number."""
    plain = api.simulate(m=50, lam_schedule=[(0, 0.0), (10.0, 2e-2)], t_end=20.0, samples=5)
    typed = api.simulate(
        m=50, lam_schedule=[(np.int64(0), np.float32(0.0)), (np.float64(10), 2e-2)], t_end=20.0, samples=5
    )
    np.testing.assert_array_equal(plain.timeseries, typed.timeseries)
    a = api.train(n=4, m=8, steps=20, samples=3, l1_schedule=[(0, 0.0), (10, 1e-3)])
    b = api.train(n=4, m=8, steps=20, samples=3, l1_schedule=[(np.int32(0), 0.0), (np.uint16(10), 1e-3)])
    np.testing.assert_array_equal(a.history, b.history)
    with pytest.raises(ValueError, match="every knot's time must be a finite number, got np.True_"):
        api.simulate(m=50, lam_schedule=[(0, 0.0), (np.bool_(True), 2e-2)], t_end=20.0)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(optimizer={"adam", "adamw"}), "optimizer: must be one value or a list of values"),
        (
            dict(l1={1e-3: 1}),
            "l1: must be one value or a list of values (a list, a tuple or a 1-D numpy array), not a dict",
        ),
        (
            dict(lr=np.ones((2, 2))),
            "lr: must be one value or a list of values (a list, a tuple or a 1-D numpy array), "
            "not a 2-D array",
        ),
        (dict(l1_schedule={"0:0,10:1e-3"}), "l1_schedule: must be one value or a list of values"),
        (
            dict(m={8, 16}),
            "m: must be one value or a list of values (a list, a tuple or a 1-D numpy array), not a set",
        ),
        (
            dict(m={8: 1}),
            "m: must be one value or a list of values (a list, a tuple or a 1-D numpy array), not a dict",
        ),
        (
            dict(m=np.array([[8, 16]])),
            "m: must be one value or a list of values (a list, a tuple or a 1-D numpy array), "
            "not a 2-D array",
        ),
        (dict(paper="no"), "paper: must be True or False, got 'no'"),
        (dict(no_interference=1), "no_interference: must be True or False, got 1"),
        (dict(overlap="yes"), "overlap: must be True or False, got 'yes'"),
    ],
)
def test_sweep_names_a_list_of_the_wrong_kind(kwargs, words):
    with pytest.raises(ValueError) as err:
        api.sweep(**{"n": 4, "m": [8], "steps": 10, **kwargs})
    assert str(err.value).startswith(words), str(err.value)


@pytest.mark.parametrize(
    "kwargs, what",
    [
        (dict(m={8, 16}), "m: ... not a set"),
        (dict(m=np.ones((1, 2))), "m: ... not a 2-D array"),
        (dict(lam={1e-2: 1}), "lam: ... not a dict"),
        (dict(lam=frozenset([1e-2])), "lam: ... not a frozenset"),
    ],
)
def test_scaling_names_a_list_of_the_wrong_kind(kwargs, what):
    """The same words as sweep's (and as the interference axes'): named, and why."""
    name, _, kind = what.partition(": ... ")
    with pytest.raises(ValueError) as err:
        api.scaling(**{"m": [8], "lam": 1e-2, "seeds": 1, **kwargs})
    assert str(err.value) == (
        f"{name}: must be one value or a list of values (a list, a tuple or a 1-D numpy array), {kind}"
    )


def test_sweep_takes_a_numpy_array_as_a_list():
    a = api.sweep(n=4, m=np.array([8, 16]), seeds=1, steps=10, l1=np.array([1e-3, 1e-2]))
    b = api.sweep(n=4, m=[8, 16], seeds=1, steps=10, l1=[1e-3, 1e-2])
    assert len(a.rows["m"]) == 4
    for column in ("m", "l1", "seed", "polysemantic", "sum_w4"):
        np.testing.assert_array_equal(a.rows[column], b.rows[column])


@pytest.mark.parametrize(
    "kwargs, kind, words",
    [
        (dict(row="1"), ValueError, "row: must be a whole number >= 0, got '1'"),
        (dict(row=1.5), ValueError, "row: must be a whole number >= 0, got 1.5"),
        (dict(row=True), ValueError, "row: must be a whole number >= 0, got True"),
        (dict(row=-1), ValueError, "row: must be a whole number >= 0, got -1"),
        (dict(latent="3"), ValueError, "latent: must be a whole number >= 0, got '3'"),
        (dict(l1="1e-3"), ValueError, "l1: must be a number, got '1e-3'"),
        (dict(lr=[1e-3]), ValueError, "lr: must be a number, got [0.001]"),
        (dict(zero_tol=float("nan")), ValueError, "zero_tol: must be finite, got nan"),
        (dict(weight_decay="0"), ValueError, "weight_decay: must be a number, got '0'"),
        (dict(all_rows="yes"), ValueError, "all_rows: must be True or False, got 'yes'"),
        (dict(fit_time_scale=1), ValueError, "fit_time_scale: must be True or False, got 1"),
        (dict(optimizer=["sgd"]), TypeError, "optimizer must be a str"),
        (dict(tensor=3), TypeError, "tensor must be a tensor's name"),
    ],
)
def test_compare_checkpoints_checks_its_arguments_before_reading_the_series(tmp_path, kwargs, kind, words):
    """At the door: the series (here a path that does not exist) is not opened first."""
    call = {"l1": 1e-3, "lr": 1e-3, "optimizer": "sgd", **kwargs}
    with pytest.raises(kind) as err:
        api.compare_checkpoints(tmp_path / "no such series", **call)
    assert str(err.value) == words or str(err.value).startswith(words), str(err.value)


def test_save_checks_force(tmp_path):
    result = api.simulate(m=20, t_end=1.0, samples=3)
    with pytest.raises(ValueError, match="force: must be True or False, got 'no'"):
        result.save(tmp_path / "out", force="no")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seed", ["x", [1], 1.5, True, -1])
def test_scaling_checks_seed_before_adding_the_seeds_to_it(seed):
    with pytest.raises(ValueError) as err:
        api.scaling(m="10", lam="1e-2", seeds=1, seed=seed)
    assert str(err.value) == f"seed: must be a whole number from 0 to 2^63-1, got {seed!r}"
