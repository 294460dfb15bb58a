"""SimParams: every bad value raises InputError naming the field."""

from __future__ import annotations

import dataclasses
import math

import pytest

from sparsity_gui.core import checks
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note import params as P
from sparsity_gui.core.note.params import SimParams, check_memory

BAD = [
    ("m", 0),
    ("m", -5),
    ("m", 1.5),
    ("m", 1000.0),
    ("m", True),
    ("m", "100"),
    ("m", None),
    ("m", 10**8 + 1),
    ("lam", -1e-9),
    ("lam", 1.0000001),
    ("lam", math.nan),
    ("lam", math.inf),
    ("lam", "0.1"),
    ("lam", True),
    ("lam", None),
    ("sigma", 0.0),
    ("sigma", -0.9),
    ("sigma", math.nan),
    ("sigma", math.inf),
    ("sigma", 1e6 * 1.0001),
    ("sigma", "1"),
    ("seed", -1),
    ("seed", 2**63),
    ("seed", 1.0),
    ("seed", False),
    ("seed", "3"),
    ("method", "rk4"),
    ("method", ""),
    ("method", None),
    ("method", "EXACT"),
    ("eta", 0.0),
    ("eta", -0.1),
    ("eta", 2.0000001),
    ("eta", math.nan),
    ("eta", math.inf),
    ("eta", "0.05"),
    ("t_end", 0.0),
    ("t_end", -1.0),
    ("t_end", math.inf),
    ("t_end", math.nan),
    ("t_end", "10"),
    ("w0_path", 5),
    ("w0_path", b"file.npy"),
]


@pytest.mark.parametrize("name,value", BAD, ids=[f"{n}={v!r}" for n, v in BAD])
def test_bad_value_names_its_field(name, value):
    with pytest.raises(InputError) as info:
        SimParams(**{name: value})
    field = "w0" if name == "w0_path" else name
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert isinstance(info.value, ValueError)  # callers may catch ValueError
    # also through with_changes from a valid snapshot
    with pytest.raises(InputError) as info2:
        SimParams().with_changes(**{name: value})
    assert info2.value.field == field


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"m": 1},
        {"m": 10**8},
        {"lam": 0.0},
        {"lam": 1.0},
        {"lam": 0},
        {"sigma": 1e6},
        {"seed": 0},
        {"seed": 2**63 - 1},
        {"method": "gd"},
        {"eta": 2.0},
        {"eta": 1e-9},
        {"t_end": 1e-9},
        {"t_end": 5},
        {"w0_path": "x.npy"},
    ],
)
def test_valid_values_accepted(changes):
    p = SimParams(**changes)
    for k, v in changes.items():
        assert getattr(p, k) == v


def test_defaults_and_normalisation():
    p = SimParams()
    assert (p.m, p.lam, p.sigma, p.seed, p.w0_path, p.method, p.eta, p.t_end) == (
        1000,
        1e-3,
        0.9,
        0,
        None,
        "exact",
        0.05,
        None,
    )
    q = SimParams(lam=0, sigma=1, eta=1)
    assert type(q.lam) is float and type(q.sigma) is float and type(q.eta) is float
    assert q == SimParams(lam=0.0, sigma=1.0, eta=1.0)  # equal snapshots compare equal
    assert p.as_dict() == {
        "m": 1000,
        "lam": 1e-3,
        "sigma": 0.9,
        "seed": 0,
        "w0_path": None,
        "method": "exact",
        "eta": 0.05,
        "t_end": None,
    }
    r = p.with_changes(lam=0.5)
    assert r.lam == 0.5 and p.lam == 1e-3  # frozen: a new snapshot
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.lam = 0.2  # type: ignore[misc]


def test_check_memory_names_m(monkeypatch):
    monkeypatch.setattr(checks, "available_memory", lambda: 10**9)
    check_memory(10**9 // P.BYTES_PER_WEIGHT)  # fits
    with pytest.raises(InputError) as info:
        check_memory(10**9 // P.BYTES_PER_WEIGHT + 1)
    assert info.value.field == "m" and "GiB" in str(info.value)
    monkeypatch.setattr(checks, "available_memory", lambda: None)  # unknown: do not refuse
    check_memory(10**8)
