"""ui/background.py, the one way work runs beside the GUI: a real worker thread, a real Qt
timer; progress and the end handed to the GUI thread (latest progress wins, the end exactly
once), Cancel through the work's own checks, errors kept for the GUI to say, and a join for
a caller that wants the answer at once."""

from __future__ import annotations

import threading

import pytest
from PySide6 import QtCore

from sparsity_gui.ui.background import BackgroundJob, JobCancelled, JobOutcome

TIMEOUT = 20_000


@pytest.fixture
def owner(qtbot):
    obj = QtCore.QObject()
    yield obj
    for job in obj.findChildren(BackgroundJob):
        job.shutdown()
    obj.deleteLater()


def test_progress_and_the_end_arrive_on_the_gui_thread(qtbot, owner):
    gui = threading.current_thread()
    release = threading.Event()
    seen: dict[str, list] = {"progress": [], "done": [], "threads": []}

    def work(job: BackgroundJob) -> str:
        seen["threads"].append(threading.current_thread())
        for i in range(1, 6):
            job.report((i, f"piece {i}"))
        release.wait(10)
        return "value"

    def on_progress(state) -> None:
        seen["progress"].append((state, threading.current_thread()))

    def on_done(outcome: JobOutcome) -> None:
        seen["done"].append((outcome, threading.current_thread()))

    job = BackgroundJob(owner, work, name="unit", on_done=on_done, on_progress=on_progress).start()
    assert job.running
    qtbot.waitUntil(lambda: bool(seen["progress"]) and seen["progress"][-1][0][0] == 5, timeout=TIMEOUT)
    assert not seen["done"] and job.running  # the work waits: not over yet
    release.set()
    qtbot.waitUntil(lambda: not job.running, timeout=TIMEOUT)
    qtbot.wait(3 * 50)  # more ticks of the timer: the end is said once only
    ((outcome, thread),) = seen["done"]
    assert outcome.ok and outcome.value == "value" and outcome is job.outcome
    assert thread is gui and all(t is gui for _s, t in seen["progress"])
    assert seen["threads"][0] is not gui and seen["threads"][0].name == "unit"
    # latest wins: the GUI saw some of the reports, in order, the last one among them
    numbers = [s[0] for s, _t in seen["progress"]]
    assert numbers == sorted(numbers) and numbers[-1] == 5 and len(numbers) <= 5


def test_cancel_stops_the_work_at_its_next_check(qtbot, owner):
    checks = []
    started = threading.Event()

    def work(job: BackgroundJob) -> None:
        started.set()
        while True:  # the work only ends through its check
            checks.append(1)
            job.check()
            threading.Event().wait(0.005)

    ends: list[JobOutcome] = []
    job = BackgroundJob(owner, work, name="unit", on_done=ends.append).start()
    assert started.wait(10)
    job.cancel()
    qtbot.waitUntil(lambda: bool(ends), timeout=TIMEOUT)
    (outcome,) = ends
    assert outcome.cancelled and isinstance(outcome.error, JobCancelled) and not outcome.ok
    assert checks


def test_an_error_is_kept_for_the_gui_and_a_late_cancel_does_not_undo_a_success(qtbot, owner):
    ends: list[JobOutcome] = []

    def fails(job: BackgroundJob) -> None:
        raise OSError(28, "No space left on device", "/full/disk/file.csv")

    job = BackgroundJob(owner, fails, name="unit", on_done=ends.append).start()
    qtbot.waitUntil(lambda: bool(ends), timeout=TIMEOUT)
    assert isinstance(ends[0].error, OSError) and not ends[0].cancelled and not ends[0].ok
    assert ends[0].error.filename == "/full/disk/file.csv"

    finished = threading.Event()

    def quick(job: BackgroundJob) -> int:
        finished.set()
        return 7

    job = BackgroundJob(owner, quick, name="unit", on_done=ends.append).start()
    assert finished.wait(10)
    job.cancel()  # after the work's last check: its result stands
    qtbot.waitUntil(lambda: len(ends) == 2, timeout=TIMEOUT)
    assert ends[1].ok and ends[1].value == 7


def test_wait_joins_and_hands_the_end_over_at_once(owner):
    ends: list[JobOutcome] = []
    job = BackgroundJob(owner, lambda job: sum(range(1000)), name="unit", on_done=ends.append).start()
    outcome = job.wait(10)
    assert outcome is not None and outcome.value == 499500 and ends == [outcome]
    assert job.wait(10) is outcome and ends == [outcome]  # once only
    # shutdown: cancel and join, the end said
    release = threading.Event()

    def waits(job: BackgroundJob) -> None:
        while not release.wait(0.005):
            job.check()

    job = BackgroundJob(owner, waits, name="unit", on_done=ends.append).start()
    job.shutdown(10)
    assert not job.running and ends[-1].cancelled
    assert not [t for t in threading.enumerate() if t.name == "unit"]
