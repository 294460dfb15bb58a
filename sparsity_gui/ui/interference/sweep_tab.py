"""The sweep over m in the interference window: fields, Start / Cancel, a progress bar and
the count-against-m figure (SweepPanel), updated as each run finishes.

The sweep runs (`SweepSpec.run`, core/grid.py) in its own thread, with the scheduler
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
from sparsity_gui.core.interference.params import M_MAX, N_MAX, OPTIMIZER_LABELS, InterferenceParams
from sparsity_gui.core.interference.sweep import SweepSpec
from sparsity_gui.plots.interference.sweep import SweepPanel
from sparsity_gui.ui.dialogs import choose_folder
from sparsity_gui.ui.fields import Field, parse_int_in
from sparsity_gui.ui.grid_tab import GridTab, GridTabTexts

PAUSE_TIP = (
    "The sweep trains in its own thread. With this box checked the live run is paused "
    "while the sweep runs (both compete for the CPU otherwise) and resumes when it ends; "
    "unchecked, both run side by side."
)
TEXTS = GridTabTexts(
    form_width=330,
    cost="n²·m·steps",
    figures="the figure, its data and script",
    start_text="Start sweep",
    start_tip="Train every run of the sweep in a background thread. ",
    save_text="Save sweep…",
    pause_text="pause the live run while sweeping",
    pause_tip=PAUSE_TIP,
    cancel_tip="Stop after the current chunk of steps; finished runs stay shown",
    cancelling="cancelling after the current chunk of steps…",
    workers_tip=(
        "Runs trained side by side, each in its own thread with one BLAS "
        "thread (about one per core is fastest). With the live run still "
        "playing, one fewer leaves it a core."
    ),
)


def parse_sweep_m(text: str) -> tuple[int, ...]:
    return parse_m_values(text, M_MAX)


class SweepWidget(GridTab):
    """Sweep over m for fixed n; optimizer, l1, lr, σ, interference, weight decay and the
    first seed come from the window's current parameters (`current()`)."""

    started = QtCore.Signal(bool)  # whether the live run should pause meanwhile
    finished = QtCore.Signal()

    def __init__(self, current: Callable[[], InterferenceParams], parent=None):
        super().__init__(TEXTS, SweepSpec, parent)
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
            parse_sweep_m,
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
        self.set_base(p)
        self.fill_fields(
            {"n": str(min(p.n, 64)), "m": "64,128,256,512,1024", "seeds": "3", "steps": str(p.steps)}
        )

    @property
    def spec(self) -> SweepSpec | None:
        """The sweep last started."""
        return self.plan

    def draw_preview(self) -> None:
        """The plan's prediction line over the m values typed."""
        n = int(self.n._parse(self.n.text().strip()))
        self.panel.show_rows([], n=n, m_values=parse_sweep_m(self.m.text()))

    # --- parameters ----------------------------------------------------------------------
    def set_base(self, p: InterferenceParams) -> None:
        wd = "" if p.optimizer in ("gd-zero", "gd") else f", weight decay {p.effective_weight_decay:g}"
        self.base_label.setText(
            f"from the Parameters dock: {OPTIMIZER_LABELS[p.optimizer]}, l1 = {p.l1:g}, lr = {p.lr:g}, "
            f"σ = {p.sigma:g}, interference {'on' if p.interference else 'off'}{wd}, "
            f"first seed {p.seed}{', float32' if p.dtype == 'float32' else ''}"
        )

    # --- the grid tab's hooks (ui/grid_tab.py) -----------------------------------------------
    def make_plan(self, scheduler: Scheduler | None) -> SweepSpec:
        """The sweep of the fields and the window's parameters."""
        n = int(self.n._parse(self.n.text().strip()))
        steps = int(self.steps._parse(self.steps.text().strip()))
        m_values = parse_sweep_m(self.m.text())
        seeds = int(self.seeds._parse(self.seeds.text().strip()))
        base = self._current().with_changes(n=n, m=m_values[0], steps=steps)
        return SweepSpec(base=base, m_values=m_values, seeds=seeds)

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
    def write_files(self, folder, rows: list) -> list:
        from sparsity_gui.core.interference.files import write_sweep
        from sparsity_gui.figures.interference.sweep import sweep_figure_files
        from sparsity_gui.figures.save import write_files

        figures = sweep_figure_files(self.spec, rows, cancelled=self.outcome == "cancelled")
        command_line = "sparsity-gui --model interference (desktop app)"
        written = write_sweep(folder, self.spec, rows, command_line=command_line, scheduler=self.ran_on)
        return written + write_files(Path(folder) / "figures", figures)

    @QtCore.Slot()
    def save_dialog(self) -> None:
        folder = choose_folder(self, "Save the sweep into folder")  # a new folder's name too
        if folder:
            self.save(folder)
