"""The note's argument, step by step, with the live numbers that check each step."""

from __future__ import annotations

import html
import math

import numpy as np
from PySide6 import QtGui, QtWidgets

from sparsity_gui.core.note.metrics import COL, last_weight_fixed_point, regime_failures
from sparsity_gui.core.note.pins import settings_named
from sparsity_gui.core.note.runner import Snapshot
from sparsity_gui.core.note.settings import NOTE_SETTINGS
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
 .num {{ font-family: monospace; color: #1f4e79; }} .ok {{ color: OK_COLOUR; }} .off {{ color: OFF_COLOUR; }}
 .run {{ color: #444; }}
</style>
<p class=run>{run}</p>
<p class="{regime_cls}"><b>{regime_head}</b> {regime_why}</p>
<h3>1. Two forces, one threshold</h3>
<p>Feature benefit pushes each weight up by (1−‖W‖²)|W<sub>k</sub>|, L1 pushes it down by λ.
So d|W<sub>k</sub>|/dt = s·(|W<sub>k</sub>| − θ) with s = 1−‖W‖² = <span class=num>{s}</span> and
θ = λ/s = <span class=num>{theta}</span> (exact): <span class=num>{growing}</span> above θ grow,
<span class=num>{shrinking}</span> below it shrink. <i>Panels: Weights, sorted; Sparsity force.</i></p>
<h3>2. A dynamic balance on ‖W‖²</h3>
<p>(1−‖W‖²)‖W‖² = <span class=num>{fp}</span> against λ‖W‖₁ = <span class=num>{rp}</span>:
ratio <span class="num {ratio_cls}">{ratio}</span>. It tends to 1 after a transient only where a
balance is possible: (1−‖W‖²)‖W‖² ≤ 1/4, so λ‖W‖₁ ≤ 1/4 (now λ‖W‖₁ = <span class=num>{rp}</span>).
<i>Panel: Norm balance.</i></p>
<h3>3. The threshold follows ‖W‖₁</h3>
<p>At balance and with ‖W‖² ≈ 1, θ ≈ 1/‖W‖₁: θ = <span class=num>{theta}</span>,
1/‖W‖₁ = <span class=num>{w}</span>. <i>Panel: Weights, sorted (red vs dashed line).</i></p>
<h3>4. How fast: w = 1/‖W‖₁ grows about linearly</h3>
<p>Exactly, −d‖W‖₁/dt = λm′ − (1−‖W‖²)‖W‖₁ = <span class=num>{dl1}</span>; at balance this is
≈ λm′²Var[X]/‖W‖² = <span class=num>{dl1_bal}</span>. With RV = Θ(1) and ‖W‖² = Θ(1) the note
gets w(t) ≈ w(0) + c·{lam_t}, c = Θ(1), in its regime. Fitted to this run: c = <span class=num>{c}</span>
(rows with m′ ≥ 2, dominated by the few-survivor phase), bulk c = <span class=num>{c_bulk}</span>
(rows with m′ ≥ 10, the bulk decay: the one to quote); the law with c is at most
<span class="num {dev_cls}">{dev}</span> off ‖W‖₁ on its rows.{fit_flags}
<i>Panel: L1 decay.</i></p>
<h3>5. The relative variance stays Θ(1)</h3>
<p>The survivors move by one affine map, so RV = Var[X]/E[X]² = <span class=num>{rv}</span> lies in
[<span class=num>{lo}</span>, <span class=num>{hi}</span>] computed from W(0) alone
(<span class="{rv_cls}">{rv_in}</span>; Θ(1) w.h.p. for W(0) of i.i.d. normals). Identity (exact):
(1+RV)‖W‖₁²/‖W‖² = <span class=num>{ident}</span> = m′ = <span class=num>{nonzero}</span>.
<i>Panel: Relative variance.</i></p>
<h3>6. Until one weight is left</h3>
<p>The survivors are always the largest m′ of |W(0)|. While θ rises a weight that falls below θ
keeps shrinking and dies; when θ falls, weights below it can grow again. θ = λ/(1−‖W‖²) rises
exactly while ‖W‖² does, that is while (1−‖W‖²)‖W‖² ≥ λ‖W‖₁ (step 2); once that holds it keeps
holding while λ stays, so it is enough at t = 0 and after each raise of λ, with λ constant in
between (a λ(t) that rises can break it; one that falls lowers θ).
Here: <span class="{rise_cls}">{rise}</span>.
The last one settles at the root of (1−w²)w = λ (for λ &lt; 2/(3√3)):
w* = <span class=num>{wstar}</span> (largest weight now: <span class=num>{top}</span>).
<i>Panel: Threshold crossing.</i></p>
"""
# the ok/off classes' colours, also set in place on a field whose class changed (COLOURED)
CLASS_COLOUR = {"ok": "#2e7d32", "off": "#b35900"}
STEPS_HTML = STEPS_HTML.replace("OK_COLOUR", CLASS_COLOUR["ok"]).replace("OFF_COLOUR", CLASS_COLOUR["off"])


def run_line(params) -> str:
    """'This run: λ = 2.0e-3, λ warm-up = 50.': the run's settings that differ from a
    default run's, as pinned runs and the figures' titles name them."""
    named = settings_named(NOTE_SETTINGS.values(params))
    return "This run: " + (", ".join(named) if named else "every setting at its default") + "."


def regime_sentence(regime: dict | None) -> tuple[str, str, bool]:
    """(heading, reasons, holds) about the note's premise for the dock and the L1 panel."""
    if regime is None:
        return "", "", True
    why = regime_failures(regime)
    if not why:
        return (
            "The note's premise holds:",
            f"λ‖W(0)‖₁ = {regime['lam_l1_w0']:.3g} ≤ 1/4 (a balance is possible) and θ has never "
            "fallen on this run (it rises).",
            True,
        )
    return "The note's premise does not hold here:", html.escape("; ".join(why) + ".", quote=False), False


def theta_rise_sentence(regime: dict | None) -> tuple[str, bool]:
    """(what theta did on the run, beside the sufficient condition; whether it rose) for step 6."""
    if regime is None:
        return "–", True
    condition = regime["theta_rise_condition"]
    if condition is None:  # λ(t) varies: the condition is one for a constant λ
        cond = "is for a constant λ: not judged under this λ(t)"
    else:
        cond = "holds" if condition else "does not hold"
    fall = regime["theta_fall"]
    if fall is None:
        return f"θ has never fallen (the condition {cond})", True
    start = "∞" if fall["theta_from"] is None else _f(fall["theta_from"])
    return (
        f"θ fell by {100 * fall['fall']:.3g} %, from {start} at t = {_f(fall['t_from'])} to "
        f"{_f(fall['theta_to'])} at t = {_f(fall['t_to'])} (the condition {cond})",
        False,
    )


# The fields of STEPS_HTML that hold a number (or a count, or a word) of the run, changed
# in place between frames; the others (the regime's heading, the fit's flags) change the
# document's shape, which is then set again whole.
NUMBERS = (
    "s", "theta", "growing", "shrinking", "fp", "rp", "ratio", "w", "dl1", "dl1_bal", "c",
    "c_bulk", "dev", "rv", "lo", "hi", "ident", "nonzero", "wstar", "top", "rv_in",
)  # fmt: skip
# The fields in an ok/off span, by the field naming their class: a class that changes is
# set in place too, as the text's colour (a ratio coming within 5 % of 1, the fit's
# deviation crossing 10 %: each had set the whole document again, 10-16 ms).
COLOURED = {"ratio": "ratio_cls", "dev": "dev_cls", "rv_in": "rv_cls", "rise": "rise_cls"}
# Sentences (HTML-escaped text, no tags) changed in place too: outside the note's regime
# their numbers ("θ fell by 44.6 %, ...") change on every update, and setting the whole
# document again 4 times a second cost 5-11 ms each (a stall at m = 10^6). Not while empty
# (Qt keeps no empty anchor): an empty one is part of the shape.
TEXTS = ("regime_why", "rise")
ANCHOR = "value:"  # the name of the anchor around each number in the document


def _in_place(v: dict[str, str]) -> tuple[str, ...]:
    """The fields changed in place: the numbers, and the sentences that are not empty."""
    return NUMBERS + tuple(key for key in TEXTS if v[key])


def _class(v: dict[str, str], key: str) -> str:
    """The ok/off class of a field's span ("" for a field in none)."""
    return v[COLOURED[key]] if key in COLOURED else ""


def _shown(v: dict[str, str], key: str) -> str:
    """A field's text as the document shows it (a sentence's HTML entities read)."""
    return html.unescape(v[key]) if key in TEXTS else v[key]


def _utf16_length(text: str) -> int:
    """A text's length in Qt's positions (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def _stale(span: tuple[int, str, str, int, str], v: dict[str, str]) -> bool:
    """Whether a span shows other than ``v``: its text or its class."""
    _position, shown, key, _block, cls = span
    return shown != _shown(v, key) or cls != _class(v, key)


class NoteView(QtWidgets.QTextBrowser):
    """The argument's steps with the run's numbers, updated a few times a second. Setting
    the whole document again (HTML parsed, every block laid out and repainted) took
    4-5 ms of the GUI thread each time, a dropped frame each; the numbers are instead
    replaced where they stand, and only their paragraphs are laid out again.

    Laying out the six steps' paragraphs again still cost 3-11 ms in one frame (Qt lays
    out every block between the first and the last edit of an edit block). While a run
    plays (``spread=True``) an update changes one paragraph at once and leaves the others
    to ``continue_update``, one a frame: each paragraph always reads as one snapshot, the
    steps at most a few frames apart; an update with ``spread=False`` (a paused or finished
    run) changes them all at once."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("note_view")
        self.setOpenExternalLinks(False)
        self.document().setUndoRedoEnabled(False)  # edits in place would pile up undo steps
        self.values: dict[str, str] = {}
        self.full_renders = 0  # times the whole document was set (the rest: numbers in place)
        self._shape: tuple[str, ...] | None = None
        # (position, the text shown, field, block number, its class shown), in order; the
        # text shown differs from self.values while its paragraph is pending (a field may
        # stand twice: θ)
        self._spans: list[tuple[int, str, str, int, str]] = []
        self._pending: list[int] = []  # the blocks whose numbers are yet to be replaced

    def update_from(self, snap: Snapshot, spread: bool = False) -> None:
        """The document shows ``snap``: at once, or (``spread``) its first changed
        paragraph now and the others through ``continue_update``."""
        h = snap.history
        last = h[-1] if h.shape[0] else None
        a = snap.sorted_abs
        growing = snap.growing  # of all the weights, counted on the solver's state
        fp = snap.s * snap.norm2_sq
        rp = snap.lam * snap.norm1
        ratio = fp / rp if rp > 0 else math.nan
        rv = last[COL["rel_var"]] if last is not None else math.nan
        lo = last[COL["rel_var_lo"]] if last is not None else math.nan
        hi = last[COL["rel_var_hi"]] if last is not None else math.nan
        rv_in = math.isfinite(rv) and lo - 1e-9 <= rv <= hi + 1e-9
        ident = (1 + rv) * snap.norm1**2 / snap.norm2_sq if snap.norm2_sq > 0 else math.nan
        fit = snap.fit
        head, why, holds = regime_sentence(snap.regime)
        rise, rose = theta_rise_sentence(snap.regime)
        mp = snap.nonzero
        dl1 = snap.lam * mp - snap.s * snap.norm1 if mp else math.nan
        dl1_bal = (
            snap.lam * (mp * snap.norm2_sq - snap.norm1**2) / snap.norm2_sq if snap.norm2_sq > 0 else math.nan
        )
        flags = f' <span class="off">{html.escape(fit.flag_text(), quote=False)}.</span>' if fit.flags else ""
        varied = len(snap.lam_changes) > 1 or bool(snap.params.lam_schedule)
        v = dict(
            # λ·t only while λ is constant; the panel fits Λ(t) = ∫λ otherwise
            lam_t="Λ(t), Λ = ∫₀ᵗλ" if varied else "λt",
            run=html.escape(run_line(snap.params), quote=False),
            regime_head=head,
            regime_why=why,
            regime_cls="ok" if holds else "off",
            rise=html.escape(rise, quote=False),
            rise_cls="ok" if rose else "off",
            s=_f(snap.s),
            theta=_f(snap.theta),
            growing=plural(growing, "weight"),
            shrinking=f"{mp - growing:,}",
            dl1=_f(dl1),
            dl1_bal=_f(dl1_bal),
            c_bulk=_f(fit.c_bulk, 3),
            dev=(f"{100 * fit.max_rel_dev:.3g} %" if math.isfinite(fit.max_rel_dev) else "–"),
            dev_cls="ok" if math.isfinite(fit.max_rel_dev) and fit.max_rel_dev < 0.1 else "off",
            fit_flags=flags,
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
        placed = NUMBERS + TEXTS + tuple(COLOURED[k] for k in _in_place(v) if k in COLOURED)
        shape = tuple(v[k] for k in sorted(v) if k not in placed) + tuple(bool(v[k]) for k in TEXTS)
        self.values = v
        if shape != self._shape or not self._spans:
            self._render(v, shape)
            return
        blocks = sorted({span[3] for span in self._spans if _stale(span, v)})
        self._pending = blocks
        self.continue_update(len(blocks) if not spread else 1)

    def continue_update(self, paragraphs: int = 1) -> None:
        """Replace the numbers of the next ``paragraphs`` pending paragraphs (nothing when
        none is pending)."""
        while self._pending and paragraphs > 0:
            self._replace_numbers(self._pending.pop(0))
            paragraphs -= 1

    @property
    def pending(self) -> int:
        """Paragraphs whose numbers still show an earlier update's."""
        return len(self._pending)

    def _render(self, v: dict[str, str], shape: tuple[str, ...]) -> None:
        """The whole document, each number in a named anchor (found again by _find_spans)."""
        marked = dict(v)
        for key in _in_place(v):
            marked[key] = f'<a name="{ANCHOR}{key}">{v[key]}</a>'
        scroll = self.verticalScrollBar().value()
        self.setHtml(STEPS_HTML.format(**marked))
        self.verticalScrollBar().setValue(scroll)
        self.full_renders += 1
        self._shape = shape
        self._pending = []
        self._spans = self._find_spans(v)

    def _find_spans(self, v: dict[str, str]) -> list[tuple[int, str, str, int, str]]:
        """Where each number stands: Qt names only an anchor's first character, so its
        length is that of the text put there (checked against the document: on any
        surprise, no spans, and each update sets the whole document)."""
        spans = []
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                for name in fragment.charFormat().anchorNames():
                    if name.startswith(ANCHOR):
                        key = name[len(ANCHOR) :]
                        spans.append(
                            (fragment.position(), _shown(v, key), key, block.blockNumber(), _class(v, key))
                        )
                it += 1
            block = block.next()
        cursor = QtGui.QTextCursor(self.document())
        for position, shown, *_rest in spans:
            cursor.setPosition(position)
            cursor.setPosition(position + _utf16_length(shown), QtGui.QTextCursor.MoveMode.KeepAnchor)
            if cursor.selectedText() != shown:
                return []
        return spans if {span[2] for span in spans} == set(_in_place(v)) else []

    def _replace_numbers(self, block: int) -> None:
        """Each changed number of one paragraph replaced where it stands (its format kept),
        last first so that the positions of those before it hold; one edit block, one
        paragraph laid out again."""
        v = self.values
        spans = self._spans
        changed = [k for k, span in enumerate(spans) if span[3] == block and _stale(span, v)]
        if not changed:
            return
        cursor = QtGui.QTextCursor(self.document())
        cursor.beginEditBlock()
        for k in reversed(changed):
            position, shown, key, number, shown_class = spans[k]
            cursor.setPosition(position)
            cursor.setPosition(position + _utf16_length(shown), QtGui.QTextCursor.MoveMode.KeepAnchor)
            text, cls = _shown(v, key), _class(v, key)
            cursor.insertText(text)  # in the format of the text it replaces
            if cls != shown_class:
                cursor.setPosition(position, QtGui.QTextCursor.MoveMode.KeepAnchor)
                colour = QtGui.QTextCharFormat()
                colour.setForeground(QtGui.QColor(CLASS_COLOUR[cls]))
                cursor.mergeCharFormat(colour)
            spans[k] = (position, text, key, number, cls)
            grow = _utf16_length(text) - _utf16_length(shown)
            for j in range(k + 1, len(spans)):  # the numbers after it move along
                p, *rest = spans[j]
                spans[j] = (p + grow, *rest)
        cursor.endEditBlock()
