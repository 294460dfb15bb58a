"""Settings for every test: Qt never opens a real display, and no test may leave a thread
running."""

import os
import threading

import pytest

# Qt must never try to open a real display in tests.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    before = {t.ident for t in threading.enumerate()}
    yield
    left = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    assert not left, f"test left threads running: {[t.name for t in left]}"
