"""The scaling tab of the note's window: a grid of m, lam and seeds, Start / Cancel, a progress
bar with the time left, the three scaling figures (lam*T, the fitted c, the relative-variance
plateau against m) drawn as each run finishes, a table of the means, and Save.

The grid runs (`ScalingGrid.run`, core/grid.py) in its own thread, with the scheduler field,
the progress bar and Cancel every grid tab has (ui/grid_tab.py): Cancel stops every run
between pieces of its solve (on a cluster: the pending tasks are cancelled); the finished
rows stay shown and can be saved.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.checks import parse_m_values, parse_number_list
from sparsity_gui.core.cluster import Scheduler
from sparsity_gui.core.note.files import write_scaling
from sparsity_gui.core.note.headless import SCALING_DEFAULTS, scaling_argv, scaling_order
from sparsity_gui.core.note.params import GRID_LAM, M_MAX, SimParams, check_grid_lam
from sparsity_gui.core.note.scaling import ScalingGrid, in_regime, summarize
from sparsity_gui.core.note.settings import NOTE_SETTINGS as S
from sparsity_gui.plots.note.scaling import SCALING_PANEL_TYPES, power_text
from sparsity_gui.ui.dialogs import choose_folder
from sparsity_gui.ui.fields import Field, parse_int_in
from sparsity_gui.ui.grid_tab import GridTab, GridTabTexts

PAUSE_TIP = (
    "The grid runs in threads of its own. With this box checked the live run is paused "
    "meanwhile (both compete for the CPU otherwise) and resumes when the grid ends."
)
TABLE_COLUMNS = (
    ("m", None),
    ("λ", None),
    ("runs", None),
    ("λ·T", "lam_t_one"),
    ("c (m′ ≥ 2)", "fitted_c"),
    ("c bulk (m′ ≥ 10)", "fitted_c_bulk"),
    ("max dev", "fit_max_rel_dev"),
    ("RV mean", "rel_var_mean"),
    ("balance", "balance_ratio"),
    ("λ‖W(0)‖₁", "lam_norm1_0"),
)
REGIME_COLUMN = "note's regime"  # the last column: λ‖W(0)‖₁ ≤ 1/4 or why not
COLUMN_TIPS = {
    "fitted_c": "c in 1/‖W‖₁ ≈ 1/‖W(0)‖₁ + c·λt, least squares over the rows with m′ ≥ 2 "
    "(evenly spaced in t: the few-survivor phase dominates it); mean ± SD over seeds",
    "fitted_c_bulk": "the same fit over the rows with m′ ≥ 10: the bulk decay the note "
    "describes, the constant to quote; mean ± SD over seeds",
    "fit_max_rel_dev": "largest |1/(w(0) + c·λt) − ‖W‖₁| / ‖W‖₁ over the rows with m′ ≥ 2 (mean over seeds)",
    "lam_norm1_0": "λ‖W(0)‖₁: the balance needs it ≤ 1/4",
}
TEXTS = GridTabTexts(
    workers_tip="Runs side by side, each in its own thread (about one per core is fastest)",
    pause_tip=PAUSE_TIP,
    start_tip="Run the exact solver for every (m, λ, seed). ",
    figures="lam_t_one, fitted_c, rel_var, data, scripts",
    cost="m·log m",
)


def parse_grid_m(text: str) -> tuple[int, ...]:
    return parse_m_values(text, M_MAX)


def parse_grid_lam(text: str) -> tuple[float, ...]:
    return tuple(check_grid_lam(lam) for lam in parse_number_list("lam", text))


def _mean_sd(mean: float, sd: float) -> str:
    if not math.isfinite(mean):
        return "–"
    return f"{mean:.4g} ± {sd:.2g}" if math.isfinite(sd) else f"{mean:.4g}"


class ScalingWidget(GridTab):
    """The note's constants across m and λ; σ and the first seed come from the window's
    current parameters (``current()``). ``live`` (the window) is paused while the grid runs
    if the box says so."""

    def __init__(self, current: Callable[[], SimParams], live=None, parent=None):
        super().__init__(TEXTS, ScalingGrid, parent)
        self._current = current
        self._live = live
        self._paused_live = False
        self.setToolTip(
            "λ·T, the fitted decay constant c and the relative-variance plateau against m, "
            "one curve per λ, several seeds each: the constants behind the note's Θs"
        )
        self.m = Field(
            "scaling_m",
            parse_grid_m,
            "m values: a list like 1000,10000, powers like 1e3,1e4,1e5,1e6, or a range "
            f"start:stop:step (stop included); each {S['m'].bounds}",
        )
        self.lam = Field(
            "scaling_lam",
            parse_grid_lam,
            f"λ values: a list like 1e-4,1e-3,1e-2; each {GRID_LAM.bounds}",
        )
        self.seeds = Field(
            "scaling_seeds",
            parse_int_in("seeds", 1, 1000),
            "Runs per (m, λ), with seeds s0 … s0+seeds-1 (s0: the seed in the Parameters "
            "dock); every λ of one m starts from the same W(0)",
        )
        self.fields = {"m": self.m, "lam": self.lam, "seeds": self.seeds}

        self.panels = [cls() for cls in SCALING_PANEL_TYPES]
        self.table = QtWidgets.QTableWidget(0, len(TABLE_COLUMNS) + 1)
        self.table.setObjectName("scaling_table")
        self.table.setHorizontalHeaderLabels([name for name, _ in TABLE_COLUMNS] + [REGIME_COLUMN])
        for j, (_name, col) in enumerate(TABLE_COLUMNS):
            if col in COLUMN_TIPS:
                self.table.horizontalHeaderItem(j).setToolTip(COLUMN_TIPS[col])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.table.setToolTip("Mean ± sample standard deviation over the seeds of each (m, λ)")
        figures = QtWidgets.QGridLayout()
        figures.setSpacing(3)
        for i, w in enumerate([*self.panels, self.table]):
            figures.addWidget(w, i // 2, i % 2)
        self.lay_out([("m values", self.m), ("λ values", self.lam), ("seeds", self.seeds)], figures)

        self.refresh_base()
        self.fill_fields({"m": "1e3,1e4,1e5,1e6", "lam": "1e-4,1e-3,1e-2", "seeds": "3"})

    @property
    def grid(self) -> ScalingGrid | None:
        """The grid last started."""
        return self.plan

    def showEvent(self, event) -> None:
        self.refresh_base()  # the dock's σ and seed may have changed meanwhile
        super().showEvent(event)

    def draw_preview(self) -> None:
        """The axes and legend of the grid typed."""
        self._draw([], parse_grid_m(self.m.text()), parse_grid_lam(self.lam.text()))

    def refresh_base(self) -> None:
        p = self._current()
        self.base_label.setText(
            f"from the Parameters dock: {S['sigma'].text(p.sigma)}, first seed {S['seed'].fmt(p.seed)}; "
            "exact solver to one "
            f"weight left, as the run command"
        )
        self.refresh_command()

    # --- the grid tab's hooks (ui/grid_tab.py) -----------------------------------------------
    def grid_options(self, scheduler) -> dict:
        """The grid of the fields with the window's σ and first seed, as the grid's front
        door takes it (core/note/headless.scaling_order, as `scaling` and api.scaling)."""
        p = self._current()
        return dict(
            m=self.m.text().strip(),
            lam=self.lam.text().strip(),
            seeds=int(self.seeds._parse(self.seeds.text().strip())),
            seed=p.seed,
            sigma=p.sigma,
            jobs=self.grid_jobs(scheduler),
            scheduler=scheduler,
        )

    def make_plan(self, scheduler: Scheduler | None) -> ScalingGrid:
        """The grid of the fields and the window's σ and seed, through its front door (the
        threads' count and the scheduler are GridTab's to check)."""
        self.refresh_base()
        return scaling_order(self.grid_options(scheduler)).plan

    def command_argv(self) -> list[str]:
        options = self.grid_options(self.scheduler.text().strip() or None)
        defaults = SCALING_DEFAULTS
        return scaling_argv({k: v for k, v in options.items() if k not in defaults or v != defaults[k]})

    def show_rows(self, rows: list, plan: ScalingGrid, started: bool = False) -> None:
        if started:
            for panel in self.panels:
                panel.reset_ranges()
        self._draw(rows, plan.m_values, plan.lam_values)

    def current_text(self, current) -> str:
        m, lam, seed = current
        return f"running {S['m'].text(m)}, {S['lam'].text(lam)}, seed {S['seed'].fmt(seed)}"

    def run_started(self) -> None:
        live = self._live
        self._paused_live = bool(self.pause_live.isChecked() and live is not None and live.playing)
        if self._paused_live:
            live.set_playing(False)

    def run_ended(self, kind: str) -> None:
        live = self._live
        if self._paused_live and live is not None and not live.closed and not live.playing:
            live.set_playing(True)
        self._paused_live = False

    def _draw(self, rows, m_values, lam_values) -> None:
        for panel in self.panels:
            panel.show_rows(rows, m_values=m_values, lam_values=lam_values)
        cells = summarize(rows)
        self.table.setRowCount(len(cells))
        for i, c in enumerate(cells):
            texts = [f"{c.m:,}", power_text(c.lam), str(c.runs)]
            texts += [_mean_sd(c.mean[col], c.std[col]) for _name, col in TABLE_COLUMNS[3:]]
            if not in_regime(c):
                texts.append("no: λ‖W(0)‖₁ > 1/4")
            else:
                texts.append(f"no: θ fell in {c.theta_fell} of {c.runs}" if c.theta_fell else "yes")
            for j, text in enumerate(texts):
                item = QtWidgets.QTableWidgetItem(text)
                item.setTextAlignment(
                    QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
                )
                self.table.setItem(i, j, item)

    # --- saving ----------------------------------------------------------------------------
    def write_files(self, folder, rows: list) -> list:
        from pathlib import Path

        from sparsity_gui.figures.note.scaling import scaling_figure_files
        from sparsity_gui.figures.save import write_files

        figures = scaling_figure_files(self.grid, rows)
        command_line = "sparsity-gui (desktop app, scaling tab)"
        written = write_scaling(folder, self.grid, rows, command_line=command_line, scheduler=self.ran_on)
        return written + write_files(Path(folder) / "figures", figures)

    @QtCore.Slot()
    def save_dialog(self) -> None:
        folder = choose_folder(self, "Save the scaling runs into folder")
        if folder:
            self.save(folder)
