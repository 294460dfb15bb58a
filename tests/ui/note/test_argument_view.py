"""The argument dock's numbers, replaced in place between updates, against the same
snapshots rendered from scratch: the same text and the same formats (the numbers'
colour, the ok/off classes, also changed in place), through a run and a live change of λ."""

from __future__ import annotations

from PySide6 import QtGui

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.runner import Runner
from sparsity_gui.ui.note.argument import NoteView


def _fragments(view: NoteView) -> list[tuple[str, str, str, bool]]:
    """The document as its fragments: (text, colour, font family, bold)."""
    out = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            f = it.fragment()
            fmt = f.charFormat()
            family = (fmt.fontFamilies() or [""])[0]
            out.append((f.text(), fmt.foreground().color().name(), family, fmt.fontWeight() >= 600))
            it += 1
        out.append(("¶", "", "", False))
        block = block.next()
    return out


def _merged(fragments):
    """Neighbouring fragments of one format joined (edits may split or join them)."""
    out = []
    for text, *fmt in fragments:
        if out and out[-1][1:] == tuple(fmt) and text != "¶" and out[-1][0] != "¶":
            out[-1] = (out[-1][0] + text, *fmt)
        else:
            out.append((text, *fmt))
    return out


def test_numbers_replaced_in_place_read_as_a_fresh_render(qapp):
    runner = Runner(SimParams(m=2000, lam=2e-3), speed=0, warm_up=False, playing=True)
    runner.step_once()
    sim = runner.sim
    live = NoteView()
    updates = 0
    classes_in_place = 0  # updates that changed an ok/off class without setting the document
    for t, lam in (
        (0.5, None),
        (2.0, None),
        (8.0, None),
        (30.0, 4e-3),
        (60.0, None),
        (200.0, 1e-3),
        (400.0, None),
    ):
        if lam is not None:
            sim.set_lam(lam)
            runner.params = sim.params
        sim.advance(t)
        snap = runner.make_snapshot()
        classes = {k: c for k, c in live.values.items() if k.endswith("_cls")}
        renders = live.full_renders
        live.update_from(snap)
        updates += 1
        if live.full_renders == renders and any(live.values[k] != c for k, c in classes.items()):
            classes_in_place += 1
        fresh = NoteView()
        fresh.update_from(snap)
        assert fresh.full_renders == 1
        assert live.toPlainText() == fresh.toPlainText(), f"t = {t}"
        assert _merged(_fragments(live)) == _merged(_fragments(fresh)), f"t = {t}"
        assert live.values == fresh.values
    # the numbers went in place on most updates: the document was set again only when its
    # shape changed (the regime's sentence after λ was lowered, an ok/off class)
    assert live.full_renders < updates
    assert classes_in_place >= 1  # the ratio came within 5 % of 1: its colour set in place
    num_colour = QtGui.QColor("#1f4e79").name()
    assert any(colour == num_colour and text.strip() for text, colour, *_ in _fragments(live))


def _paragraphs(view: NoteView) -> list[str]:
    doc = view.document()
    return [doc.findBlockByNumber(k).text() for k in range(doc.blockCount())]


def test_an_update_spread_over_frames_shows_one_snapshot_a_paragraph(qapp):
    """While a run plays the window replaces one paragraph's numbers a frame: between
    frames each paragraph reads as the earlier snapshot's fresh render or the new one's,
    and when none is pending the document reads as the new one's fresh render."""
    runner = Runner(SimParams(m=2000, lam=2e-3), speed=0, warm_up=False, playing=True)
    runner.step_once()
    sim = runner.sim
    live = NoteView()
    before = None
    spread_over = []
    for t in (0.5, 2.0, 8.0, 30.0, 60.0, 200.0, 400.0):
        sim.advance(t)
        snap = runner.make_snapshot()
        fresh = NoteView()
        fresh.update_from(snap)
        renders = live.full_renders
        live.update_from(snap, spread=True)
        frames = 1
        while live.pending:
            if live.full_renders == renders:  # numbers in place: one paragraph at a time
                rows = zip(_paragraphs(live), _paragraphs(fresh), before, strict=True)
                for k, (shown, new, old) in enumerate(rows):
                    assert shown in (new, old), f"t = {t}, paragraph {k}"
            live.continue_update()
            frames += 1
        spread_over.append(frames)
        assert live.toPlainText() == fresh.toPlainText(), f"t = {t}"
        assert _merged(_fragments(live)) == _merged(_fragments(fresh)), f"t = {t}"
        assert live.values == fresh.values
        live.continue_update()  # nothing pending: nothing changes
        assert live.toPlainText() == fresh.toPlainText()
        before = _paragraphs(fresh)
    assert max(spread_over) >= 5, spread_over  # most of the six steps' paragraphs changed


def test_an_unchanged_snapshot_changes_nothing_and_scrolling_is_kept(qtbot):
    runner = Runner(SimParams(m=500, lam=1e-3), speed=0, warm_up=False, playing=True)
    runner.step_once()
    runner.sim.advance(5.0)
    view = NoteView()
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.show()
    snap = runner.make_snapshot()
    view.update_from(snap)
    revision = view.document().revision()
    view.update_from(snap)
    assert view.document().revision() == revision and view.full_renders == 1
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    bar.setValue(bar.maximum() // 2)
    kept = bar.value()
    assert kept > 0
    runner.sim.advance(50.0)
    view.update_from(runner.make_snapshot())
    assert bar.value() == kept
    assert not view.document().isUndoAvailable(), "edits in place keep no undo steps"


def test_sentences_whose_numbers_change_go_in_place_outside_the_regime(qapp):
    """Outside the note's regime (λ‖W(0)‖₁ > 1/4) the sentence on how far θ fell can change
    with every update (at m = 10^6, λ = 1e-3 it did, 4 times a second): it is replaced
    where it stands, reading as a fresh render, and the document is not set again whole."""
    import dataclasses

    runner = Runner(SimParams(m=2000, lam=2e-2), speed=0, warm_up=False, playing=True)
    runner.step_once()
    runner.sim.advance(0.5)
    snap = runner.make_snapshot()
    assert snap.regime["theta_fall"] is not None
    live = NoteView()
    rises = []
    for fall, t_to in ((0.0329, 0.0066), (0.233, 0.5), (0.446, 1.25), (0.664, 3.0)):
        regime = dict(snap.regime, theta_fall=dict(snap.regime["theta_fall"], fall=fall, t_to=t_to))
        step = dataclasses.replace(snap, regime=regime)
        live.update_from(step)
        fresh = NoteView()
        fresh.update_from(step)
        assert live.toPlainText() == fresh.toPlainText(), fall
        assert _merged(_fragments(live)) == _merged(_fragments(fresh)), fall
        assert live.values == fresh.values
        rises.append(live.values["rise"])
    assert len(set(rises)) == 4 and all(r.startswith("θ fell by ") for r in rises), rises
    assert live.full_renders == 1
