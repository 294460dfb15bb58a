"""The scaling tab of the note's window, driven as a user would: a grid run to the end beside
(pausing) the live run, its rows equal to the core's, the figures and table live, refused
values at their fields with nothing started, Cancel keeping the finished runs, Save writing
the files, and closing mid-run joining every thread."""

from __future__ import annotations

import json
import time

from helpers import type_keys

from sparsity_gui.core.note.params import SimParams
from sparsity_gui.core.note.scaling import ROW_COLUMNS, scaling_row

TIMEOUT = 60_000


def _key(row):
    return tuple(getattr(row, f) for f in ROW_COLUMNS if f != "seconds")


def test_a_grid_runs_beside_the_live_run_and_is_saved(qtbot, make_window, tmp_path):
    win = make_window(SimParams(m=200, lam=1e-2, sigma=0.8, seed=4))
    win.set_playing(True)
    tab = win.scaling
    win.tabs.setCurrentWidget(tab)
    assert "σ = 0.8, first seed 4" in tab.base_label.text()
    type_keys(tab.m, "1e2,1e3")
    type_keys(tab.lam, "1e-2,3e-3")
    type_keys(tab.seeds, "2")
    assert tab.pause_live.isChecked()
    assert tab.start()
    assert not win.playing, "the live run pauses while the grid runs"
    assert not tab.start_button.isEnabled() and tab.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: tab.outcome == "done", timeout=TIMEOUT)
    assert win.playing, "and resumes when it ends"
    assert tab.progress.value() == tab.progress.maximum()
    assert "done" in tab.progress.format() and "8 / 8 runs" in tab.progress.format()
    # the rows are the core's runs of the same settings (sigma and seeds from the dock)
    assert [(r.m, r.lam, r.seed) for r in tab.rows] == [
        (m, lam, s) for m in (100, 1000) for lam in (3e-3, 1e-2) for s in (4, 5)
    ]
    assert _key(tab.rows[3]) == _key(scaling_row(100, 1e-2, 5, 0.8))
    # the figures and the table show every run
    for panel in tab.panels:
        assert len(panel.rows) == 8 and panel.lam_values == (3e-3, 1e-2)
        assert set(panel.drawn) == {3e-3, 1e-2}
    assert tab.table.rowCount() == 4
    assert tab.table.item(0, 0).text() == "100" and tab.table.item(0, 2).text() == "2"
    assert tab.save_button.isEnabled()
    # Save writes the numbers and the figures
    assert tab.save(tmp_path / "saved")
    names = sorted(p.name for p in (tmp_path / "saved").iterdir())
    assert names == ["figures", "scaling.csv", "scaling.json"]
    # the figures, as `scaling` writes them: each with its data and the script redrawing it
    figures = {p.name for p in (tmp_path / "saved" / "figures").iterdir()}
    for name in ("lam_t_one", "fitted_c", "rel_var"):
        assert {f"{name}.{f}" for f in ("png", "svg", "json", "py")} <= figures, figures
    meta = json.loads((tmp_path / "saved" / "scaling.json").read_text(encoding="utf-8"))
    assert meta["complete"] and meta["settings"]["sigma"] == 0.8 and meta["settings"]["seed"] == 4
    lines = (tmp_path / "saved" / "scaling.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 9


def test_refused_values_are_shown_at_their_fields_and_nothing_starts(qtbot, make_window):
    win = make_window()
    tab = win.scaling
    win.tabs.setCurrentWidget(tab)
    cases = [
        (tab.m, "0,100", "every m must be from 1"),
        (tab.m, "", "no values of m"),
        (tab.m, "1e9", "every m must be from 1 to 1e8"),
        (tab.lam, "0", "every lam must be > 0"),
        (tab.lam, "-1e-3", "every lam must be > 0"),
        (tab.lam, "1e-3,inf", "every value must be finite"),
        (tab.lam, "", "no values of lam"),
        (tab.seeds, "0", "from 1 to 1000"),
    ]
    for field, text, message in cases:
        good = field.text()
        type_keys(field, text)
        assert not field.error.isHidden() and message in field.error.text(), (text, field.error.text())
        assert not tab.start()
        assert tab.job is None and tab.outcome == ""
        type_keys(field, good)
        assert field.error.isHidden()
    # a grid too large for memory: the reason under the buttons, nothing started
    type_keys(tab.m, "1e8")
    tab.workers.setValue(32)
    assert not tab.start()
    assert tab.job is None and "GiB" in tab.info.text()


def test_cancel_keeps_the_finished_runs(qtbot, make_window):
    win = make_window()
    tab = win.scaling
    type_keys(tab.m, "100,3e6")
    type_keys(tab.lam, "1e-3")
    type_keys(tab.seeds, "2")
    tab.workers.setValue(1)
    assert tab.start()
    qtbot.waitUntil(lambda: len(tab._worker_rows) == 2, timeout=TIMEOUT)  # the m = 100 runs
    tab.cancel()
    t0 = time.perf_counter()
    qtbot.waitUntil(lambda: tab.outcome == "cancelled", timeout=TIMEOUT)
    print(f"cancelled within {time.perf_counter() - t0:.2f} s during a run of 3e6 weights")
    assert [(r.m, r.seed) for r in tab.rows] == [(100, 0), (100, 1)]
    assert "cancelled" in tab.progress.format() and tab.save_button.isEnabled()
    assert len(tab.panels[0].rows) == 2
    assert tab.start_button.isEnabled() and tab.m.isEnabled()


def test_closing_mid_run_joins_every_thread(qtbot, make_window):
    win = make_window()
    tab = win.scaling
    type_keys(tab.m, "1e6,2e6")
    type_keys(tab.lam, "1e-3")
    type_keys(tab.seeds, "3")
    assert tab.start()
    qtbot.waitUntil(lambda: tab.job.progress is not None, timeout=TIMEOUT)
    thread = tab.job.worker
    assert thread.is_alive()
    win.close()
    assert not thread.is_alive() and not win.thread.is_alive()
    assert not tab.running and tab.job is None
