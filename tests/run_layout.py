"""How `make test`'s pytest-xdist workers share the suite (`-n 2 --dist loadfile`, with the
scheduler below; tests/conftest.py takes these hooks).

- A file is one unit of work, as with pytest-xdist's own `loadfile`: its module fixtures
  are built once.
- The files whose tests take the shared dask cluster (the `dask_cluster` fixture: listed in
  CLUSTER_FILES, which collection checks) are one unit: they run on one worker, which starts
  the one cluster of the run (each worker that ran one of them started its own: three
  processes importing numpy, numba and distributed, ~5 s of CPU, and the wait for them).
- The longest units go first (a long file sent last keeps one worker busy while the other
  has nothing left). A unit's length is its files' seconds in the last run this checkout
  recorded (pytest's cache, `sparsity/file-seconds`), else in SECONDS below (a fresh clone;
  only the order depends on it: a stale table costs some balance, never a test).

(`--dist loadgroup` with `xdist_group` marks would group the cluster's files, but
pytest-xdist 3.8 marks a group in the test's id, which pytest 9 no longer lets it change.)
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

CLUSTER_GROUP = "dask-cluster"
CLUSTER_FILES = {
    "tests/api/test_api_cluster.py",
    "tests/cli/test_scaling_cluster.py",
    "tests/cli/test_sweep_cluster.py",
    "tests/cli/test_sweep_grids.py",
    "tests/core/interference/test_noise.py",
    "tests/core/test_cluster.py",
    "tests/ui/interference/test_sweep_tab_cluster.py",
    "tests/ui/test_grid_tab_cluster.py",
}
CACHE_KEY = "sparsity/file-seconds"
ROOT = Path(__file__).resolve().parents[1]

# seconds per file of a two-worker run from a fresh clone on a quiet machine (a709d00, `.ci/run`;
# files under 12 s count 0)
SECONDS = {
    "tests/figures/test_figure_contracts.py": 70,
    "tests/packaging/test_wheel.py": 49,
    "tests/cli/test_cli_output_locations.py": 48,
    "tests/ui/test_random_settings.py": 48,
    "tests/core/interference/test_float32.py": 46,
    "tests/test_suite_ends.py": 44,
    "tests/ui/note/test_export_session.py": 42,
    "tests/figures/test_movie.py": 41,
    "tests/ui/interference/test_interference_window.py": 39,
    "tests/ui/note/test_robustness.py": 37,
    "tests/cli/test_cluster_failures.py": 37,
    "tests/core/interference/test_mechanisms.py": 35,
    "tests/cli/test_sweep_cluster.py": 31,
    "tests/ui/note/test_live_window.py": 30,
    "tests/figures/interference/test_grid_figures.py": 27,
    "tests/ui/test_figure_names.py": 25,
    "tests/cli/test_cli_interference.py": 24,
    "tests/api/test_api_cluster.py": 24,
    "tests/figures/note/test_figure_marks.py": 23,
    "tests/ui/interference/test_interference_export_all.py": 23,
    "tests/cli/test_sweep_grids.py": 22,
    "tests/ui/test_compare_checkpoints_window.py": 22,
    "tests/ui/test_same_files.py": 22,
    "tests/ui/note/test_note_window.py": 20,
    "tests/ui/note/test_trust_window.py": 20,
    "tests/cli/test_scaling_cluster.py": 20,
    "tests/figures/test_exports_say_what_the_screen_says.py": 20,
    "tests/ui/interference/test_sweep_tab_grid.py": 19,
    "tests/ui/test_window_size.py": 19,
    "tests/cli/test_cli_movie.py": 18,
    "tests/cli/test_figure_formats.py": 17,
    "tests/figures/test_figure_titles.py": 17,
    "tests/ui/note/test_pin.py": 17,
    "tests/figures/test_grid_figure_commands.py": 16,
    "tests/cli/test_checkpoints.py": 16,
    "tests/ui/note/test_corrupt_presets.py": 16,
    "tests/cli/test_checkpoints_fit.py": 15,
    "tests/ui/test_export_all_formats.py": 14,
    "tests/ui/test_movie_dialog.py": 14,
    "tests/cli/test_signals.py": 13,
    "tests/ui/test_window_texts.py": 13,
    "tests/ui/note/test_phase_plane.py": 13,
    "tests/cli/test_messages.py": 12,
    "tests/ui/interference/test_schedule_fields.py": 12,
    "tests/core/interference/test_interference.py": 12,
    "tests/figures/interference/test_sweep_grid_figures.py": 12,
    "tests/figures/test_diagnostics_figures.py": 12,
    "tests/ui/test_export_folder_dialog.py": 12,
}


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config, items):
    """A file that takes the shared cluster and is not in CLUSTER_FILES would start a second
    cluster on the other worker: say so at once."""
    clustered = {
        item.path.relative_to(ROOT).as_posix()
        for item in items
        if "dask_cluster" in getattr(item, "fixturenames", ()) and item.path.is_relative_to(ROOT)
    }
    if clustered - CLUSTER_FILES:
        raise pytest.UsageError(
            f"tests/run_layout.py: add {sorted(clustered - CLUSTER_FILES)} to CLUSTER_FILES "
            "(they take the shared dask cluster)"
        )


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None  # pytest-xdist's own
    cache = getattr(config, "cache", None)  # none with -p no:cacheprovider
    last = cache.get(CACHE_KEY, {}) if cache is not None else {}
    return FileOrGroupScheduling(config, log, seconds={**SECONDS, **last})


class FileOrGroupScheduling(LoadScopeScheduling):
    """A unit per file, the cluster's files one unit, the longest first."""

    def __init__(self, config, log=None, *, seconds: dict[str, float]):
        super().__init__(config, log)
        self.seconds = seconds
        self._longest_first = False

    def _split_scope(self, nodeid: str) -> str:
        name = _file_of(nodeid)
        return CLUSTER_GROUP if name in CLUSTER_FILES else name

    def _length(self, nodeids) -> float:
        return sum(self.seconds.get(name, 0.0) for name in {_file_of(n) for n in nodeids})

    def _assign_work_unit(self, node) -> None:
        if not self._longest_first:  # the units are known once the collections are in
            units = sorted(self.workqueue.items(), key=lambda unit: -self._length(unit[1]))
            self.workqueue = OrderedDict(units)
            self._longest_first = True
        super()._assign_work_unit(node)


class FileSeconds:
    """Records each file's seconds (setup, call and teardown of its tests) in pytest's cache
    when the run ends, for the next run's order; files this run did not run keep theirs."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report) -> None:
        name = _file_of(report.nodeid)
        self.seconds[name] = self.seconds.get(name, 0.0) + report.duration

    def pytest_sessionfinish(self, session) -> None:
        cache = getattr(session.config, "cache", None)
        if cache is None or not self.seconds:
            return
        kept = cache.get(CACHE_KEY, {})
        kept.update({name: round(s, 1) for name, s in self.seconds.items()})
        cache.set(CACHE_KEY, kept)


def record_file_seconds(config) -> None:
    """From tests/conftest.py's pytest_configure: in the controller of a `--dist loadfile`
    run only (each test's reports reach it once)."""
    if config.getvalue("dist") == "loadfile" and not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileSeconds(), "sparsity-file-seconds")
