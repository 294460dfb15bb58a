"""The sweep over m in the interference window: fields, Start / Cancel, a progress bar and
the count-against-m figure (SweepPanel), updated as each run finishes.

The sweep runs `core.interference.sweep.run_sweep` in its own thread, with the scheduler
field, the cluster's worker count, the progress bar and Cancel every grid tab has
(ui/grid_tab.py): its runs train in threads of this process or as tasks on a
dask.distributed cluster; Cancel stops them between chunks, and the rows finished so far
stay shown and can be saved.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6 import QtCore

from sparsity_gui.core.checks import parse_m_values
from sparsity_gui.core.cluster import Scheduler
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import M_MAX, N_MAX, OPTIMIZER_LABELS, InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec, run_sweep
from sparsity_gui.plots.sweep import SweepPanel
from sparsity_gui.ui.fields import Field, parse_int_in
from sparsity_gui.ui.grid_tab import GridTab, GridTabTexts
from sparsity_gui.ui.window import choose_folder

PAUSE_TIP = (
    "The sweep trains in its own thread. With this box checked the live run is paused "
    "while the sweep runs (both compete for the CPU otherwise) and resumes when it ends; "
    "unchecked, both run side by side."
)
TEXTS = GridTabTexts(
    name="sweep",
    grid="sweep",
    solve="train",
    doing="training",
    form_width=330,
    workers_tip=(
        "Runs trained side by side, each in its own thread with one BLAS "
        "thread (about one per core is fastest). With the live run still "
        "playing, one fewer leaves it a core."
    ),
    pause_text="pause the live run while sweeping",
    pause_tip=PAUSE_TIP,
    start_text="Start sweep",
    start_tip="Train every run of the sweep in a background thread. ",
    cancel_tip="Stop after the current chunk of steps; finished runs stay shown",
    cancelling="cancelling after the current chunk of steps…",
    save_text="Save sweep…",
    save_tip="Write sweep.csv, sweep.json and figures/ (the figure, its data and script) into a folder",
    progress_tip="Share of the sweep's cost done (a run costs about n²·m·steps)",
    failed_title="Sweep stopped",
)


def _m_values(text: str) -> tuple[int, ...]:
    values = parse_m_values(text)
    bad = [m for m in values if not 1 <= m <= M_MAX]
    if bad:
        raise InputError("m", f"every m must be from 1 to {M_MAX}, got {bad[0]}")
    return values


class SweepWidget(GridTab):
    """Sweep over m for fixed n; optimizer, l1, lr, σ, interference, weight decay and the
    first seed come from the window's current parameters (`current()`)."""

    started = QtCore.Signal(bool)  # whether the live run should pause meanwhile
    finished = QtCore.Signal()

    def __init__(self, current: Callable[[], InterferenceParams], parent=None):
        super().__init__(TEXTS, parent)
        self._current = current
        self.setToolTip(
            "Polysemantic neurons against m for fixed n, several seeds per m: the "
            "paper's count-against-m figure with the prediction n²/(4m)"
        )
        self.n = Field(
            "sweep_n", parse_int_in("n", 1, N_MAX), f"n: features, fixed for the whole sweep (1 … {N_MAX})"
        )
        self.m = Field(
            "sweep_m",
            _m_values,
            "m values: a list like 64,128,256 or a range start:stop:step (stop included), "
            "e.g. 256:4096:256 as in the paper",
        )
        self.seeds = Field(
            "sweep_seeds",
            parse_int_in("seeds", 1, 1000),
            "Runs per m, with seeds s0 … s0+seeds-1 (s0: the seed in the Parameters dock)",
        )
        self.steps = Field("sweep_steps", parse_int_in("steps", 1, 10**8), "Training steps of every run")
        self.fields = {"n": self.n, "m": self.m, "seeds": self.seeds, "steps": self.steps}
        self.panel = SweepPanel()
        self.lay_out(
            [("n", self.n), ("m values", self.m), ("seeds per m", self.seeds), ("steps", self.steps)],
            self.panel,
        )

        p = current()
        self.n.set_text(str(min(p.n, 64)))
        self.m.set_text("64,128,256,512,1024")
        self.seeds.set_text("3")
        self.steps.set_text(str(p.steps))
        self.set_base(p)
        for f in self.fields.values():
            f.accepted.connect(self._preview)
        self._preview()

    @property
    def spec(self) -> SweepSpec | None:
        """The sweep last started."""
        return self.plan

    @QtCore.Slot()
    def _preview(self, *_args) -> None:
        """Before any sweep: the plan's prediction line over the m values typed."""
        if self.rows or self.running:
            return
        try:
            n = int(self.n._parse(self.n.text().strip()))
            m_values = _m_values(self.m.text())
        except (InputError, ValueError, OverflowError):
            return
        self.panel.show_rows([], n=n, m_values=m_values)

    # --- parameters ----------------------------------------------------------------------
    def set_base(self, p: InterferenceParams) -> None:
        wd = "" if p.optimizer in ("gd-zero", "gd") else f", weight decay {p.effective_weight_decay:g}"
        self.base_label.setText(
            f"from the Parameters dock: {OPTIMIZER_LABELS[p.optimizer]}, l1 = {p.l1:g}, lr = {p.lr:g}, "
            f"σ = {p.sigma:g}, interference {'on' if p.interference else 'off'}{wd}, "
            f"first seed {p.seed}{', float32' if p.dtype == 'float32' else ''}"
        )

    def make_spec(self) -> SweepSpec | None:
        """The spec of the fields and the window's parameters; a bad value is shown at its
        field and None returned."""
        ok = all([f.commit() for f in self.fields.values()])  # a list: every field shows its error
        if not ok:
            return None
        try:
            n = int(self.n._parse(self.n.text().strip()))
            steps = int(self.steps._parse(self.steps.text().strip()))
            m_values = _m_values(self.m.text())
            seeds = int(self.seeds._parse(self.seeds.text().strip()))
            base = self._current().with_changes(n=n, m=m_values[0], steps=steps)
            spec = SweepSpec(base=base, m_values=m_values, seeds=seeds)
            spec.check_work()
            if not self.scheduler.text().strip():
                spec.check_memory(self.workers.value())
        except InputError as exc:
            self.show_input_error(exc)
            return None
        return spec

    # --- the grid tab's hooks (ui/grid_tab.py) -----------------------------------------------
    def make_plan(self, scheduler: Scheduler | None) -> SweepSpec | None:
        return self.make_spec()

    def run_plan(self, plan, on_progress, should_stop, workers: int, scheduler: Scheduler | None) -> list:
        return run_sweep(
            plan, on_progress=on_progress, should_stop=should_stop, workers=workers, scheduler=scheduler
        )

    def show_rows(self, rows: list, plan: SweepSpec, started: bool = False) -> None:
        if started:
            self.panel.reset_ranges()
            self.panel.show_rows([], n=plan.base.n, m_values=plan.m_values)
        else:
            self.panel.show_rows(rows, n=plan.base.n, m_values=plan.m_values, planned_runs=len(plan.runs()))

    def current_text(self, current: InterferenceParams) -> str:
        return f"training m = {current.m}, seed {current.seed}"

    def run_started(self) -> None:
        self.started.emit(self.pause_live.isChecked())

    def run_ended(self, kind: str) -> None:
        if kind == "cancelled":
            self._mark_cancelled()
        self.finished.emit()

    def _mark_cancelled(self) -> None:
        """The figure says the sweep was cancelled and which m it holds runs for."""
        spec = self.spec
        self.panel.show_rows(
            self.rows, n=spec.base.n, m_values=spec.m_values, planned_runs=len(spec.runs()), cancelled=True
        )

    # --- saving ----------------------------------------------------------------------------
    def save(self, folder) -> bool:
        """sweep.csv and sweep.json of the rows shown into `folder`, and the figure (PNG,
        SVG, PDF, its data and its script) into `folder`/figures/, as `sweep` writes them."""
        from sparsity_gui.core.interference.files import write_sweep
        from sparsity_gui.figures.save import write_files
        from sparsity_gui.figures.sweep import sweep_figure_files

        if self.spec is None or not self.rows:
            self._show_info("nothing to save yet: run a sweep first", error=True)
            return False
        try:
            rows = list(self.rows)
            figures = sweep_figure_files(self.spec, rows, cancelled=self.outcome == "cancelled")
            written = write_sweep(
                folder, self.spec, rows, command_line="sparsity-gui --model interference (desktop app)"
            )
            written += write_files(Path(folder) / "figures", figures)
        except InputError as exc:
            self._message("Cannot save the sweep", exc.message)
            return False
        except OSError as exc:
            self._message("Cannot save the sweep", f"{folder}: {exc.strerror or exc}")
            return False
        self._show_info(f"saved {len(written)} files to {folder}")
        return True

    @QtCore.Slot()
    def save_dialog(self) -> None:
        folder = choose_folder(self, "Save the sweep into folder")  # a new folder's name too
        if folder:
            self.save(folder)
