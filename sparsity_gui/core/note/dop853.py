"""The DOP853 tableau: the explicit Runge-Kutta pair of order 8 with error estimators of
orders 5 and 3 by Dormand and Prince, as published in E. Hairer's dop853.f (Hairer, Norsett
and Wanner, *Solving Ordinary Differential Equations I*, 2nd ed., Springer 1993).

The decimal constants, as the published code writes them (the same text SciPy carries), are
data beside this module, dop853_tableau.json. They are kept in the project rather than loaded
from SciPy: its copy is a private module that a release may move, and importing it through
scipy.integrate costs 1.0-1.4 s of every start for a table of numbers.
tests/core/note/test_dop853_tableau.py checks them against the public class attributes of
scipy.integrate.DOP853 and against the order conditions.
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np


def _tableau() -> dict:
    text = resources.files(__package__).joinpath("dop853_tableau.json").read_text(encoding="utf-8")
    return json.loads(text)


_T = _tableau()
N_STAGES: int = _T["n_stages"]

#: nodes c_i of the 12 stages
C = np.array([float(v) for v in _T["c"]])
#: the stages' coefficients a_ij (j < i); the others are zero
A = np.zeros((N_STAGES, N_STAGES))
#: the weights b_j of the 8th-order solution
B = np.zeros(N_STAGES)
#: the error estimators over the 12 stages and the 13th (the derivative at the new point,
#: first same as last): E3 = B - b_hat of the 3rd-order pair, E5 that of the 5th-order one
E3 = np.zeros(N_STAGES + 1)
E5 = np.zeros(N_STAGES + 1)
for i, j, v in _T["a"]:
    A[i, j] = float(v)
for j, v in _T["b"]:
    B[j] = float(v)
E3[:N_STAGES] = B
for k, v in _T["e3_b_minus"]:
    E3[k] -= float(v)
for k, v in _T["e5"]:
    E5[k] = float(v)
del _T
