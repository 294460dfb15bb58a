"""The standard normal distribution's quantiles, Phi^-1(p), for an array of p in numpy.

The idealized W(0) needs them once per run. scipy.special.ndtri gave them, but importing
scipy.special cost about 0.5 s of CPU in every note command's start and the window's (and
then scipy's BLAS, which the cap on BLAS threads loads in a process that has imported
scipy). This is Wichura's algorithm AS241 (PPND16: Applied Statistics 37(3), 477-484,
1988, doi:10.2307/2347330), the one Python's statistics.NormalDist.inv_cdf uses, whose
rational approximations are accurate to about 1e-16 relative, evaluated for a whole array.
"""

from __future__ import annotations

import numpy as np

# AS241's coefficients, highest power first: the central region |p - 1/2| <= 0.425 in
# r = 0.180625 - (p - 1/2)^2, then the tails in r = sqrt(-log(min(p, 1 - p))) - 1.6 for
# r <= 5 and r - 5 beyond
_CENTRAL_NUM = (
    2.5090809287301226727e3,
    3.3430575583588128105e4,
    6.7265770927008700853e4,
    4.5921953931549871457e4,
    1.3731693765509461125e4,
    1.9715909503065514427e3,
    1.3314166789178437745e2,
    3.3871328727963666080e0,
)
_CENTRAL_DEN = (
    5.2264952788528545610e3,
    2.8729085735721942674e4,
    3.9307895800092710610e4,
    2.1213794301586595867e4,
    5.3941960214247511077e3,
    6.8718700749205790830e2,
    4.2313330701600911252e1,
    1.0,
)
_NEAR_NUM = (
    7.7454501427834140764e-4,
    2.2723844989269184583e-2,
    2.4178072517745061177e-1,
    1.2704582524523683826e0,
    3.6478483247632046050e0,
    5.7694972214606914055e0,
    4.6303378461565452959e0,
    1.4234371107496835773e0,
)
_NEAR_DEN = (
    1.0507500716444168432e-9,
    5.4759380849953449460e-4,
    1.5198666563616457197e-2,
    1.4810397642748007459e-1,
    6.8976733498510000455e-1,
    1.6763848301838038494e0,
    2.0531916266377588219e0,
    1.0,
)
_FAR_NUM = (
    2.0103343992922881327e-7,
    2.7115555687434875782e-5,
    1.2426609473880784386e-3,
    2.6532189526576123093e-2,
    2.9656057182850489123e-1,
    1.7848265399172913358e0,
    5.4637849111641143699e0,
    6.6579046435011037772e0,
)
_FAR_DEN = (
    2.0442631033899397856e-15,
    1.4215117583164458887e-7,
    1.8463183175100546818e-5,
    7.8686913114561325910e-4,
    1.4875361290850614853e-2,
    1.3692988092273580531e-1,
    5.9983220655588793769e-1,
    1.0,
)


def _ratio(num: tuple[float, ...], den: tuple[float, ...], r: np.ndarray) -> np.ndarray:
    """num(r) / den(r) by Horner's rule, in place on two arrays the size of r."""
    top = np.full_like(r, num[0])
    bottom = np.full_like(r, den[0])
    for a, b in zip(num[1:], den[1:], strict=True):
        top *= r
        top += a
        bottom *= r
        bottom += b
    top /= bottom
    return top


def normal_quantiles(p: np.ndarray) -> np.ndarray:
    """Phi^-1(p) for every p in (0, 1) (float64): -inf at 0, +inf at 1, nan outside."""
    p = np.asarray(p, dtype=np.float64)
    q = p - 0.5
    out = np.full_like(p, np.nan)
    central = np.abs(q) <= 0.425
    qc = q[central]
    out[central] = qc * _ratio(_CENTRAL_NUM, _CENTRAL_DEN, 0.180625 - qc * qc)
    tail = ~central & (p >= 0.0) & (p <= 1.0)
    qt = q[tail]
    with np.errstate(divide="ignore"):  # p = 0 or 1: r = inf, the quantile is -inf or inf
        r = np.sqrt(-np.log(np.where(qt <= 0.0, p[tail], 1.0 - p[tail])))
    x = np.empty_like(r)
    near = r <= 5.0
    x[near] = _ratio(_NEAR_NUM, _NEAR_DEN, r[near] - 1.6)
    far = ~near & np.isfinite(r)
    x[far] = _ratio(_FAR_NUM, _FAR_DEN, r[far] - 5.0)
    x[np.isinf(r)] = np.inf
    out[tail] = np.where(qt < 0.0, -x, x)
    return out
