"""The note's argument, step by step, with the live numbers that check each step."""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtWidgets

from sparsity_gui.core.note.metrics import last_weight_fixed_point
from sparsity_gui.core.note.runner import Snapshot
from sparsity_gui.core.text import plural


def _f(x: float, digits: int = 4) -> str:
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if not math.isfinite(x):
        return "∞" if x > 0 else ("–" if math.isnan(x) else "−∞")
    return f"{x:.{digits}g}"


STEPS_HTML = """
<style>
 h3 {{ margin: 6px 0 2px 0; }} p {{ margin: 0 0 6px 0; }}
 .num {{ font-family: monospace; color: #1f4e79; }} .ok {{ color: #2e7d32; }} .off {{ color: #b35900; }}
</style>
<h3>1. Two forces, one threshold</h3>
<p>Feature benefit pushes each weight up by (1−‖W‖²)|W<sub>k</sub>|, L1 pushes it down by λ.
So d|W<sub>k</sub>|/dt = s·(|W<sub>k</sub>| − θ) with s = 1−‖W‖² = <span class=num>{s}</span> and
θ = λ/s = <span class=num>{theta}</span>: <span class=num>{growing}</span> above θ grow,
<span class=num>{shrinking}</span> below it shrink. <i>Panels: Weights, sorted; Sparsity force.</i></p>
<h3>2. A dynamic balance on ‖W‖²</h3>
<p>(1−‖W‖²)‖W‖² = <span class=num>{fp}</span> against λ‖W‖₁ = <span class=num>{rp}</span>:
ratio <span class="num {ratio_cls}">{ratio}</span> (→ 1 after the transient). <i>Panel: Norm balance.</i></p>
<h3>3. The threshold follows ‖W‖₁</h3>
<p>At balance θ ≈ 1/‖W‖₁: θ = <span class=num>{theta}</span>, 1/‖W‖₁ = <span class=num>{w}</span>.
<i>Panel: Weights, sorted (red vs dashed line).</i></p>
<h3>4. How fast: w = 1/‖W‖₁ grows linearly</h3>
<p>−d‖W‖₁/dt = λm'²Var[X]/‖W‖², so w(t) ≈ w(0) + c·λt with c = Θ(1): fitted
c = <span class=num>{c}</span>. <i>Panel: L1 decay.</i></p>
<h3>5. The relative variance stays Θ(1)</h3>
<p>The survivors move by one affine map, so RV = Var[X]/E[X]² = <span class=num>{rv}</span> lies in
[<span class=num>{lo}</span>, <span class=num>{hi}</span>] computed from W(0) alone
(<span class="{rv_cls}">{rv_in}</span>). Identity: (1+RV)‖W‖₁²/‖W‖² = <span class=num>{ident}</span>
= m' = <span class=num>{nonzero}</span>. <i>Panel: Relative variance.</i></p>
<h3>6. Until one weight is left</h3>
<p>The survivors are always the largest m' of |W(0)|. The last one settles at the root of
(1−w²)w = λ: w* = <span class=num>{wstar}</span> (largest weight now: <span class=num>{top}</span>).
<i>Panel: Threshold crossing.</i></p>
"""


class NoteView(QtWidgets.QTextBrowser):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("note_view")
        self.setOpenExternalLinks(False)
        self.values: dict[str, str] = {}

    def update_from(self, snap: Snapshot) -> None:
        h = snap.history
        last = h[-1] if h.shape[0] else None
        from sparsity_gui.core.note.metrics import COL

        a = snap.sorted_abs
        alive = a[a > 0]
        growing = int(np.count_nonzero(alive >= snap.theta)) if math.isfinite(snap.theta) else 0
        fp = snap.s * snap.norm2_sq
        rp = snap.lam * snap.norm1
        ratio = fp / rp if rp > 0 else math.nan
        rv = last[COL["rel_var"]] if last is not None else math.nan
        lo = last[COL["rel_var_lo"]] if last is not None else math.nan
        hi = last[COL["rel_var_hi"]] if last is not None else math.nan
        rv_in = math.isfinite(rv) and lo - 1e-9 <= rv <= hi + 1e-9
        ident = (1 + rv) * snap.norm1**2 / snap.norm2_sq if snap.norm2_sq > 0 else math.nan
        decimated = len(snap.ranks) < snap.m
        v = dict(
            s=_f(snap.s),
            theta=_f(snap.theta),
            growing=(plural(growing, "weight") + (" (of the drawn)" if decimated else "")),
            shrinking=f"{alive.size - growing:,}",
            fp=_f(fp),
            rp=_f(rp),
            ratio=_f(ratio),
            ratio_cls="ok" if math.isfinite(ratio) and abs(ratio - 1) < 0.05 else "off",
            w=_f(1 / snap.norm1 if snap.norm1 > 0 else math.inf),
            c=_f(snap.fitted_c, 3),
            rv=_f(rv),
            lo=_f(lo),
            hi=_f(hi),
            rv_cls="ok" if rv_in else "off",
            rv_in="inside" if rv_in else "outside",
            ident=_f(ident, 8),
            nonzero=f"{snap.nonzero:,}",
            wstar=_f(last_weight_fixed_point(snap.lam), 6),
            top=_f(float(a[0]) if a.size else math.nan, 6),
        )
        self.values = v
        scroll = self.verticalScrollBar().value()
        self.setHtml(STEPS_HTML.format(**v))
        self.verticalScrollBar().setValue(scroll)
