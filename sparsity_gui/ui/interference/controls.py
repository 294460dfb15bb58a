"""The interference window's parameter dock: n, m, l1, lr, optimizer, steps and the rest,
each with the note's units beside the network's (lam = l1/4, eta = 4 lr)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.interference.params import (
    DTYPE_LABELS,
    DTYPES,
    MECHANISM_SETTINGS,
    OPTIMIZER_LABELS,
    OPTIMIZERS,
    InterferenceParams,
    check_memory,
)
from sparsity_gui.core.interference.settings import (
    INTERFERENCE_SETTINGS,
    MECHANISM_FIELDS,
    SPARSITIES,
    THRESHOLD_PARAMS,
    run_settings,
)
from sparsity_gui.core.knots import Knots, exact_number_text, short_knots_text
from sparsity_gui.ui.fields import Field, error_label, parse_float, parse_int, setting_tip
from sparsity_gui.ui.interference.dock_text import dock_text

SETTINGS = INTERFERENCE_SETTINGS
NOISE_LABELS = {"none": "no noise", "bernoulli": "Bernoulli ±σ", "gaussian": "Gaussian N(0, σ²)"}
SPARSITY_LABELS = {"l1": "L1 penalty", "topk": "TopK", "jumprelu": "JumpReLU"}
# the mechanisms' fields, by row of the dock (the table's symbols label them)
MECHANISM_ROWS = (
    ("k",),
    ("l0", "bandwidth"),
    ("threshold_init", "threshold_param"),
    ("l0_warmup", "l0_schedule"),
)
# the optimizer's constants, one row, shown only under the optimizers that have them (their
# rows' only_with: Adam and AdamW)
ADAM_ROW = ("beta1", "beta2", "eps")
TOPK_K = 1  # TopK's K when it is chosen: one unit per input, each feature its own neuron
# a field sharing its row with others: its width follows the dock's, not the other way round
SHARED_ROW = QtWidgets.QSizePolicy.Policy.Ignored


def _tip(name: str, what: str, more: str = "") -> str:
    """A field's tooltip with its row's bounds, default and what a change does."""
    return setting_tip(SETTINGS[name], what, more)


def _steps_or_none(text: str) -> int:
    """A warm-up or decay length: empty (or 0) for none."""
    return 0 if not text.strip() else parse_int(text)


def _knots_or_none(name: str) -> Callable[[str], Knots]:
    """A schedule's knots field: empty for none, else checked by the settings table."""

    def parse(text: str) -> Knots:
        return () if not text.strip() else INTERFERENCE_SETTINGS.check(f"{name}_schedule", text)

    return parse


# a mechanism field's parser by its row's kind (Setting.axis): empty is none for a warm-up
# and for knots, which the table checks
MECHANISM_PARSERS = {
    "whole": lambda text: 0 if not text.strip() else parse_int(text),
    "number": parse_float,
    "knots": lambda text: () if not text.strip() else SETTINGS.check("l0_schedule", text),
}
# what a mechanism field's value changes besides itself: l0's warm-up and knots exclude each
# other, and knots set l0 to their last value (as l1's)
MECHANISM_FIELD_CHANGES: dict[str, Callable] = {
    "l0_warmup": lambda v: {"l0_warmup": v, "l0_schedule": ()},
    "l0_schedule": lambda v: {"l0_schedule": v, "l0_warmup": 0, **({"l0": v[-1][1]} if v else {})},
}


MECHANISM_PLACEHOLDERS = {"l0_warmup": "warm-up steps", "l0_schedule": "knots step:value"}


def mechanism_field_text(value) -> str:
    """A mechanism field's text: empty for none (no K, no warm-up, no knots)."""
    if value is None or value == () or (type(value) is int and value == 0):
        return ""
    if isinstance(value, tuple):
        return short_knots_text(value)
    return exact_number_text(value)


class InterferenceControls(QtWidgets.QWidget):
    """The parameter dock. Every typed value is checked at its field against the window's
    current parameters (InterferenceParams is the one source of the rules); a refused
    value is shown there in red and nothing is sent. Accepted edits leave as `changed(dict)`."""

    changed = QtCore.Signal(dict)
    newSeedRequested = QtCore.Signal()

    def __init__(self, params: InterferenceParams, current: Callable[[], InterferenceParams], parent=None):
        super().__init__(parent)
        self._current = current
        form = QtWidgets.QFormLayout(self)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.fields: dict[str, Field] = {}

        def field(name: str, label: str, convert, tip: str) -> Field:
            f = Field(name, self._checked(name, convert), tip)
            f.accepted.connect(lambda v, name=name: self.changed.emit({name: v}))
            form.addRow(label, f)
            self.fields[name] = f
            return f

        def choice(name: str, label: str, values, labels: dict[str, str], tip: str) -> QtWidgets.QComboBox:
            box = QtWidgets.QComboBox()
            box.setObjectName(name)
            for value in values:
                box.addItem(labels[value], value)
            box.setToolTip(tip)
            box.activated.connect(lambda _i: self.changed.emit({name: box.currentData()}))
            form.addRow(label, box)
            return box

        self.n = field(
            "n",
            "n (features)",
            parse_int,
            _tip("n", "n: number of features, the rows of W"),
        )
        self.m = field(
            "m",
            "m (neurons)",
            parse_int,
            _tip(
                "m",
                "m: number of neurons, the columns of W",
                "The paper predicts about n²/(4m) polysemantic neurons.",
            ),
        )
        self.optimizer = choice(
            "optimizer",
            "optimizer",
            OPTIMIZERS,
            OPTIMIZER_LABELS,
            "Integrator. GD with zero rule: the note's discrete flow, a weight whose step would "
            "cross zero is set to zero. Plain GD: the same step without the rule (weights chatter "
            "around zero). Adam / AdamW (the paper's): per-coordinate step sizes, which break the "
            "note's affine structure (compare them). Starts a new run.",
        )
        self.l1 = field(
            "l1",
            "l1",
            parse_float,
            _tip("l1", "l1: the network's L1 coefficient", "The note's λ = l1/4."),
        )
        self.lr = field(
            "lr",
            "lr",
            parse_float,
            _tip(
                "lr", "lr: learning rate", "For GD the note's step is η = 4·lr (t = 4·Σ lr over the steps)."
            ),
        )
        self.steps = field(
            "steps",
            "steps",
            parse_int,
            _tip("steps", "Steps to train", "Raise it to continue a finished run."),
        )
        seed_row = QtWidgets.QHBoxLayout()
        self.seed = Field(
            "seed",
            self._checked("seed", parse_int),
            _tip("seed", "seed: random seed of W(0) (numpy default_rng)"),
        )
        self.seed.accepted.connect(lambda v: self.changed.emit({"seed": v}))
        self.fields["seed"] = self.seed
        self.new_seed = QtWidgets.QPushButton("New")
        self.new_seed.setToolTip("Draw a fresh seed and start a new run")
        self.new_seed.clicked.connect(self.newSeedRequested)
        seed_row.addWidget(self.seed, 1)
        seed_row.addWidget(self.new_seed, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        form.addRow("seed", seed_row)
        self.sigma = field(
            "sigma", "σ (init)", parse_float, _tip("sigma", "σ: W(0) ~ N(0, σ²/m)", "The paper's σ = 1.")
        )
        self.interference = QtWidgets.QCheckBox("interference term")
        self.interference.setObjectName("interference")
        self.interference.setToolTip(
            "−Σ_{j≠i} ReLU(W_i·W_j) W_j: features pushing each other apart. Off, each row is the "
            "note's single-encoding model on its own. Applies live."
        )
        self.interference.toggled.connect(lambda on: self.changed.emit({"interference": bool(on)}))
        form.addRow("", self.interference)
        self.weight_decay = field(
            "weight_decay",
            "weight decay",
            self._weight_decay,
            _tip(
                "weight_decay",
                "Weight decay",
                "Also weight_decay·lr < 1. Empty: the torch default, 0.01 for AdamW and 0 otherwise. "
                "Adam adds it to the gradient, AdamW decays W directly, GD ignores it.",
            ),
        )
        self.weight_decay.edit.setPlaceholderText("default")
        self.dtype = choice(
            "dtype",
            "precision",
            DTYPES,
            DTYPE_LABELS,
            "Precision of W, the products and the optimizer's state. float32 is what the paper "
            "trained with and about twice as fast in the products; float64 (the default) is "
            "exact enough to compare with the note's flow. The counts agree in distribution "
            "over seeds, not run by run. Starts a new run.",
        )
        self._build_schedules(form)
        self.noise = QtWidgets.QComboBox()
        self.noise.setObjectName("noise")
        for value, text in NOISE_LABELS.items():
            self.noise.addItem(text, value)
        self.noise.setToolTip(
            "Noise in the hidden layer, one vector ξ per step for the whole batch: y = ReLU((xW + ξ)Wᵀ). "
            "Bernoulli (±σ, equal odds) concentrates each feature on one neuron; Gaussian cannot. "
            "The seed fixes it. Starts a new run."
        )
        self.noise.activated.connect(self._noise_chosen)
        self.noise_sigma = Field(
            "noise_sigma",
            self._checked("noise_sigma", parse_float),
            _tip("noise_sigma", "σ of the noise"),
        )
        self.noise_sigma.accepted.connect(lambda v: self.changed.emit({"noise_sigma": v}))
        self.noise_sigma.setSizePolicy(SHARED_ROW, QtWidgets.QSizePolicy.Policy.Preferred)
        self.fields["noise_sigma"] = self.noise_sigma
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.noise, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.noise_sigma, 1)
        form.addRow("noise, σ", row)
        self._adam_row = self._setting_row(form, ADAM_ROW, dict.fromkeys(ADAM_ROW, parse_float))
        self._build_mechanisms(form)
        self.units = QtWidgets.QLabel()
        self.units.setObjectName("units")
        self.units.setWordWrap(True)
        self.units.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.units.setToolTip(
            "The note's units: λ = l1/4, η = 4·lr, and the simulated time "
            "t = 4·Σ lr reached at the last step (for gradient descent)"
        )
        self.units.setStyleSheet("color: #444; background: #f4f4f4; padding: 2px;")
        form.addRow("note", self.units)
        self._w0_source: dict | None = None
        self.show_params(params)

    def _build_schedules(self, form: QtWidgets.QFormLayout) -> None:
        """l1 and lr over steps (core/interference/schedules.py). A warm-up and knots of the
        same quantity exclude each other: setting one clears the other. Each starts a new
        run; a live change of l1 or lr ends its schedule."""

        def schedule_field(name: str, parse, tip: str, changes) -> Field:
            f = Field(name, self._checked_changes(name, parse, changes), tip)
            f.setSizePolicy(SHARED_ROW, QtWidgets.QSizePolicy.Policy.Preferred)
            f.accepted.connect(lambda v, changes=changes: self.changed.emit(changes(v)))
            self.fields[name] = f
            return f

        self.l1_warmup = schedule_field(
            "l1_warmup",
            _steps_or_none,
            _tip(
                "l1_warmup",
                "l1 warm-up STEPS",
                "l1 rises linearly from 0 to l1 over the first STEPS steps "
                "(l1·min(1, k/STEPS) at step k, as SAELens). Empty: none.",
            ),
            lambda v: {"l1_warmup": v, "l1_schedule": ()},
        )
        self.l1_warmup.edit.setPlaceholderText("warm-up steps")
        self.l1_schedule = schedule_field(
            "l1_schedule",
            _knots_or_none("l1"),
            _tip(
                "l1_schedule",
                "l1 knots step:value",
                "Piecewise linear, like 0:0,1000:1e-3 (constant before the first and after the last; "
                "sets l1 to the last value). Empty: none.",
            ),
            lambda v: {"l1_schedule": v, "l1_warmup": 0, **({"l1": v[-1][1]} if v else {})},
        )
        self.l1_schedule.edit.setPlaceholderText("knots step:value")
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.l1_warmup, 2)
        row.addWidget(self.l1_schedule, 3)
        form.addRow("l1 warm-up,\nknots", row)

        self.lr_warmup = schedule_field(
            "lr_warmup",
            _steps_or_none,
            _tip(
                "lr_warmup",
                "lr warm-up STEPS",
                "lr·min(1, k/STEPS) at step k (torch's LinearLR from 1/STEPS). Empty: none.",
            ),
            lambda v: {"lr_warmup": v, "lr_schedule": ()},
        )
        self.lr_warmup.edit.setPlaceholderText("warm-up steps")
        self.lr_decay_steps = schedule_field(
            "lr_decay_steps",
            _steps_or_none,
            _tip(
                "lr_decay_steps",
                "lr decay STEPS",
                "lr to 0 over the last STEPS steps, linearly or as a half cosine (the choice beside). "
                "Empty: none.",
            ),
            lambda v: {
                "lr_decay_steps": v,
                "lr_decay": (self.lr_decay.currentData() or "cosine") if v else "none",
                "lr_schedule": (),
            },
        )
        self.lr_decay_steps.edit.setPlaceholderText("decay steps")
        self.lr_decay = QtWidgets.QComboBox()
        self.lr_decay.setObjectName("lr_decay")
        self.lr_decay.addItem("no decay", None)  # shown while none is set
        for value in ("linear", "cosine"):
            self.lr_decay.addItem(value, value)
        self.lr_decay.setCurrentIndex(0)
        self.lr_decay.setToolTip("The shape of the lr decay over its last steps")
        self.lr_decay.activated.connect(self._decay_shape_chosen)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.lr_warmup, 2)
        row.addWidget(self.lr_decay_steps, 2)
        row.addWidget(self.lr_decay, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        form.addRow("lr warm-up,\ndecay", row)
        self.lr_schedule = schedule_field(
            "lr_schedule",
            _knots_or_none("lr"),
            _tip(
                "lr_schedule",
                "lr knots step:value",
                "Piecewise linear, like 0:0,500:1e-3,7500:1e-4 (sets lr to the last value; not with "
                "a warm-up or decay). Empty: none.",
            ),
            lambda v: {
                "lr_schedule": v,
                **({"lr": v[-1][1], "lr_warmup": 0, "lr_decay": "none", "lr_decay_steps": 0} if v else {}),
            },
        )
        self.lr_schedule.edit.setPlaceholderText("lr knots step:value")
        form.addRow("lr knots", self.lr_schedule)

    def _build_mechanisms(self, form: QtWidgets.QFormLayout) -> None:
        """The sparsity mechanism and its settings, each field built from its row of the
        settings table; only the chosen mechanism's rows are shown. Each starts a new run."""
        self._form = form
        self.sparsity = QtWidgets.QComboBox()
        self.sparsity.setObjectName("sparsity")
        for value in SPARSITIES:
            self.sparsity.addItem(SPARSITY_LABELS[value], value)
        self.sparsity.setToolTip(
            f"{INTERFERENCE_SETTINGS['sparsity'].what}. Choosing TopK or JumpReLU sets l1 to 0 "
            f"(the noise stays: it enters h before the mechanism); TopK starts at K = {TOPK_K}. "
            "Starts a new run."
        )
        self.sparsity.activated.connect(self._sparsity_chosen)
        form.addRow("sparsity", self.sparsity)
        self.threshold_param = QtWidgets.QComboBox()
        self.threshold_param.setObjectName("threshold_param")
        for value in THRESHOLD_PARAMS:
            self.threshold_param.addItem(value, value)
        self.threshold_param.setToolTip(f"{INTERFERENCE_SETTINGS['threshold_param'].what}. Starts a new run.")
        self.threshold_param.activated.connect(
            lambda _i: self.changed.emit({"threshold_param": self.threshold_param.currentData()})
        )
        kinds = {name: INTERFERENCE_SETTINGS[name].axis for name in MECHANISM_FIELDS}
        parse = {name: MECHANISM_PARSERS[kind] for name, kind in kinds.items() if kind in MECHANISM_PARSERS}
        self._mechanism_rows: list[tuple[tuple[str, ...], QtWidgets.QWidget]] = []
        for names in MECHANISM_ROWS:
            row = self._setting_row(
                form, names, parse, {"threshold_param": self.threshold_param}, MECHANISM_FIELD_CHANGES
            )
            self._mechanism_rows.append((names, row))

    def _setting_row(
        self,
        form: QtWidgets.QFormLayout,
        names: tuple[str, ...],
        parse: dict,
        widgets: dict | None = None,
        changes: dict | None = None,
    ) -> QtWidgets.QWidget:
        """One row of the dock: a field for each of the settings ``names`` (from its row of
        the table: its tooltip, its check at the field, what else its value changes from
        ``changes``), or the widget ``widgets`` gives, labelled by the rows' symbols (a long
        pair on two lines: the dock stays narrow). Several fields share one line for a refusal's reason
        under them, as wide as the row (a narrow field's own would wrap a word a line). The
        row is one widget, so that showing the row leaves that line as its fields leave it."""
        box = QtWidgets.QWidget()
        outer = QtWidgets.QVBoxLayout(box)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(1)
        row = QtWidgets.QHBoxLayout()
        outer.addLayout(row)
        typed = [name for name in names if not (widgets and name in widgets)]
        shared = error_label("_".join(typed)) if len(typed) > 1 else None
        for name in names:
            if widgets and name in widgets:
                row.addWidget(widgets[name], 0, QtCore.Qt.AlignmentFlag.AlignTop)
                continue
            setting = INTERFERENCE_SETTINGS[name]
            tip = setting_tip(setting, f"{name}: {setting.what}")
            made = (changes or {}).get(name, lambda v, name=name: {name: v})
            f = Field(name, self._checked_changes(name, parse[name], made), tip, error=shared)
            f.accepted.connect(lambda v, made=made: self.changed.emit(made(v)))
            f.setSizePolicy(SHARED_ROW, QtWidgets.QSizePolicy.Policy.Preferred)
            f.edit.setPlaceholderText(MECHANISM_PLACEHOLDERS.get(name, ""))
            self.fields[name] = f
            row.addWidget(f, 1)
        if shared is not None:
            outer.addWidget(shared)
        symbols = [INTERFERENCE_SETTINGS[name].symbol for name in names]
        label = ",  ".join(symbols)
        form.addRow(label if len(label) <= len("θ(0),  θ stored as") else ",\n".join(symbols), box)
        return box

    @QtCore.Slot(int)
    def _sparsity_chosen(self, _index: int) -> None:
        """A mechanism, with its settings at their defaults (the others' must be), no L1
        penalty beside TopK or JumpReLU (the noise kept), the table's l1 back under L1."""
        kind = self.sparsity.currentData()
        p = self._current()
        if kind == p.sparsity:
            return
        changes: dict = {name: INTERFERENCE_SETTINGS[name].default for name in MECHANISM_FIELDS}
        changes["sparsity"] = kind
        if kind == "l1":
            changes["l1"] = INTERFERENCE_SETTINGS["l1"].default
        else:
            changes.update(l1=0.0, l1_warmup=0, l1_schedule=())
        if kind == "topk":
            changes["k"] = min(TOPK_K, p.m)
        self.changed.emit(changes)

    def _show_mechanism(self, p: InterferenceParams) -> None:
        self.sparsity.setCurrentIndex(SPARSITIES.index(p.sparsity))
        for name in MECHANISM_FIELDS:
            if name in self.fields:
                self.fields[name].set_text(mechanism_field_text(getattr(p, name)))
        self.threshold_param.setCurrentIndex(THRESHOLD_PARAMS.index(p.threshold_param))
        own = MECHANISM_SETTINGS[p.sparsity]
        for names, row in self._mechanism_rows:
            self._form.setRowVisible(row, names[0] in own)

    @QtCore.Slot(int)
    def _noise_chosen(self, _index: int) -> None:
        """A kind of noise: with the σ in the field (0.1 when it is empty or 0); none: σ 0."""
        kind = self.noise.currentData()
        sigma = 0.0
        if kind != "none":
            try:
                sigma = float(self.noise_sigma.text()) or 0.1
            except ValueError:
                sigma = 0.1
        self.changed.emit({"noise": kind, "noise_sigma": sigma})

    @QtCore.Slot(int)
    def _decay_shape_chosen(self, _index: int) -> None:
        p = self._current()
        shape = self.lr_decay.currentData()
        if p.lr_decay != "none" and shape is None:  # "no decay": the decay ends
            self.changed.emit({"lr_decay": "none", "lr_decay_steps": 0})
        elif p.lr_decay != "none" and p.lr_decay != shape:
            self.changed.emit({"lr_decay": shape})

    def _checked_changes(self, name: str, convert, changes) -> Callable[[str], object]:
        """Parse, then let InterferenceParams validate the snapshot with all the changes the
        field makes (a schedule's companions)."""

        def parse(text: str):
            value = convert(text)
            try:
                self._current().with_changes(**changes(value))
            except InputError as exc:
                raise InputError(name, exc.message) from None
            return value

        return parse

    @staticmethod
    def _weight_decay(text: str):
        return None if not text.strip() else parse_float(text)

    def _checked(self, name: str, convert) -> Callable[[str], object]:
        """Parse, then let InterferenceParams validate the whole snapshot with the change."""

        def parse(text: str):
            value = convert(text)
            try:
                p = self._current().with_changes(**{name: value})
                if name in ("n", "m"):
                    check_memory(p.n, p.m)
            except InputError as exc:
                raise InputError(name, exc.message) from None
            return value

        return parse

    def show_params(self, p: InterferenceParams, w0_source: dict | None = None) -> None:
        """The fields show ``p``; ``w0_source``: W(0)'s (run.json's "w0"), kept until another."""
        if w0_source is not None:
            self._w0_source = w0_source
        self.n.set_text(str(p.n))
        self.m.set_text(str(p.m))
        self.optimizer.setCurrentIndex(OPTIMIZERS.index(p.optimizer))
        self.l1.set_text(exact_number_text(p.l1))
        self.lr.set_text(exact_number_text(p.lr))
        self.steps.set_text(str(p.steps))
        self.seed.set_text(str(p.seed))
        self.sigma.set_text(exact_number_text(p.sigma))
        self.interference.blockSignals(True)
        self.interference.setChecked(p.interference)
        self.interference.blockSignals(False)
        self.dtype.setCurrentIndex(DTYPES.index(p.dtype))
        self.weight_decay.set_text("" if p.weight_decay is None else exact_number_text(p.weight_decay))
        self.weight_decay.edit.setPlaceholderText(f"default ({p.effective_weight_decay:g})")
        self.l1_warmup.set_text(str(p.l1_warmup) if p.l1_warmup else "")
        self.l1_schedule.set_text(short_knots_text(p.l1_schedule) if p.l1_schedule else "")
        self.lr_warmup.set_text(str(p.lr_warmup) if p.lr_warmup else "")
        self.lr_decay_steps.set_text(str(p.lr_decay_steps) if p.lr_decay_steps else "")
        # the shape in force, or "no decay"
        self.lr_decay.setCurrentIndex(self.lr_decay.findData(p.lr_decay) if p.lr_decay != "none" else 0)
        self.lr_schedule.set_text(short_knots_text(p.lr_schedule) if p.lr_schedule else "")
        self.noise.setCurrentIndex(self.noise.findData(p.noise))
        self.noise_sigma.set_text(exact_number_text(p.noise_sigma) if p.noise != "none" else "")
        self.noise_sigma.edit.setEnabled(p.noise != "none")
        self._show_mechanism(p)
        for name in ADAM_ROW:
            self.fields[name].set_text(exact_number_text(getattr(p, name)))
        field, values = INTERFERENCE_SETTINGS[ADAM_ROW[0]].only_with or ("optimizer", OPTIMIZERS)
        self._form.setRowVisible(self._adam_row, getattr(p, field) in values)
        self._params = p
        self.show_in_force(None)

    def show_in_force(self, meas, saturated: str | None = None, found: str = "") -> None:
        """The note's units, and with a schedule the values in force at the painted step
        (dock_text; ``meas``: the snapshot's latest Measurement, or None before one)."""
        text = dock_text(self._params, run_settings(self._params, self._w0_source), meas, saturated, found)
        if text != self.units.text():
            self.units.setText(text)
