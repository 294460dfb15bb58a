"""A dock's field shows a setting's value so that it reads back exactly: a run started
with λ = 0.0012345678 (a session, a launch option, the API's params) shows that, not
0.00123457, and pressing Enter in each field, as a user who tabs through the dock does,
changes nothing (no new run at a rounded value). Both windows."""

from __future__ import annotations

from helpers import type_keys

from sparsity_gui.core.interference.params import InterferenceParams
from sparsity_gui.core.note.params import SimParams

NOTE = SimParams(m=200, lam=0.0012345678, sigma=0.912345678, eta=0.0312345678, t_end=12.3456789012, seed=1)
INTERFERENCE = InterferenceParams(
    n=8, m=16, steps=400, seed=1, l1=0.0012345678, lr=0.00312345678, sigma=0.912345678,
    weight_decay=0.0123456789, noise="gaussian", noise_sigma=0.0123456789, beta1=0.912345678,
)  # fmt: skip


def _reads_back(win, fields) -> None:
    params = win.params
    for name, field in fields.items():
        shown = field.text()
        assert float(shown) == getattr(params, name), (name, shown)
        type_keys(field, shown)  # Enter on the value shown
        assert win.params == params, name


def test_the_note_docks_fields_read_back_exactly(qtbot, make_window):
    win = make_window(NOTE, speed=1.0)
    c = win.controls
    _reads_back(win, {"lam": c.lam, "sigma": c.sigma, "eta": c.eta, "t_end": c.t_end})


def test_the_interference_docks_fields_read_back_exactly(qtbot, make_iwindow):
    win = make_iwindow(INTERFERENCE)
    c = win.controls
    fields = {"l1": c.l1, "lr": c.lr, "sigma": c.sigma, "weight_decay": c.weight_decay}
    _reads_back(win, {**fields, "noise_sigma": c.noise_sigma, "beta1": c.fields["beta1"]})
