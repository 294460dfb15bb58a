"""What both simulation loops share (core.runner.Runner for the note's model,
core.interference_worker.InterferenceWorker for the interference model): commands arrive
from any thread in a latest-wins mailbox, and the newest result snapshot waits in
``latest`` until the GUI's paint timer takes it. Qt-free."""
from __future__ import annotations

import threading
from typing import Any


class MailboxEngine:
    """Subclasses give a mailbox dataclass (with at least ``playing`` and ``steps``
    fields), read it with `_take_mail` in their loop, and hand snapshots to `_offer`."""

    def __init__(self, mail: Any):
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._mail = mail
        self.latest: Any = None
        self._taken = True  # the GUI has taken the latest snapshot: a new one is worth making

    # --- commands (any thread) -----------------------------------------------------------
    def _post(self, **fields: Any) -> None:
        with self._lock:
            for name, value in fields.items():
                setattr(self._mail, name, value)
        self._wake.set()

    def play(self, playing: bool = True) -> None:
        self._post(playing=playing)

    def single_step(self) -> None:
        with self._lock:
            self._mail.steps += 1
            self._mail.playing = False
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def take_latest(self) -> Any:
        with self._lock:
            self._taken = True
            return self.latest

    # --- the loop's side -----------------------------------------------------------------
    def _take_mail(self) -> Any:
        """Everything posted since the last call, as one mailbox (the fields that were not
        posted keep their empty defaults)."""
        with self._lock:
            mail = self._mail
            self._mail = type(mail)()
        return mail

    def _wants_snapshot(self) -> bool:
        with self._lock:
            return self._taken

    def _offer(self, snapshot: Any) -> None:
        with self._lock:
            self.latest = snapshot
            self._taken = False
