"""The DOP853 tableau kept in core/note/dop853.py: equal to the public class attributes of
scipy.integrate.DOP853, and a Runge-Kutta pair of the orders it claims by its own order
conditions (written here from the definitions, not from either copy)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
from scipy.integrate import DOP853

from sparsity_gui.core.note import dop853, kernels


def test_the_tableau_is_scipys_public_one_bit_for_bit():
    assert dop853.N_STAGES == DOP853.n_stages == 12
    for name in ("A", "B", "C", "E3", "E5"):
        ours, theirs = getattr(dop853, name), getattr(DOP853, name)
        assert ours.shape == theirs.shape, name
        assert np.array_equal(ours, theirs), name


def test_the_kernels_use_this_tableau():
    for kernel_name, name in (("RK_A", "A"), ("RK_B", "B"), ("RK_C", "C"), ("RK_E3", "E3"), ("RK_E5", "E5")):
        arr = getattr(kernels, kernel_name)
        assert arr.dtype == np.float64 and arr.flags.c_contiguous
        assert np.array_equal(arr, getattr(dop853, name)), kernel_name


def test_explicit_and_consistent():
    a, c = dop853.A, dop853.C
    assert np.all(np.triu(a) == 0)  # explicit: a_ij = 0 for j >= i
    np.testing.assert_allclose(a.sum(axis=1), c, rtol=0, atol=1e-14)  # row sums are the nodes
    assert math.isclose(dop853.B.sum(), 1.0, abs_tol=1e-14)
    # the error estimators are differences of two weight vectors that each sum to 1
    assert abs(dop853.E3.sum()) < 1e-14 and abs(dop853.E5.sum()) < 1e-14


def test_the_weights_integrate_polynomials_to_degree_seven():
    """Quadrature conditions of order 8: sum_j b_j c_j^(k-1) = 1/k for k = 1..8; the order
    stops there (k = 9 fails), so the table is not a trivially exact one."""
    b, c = dop853.B, dop853.C
    for k in range(1, 9):
        assert math.isclose(float(b @ c ** (k - 1)), 1.0 / k, rel_tol=0, abs_tol=1e-13), k
    assert abs(float(b @ c**8) - 1.0 / 9) > 1e-8


def test_one_step_has_order_eight_on_an_ode_with_a_closed_form():
    """y' = y cos t, y(0) = 1, so y = exp(sin t): the local error of one step shrinks as h^9."""

    def step(t, y, h):
        k = np.zeros(dop853.N_STAGES)
        for i in range(dop853.N_STAGES):
            yi = y + h * float(dop853.A[i, :i] @ k[:i])
            k[i] = yi * math.cos(t + dop853.C[i] * h)
        return y + h * float(dop853.B @ k)

    errors = [abs(step(0.3, math.exp(math.sin(0.3)), h) - math.exp(math.sin(0.3 + h))) for h in (0.4, 0.2)]
    order = math.log2(errors[0] / errors[1])
    assert 8.0 < order < 10.5, (errors, order)


def test_loading_the_tableau_imports_no_scipy_integrate():
    code = "import sys, sparsity_gui.core.note.kernels\nprint('scipy.integrate' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stdout + out.stderr
