"""The normal quantiles behind the idealized W(0) (core/note/normal_quantiles.py), against
two independent implementations: scipy's ndtri (Cephes) and Python's NormalDist.inv_cdf,
and against the definition, Phi(x) = p, through math.erfc."""

from __future__ import annotations

import math
import statistics
import sys

import numpy as np
import pytest
from scipy.special import ndtri

from sparsity_gui.core.note.normal_quantiles import normal_quantiles

# every region of the algorithm: the centre, the near tails and the far tails on both sides
P = np.concatenate(
    [
        np.linspace(0.0, 1.0, 20001)[1:-1],
        np.logspace(-300, -1, 2000),
        1.0 - np.logspace(-16, -1, 2000),
        [0.075, 0.925, 0.5 - 0.425, 0.5 + 0.425, np.exp(-25.0), 1e-11],
    ]
)


def test_equal_to_scipy_and_to_pythons_normal_dist():
    x = normal_quantiles(P)
    np.testing.assert_allclose(x, ndtri(P), rtol=4e-15, atol=1e-300)
    stdlib = np.array([statistics.NormalDist().inv_cdf(float(p)) for p in P])
    np.testing.assert_allclose(x, stdlib, rtol=4e-15, atol=1e-300)


def test_the_quantile_gives_back_its_probability():
    x = normal_quantiles(P)
    back = np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x])
    # Phi's condition number at x is about x^2 in the lower tail (d log Phi / d log x), so an
    # x right to 1e-15 gives back p to about 1e-15 (1 + x^2): 1e-12 at p = 1e-300
    tolerance = 1e-15 * (1.0 + x**2)
    assert np.all(np.abs(back - P) <= tolerance * P), np.max(np.abs(back - P) / (tolerance * P))


def test_the_ends_and_outside():
    x = normal_quantiles(np.array([0.0, 1.0, 0.5, -0.25, 1.5, np.nan]))
    assert x[0] == -np.inf and x[1] == np.inf and x[2] == 0.0
    assert np.isnan(x[3:]).all()
    assert normal_quantiles(np.array([])).shape == (0,)


def test_symmetric_about_one_half():
    p = np.linspace(1e-6, 0.5, 10001)
    np.testing.assert_allclose(normal_quantiles(p), -normal_quantiles(1.0 - p), rtol=1e-9)


def test_a_note_run_imports_no_scipy_special(tmp_path):
    """The reason this module exists: scipy.special cost about 0.5 s of every start."""
    import subprocess

    code = (
        "import sys\n"
        "from sparsity_gui.core.note.solvers import InitialState\n"
        "import numpy as np\n"
        "s = InitialState.from_weights(np.random.default_rng(0).standard_normal(100))\n"
        "s.derive_in_background(); s.finish_deriving()\n"
        "print(s.has_ideal, 'scipy.special' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True False"


@pytest.mark.parametrize("m", [1, 2, 7, 1000])
def test_the_idealized_weights_through_it(m):
    from sparsity_gui.core.note.solvers import ideal_abs_weights

    k = np.arange(1, m + 1)
    np.testing.assert_allclose(ideal_abs_weights(m), ndtri(1.0 - (k - 0.5) / (2.0 * m)), rtol=4e-15)
