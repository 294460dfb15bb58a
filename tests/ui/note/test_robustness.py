"""Robustness: the app driven hard and at bad moments.

- a seeded fuzz of 64 actions (every kind among them) through the real widgets and window
  methods, checking after every action that nothing crashed and now and then that the
  status bar shows what the core holds;
- faults inside the simulation thread reach the GUI, and the app recovers;
- closing while an export is being written, or while the worker runs flat out;
- m = 10^7 through the real entry point: exit 0, nothing on stderr, bounded memory,
  a GUI thread that keeps ticking;
- a long run keeps its history (and memory) bounded.

Each bug these found (a lost reset, build errors that never reached the window, a repeated
error not pausing, a step on a failed run, tiny or overflowing W(0), a replay that closing
could not interrupt) has its own regression test below.

Real widgets, real threads, real files, as in the rest of tests/gui.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from helpers import type_keys
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.runner import Runner
from sparsity_gui.core.note.simulation import Simulation

TIMEOUT = 20_000
SEED = 1234
# the kinds of action are drawn from their own seed, so that which kinds come when does not
# depend on the values drawn for them: this seed's first 62 draws hold every kind (found by
# drawing kinds alone), with an export of each kind and an unstable run recovered from; 250
# actions (the same mix, more of it) took 1.6 times the CPU and found nothing more
KIND_SEED = 314864
N_ACTIONS = 64
CHECK_EVERY = 16


# --- helpers ---------------------------------------------------------------------------
def expected_status(mo) -> dict[str, str]:
    """What NoteWindow._update_status shows for these moments (same formats)."""
    return {
        "t": f"t = {mo.t:.6g}",
        "nonzero": f"m' = {mo.nonzero:,}",
        "norm2": f"‖W‖² = {mo.norm2_sq:.6f}",
        "norm1": f"‖W‖₁ = {mo.norm1:.6g}",
        "theta": f"θ = {mo.theta:.4g}",
    }


def shown_status(win) -> dict[str, str]:
    return {key: win.status_labels[key].text() for key in ("t", "nonzero", "norm2", "norm1", "theta")}


def settled(win) -> bool:
    """Paused (or finished / stopped by an error), the newest snapshot painted, and the
    status bar showing the core's current numbers."""
    snap, runner = win.snapshot, win.runner
    sim = runner.sim
    if snap is None or sim is None or snap.run_id != win.run_id or runner.run_id != win.run_id:
        return False
    if snap.state not in ("paused", "finished", "error") or runner.state != snap.state:
        return False
    if win.status_labels["state"].text() != snap.state:
        return False
    mo = sim.moments()
    # the painted snapshot is the newest (its numbers are the core's, to the bit) ...
    if (snap.t, snap.nonzero, snap.norm2_sq, snap.norm1, snap.lam) != (
        mo.t,
        mo.nonzero,
        mo.norm2_sq,
        mo.norm1,
        mo.lam,
    ):
        return False
    # ... and the status bar shows them
    return shown_status(win) == expected_status(mo)


def check_status_agrees_with_core(qtbot, win, where: str, log: list[str] = ()) -> None:
    """Pause, let the snapshot settle, then the status bar must show the core's moments."""
    win.set_playing(False)
    try:
        qtbot.waitUntil(lambda: settled(win), timeout=TIMEOUT)
    except qtbot.TimeoutError:
        sim = win.runner.sim
        pytest.fail(
            f"{where}: the status bar does not settle on the core's state\n"
            f"  shown:    {shown_status(win)} state={win.status_labels['state'].text()!r}\n"
            f"  core:     {expected_status(sim.moments()) if sim else None} "
            f"state={win.runner.state!r}\n"
            f"  run ids:  window {win.run_id}, runner {win.runner.run_id}, "
            f"snapshot {getattr(win.snapshot, 'run_id', None)}; worker alive "
            f"{win.thread.is_alive()}, message {win.runner.message[:2000]!r}\n" + "\n".join(log[-30:])
        )
    assert shown_status(win) == expected_status(win.runner.sim.moments()), where


def choose(combo: QtWidgets.QComboBox, index: int) -> None:
    """Pick an entry of a combo box as a user does (index change, then `activated`)."""
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def temp_files(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.startswith(".")]  # .NAME.tmp-PID-RANDOM


class ModalWatchdog(QtCore.QObject):
    """A modal dialog would block a test forever: close any that appears and remember it."""

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self._check)
        self.timer.start(50)

    @QtCore.Slot()
    def _check(self) -> None:
        w = QtWidgets.QApplication.activeModalWidget()
        if w is not None:
            text = w.windowTitle()
            if isinstance(w, QtWidgets.QMessageBox):
                text += ": " + w.text()
            self.seen.append(text)
            if isinstance(w, QtWidgets.QDialog):
                w.reject()
            else:
                w.close()

    def stop(self) -> None:
        self.timer.stop()


@pytest.fixture
def modal_watchdog(qtbot):
    dog = ModalWatchdog()
    yield dog
    dog.stop()
    dog.deleteLater()


# --- 1. fuzzing --------------------------------------------------------------------------
LAM_BAD = ["-1", "abc", "nan", "inf", "2", "", "1e999", "--", "0.1.2", "1e-3x"]
ETA_BAD = ["0", "-0.1", "3", "x", "nan", "inf", ""]
M_BAD = ["0", "-3", "1.5", "1e12", "abc", "1e9", "", "nan"]
SIGMA_BAD = ["0", "-1", "nan", "1e7", "x", ""]
T_END_BAD = ["0", "-5", "x", "inf"]


class Fuzzer:
    def __init__(self, qtbot, win, tmp_path: Path, rng: random.Random, w0_file: Path, kinds: random.Random):
        self.qtbot, self.win, self.rng, self.kinds = qtbot, win, rng, kinds
        self.sessions_dir = tmp_path / "sessions"
        self.exports_dir = tmp_path / "exports"
        self.sessions_dir.mkdir()
        self.exports_dir.mkdir()
        self.saved: list[Path] = []
        self.w0_file = w0_file
        self.log: list[str] = []
        self.counts: dict[str, int] = {}
        self.recoveries = 0
        self.exports = 0
        c = win.controls
        # (weight, name, action)
        self.actions = [
            (8, "lam", self.lam_typed),
            (3, "lam_bad", lambda: self.typed_bad(c.lam, LAM_BAD)),
            (5, "lam_slider", self.lam_slider),
            (6, "method", self.method),
            (4, "eta", self.eta_typed),
            (2, "eta_bad", lambda: self.typed_bad(c.eta, ETA_BAD)),
            (4, "m", self.m_typed),
            (2, "m_bad", lambda: self.typed_bad(c.m, M_BAD)),
            (2, "sigma", self.sigma_typed),
            (2, "sigma_bad", lambda: self.typed_bad(c.sigma, SIGMA_BAD)),
            (2, "seed", self.seed),
            (2, "new_seed", c.new_seed.click),
            (4, "speed_slider", self.speed_slider),
            (3, "fastest", c.fastest.click),
            (2, "stop_kind", self.stop_kind),
            (2, "t_end", self.t_end),
            (10, "play_pause", self.play_pause),
            (6, "step", self.step),
            (4, "reset", self.reset),
            (3, "panel_toggle", self.panel_toggle),
            (1, "tracked", self.tracked_count),
            (3, "save_session", self.save_session),
            (2, "open_session", self.open_session),
            (0.6, "export_data", self.export_data),
            (0.4, "export_all", self.export_all),
            (1, "w0_file", self.w0_from_file),
            (1, "w0_normal", self.w0_normal),
            (1, "preset", self.preset),
            (1, "unstable_gd", self.unstable_gd),
            (2, "burst", self.burst),
            (1, "layout", self.layout),
        ]
        self.weights = [a[0] for a in self.actions]
        quick = {
            "lam",
            "lam_slider",
            "method",
            "eta",
            "m",
            "seed",
            "speed_slider",
            "fastest",
            "play_pause",
            "step",
            "reset",
            "new_seed",
        }
        self.quick = [a for a in self.actions if a[1] in quick]
        self.errors_seen = 0
        self.checks: list[str] = []

    # --- the actions ---------------------------------------------------------------------
    def lam_typed(self) -> str:
        r = self.rng.random()
        text = "0" if r < 0.05 else "1" if r < 0.07 else f"{10 ** self.rng.uniform(-4, -0.7):.3g}"
        type_keys(self.win.controls.lam, text)
        assert not self.win.controls.lam.error.isVisibleTo(self.win.controls), text
        return text

    def typed_bad(self, field, choices) -> str:
        if not field.isEnabled():
            return "disabled"
        text = self.rng.choice(choices)
        type_keys(field, text)
        # refused at the field: shown in red, nothing else changes
        assert field.error.isVisibleTo(self.win.controls) and field.error.text(), (field.name, text)
        return f"{field.name}={text!r}"

    def lam_slider(self) -> str:
        pos = self.rng.randint(0, 600)
        self.win.controls.lam_slider.setValue(pos)
        return str(pos)

    def method(self) -> str:
        combo = self.win.controls.method
        choose(combo, 1 - combo.currentIndex())
        return combo.currentData()

    def eta_typed(self) -> str:
        unstable = self.rng.random() < 0.08
        text = f"{self.rng.uniform(1.2, 2.0) if unstable else self.rng.uniform(0.01, 0.4):.3g}"
        type_keys(self.win.controls.eta, text)
        return text

    def m_typed(self) -> str:
        if not self.win.controls.m.isEnabled():
            return "disabled"
        text = str(self.rng.randint(50, 2000))
        type_keys(self.win.controls.m, text)
        return text

    def sigma_typed(self) -> str:
        if not self.win.controls.sigma.isEnabled():
            return "disabled"
        text = f"{self.rng.uniform(0.3, 1.5):.3g}"
        type_keys(self.win.controls.sigma, text)
        return text

    def seed(self) -> str:
        text = str(self.rng.randint(0, 10**6))
        type_keys(self.win.controls.seed, text)
        return text

    def speed_slider(self) -> str:
        slider = self.win.controls.speed_slider
        if not slider.isEnabled():
            return "disabled"
        slider.setValue(self.rng.randint(0, 600))
        return self.win.controls.speed_label.text()

    def stop_kind(self) -> str:
        combo = self.win.controls.stop_kind
        choose(combo, 1 - combo.currentIndex())
        return combo.currentData()

    def t_end(self) -> str:
        field = self.win.controls.t_end
        if not field.isEnabled():
            return "disabled"
        bad = self.rng.random() < 0.3
        text = self.rng.choice(T_END_BAD) if bad else f"{self.rng.uniform(1.0, 400.0):.4g}"
        type_keys(field, text)
        return text

    def play_pause(self) -> str:
        if self.rng.random() < 0.3:
            self.win.activateWindow()
            QTest.keyClick(self.win, QtCore.Qt.Key.Key_Space)
        else:
            self.win.act_play.trigger()
        return "playing" if self.win.playing else "paused"

    def step(self) -> str:
        if self.rng.random() < 0.3:
            QTest.keyClick(self.win, QtCore.Qt.Key.Key_Right)
        else:
            self.win.act_step.trigger()
        return ""

    def reset(self) -> str:
        if self.rng.random() < 0.3:
            QTest.keyClick(self.win, QtCore.Qt.Key.Key_R, QtCore.Qt.KeyboardModifier.ControlModifier)
        else:
            self.win.act_reset.trigger()
        return ""

    def panel_toggle(self) -> str:
        boxes = [b for p in self.win.panels for b in p.findChildren(QtWidgets.QCheckBox)]
        box = self.rng.choice(boxes)
        box.click()
        return box.text()

    def tracked_count(self) -> str:
        spin = self.win.panels[1].count
        spin.setValue(self.rng.randint(1, 16))
        return str(spin.value())

    def _ok_or_starting(self, ok: bool, what: str) -> None:
        # the only acceptable refusal: the run (just reset) has not produced a frame yet
        assert ok or "still starting" in self.win.last_error, (what, self.win.last_error)

    def save_session(self) -> str:
        path = self.sessions_dir / f"s{len(self.saved)}.json"
        ok = self.win.files.save_session(path)
        self._ok_or_starting(ok, "save_session")
        if ok:
            self.saved.append(path)
            json.loads(path.read_text())
        return str(ok)

    def open_session(self) -> str:
        if not self.saved:
            return "none saved"
        path = self.rng.choice(self.saved)
        assert self.win.files.open_session(path), self.win.last_error
        return path.name

    def export_data(self) -> str:
        kind = self.rng.choice(["timeseries", "weights", "deaths", "tracked", "run"])
        path = self.exports_dir / f"{kind}{self.exports}.{'json' if kind == 'run' else 'csv'}"
        self.exports += 1
        ok = self.win.exports.export_data(kind, path)
        self._ok_or_starting(ok, "export_data")
        assert ok == path.is_file()
        return f"{kind} {ok}"

    def export_all(self) -> str:
        folder = self.exports_dir / f"all{self.exports}"
        self.exports += 1
        # (PNG alone: what may go wrong here is the export beside the actions, not a format;
        # each format is test_export_all_formats.py's)
        ok = self.win.exports.export_all(folder, formats="png")
        self._ok_or_starting(ok, "export_all")
        if ok:
            # seven panels (six and the phase plane) as PNG, JSON and script, the window,
            # 4 CSVs, 2 JSONs
            assert len(list(folder.iterdir())) == 7 * 3 + 1 + 4 + 2
        return str(ok)

    def w0_from_file(self) -> str:
        assert self.win.files.load_w0(str(self.w0_file)), self.win.last_error
        return ""

    def w0_normal(self) -> str:
        choose(self.win.controls.init_kind, 0)
        return ""

    def unstable_gd(self) -> str:
        """Gradient descent with eta = 2 from a large W(0), from the start: the core stops it
        with a reason (an error the fuzz must then recover from)."""
        win = self.win
        choose(win.controls.method, 1)
        type_keys(win.controls.eta, "2")
        if win.controls.sigma.isEnabled():
            type_keys(win.controls.sigma, "3")
        win.act_reset.trigger()
        if not win.playing:
            win.act_play.trigger()
        try:  # (usually at the first step; not with W(0) from the file, or a tiny t_end)
            self.qtbot.waitUntil(
                lambda: (
                    win.snapshot is not None
                    and win.snapshot.run_id == win.run_id
                    and win.snapshot.state == "error"
                ),
                timeout=3000,
            )
        except self.qtbot.TimeoutError:
            return "no error"
        return "error"

    def burst(self) -> str:
        """Several changes with no event processing in between (the latest must win)."""
        names = []
        for _ in range(self.rng.randint(3, 8)):
            _w, name, action = self.rng.choices(self.quick, weights=[a[0] for a in self.quick])[0]
            action()
            names.append(name)
        return " ".join(names)

    def layout(self) -> str:
        win = self.win
        if self.rng.random() < 0.5:
            win.note_dock.toggleViewAction().trigger()
        else:
            win.act_reset_layout.trigger()
        return ""

    def preset(self) -> str:
        assert self.win.files.apply_preset("Quick demo"), self.win.last_error
        return ""

    # --- driving -----------------------------------------------------------------------------
    def check_no_error(self) -> None:
        """An error state is only acceptable as the core's own diagnosis of an unstable
        gradient descent (not a crash); then a reset with a sane eta must recover."""
        snap = self.win.snapshot
        if snap is None or snap.state != "error":
            return
        msg = snap.message
        self.errors_seen += 1
        assert msg.startswith("gradient descent is unstable") and "Traceback" not in msg, (
            "the worker failed:\n" + msg + "\nlast actions:\n" + "\n".join(self.log[-25:])
        )
        self.recover()

    def recover(self) -> None:
        """Make the run sane (a stable eta, a moderate lam and W(0)), reset, play."""
        win = self.win
        self.recoveries += 1
        self.log.append("-- recover: sane eta, lam and sigma, reset, play")
        if getattr(win, "error_box", None) is not None:
            win.error_box.close()
        if win.params.eta >= 0.5:
            type_keys(win.controls.eta, "0.1")
        if win.params.lam > 0.05:
            type_keys(win.controls.lam, "0.01")
        if win.params.sigma > 1.5 and win.controls.sigma.isEnabled():
            type_keys(win.controls.sigma, "0.9")
        win.act_reset.trigger()
        win.set_playing(True)
        try:
            self.qtbot.waitUntil(
                lambda: (
                    win.snapshot is not None
                    and win.snapshot.run_id == win.run_id
                    and win.snapshot.state in ("running", "finished")
                ),
                timeout=TIMEOUT,
            )
        except self.qtbot.TimeoutError:
            snap = win.snapshot
            pytest.fail(
                f"no recovery: window run {win.run_id} playing={win.playing} params={win.params}; "
                f"runner run {win.runner.run_id} state={win.runner.state!r}; snapshot run "
                f"{snap.run_id} state={snap.state!r} t={snap.t} message={snap.message[:300]!r}\n"
                + "\n".join(self.log[-25:])
            )

    def wait_for_the_run(self) -> None:
        """The worker takes the window's newest run (a pending start is never lost: see
        test_a_live_change_right_after_a_reset_does_not_lose_the_reset); if it does not, the
        status check that follows fails and says why."""
        with contextlib.suppress(self.qtbot.TimeoutError):
            self.qtbot.waitUntil(lambda: self.win.runner.run_id == self.win.run_id, timeout=3000)

    def run(self, n: int, check_every: int) -> None:
        win = self.win
        for i in range(n):
            _w, name, action = self.kinds.choices(self.actions, weights=self.weights)[0]
            detail = action()
            self.counts[name] = self.counts.get(name, 0) + 1
            self.log.append(f"{i}: {name} {detail}")
            self.qtbot.wait(self.rng.randint(1, 10))
            self.check_no_error()
            if (i + 1) % check_every == 0:
                win.set_playing(False)
                self.wait_for_the_run()
                check_status_agrees_with_core(self.qtbot, win, f"after action {i} ({name})", self.log)
                self.checks.append(f"{win.snapshot.state}/{win.runner.sim.method}/m={win.runner.sim.m}")
                self.check_no_error()
                if self.rng.random() < 0.7:
                    win.act_play.trigger()


@pytest.mark.slow  # about 30 s here with the other core busy; the suite's 600 s bounds a hang
def test_fuzz_random_actions(qtbot, make_window, tmp_path, modal_watchdog):
    """64 seeded random actions: typed values (valid and refused), sliders, method and
    stop switches, speed incl. as fast as possible, play/pause/step/reset (toolbar and
    keys), new runs with small m, new seeds, W(0) from a file and back, sessions saved and
    reopened, a few exports. No exception may escape (pytest-qt fails the test on one in
    a Qt slot), the worker never fails (the only error allowed is the core's verdict on an
    unstable gradient descent, which a reset with a sane eta must cure), no modal dialog
    blocks, no temporary file is left, and every 16 actions the paused status bar shows
    exactly the core's t, m', ||W||^2, ||W||_1 and theta, painted from the newest snapshot."""
    rng = random.Random(SEED)
    w0_file = tmp_path / "w0.npy"
    np.save(w0_file, np.random.default_rng(7).standard_normal(300) * 0.9 / math.sqrt(300))
    win = make_window(SimParams(m=500, lam=1e-2, seed=1), speed=5.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0, timeout=TIMEOUT)
    fuzz = Fuzzer(qtbot, win, tmp_path, rng, w0_file, random.Random(KIND_SEED))
    start = time.perf_counter()
    fuzz.run(N_ACTIONS, check_every=CHECK_EVERY)
    check_status_agrees_with_core(qtbot, win, "at the end")
    elapsed = time.perf_counter() - start
    assert not modal_watchdog.seen, f"a modal dialog blocked the GUI: {modal_watchdog.seen}"
    assert not temp_files(tmp_path / "exports"), "a temporary file was left behind"
    assert not temp_files(tmp_path / "sessions")
    # every kind of action was exercised
    assert set(fuzz.counts) == {name for _w, name, _a in fuzz.actions}, fuzz.counts
    assert 2 <= fuzz.counts["export_data"] + fuzz.counts["export_all"] <= 6, fuzz.counts
    print(
        f"\nfuzz: {N_ACTIONS} actions in {elapsed:.1f} s, {fuzz.errors_seen} errors seen, "
        f"{fuzz.recoveries} recoveries, "
        f"counts {dict(sorted(fuzz.counts.items()))}, status checks {fuzz.checks}"
    )
    assert fuzz.recoveries >= 1, "an unstable gradient descent was stopped and recovered from"
    assert len(fuzz.checks) >= N_ACTIONS // CHECK_EVERY
    assert win.thread.is_alive(), "the worker is still there"


def test_a_live_change_right_after_a_reset_does_not_lose_the_reset(qtbot, make_window):
    """Ctrl+R and then at once a lambda change (before the worker looked at its mailbox):
    the reset must happen and the window must keep showing the run."""
    win = make_window(SimParams(m=20_000, lam=1e-3, method="gd", eta=0.05), speed=0.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0, timeout=TIMEOUT)
    slider = win.controls.lam_slider
    lost = 0
    for attempt in range(5):
        # A user is faster than the worker only sometimes; make it every time: keep the
        # interpreter from switching to the worker thread between the two commands.
        switch = sys.getswitchinterval()
        sys.setswitchinterval(1.0)
        try:
            win.restart()  # what Ctrl+R does
            slider.setValue(slider.value() + (10 if attempt % 2 == 0 else -10))  # a live change
        finally:
            sys.setswitchinterval(switch)
        try:
            qtbot.waitUntil(lambda: win.snapshot.run_id == win.run_id, timeout=3000)
        except qtbot.TimeoutError:
            lost += 1
            break
    assert lost == 0, (
        f"the window waits for run {win.run_id} but the worker runs "
        f"{win.runner.run_id}: every snapshot is dropped, the display is frozen"
    )


def test_the_lost_reset_in_the_runner_mailbox_deterministically():
    """The same bug without threads or timing: the Runner stepped synchronously."""
    params = SimParams(m=200, lam=1e-2, seed=3)
    runner = Runner(params, playing=True, speed=1.0, run_id=1, warm_up=False)
    for k in range(3):
        runner.step_once(now=float(k))
    assert runner.run_id == 1 and runner.sim.t > 0
    runner.start_run(params, 2)  # the window's reset: a new run, run id 2
    runner.set_params(params.with_changes(lam=2e-2))  # a live change right after it
    runner.step_once(now=3.0)
    assert runner.run_id == 2, (
        f"the reset was lost: the worker stays on run {runner.run_id} at t = {runner.sim.t:g}"
    )
    assert runner.sim.t == 0.0 and runner.sim.lam == 2e-2


def test_a_repeated_error_pauses_the_window_again(qtbot, make_window):
    win = make_window(SimParams(m=300, lam=1e-2, method="gd", eta=2.0, sigma=3.0), speed=0.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.state == "error", timeout=TIMEOUT)
    first = win.snapshot.message
    assert not win.playing and win.error_box.isVisible()
    win.error_box.close()
    win.restart()
    win.set_playing(True)  # the user tries again: same parameters, same failure
    qtbot.waitUntil(
        lambda: win.snapshot.run_id == win.run_id and win.snapshot.state == "error", timeout=TIMEOUT
    )
    assert win.snapshot.message == first  # the same text, in a new run
    qtbot.wait(100)
    assert not win.playing, "the window says 'playing' while the worker has stopped"
    assert win.error_box.isVisible(), "the second failure is not shown"


# --- 2. faults in the worker ------------------------------------------------------------------
def inject_record_fault(monkeypatch):
    """FAULT INJECTION (the one place these tests patch our own code): the core has no
    genuine way to fail mid-run, so Simulation.record raises while `armed` is set. Returns
    (armed, names of the threads it raised in)."""
    armed = threading.Event()
    raised_in: list[str] = []
    original_record = Simulation.record

    def failing_record(self, *args, **kwargs):
        if armed.is_set():
            raised_in.append(threading.current_thread().name)
            raise FloatingPointError("injected fault in Simulation.record")
        return original_record(self, *args, **kwargs)

    monkeypatch.setattr(Simulation, "record", failing_record)
    return armed, raised_in


def test_a_fault_in_the_worker_reaches_the_gui_and_the_app_recovers(qtbot, make_window, monkeypatch):
    """An exception raised inside the simulation thread, mid-run, reaches the GUI as an
    error state with the exception and its traceback, pauses the window, shows a non-modal
    box, and the app stays usable: the worker thread lives on, a reset starts a clean run
    that runs, and closing joins the thread (fixture).

    FAULT INJECTION: Simulation.record (called by the worker after every chunk) is wrapped
    to raise once armed (and a second time in the xfail test after this one); no other mock
    in this file. The genuine faults found (a W(0) the core cannot simulate, a W(0) file
    gone: test_a_run_the_core_cannot_build_shows_an_error) all happen while a run is being
    built, where a bug keeps them from the GUI; none happens mid-run."""
    win = make_window(SimParams(m=500, lam=1e-2, seed=2), speed=5.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0.2, timeout=TIMEOUT)
    run_id = win.run_id
    armed, raised_in = inject_record_fault(monkeypatch)
    armed.set()
    qtbot.waitUntil(lambda: win.snapshot.state == "error", timeout=TIMEOUT)
    armed.clear()
    assert raised_in and set(raised_in) == {"simulation"}, "raised in the worker thread"
    snap = win.snapshot
    assert snap.run_id == run_id
    first, _, details = snap.message.partition("\n\n")
    assert first == "FloatingPointError: injected fault in Simulation.record"
    assert "Traceback (most recent call last)" in details and "in step_once" in details
    assert "in failing_record" in details
    # the GUI: paused, the state in the status bar, a non-modal box with the details
    assert not win.playing and win.act_play.text() == "Play"
    qtbot.waitUntil(lambda: win.status_labels["state"].text() == "error", timeout=TIMEOUT)
    box = win.error_box
    assert box.isVisible() and not box.isModal()
    assert box.text() == first and "Traceback" in box.detailedText()
    # nothing hangs: the worker is alive and answers; the stopped run stays where it was
    assert win.thread.is_alive()
    t_error = snap.t
    win.set_playing(True)  # play does not resume a failed run (a reset or a change does)
    qtbot.wait(200)
    assert win.snapshot.t == t_error and win.snapshot.state == "error"
    win.set_playing(False)
    # a reset starts a clean run that runs
    box.close()
    win.act_reset.trigger()
    win.set_playing(True)
    qtbot.waitUntil(
        lambda: (
            win.snapshot.run_id == win.run_id and win.snapshot.state == "running" and win.snapshot.t > 0.2
        ),
        timeout=TIMEOUT,
    )
    assert win.snapshot.message == "" and win.runner.sim.history.appended >= 2  # t(0) + a chunk
    check_status_agrees_with_core(qtbot, win, "after recovering from a fault")


def test_a_single_step_does_not_advance_a_failed_run(qtbot, make_window, monkeypatch):
    win = make_window(SimParams(m=500, lam=1e-2, seed=2), speed=5.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0.2, timeout=TIMEOUT)
    armed, _ = inject_record_fault(monkeypatch)
    armed.set()
    qtbot.waitUntil(lambda: win.snapshot.state == "error", timeout=TIMEOUT)
    armed.clear()
    t_error = win.snapshot.t
    win.single_step()
    qtbot.wait(200)
    assert win.snapshot.t == t_error, "a single step moved the failed run on"


TINY_W0 = np.array([3e-200, -2e-200, 1e-200, 5e-201])


def test_a_tiny_but_finite_w0_is_refused_with_a_reason():
    """Weights whose squares underflow: nothing can be said about them in double precision."""
    with pytest.raises(InputError, match="below 1e-100"):
        Simulation(SimParams(m=TINY_W0.size, lam=1e-2, w0_path="tiny.npy"), TINY_W0)


@pytest.mark.parametrize("fault", ["tiny_w0", "w0_file_gone"])
def test_a_run_the_core_cannot_build_shows_an_error(qtbot, make_window, tmp_path, fault):
    """Genuine faults in the worker while it builds a new run:
    tiny_w0: W(0) loaded from a file whose weights are all ~1e-200 (finite, so the file is
        accepted); the worker refuses to build the run (see the test above).
    w0_file_gone: a window whose W(0) is read from its file at every reset (built with
        w0_path and no array); the file is deleted, then Reset: InputError 'no such file'.
    The GUI must show the error for the new run, and choosing a normal W(0) again must
    start a run that runs."""
    path = tmp_path / "w0.npy"
    if fault == "tiny_w0":
        np.save(path, TINY_W0)
        win = make_window(SimParams(m=300, lam=1e-2), speed=5.0)
        qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0, timeout=TIMEOUT)
        assert win.files.load_w0(str(path)), win.last_error
        needle = "every |W_k| is below 1e-100"
    else:
        np.save(path, np.random.default_rng(3).standard_normal(200) * 0.06)
        win = make_window(SimParams(m=200, lam=1e-2, w0_path=str(path)), speed=5.0)
        qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0, timeout=TIMEOUT)
        path.unlink()
        win.act_reset.trigger()
        needle = "no such file"
    qtbot.waitUntil(lambda: win.runner.state == "error", timeout=TIMEOUT)  # the worker failed ...
    try:  # ... and the window must say so
        qtbot.waitUntil(
            lambda: win.snapshot.run_id == win.run_id and win.snapshot.state == "error", timeout=3000
        )
    finally:
        print(
            f"\nwindow run {win.run_id}, worker run {win.runner.run_id}, snapshot run "
            f"{win.snapshot.run_id} state {win.snapshot.state!r}; worker message: "
            f"{win.runner.message.splitlines()[0]!r}"
        )
    assert needle in win.snapshot.message
    assert not win.playing and win.error_box.isVisible()
    qtbot.waitUntil(lambda: win.status_labels["state"].text() == "error", timeout=TIMEOUT)
    win.error_box.close()
    choose(win.controls.init_kind, 0)  # back to a normal draw: a new run
    win.set_playing(True)
    qtbot.waitUntil(
        lambda: win.snapshot.run_id == win.run_id and win.snapshot.state == "running" and win.snapshot.t > 0,
        timeout=TIMEOUT,
    )


def test_an_overflowing_w0_is_reported_not_stuck():
    w0 = np.array([1e200, -3e199, 1.0, 0.5])
    runner = Runner(SimParams(m=w0.size, lam=1e-2, w0_path="huge.npy"), w0, speed=0.0, warm_up=False)
    for _ in range(200):
        runner.step_once()
    assert runner.state == "error" or runner.sim.t > 0, (
        f"stuck: state {runner.state!r}, t = {runner.sim.t}, {runner.sim.moments()}"
    )


# --- 3. closing at bad moments --------------------------------------------------------------
def assert_only_complete_files(folder: Path) -> list[str]:
    """Every file in the folder is whole (parses as what it claims to be); no temporary
    or hidden leftovers. Returns the names."""
    if not folder.exists():
        return []
    names = sorted(p.name for p in folder.iterdir())
    assert not temp_files(folder), f"partial/temporary files left: {temp_files(folder)}"
    for path in folder.iterdir():
        assert path.is_file() and path.stat().st_size > 0, path
        suffix = path.suffix
        if suffix == ".png":
            image = QtGui.QImage(str(path))
            assert not image.isNull() and image.width() > 50, path
        elif suffix == ".svg":
            ET.parse(path)  # whole XML
        elif suffix == ".json":
            json.loads(path.read_text())
        elif suffix == ".pdf":
            assert path.read_bytes().startswith(b"%PDF"), path
        elif suffix == ".py":
            compile(path.read_text(), str(path), "exec")  # a whole script
        elif suffix == ".csv":
            lines = path.read_text().splitlines()
            widths = {line.count(",") for line in lines}
            assert len(lines) >= 2 and len(widths) == 1 and path.read_text().endswith("\n"), path
        else:
            pytest.fail(f"unexpected file {path.name}")
    return names


@pytest.mark.parametrize("delay_ms", [0, 30, 250])
def test_closing_during_export_all_while_running_flat_out(qtbot, make_window, tmp_path, delay_ms):
    """The window is closed (as by its close button) a moment after Export all started,
    while the worker runs as fast as possible. Closing joins the worker; the export then
    finishes or stops, and the folder holds only whole files, never a partial or temporary
    one."""
    win = make_window(SimParams(m=2000, lam=3e-3, seed=5, method="gd", eta=0.02), speed=0.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 1, timeout=TIMEOUT)
    out = tmp_path / "export"
    events: dict[str, float] = {}

    def close_now():
        events["close_start"] = time.perf_counter()
        events["export_running_at_close"] = job.running
        win.close()
        events["closed"] = time.perf_counter()
        events["worker_alive_after_close"] = win.thread.is_alive()

    events["export_start"] = time.perf_counter()
    assert win.exports.export_all(out, wait=False)  # started, as from the menu
    job = win.exports.job
    QtCore.QTimer.singleShot(delay_ms, close_now)
    qtbot.waitUntil(lambda: "closed" in events, timeout=TIMEOUT)
    assert job.outcome is not None  # closing joined the export and handed over its end
    ok = job.outcome.ok
    names = assert_only_complete_files(out) if out.exists() else []  # a cancelled export: none
    print(
        f"\ndelay {delay_ms} ms: export {'ok' if ok else 'stopped: ' + win.last_error}, "
        f"{len(names)} files, close {events['close_start'] - events['export_start']:.2f} s after it "
        f"started, close took {events['closed'] - events['close_start']:.3f} s"
    )
    assert events["export_running_at_close"], "the close came during the export"
    assert not events["worker_alive_after_close"] and not win.thread.is_alive()
    assert not win.isVisible() and not win.paint_timer.isActive()
    assert events["closed"] - events["close_start"] < 5.0
    if ok:
        assert len(names) == 35  # 7 panels x PNG, SVG, JSON, .py; the window, 4 CSVs, 2 JSONs
    else:
        assert win.last_error
    # the export's helper threads are gone too (and the fixture checks no thread is left)
    assert not [t for t in threading.enumerate() if t.name == "export"]


def test_closing_while_flat_out_and_a_large_run_is_being_built(qtbot, make_window):
    """Closing right after asking for a new run of 3*10^6 weights (the worker is drawing and
    sorting them), while the previous run goes as fast as possible: the close waits for
    the worker and joins it, well within the deadline."""
    win = make_window(SimParams(m=200_000, lam=1e-3, method="gd", eta=0.05), speed=0.0)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.snapshot.t > 0.5, timeout=TIMEOUT)
    type_keys(win.controls.m, "3000000")
    assert win.params.m == 3_000_000
    qtbot.wait(30)
    start = time.perf_counter()
    win.close()
    took = time.perf_counter() - start
    # joined, not abandoned at the close's deadline (a time bound here would only measure
    # how busy the machine is: benchmarks/ measure speed)
    assert not win.thread.is_alive()
    print(f"\nclose took {took:.2f} s")


def test_closing_while_a_long_session_replays_is_prompt(qtbot, make_window, tmp_path):
    params = SimParams(m=20_000, lam=0.0, method="gd", eta=0.01, t_end=1e6)
    win = make_window(params, speed=1.0, playing=False)
    qtbot.waitUntil(lambda: win.snapshot is not None and win.runner.sim is not None, timeout=TIMEOUT)
    win.single_step()
    qtbot.waitUntil(lambda: win.snapshot.t > 0, timeout=TIMEOUT)
    session = tmp_path / "long.json"
    assert win.files.save_session(session), win.last_error
    obj = json.loads(session.read_text())
    obj["t"] = 4e4  # 4*10^6 steps of 20,000 weights: a replay of a few seconds
    session.write_text(json.dumps(obj))
    assert win.files.open_session(session), win.last_error
    qtbot.wait(300)  # the worker is replaying now
    start = time.perf_counter()
    win.close()
    took = time.perf_counter() - start
    win.thread.join(60)  # (whatever happens, leave no thread behind)
    print(f"\nclose during the replay took {took:.2f} s")
    # the close abandoned the replay instead of waiting for its end: the worker never got
    # the replayed run (a bound on `took` would fail on a busy machine, not on a defect)
    assert not win.thread.is_alive()
    assert win.runner.sim is not None and win.runner.sim.t < 1.0, "the close waited for the replay"


# --- 4. large m through the real entry point -------------------------------------------------
# The child: `python -m sparsity_gui ARGS` exactly (runpy.run_module with alter_sys is what
# `-m` runs), plus a 20 ms heartbeat QTimer on the GUI thread that notes how late it fires
# and what the status bar says. It adds nothing to the app: it only watches it, and closes
# the window as a user would once it has seen ENOUGH texts of progress (the app's
# --quit-after is only the deadline: how much a run does in a given wall time is the
# machine's load, not the app).
HEARTBEAT_CHILD = textwrap.dedent(r"""
    import json, os, runpy, sys, time
    from PySide6 import QtCore, QtWidgets
    app = QtWidgets.QApplication([sys.argv[0]])   # gui_main takes the existing instance
    beats, texts, labels = [], [], {}
    enough = int(os.environ.get("HEARTBEAT_ENOUGH", "0"))
    def progress():
        return sum("m' = " in t and int(t.split("m' = ")[1].replace(",", "")) < 10_000_000 for t in texts)
    def beat():
        beats.append(time.perf_counter())
        if enough and progress() >= enough:
            for w in app.topLevelWidgets():
                if w.isWindow() and w.isVisible():
                    w.close()
            return
        if not labels:
            for w in app.topLevelWidgets():
                for key in ("t", "nonzero"):
                    found = w.findChild(QtWidgets.QLabel, f"status_{key}")
                    if found is not None:
                        labels[key] = found
        try:
            text = " | ".join(labels[k].text() for k in ("t", "nonzero")) if labels else ""
        except RuntimeError:  # the window is gone
            return
        if text and (not texts or texts[-1] != text):
            texts.append(text)
    timer = QtCore.QTimer()
    timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
    timer.timeout.connect(beat)
    timer.start(20)
    sys.argv = ["sparsity_gui", *sys.argv[1:]]
    try:
        runpy.run_module("sparsity_gui", run_name="__main__", alter_sys=True)
    finally:
        timer.stop()
        gaps = [b - a for a, b in zip(beats, beats[1:])]
        print("HEARTBEAT " + json.dumps({"beats": len(beats), "max_gap": max(gaps, default=None),
                                         "texts": texts}))
""")

# The wrapper: runs the child and reports its peak resident memory. RUSAGE_CHILDREN is the
# maximum over all waited-for children of a process, so a fresh wrapper with one child
# measures exactly that child.
MAXRSS_WRAPPER = textwrap.dedent(r"""
    import json, resource, subprocess, sys, time
    start = time.perf_counter()
    proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
    wall = time.perf_counter() - start
    kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    print(json.dumps({"rc": proc.returncode, "maxrss": kib * 1024, "wall": wall,
                      "stdout": proc.stdout, "stderr": proc.stderr}))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB is Linux's")
def test_ten_million_weights_through_the_entry_point(tmp_path):
    """`python -m sparsity_gui --m 10000000`, closed once the run has shown progress: exit
    status 0, nothing on stderr, peak resident memory under 2 GB, and the GUI thread kept ticking while the
    worker drew, sorted and solved 10^7 weights: the status bar went on changing and m'
    fell below 10^7."""
    child = tmp_path / "child.py"
    child.write_text(HEARTBEAT_CHILD)
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(MAXRSS_WRAPPER)
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "SPARSITY_GUI_SETTINGS": str(tmp_path / "settings.ini"),
        "SPARSITY_GUI_CONFIG_DIR": str(tmp_path / "config"),
        "HEARTBEAT_ENOUGH": "5",  # closes the window after 5 status texts with m' < 10^7
    }
    proc = subprocess.run(
        [
            sys.executable,
            str(wrapper),
            sys.executable,
            str(child),
            "--m",
            "10000000",
            "--quit-after",
            "240000",
        ],
        capture_output=True,
        text=True,
        timeout=400,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["rc"] == 0, report["stderr"]
    assert report["stderr"] == "", report["stderr"]
    peak = report["maxrss"]
    beat_line = [line for line in report["stdout"].splitlines() if line.startswith("HEARTBEAT ")]
    beat = json.loads(beat_line[-1].removeprefix("HEARTBEAT "))
    print(
        f"\nm = 10^7: peak RSS {peak / 2**30:.2f} GiB, wall {report['wall']:.1f} s, "
        f"{beat['beats']} heartbeats, longest stall {beat['max_gap']:.3f} s, "
        f"{len(beat['texts'])} status texts, last {beat['texts'][-1] if beat['texts'] else None!r}"
    )
    assert peak < 2 * 10**9, f"peak resident memory {peak / 1e9:.2f} GB"
    # responsive: the GUI thread's heartbeat kept firing while the worker built and solved
    # the run. How long its longest stall was depends on the machine's load as much as on the
    # code (2-10 s at a load of 20 on 2 cores, for this code and the code before it), so it
    # is printed above and held to its goal by `benchmarks/bench_gui.py --typed-m-child`,
    # not asserted here.
    assert beat["beats"] >= 5, beat
    # and what it saw: the status bar kept changing and the run made progress, 5 texts of it
    # before the close (not a rate: that is the machine's load)
    assert len(beat["texts"]) >= 5, beat["texts"]
    nonzero = [int(t.split("m' = ")[1].replace(",", "")) for t in beat["texts"] if "m' = " in t]
    # the first text may already be past t = 0 when the machine is loaded (9,980,000 once)
    assert nonzero[0] <= 10_000_000 and nonzero[-1] < 10_000_000, nonzero
    assert nonzero == sorted(nonzero, reverse=True), nonzero


# --- 5. long runs ------------------------------------------------------------------------
def test_a_long_gd_run_keeps_history_and_memory_bounded():
    """A gradient-descent run stepped through Runner.step_once (the worker's own loop body,
    synchronously, with a virtual wall clock) one step a chunk for 13,000 chunks, past one
    weight left: the history never holds more than its capacity, its buffer never grows,
    while rows appended pass the capacity 3 times (each chunk's row of now; the rows kept
    are the time grid's); snapshots stay bounded; traced memory does not grow; and every
    weight that died has a finite death time on the GD grid (the survivors none)."""
    import tracemalloc

    eta = 1e-2
    params = SimParams(m=400, lam=1e-2, seed=11, method="gd", eta=eta)
    t_one = Simulation(params).time_to_nonzero(1)  # ~100 (exact flow)
    dt, steps_per_chunk = 0.01, 1
    runner = Runner(params, playing=True, speed=steps_per_chunk * eta / dt, stop_at_one=False)
    runner.step_once(now=0.0)  # warm-up, build the run
    sim = runner.sim
    cap, nbytes = sim.history.capacity, sim.history.nbytes
    n_chunks = int(1.3 * t_one / (steps_per_chunk * eta)) + 1
    max_len = 0
    # traced from a little before the third (tracing triples a chunk's time): growth from
    # there on is what is measured, and objects made earlier could only shrink it
    trace_from = n_chunks // 3 - 300
    try:
        for k in range(1, n_chunks + 1):
            if k == trace_from:
                tracemalloc.start()
            assert runner.step_once(now=k * dt)
            max_len = max(max_len, len(sim.history))
            if k % 97 == 0:
                assert sim.history.nbytes == nbytes
                snap = runner.take_latest()  # (lets the next chunk publish again)
                assert snap is not None and snap.history.shape[0] <= cap
            if k == n_chunks // 3:
                traced_third = tracemalloc.get_traced_memory()[0]
        traced_end = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert runner.sim is sim and runner.state == "running", runner.message
    assert sim.history.appended >= 3 * cap, (sim.history.appended, cap)
    assert max_len <= cap and len(sim.history) <= cap
    assert sim.history.nbytes == nbytes
    # a healthy run's traced memory moves by about 12 KB, however long it goes; the bound
    # catches a leak of 30 bytes a chunk over the ~9,000 chunks traced
    assert traced_end - traced_third < 2**18, "memory grew while the run went on"
    rows = sim.history.array()
    assert rows[0, 0] == 0.0 and np.all(np.diff(rows[:, 0]) > 0) and rows[-1, 0] == sim.t
    # the run went past one weight left, on the grid t = eta * steps
    assert sim.t >= 1.2 * t_one and sim.moments().nonzero == 1
    assert sim.t == pytest.approx(eta * sim.solver.steps, rel=1e-12)
    # deaths: every dead weight has a finite time, in (0, t], on the step grid; survivors NaN
    w, death = sim.solver.weights(), sim.solver.death_times()
    dead = w == 0.0
    assert dead.sum() == params.m - 1
    assert np.all(np.isfinite(death[dead])) and np.all((death[dead] > 0) & (death[dead] <= sim.t))
    assert np.all(np.isnan(death[~dead]))
    steps = death[dead] / eta
    np.testing.assert_allclose(steps, np.round(steps), rtol=0, atol=1e-6)
    # a smaller |W(0)| never dies later
    u = np.abs(sim.init.w0[dead])
    assert np.all(np.diff(death[dead][np.argsort(u)]) >= 0)
