"""What the API's results hold, against independent references (tests/*_oracles.py, plain
numpy and scipy): a schedule of live changes of lam (exact flow) and of lam under gradient
descent, a training run's counts; to_pandas with and without pandas; no Qt anywhere."""

import subprocess
import sys

import interference_oracles as IO
import note_oracles as NO
import numpy as np
import pytest

from sparsity_gui import api


def test_a_schedule_of_lam_follows_the_reference_flow():
    t_end, t1, lam0, lam1 = 6.0, 2.0, 1e-2, 4e-2
    run = api.simulate(m=40, lam=lam0, seed=5, t_end=t_end, samples=13, schedule=[(t1, {"lam": lam1})])
    cols = {name: run.timeseries[:, i] for i, name in enumerate(run.columns)}
    # the evenly spaced instants, and the change's (t1, one of them) once more: a row each side
    assert np.array_equal(cols["t"], np.sort(np.r_[np.linspace(0.0, t_end, 13), t1]))
    ref = NO.reference_flow(run.w0, [(0.0, lam0), (t1, lam1)], cols["t"])
    np.testing.assert_allclose(cols["norm2_sq"], ref.norm2_sq, rtol=1e-9)
    np.testing.assert_allclose(cols["norm1"], ref.norm1, rtol=1e-9)
    assert np.array_equal(cols["nonzero"], ref.nonzero)
    np.testing.assert_allclose(np.abs(run.w_final), ref.abs_w[-1], rtol=1e-8, atol=1e-12)
    assert run.schedule == ((t1, "lam", lam1),)
    # the same run without the change (solved in other steps) differs from t1 on only (the
    # first row at t1 is the one before the change, the second the one at it)
    plain = api.simulate(m=40, lam=lam0, seed=5, t_end=t_end, samples=13)
    before = cols["t"] < t1
    plain_before = plain.timeseries[:, 0] < t1
    np.testing.assert_allclose(run.timeseries[before], plain.timeseries[plain_before], rtol=1e-12, atol=0)
    lam_col = run.columns.index("lam")
    first_at_t1 = int(np.flatnonzero(cols["t"] == t1)[0])
    expected = [lam0 if t < t1 or i == first_at_t1 else lam1 for i, t in enumerate(cols["t"])]
    assert list(run.timeseries[:, lam_col]) == expected
    theta = run.timeseries[:, run.columns.index("theta")]
    at = slice(first_at_t1, first_at_t1 + 2)  # theta jumps by lam1/lam0 at the change, |W|^2 holds
    assert cols["norm2_sq"][at][0] == cols["norm2_sq"][at][1]
    assert theta[at][1] / theta[at][0] == pytest.approx(lam1 / lam0, rel=1e-12)
    after = cols["t"] > t1
    plain_after = plain.timeseries[:, 0] > t1
    assert not np.allclose(plain.timeseries[plain_after, 1:3], run.timeseries[after, 1:3], rtol=1e-6)


def test_gradient_descent_with_a_change_of_lam_and_eta_matches_plain_numpy():
    # eta a power of two: the change at t = 100 eta lands on a step exactly
    eta, lam0, lam1 = 0.0625, 5e-3, 2e-2
    run = api.simulate(
        m=30,
        seed=2,
        method="gd",
        eta=eta,
        lam=lam0,
        t_end=12.5,
        schedule=[(6.25, {"lam": lam1, "eta": eta / 2})],
    )
    w, _ = NO.gd_reference(run.w0, eta, lam0, 100)
    w, _ = NO.gd_reference(w, eta / 2, lam1, 200)  # 6.25 more at eta/2
    np.testing.assert_allclose(run.w_final, w, rtol=1e-12, atol=1e-15)


def test_train_counts_and_weights_match_the_references():
    result = api.train(n=6, m=10, steps=120, seed=4, optimizer="gd-zero", lr=0.02, l1=0.01)
    W, steps, unstable = IO.gd_zero_reference(result.w0, 0.02, 0.01, 120)
    assert steps == 120 and not unstable
    np.testing.assert_allclose(result.w_final, W, rtol=1e-9, atol=1e-12)
    active = (np.abs(result.w_final) >= 0.8) & (np.abs(result.w_final) <= 1.2)
    assert np.array_equal(result.neuron_counts, active.sum(axis=0))
    assert result.polysemantic == int(np.sum(active.sum(axis=0) > 1))
    assert result.predicted == 6 * 6 / (4 * 10)
    assert result.history[-1, list(result.columns).index("step")] == 120
    assert result.history[-1, list(result.columns).index("t")] == pytest.approx(4 * 0.02 * 120)


def test_to_pandas_gives_the_tables():
    pandas = pytest.importorskip("pandas")
    run = api.simulate(m=100, samples=11)
    frame = run.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == list(run.columns) and frame.shape == (11, len(run.columns))
    assert np.array_equal(frame["norm1"].to_numpy(), run.timeseries[:, run.columns.index("norm1")])
    result = api.sweep(n=4, m="4,8", seeds=1, steps=50, jobs=1)
    table = result.to_pandas()
    assert list(table["m"]) == [4, 8] and list(table["optimizer"]) == ["adamw", "adamw"]
    assert table["settled"].dtype == bool


def test_without_pandas_or_qt(tmp_path):
    """In a fresh interpreter where pandas cannot be imported: to_pandas() says what to
    install, everything else works, and neither Qt nor pyqtgraph is ever loaded."""
    code = (
        "import sys\n"
        "sys.modules['pandas'] = None  # import pandas raises ImportError\n"
        "from sparsity_gui import api\n"
        "run = api.simulate(m=50, samples=5)\n"
        "run.save('res')\n"
        "api.train(n=4, m=4, steps=10, samples=3).save('res2')\n"
        "try:\n"
        "    run.to_pandas()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'))\n"
        "print(qt, 'sparsity_gui.cli' in sys.modules, 'tqdm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "to_pandas() needs pandas, which sparsity-gui does not install: pip install pandas",
        "[] False False",
    ]
    assert (tmp_path / "res" / "timeseries.csv").exists() and (tmp_path / "res2" / "w_final.npy").exists()


def test_defaults_are_the_clis():
    """The signatures show the CLI's defaults (the API passes only what differs)."""
    import inspect

    from sparsity_gui.cli.interference import build_interference_parser
    from sparsity_gui.cli.note import build_run_parser
    from sparsity_gui.core.interference.headless import INTERFERENCE_DEFAULTS

    run_defaults = vars(build_run_parser().parse_args(["--out", "x"]))
    for name, p in inspect.signature(api.simulate).parameters.items():
        if name != "schedule":
            assert p.default == run_defaults[name], name
    train_defaults = {**vars(build_interference_parser().parse_args(["--out", "x"])), **INTERFERENCE_DEFAULTS}
    # n, m, seed and sigma: None, as the CLI's options before its defaults are filled in,
    # since a W(0) given as w0 sets n and m and does not go with seed or sigma; l1 and lr
    # too, since a schedule's last knot sets them
    drawn = ("n", "m", "seed", "sigma", "l1", "lr")
    train_defaults.update(dict.fromkeys(drawn))
    for name, p in inspect.signature(api.train).parameters.items():
        assert p.default == train_defaults[name], name
    params = api.train(steps=1, samples=2).params
    assert [getattr(params, name) for name in drawn] == [INTERFERENCE_DEFAULTS[name] for name in drawn]
