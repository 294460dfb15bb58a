"""The sweep in the interference window: fields that take lists (m and any option a
researcher varies: l1, lr, the optimizer, ...; core/interference/axes.py), Start / Cancel,
a progress bar, a readout to draw and the figure, updated as each run finishes: the
count against m (SweepPanel) for a sweep over m alone, else a heatmap over two varied
options or curves against the first (plots/interference/grid.py), as `sweep` draws them.

The sweep runs (`SweepSpec.run`, core/grid.py) in its own thread, with the scheduler
field, the cluster's worker count, the progress bar and Cancel every grid tab has
(ui/grid_tab.py): its runs train in threads of this process or as tasks on a
dask.distributed cluster; Cancel stops them between chunks, and the rows finished so far
stay shown and can be saved. The tab makes its sweep as the `sweep` command and the API do:
the dock's run with the lists typed over it, handed to the sweep's front door
(core/interference/headless.sweep_order); the command line under the form is the same
options as the `sweep` command.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.checks import parse_m_values
from sparsity_gui.core.cluster import Scheduler
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.axes import (
    AXES,
    DEFAULT_READOUT,
    KNOT_AXES,
    READOUTS,
    axis_values,
    value_text,
)
from sparsity_gui.core.interference.headless import sweep_argv, sweep_order
from sparsity_gui.core.interference.params import (
    M_MAX,
    MECHANISM_SETTINGS,
    NOISES,
    OPTIMIZER_LABELS,
    OPTIMIZERS,
    InterferenceParams,
)
from sparsity_gui.core.interference.settings import INTERFERENCE_SETTINGS, MECHANISM_FIELDS
from sparsity_gui.core.interference.sweep import SweepSpec
from sparsity_gui.core.knots import exact_number_text
from sparsity_gui.plots.interference.grid import (
    HEATMAP,
    SWEEP,
    CurvesPanel,
    HeatmapPanel,
    panel_kind,
    readout_label,
)
from sparsity_gui.plots.interference.sweep import SweepPanel
from sparsity_gui.ui.dialogs import choose_folder
from sparsity_gui.ui.fields import Field, parse_int, parse_int_in
from sparsity_gui.ui.grid_tab import GridTab, GridTabTexts

PAUSE_TIP = (
    "The sweep trains in its own thread. With this box checked the live run is paused "
    "while the sweep runs (both compete for the CPU otherwise) and resumes when it ends; "
    "unchecked, both run side by side."
)
TEXTS = GridTabTexts(
    form_width=400,
    cost="n²·m·steps",
    figures="the figures, their data and scripts",
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

# The options the tab takes as lists besides m (axes.AXES' names), their labels and what
# a value is; an empty field takes the Parameters dock's value.
LIST_FIELDS = {
    "steps": ("steps", "training steps of every run, e.g. 2000,8000"),
    "optimizer": ("optimizer", f"optimizers, e.g. adamw,gd-zero (of {', '.join(OPTIMIZERS)})"),
    "l1": ("l1", "l1 coefficients, e.g. 1e-3,1e-2,0.1"),
    "lr": ("lr", "learning rates, e.g. 1e-3,1e-2"),
    "weight_decay": ("weight decay", "weight decays (AdamW's; the GD optimizers take none), e.g. 0,0.01"),
    "sigma": ("σ W(0)", "σ of the normal draw of W(0), e.g. 0.5,1"),
    "noise": ("noise", f"noise kinds in the hidden layer, e.g. none,bernoulli (of {', '.join(NOISES)})"),
    "noise_sigma": ("noise σ", "σ of the noise (with a noise kind), e.g. 0.05,0.1"),
    "l1_warmup": ("l1 warm-up", "steps of l1's linear warm-up from 0, e.g. 0,1000"),
    "lr_warmup": ("lr warm-up", "steps of lr's linear warm-up from 0, e.g. 0,500"),
}
# The options a sweep varies (axes.AXES, from the settings table) that this tab leaves to the
# Parameters dock: set there, they hold for every run. Every other one has a field here, a
# setting added to the table with its own (its symbol and what it is) until it has words above.
DOCK_ONLY = ("dtype", "l1_schedule", "lr_decay", "lr_decay_steps", "lr_schedule", "l0_schedule")
LIST_AXES = tuple(axis for axis in AXES[1:] if axis not in DOCK_ONLY)
# a value of each list checked on its own against the model's ranges, with what it needs: a
# mechanism's setting its mechanism (TopK's k any m it fits; the dock's m is checked at start)
PROBE = {"noise_sigma": {"noise": "gaussian"}, "weight_decay": {"lr": 1e-300}}
PROBE.update({name: {"sparsity": kind} for kind, names in MECHANISM_SETTINGS.items() for name in names})
PROBE["k"]["m"] = M_MAX


def field_words(axis: str) -> tuple[str, str]:
    """(label, what a value is) of the field of ``axis``."""
    if axis in LIST_FIELDS:
        return LIST_FIELDS[axis]
    setting = INTERFERENCE_SETTINGS[axis]
    return setting.symbol, f"values of {setting.what}"


def parse_sweep_m(text: str) -> tuple[int, ...]:
    return parse_m_values(text, M_MAX)


def list_parser(axis: str) -> Callable[[str], tuple | None]:
    """A field's parser for a list of ``axis`` (axes.axis_values: values separated by
    commas), each value checked against the model's range; None for an empty field (the
    Parameters dock's value). A bad value is named in the InputError."""

    def parse(text: str) -> tuple | None:
        text = text.strip()
        if not text:
            return None
        try:
            values = axis_values(axis, text)
        except InputError as exc:
            if "," in text:
                raise
            raise InputError(axis, exc.message.replace(f" in the list {text!r}", "")) from None  # no list
        for v in values:
            try:
                InterferenceParams(**{"n": 1, "m": 1, **PROBE.get(axis, {}), axis: v})
            except InputError as exc:
                shown = value_text(axis, v)
                raise InputError(
                    axis, f"{shown}: {exc.message}" if len(values) > 1 else exc.message
                ) from None
        return values

    return parse


def dock_options(p: InterferenceParams) -> dict:
    """The Parameters dock's run as the sweep's options (core/interference/headless's
    SWEEP_OPTIONS): its value of each option a sweep takes but m; no schedule and, without a
    noise kind, no noise σ (a noise kind typed in the tab asks for its own), and only its
    sparsity mechanism's own settings."""
    options = {name: getattr(p, name) for name in ("n", "seed", *AXES[1:])}
    for name in KNOT_AXES:
        options[name] = options[name] or None
    options["no_interference"] = not p.interference
    if p.noise == "none":
        options["noise_sigma"] = None
    for name in MECHANISM_FIELDS:  # another sparsity mechanism's settings: not given
        if name not in MECHANISM_SETTINGS[p.sparsity]:
            options[name] = None
    return options


def dock_text(p: InterferenceParams, axis: str) -> str:
    """The dock's value of ``axis`` as an empty field's placeholder shows it."""
    if axis == "weight_decay":
        return exact_number_text(p.effective_weight_decay) if p.weight_decay is not None else "default"
    if axis == "noise_sigma" and p.noise == "none":
        return "no noise"
    value = getattr(p, axis)
    if isinstance(value, float):
        return exact_number_text(value)
    return str(value) if axis in LIST_FIELDS else INTERFERENCE_SETTINGS[axis].fmt(value)


def base_text(p: InterferenceParams, typed: set[str], typed_noise: tuple | None) -> str:
    """The line under the form: what the sweep takes from the Parameters dock ``p``, the
    options ``typed`` in the tab (``typed_noise``: the noise kinds typed) left out."""
    parts = _model_parts(p, typed)
    parts += _noise_parts(p, typed, typed_noise)
    parts += _schedule_parts(p, typed)
    parts.append(f"first seed {INTERFERENCE_SETTINGS['seed'].fmt(p.seed)}")
    if p.dtype == "float32":
        parts.append("float32")
    text = "from the Parameters dock: " + ", ".join(parts)
    dropped = [
        name for name in ("l1", "lr") if getattr(p, f"{name}_schedule") and typed & {name, f"{name}_warmup"}
    ]
    if dropped:
        text += " (not the dock's " + " and ".join(f"{n} schedule" for n in dropped) + ": set here)"
    return text


def _model_parts(p: InterferenceParams, typed: set[str]) -> list[str]:
    """The optimizer, l1, lr, σ, steps, the interference and the weight decay not typed,
    each as its row of the settings table writes it."""
    S = INTERFERENCE_SETTINGS
    parts = [] if "optimizer" in typed else [OPTIMIZER_LABELS[p.optimizer]]
    for axis, text in (
        ("l1", S["l1"].text(p.l1)),
        ("lr", S["lr"].text(p.lr)),
        ("sigma", S["sigma"].text(p.sigma)),
        ("steps", f"{S['steps'].fmt(p.steps)} steps"),
    ):
        if axis not in typed:
            parts.append(text)
    parts.append(f"interference {'on' if p.interference else 'off'}")
    if "weight_decay" not in typed:
        decays = p.optimizer not in ("gd-zero", "gd")  # the GD optimizers take none
        if p.weight_decay is not None and ("optimizer" in typed or decays):
            parts.append(S["weight_decay"].text(p.weight_decay))
        elif "optimizer" in typed:
            parts.append("each optimizer's default weight decay")
        elif decays:
            parts.append(S["weight_decay"].text(p.effective_weight_decay))
    return parts


def _noise_parts(p: InterferenceParams, typed: set[str], typed_noise: tuple | None) -> list[str]:
    S = INTERFERENCE_SETTINGS
    if p.noise != "none" and "noise" not in typed:
        kind = S["noise"].fmt(p.noise)
        return [f"{kind} " + ("noise" if "noise_sigma" in typed else S["noise_sigma"].text(p.noise_sigma))]
    if p.noise != "none" and "noise_sigma" not in typed and typed_noise != ("none",):
        return [S["noise_sigma"].text(p.noise_sigma)]  # (a sweep without noise has none)
    return []


def _schedule_parts(p: InterferenceParams, typed: set[str]) -> list[str]:
    S = INTERFERENCE_SETTINGS
    parts = []
    for name in ("l1", "lr"):
        warm, knots = getattr(p, f"{name}_warmup"), getattr(p, f"{name}_schedule")
        if knots and not typed & {name, f"{name}_warmup"}:
            parts.append(S[f"{name}_schedule"].text(S[f"{name}_schedule"].value(p)))
        if warm and f"{name}_warmup" not in typed:
            parts.append(S[f"{name}_warmup"].text(warm))
    if p.lr_decay != "none":
        decay = S["lr_decay"].text(p.lr_decay)
        parts.append(f"{decay} over {S['lr_decay_steps'].fmt(p.lr_decay_steps)} steps")
    return parts


class SweepWidget(GridTab):
    """A sweep for fixed n over lists of m and of the options typed here; whatever a field
    leaves empty (and the interference switch, the precision, the first seed, the
    schedules) comes from the window's current parameters (`current()`)."""

    started = QtCore.Signal(bool)  # whether the live run should pause meanwhile
    finished = QtCore.Signal()

    def __init__(self, current: Callable[[], InterferenceParams], parent=None):
        super().__init__(TEXTS, SweepSpec, parent)
        self._current = current
        self._dock = current()
        self.setToolTip(
            "A grid of training runs: every combination of the lists typed here times the "
            "seeds. Over m alone: polysemantic neurons against m with the paper's n²/(4m); "
            "over other options: the chosen readout as a heatmap or as curves"
        )
        self.n = Field(
            "sweep_n",
            lambda text: INTERFERENCE_SETTINGS.check("n", parse_int(text)),
            f"n: features, fixed for the whole sweep ({INTERFERENCE_SETTINGS['n'].bounds})",
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
            "Runs per combination, with seeds s0 … s0+seeds-1 (s0: the seed in the Parameters dock)",
        )
        self.fields = {"n": self.n, "m": self.m, "seeds": self.seeds}
        self.lists: dict[str, Field] = {}
        for axis in LIST_AXES:
            what = field_words(axis)[1]
            field = Field(
                f"sweep_{axis}",
                list_parser(axis),
                f"A list of {what}, separated by commas. Empty: the Parameters dock's value",
            )
            self.lists[axis] = self.fields[axis] = field
            field.accepted.connect(self._fields_changed)
        self.steps = self.lists["steps"]
        self.readout = QtWidgets.QComboBox()
        self.readout.setObjectName("sweep_readout")
        for name in READOUTS:
            self.readout.addItem(readout_label(name), name)
        self.readout.setCurrentIndex(self.readout.findData(DEFAULT_READOUT))
        self.readout.setToolTip(
            "What the figure of a sweep over more than m draws: its median over seeds per "
            "combination (heatmap, curves); Save writes these figures. A sweep over m alone "
            "draws polysemantic neurons against m"
        )
        self.readout.currentIndexChanged.connect(self._readout_changed)

        self.panel = SweepPanel()
        self.heatmap = HeatmapPanel()
        self.curves = CurvesPanel()
        self.figures = QtWidgets.QStackedWidget()
        for panel in (self.panel, self.heatmap, self.curves):
            self.figures.addWidget(panel)
        self.lay_out([("", self._options_box())], self.figures)

        # n follows the dock's (at most 64: a sweep's default stays quick) until one is
        # typed here; steps left empty is the dock's, whatever it becomes
        self._n_typed = False
        self.n.edit.textEdited.connect(self._n_edited)
        self.set_base(self._dock)
        self.fill_fields({"n": str(min(self._dock.n, 64)), "m": "64,128,256,512,1024", "seeds": "3"})

    def _options_box(self) -> QtWidgets.QWidget:
        """The fields, most two to a row (the form fits at 1366x768), with a line on lists."""
        box = QtWidgets.QWidget()
        grid = QtWidgets.QGridLayout(box)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(3)
        hint = QtWidgets.QLabel("Lists: values separated by commas. Empty: the Parameters dock's value.")
        hint.setWordWrap(True)
        hint.setStyleSheet("color: #444; font-size: 8pt;")
        grid.addWidget(hint, 0, 0, 1, 4)
        label = {axis: field_words(axis)[0] for axis in LIST_AXES}
        # the lists most often long (m, l1, the optimizers) get a row each
        layout = [
            ("n", "seeds"),
            ("m",),
            ("l1",),
            ("optimizer",),
            ("lr", "steps"),
            ("weight_decay", "sigma"),
            ("noise", "noise_sigma"),
            ("l1_warmup", "lr_warmup"),
        ]
        layout = [row for row in layout if all(name in self.fields for name in row)]
        more = [axis for axis in LIST_AXES if not any(axis in row for row in layout)]  # two to a row
        layout += [tuple(more[i : i + 2]) for i in range(0, len(more), 2)]
        label.update(n="n", seeds="seeds", m="m values")
        rows = [tuple((label[name], self.fields[name]) for name in row) for row in layout]
        rows.append((("readout", self.readout),))
        for r, row in enumerate(rows, start=1):
            for c, (text, widget) in enumerate(row):
                name = QtWidgets.QLabel(text)
                name.setAlignment(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop)
                name.setContentsMargins(0, 4, 0, 0)
                grid.addWidget(name, r, 2 * c)
                top = QtCore.Qt.AlignmentFlag.AlignTop  # beside a field's error, at its label
                grid.addWidget(widget, r, 2 * c + 1, 1, 3 if len(row) == 1 else 1, top)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        order = [getattr(w, "edit", w) for row in rows for _text, w in row]  # Tab: row by row
        for a, b in zip(order, order[1:], strict=False):
            QtWidgets.QWidget.setTabOrder(a, b)
        return box

    @property
    def spec(self) -> SweepSpec | None:
        """The sweep last started."""
        return self.plan

    @property
    def readout_name(self) -> str:
        return self.readout.currentData()

    @property
    def figure_name(self) -> str:
        """The figure of the sweep last started, as its files are named: sweep (the count
        against m), heatmap or curves."""
        return panel_kind(self.spec)

    @property
    def shown_panel(self):
        """The figure on screen: the count against m, the heatmap or the curves."""
        return self.figures.currentWidget()

    def draw_preview(self) -> None:
        """The plan's figure before it runs: the prediction line over the m values typed,
        or the empty cells of the grid."""
        self._draw([], self.make_plan(None), preview=True)

    # --- parameters ----------------------------------------------------------------------
    def _given(self) -> dict[str, tuple]:
        """The lists typed (the fields whose text is not empty), by option."""
        return {axis: f._parse(f.text()) for axis, f in self.lists.items() if f.text().strip()}

    def _typed_noise(self) -> tuple | None:
        field = self.lists["noise"]
        return field._parse(field._good_text) if field._good_text else None

    def set_base(self, p: InterferenceParams) -> None:
        """The Parameters dock's run: the empty fields show its values, the line under the
        form says what comes from it."""
        self._dock = p
        if not self._n_typed and self.n.text() and self.n.text() != str(min(p.n, 64)):
            self.n.set_text(str(min(p.n, 64)))
        for axis, field in self.lists.items():
            field.edit.setPlaceholderText(f"dock: {dock_text(p, axis)}")
        self._show_base()
        self.preview()

    @QtCore.Slot(str)
    def _n_edited(self, _text: str) -> None:
        self._n_typed = True

    @QtCore.Slot()
    def _fields_changed(self, *_args) -> None:
        self._show_base()

    def _show_base(self) -> None:
        typed = {axis for axis, f in self.lists.items() if f._good_text}  # the text in force
        self.base_label.setText(base_text(self._dock, typed, self._typed_noise()))

    # --- the grid tab's hooks (ui/grid_tab.py) -----------------------------------------------
    def grid_options(self, scheduler) -> dict:
        """The sweep of the fields over the window's parameters, as the sweep's front door
        takes it (headless.sweep_order, as `sweep` and api.sweep): the dock's run, each
        list typed here in place of its value (an l1 or lr typed here replaces the dock's
        schedule of it), the parallel runs or the ``scheduler``."""
        given = self._given()
        options = dock_options(self._current())
        options.update(
            n=int(self.n._parse(self.n.text().strip())),
            m=self.m.text().strip(),
            seeds=int(self.seeds._parse(self.seeds.text().strip())),
        )
        for name in ("l1", "lr"):
            if given.keys() & {name, f"{name}_warmup"}:
                options[f"{name}_schedule"] = None
        if given.get("noise") == ("none",) and "noise_sigma" not in given:
            options["noise_sigma"] = None
        options.update({axis: values[0] if len(values) == 1 else values for axis, values in given.items()})
        options.update(jobs=self.grid_jobs(scheduler), scheduler=scheduler)
        return options

    def make_plan(self, scheduler: Scheduler | None) -> SweepSpec:
        """The sweep of grid_options, through the sweep's front door (its base run is the
        first value of each list)."""
        options = self.grid_options(scheduler)
        try:
            return sweep_order(options).plan
        except InputError as exc:
            if exc.field == "noise-sigma":  # the command's words, said for this tab
                kind = next(k for k in np.atleast_1d(options["noise"]) if k != "none")
                raise InputError("noise_sigma", f"noise {kind} needs its σ: type it here") from None
            raise InputError(exc.field.replace("-", "_"), exc.message) from None

    def command_argv(self) -> list[str]:
        """The `sweep` command of grid_options (without the values it takes anyway) and the
        readout its figures draw."""
        argv = sweep_argv(self.grid_options(self.scheduler.text().strip() or None), short=True)
        if self.readout_name != DEFAULT_READOUT:
            argv += ["--readout", self.readout_name]
        return argv

    def show_rows(self, rows: list, plan: SweepSpec, started: bool = False) -> None:
        if started:
            for panel in (self.panel, self.heatmap, self.curves):
                panel.reset_ranges()
        self._draw(rows, plan, preview=started)

    def _draw(self, rows: list, plan: SweepSpec, cancelled: bool = False, preview: bool = False) -> None:
        """``rows`` of ``plan`` on the panel its varied options call for."""
        kind = panel_kind(plan)
        panel = {SWEEP: self.panel, HEATMAP: self.heatmap}.get(kind, self.curves)
        if self.figures.currentWidget() is not panel:  # shown first: drawn at its size
            self.figures.setCurrentWidget(panel)
        if kind == SWEEP:
            planned = None if preview else len(plan.runs())
            panel.show_rows(
                rows, n=plan.base.n, m_values=plan.m_values, planned_runs=planned, cancelled=cancelled
            )
        else:
            panel.show_grid(plan, rows, self.readout_name, cancelled=cancelled, preview=preview)

    @QtCore.Slot()
    def _readout_changed(self, *_args) -> None:
        """The rows already there drawn with the readout chosen (or the plan typed)."""
        self.refresh_command()
        if self.plan is not None and (self.rows or self.running):
            self._draw(
                list(self.rows), self.plan, cancelled=self.outcome == "cancelled", preview=not self.rows
            )
        else:
            self.preview()

    def current_text(self, current: InterferenceParams) -> str:
        return f"training {self.plan.describe(current)}"

    def run_started(self) -> None:
        self.started.emit(self.pause_live.isChecked())

    def run_ended(self, kind: str) -> None:
        if kind == "cancelled":
            self._mark_cancelled()
        self.finished.emit()

    def _mark_cancelled(self) -> None:
        """The figure says the sweep was cancelled (and, over m, which m it holds runs for)."""
        self._draw(list(self.rows), self.spec, cancelled=True)

    # --- saving ----------------------------------------------------------------------------
    def figure_files(self, rows: list, **how) -> dict[str, bytes]:
        """The figures `sweep --out` draws for these rows (figures/interference/grid.py's
        sweep_figures): the heatmap and curves of the readout chosen when the sweep varies
        more than m, else the count against m, and a JumpReLU grid's knee over l0; ``how``:
        the style, dpi, formats and extras (False: the figure on screen alone)."""
        from sparsity_gui.figures.interference.grid import sweep_figures

        cancelled = self.outcome == "cancelled"
        return sweep_figures(self.spec, rows, self.readout_name, cancelled=cancelled, **how)

    def write_files(self, folder, rows: list) -> list:
        from sparsity_gui.core.interference.files import write_sweep
        from sparsity_gui.figures.save import write_files

        figures = self.figure_files(rows)
        command_line = "sparsity-gui --model interference (desktop app)"
        written = write_sweep(folder, self.spec, rows, command_line=command_line, scheduler=self.ran_on)
        return written + write_files(Path(folder) / "figures", figures)

    @QtCore.Slot()
    def save_dialog(self) -> None:
        folder = choose_folder(self, "Save the sweep into folder")  # a new folder's name too
        if folder:
            self.save(folder)
