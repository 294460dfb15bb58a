"""The parameter dock: every control validated at the field, with tooltips."""

from __future__ import annotations

from collections.abc import Callable

from PySide6 import QtCore, QtWidgets

from sparsity_gui.core.errors import InputError
from sparsity_gui.core.knots import exact_number_text, short_knots_text
from sparsity_gui.core.note.params import LAM_MAX, SimParams
from sparsity_gui.core.note.schedule import Knots, warmup_knots, warmup_time
from sparsity_gui.core.note.settings import NOTE_SETTINGS
from sparsity_gui.core.text import short_number
from sparsity_gui.ui.fields import Field, LogSlider, error_label, parse_float, parse_int, setting_tip

LAM_MIN = 1e-6  # the slider's low end; the field takes down to 0
SLIDER_RANGE = f"{short_number(LAM_MIN)} … {short_number(LAM_MAX)}"  # to λ's row's top
SPEED_MIN, SPEED_MAX = 1e-2, 1e6


def _checked(field: str, convert: Callable[[str], object]) -> Callable[[str], object]:
    """Parse, then check by the field's setting (core/note/settings.py: the one source of
    the rules, which SimParams checks by too)."""

    def parse(text: str):
        return NOTE_SETTINGS.check(field, convert(text))

    return parse


def parse_warmup(text: str) -> float:
    """The warm-up field: a time T, checked by its row as the command's --lam-warmup is
    (empty or 0: none)."""
    return 0.0 if not text else NOTE_SETTINGS.check("lam_warmup", parse_float(text))


def parse_schedule(text: str) -> Knots:
    """The schedule field: knots t:λ (empty: () for a constant λ), checked by the core."""
    return NOTE_SETTINGS.check("lam_schedule", text)


class ControlPanel(QtWidgets.QWidget):
    """Emits `changed(dict)` with the fields a user changed; the window decides what they
    mean for the run (live change or new run)."""

    changed = QtCore.Signal(dict)
    # (field, value) typed in the λ warm-up (T, 0: none) or the λ schedule (knots, (): none)
    # field; the window answers with a new run or a refusal at the field
    scheduleChanged = QtCore.Signal(str, object)
    speedChanged = QtCore.Signal(float)  # <= 0: as fast as possible
    stopChanged = QtCore.Signal(bool)
    newSeedRequested = QtCore.Signal()
    loadFileRequested = QtCore.Signal()

    def __init__(self, params: SimParams, speed: float, parent=None):
        super().__init__(parent)
        form = QtWidgets.QFormLayout(self)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        # lam: log slider + typed field
        self.lam_slider = LogSlider(LAM_MIN, LAM_MAX)
        self.lam_slider.setObjectName("lam_slider")
        self.lam_slider.setToolTip(
            f"λ: L1 regularization strength, log scale {SLIDER_RANGE} "
            "(type 0 in the field to switch regularization off). Applies live."
        )
        self.lam = Field(
            "lam",
            _checked("lam", parse_float),
            setting_tip(
                NOTE_SETTINGS["lam"],
                "λ: L1 regularization strength",
                f"The slider: {SLIDER_RANGE}, log scale.",
            ),
        )
        lam_box = QtWidgets.QVBoxLayout()
        lam_box.addWidget(self.lam_slider)
        lam_box.addWidget(self.lam)
        form.addRow("λ (L1)", lam_box)
        # a drag is one change, committed on release (each step of it would be a live change
        # and a marker); the field shows the value while dragging
        self.lam_slider.setTracking(False)
        self.lam_slider.valueChangedLog.connect(self._lam_from_slider)
        self.lam_slider.sliderMoved.connect(
            lambda pos: self.lam.edit.setText(f"{float(f'{self.lam_slider.to_value(pos):.3g}'):g}")
        )
        self.lam.accepted.connect(self._lam_from_field)

        # λ(t): a warm-up or a schedule (one or the other), each starting a new run
        self.lam_warmup = Field(
            "lam_warmup",
            parse_warmup,
            setting_tip(
                NOTE_SETTINGS["lam_warmup"],
                "λ warm-up T",
                "λ rises linearly from 0 at t = 0 to λ at t = T, then stays (the schedule 0:0,T:λ). "
                "Empty or 0: none.",
            ),
        )
        self.lam_warmup.edit.setPlaceholderText("none (time T)")
        form.addRow("λ warm-up", self.lam_warmup)
        self.lam_schedule = Field(
            "lam_schedule",
            parse_schedule,
            setting_tip(
                NOTE_SETTINGS["lam_schedule"],
                "λ schedule: knots t:λ",
                "Separated by commas, e.g. 0:0,200:1e-3,3000:5e-4, times increasing from 0; λ is "
                "linear between knots, constant before the first and after the last, which sets λ. "
                "Empty: constant λ. A live change of λ ends the schedule.",
            ),
        )
        self.lam_schedule.edit.setPlaceholderText("none (t:λ,t:λ,…)")
        form.addRow("λ schedule", self.lam_schedule)
        self._schedule_typed = "lam_schedule"  # the field a shown schedule was last typed in
        self.lam_warmup.accepted.connect(lambda v: self._schedule_from("lam_warmup", v))
        self.lam_schedule.accepted.connect(lambda v: self._schedule_from("lam_schedule", v))

        self.m = Field(
            "m", _checked("m", parse_int), setting_tip(NOTE_SETTINGS["m"], "m: number of weights in W")
        )
        form.addRow("m", self.m)
        self.sigma = Field(
            "sigma",
            _checked("sigma", parse_float),
            setting_tip(
                NOTE_SETTINGS["sigma"],
                "σ: W_k(0) ~ N(0, σ²/m)",
                "σ = 0.9 as in the note, 1 as a network's init.",
            ),
        )
        form.addRow("σ", self.sigma)

        # a field checked by the seed's row (0 to 2^63-1, as --seed): a spin box stops at
        # 2^31-1, showed a larger seed as that and started a run with it on leaving the box
        # (its reason on a line of its own under the field and the button: the row's width)
        seed_error = error_label("seed")
        self.seed = Field(
            "seed",
            _checked("seed", parse_int),
            setting_tip(NOTE_SETTINGS["seed"], "seed: random seed of W(0) (numpy default_rng)"),
            error=seed_error,
        )
        self.new_seed = QtWidgets.QPushButton("New")  # as the interference dock: the row fits the dock
        self.new_seed.setToolTip("Draw a fresh seed and start a new run")
        # the field takes the room the button leaves: its own width hint (a line edit's ~17
        # characters) beside the button widened the dock and narrowed every panel
        policy = self.seed.sizePolicy()
        policy.setHorizontalPolicy(QtWidgets.QSizePolicy.Policy.Ignored)
        self.seed.setSizePolicy(policy)
        seed_row = QtWidgets.QHBoxLayout()
        seed_row.addWidget(self.seed, 1)
        seed_row.addWidget(self.new_seed)
        seed_box = QtWidgets.QVBoxLayout()
        seed_box.addLayout(seed_row)
        seed_box.addWidget(seed_error)
        form.addRow("seed", seed_box)
        self.seed.accepted.connect(lambda v: self.changed.emit({"seed": v}))
        self.new_seed.clicked.connect(self.newSeedRequested)

        self.init_kind = QtWidgets.QComboBox()
        self.init_kind.setObjectName("init_kind")
        self.init_kind.addItems(["normal N(0, σ²/m)", "from file…"])
        self.init_kind.setToolTip(
            "Initial condition W(0): a normal draw, or weights loaded from "
            ".npy/.npz/CSV (one row of a trained model, say). Starts a new run."
        )
        self.file_label = QtWidgets.QLabel("")
        self.file_label.setWordWrap(True)
        self.file_label.setStyleSheet("color: #555; font-size: 8pt;")
        init_box = QtWidgets.QVBoxLayout()
        init_box.addWidget(self.init_kind)
        init_box.addWidget(self.file_label)
        form.addRow("W(0)", init_box)
        self.init_kind.activated.connect(self._init_kind_chosen)

        self.method = QtWidgets.QComboBox()
        self.method.setObjectName("method")
        self.method.addItem("exact flow", "exact")
        self.method.addItem("gradient descent", "gd")
        self.method.setToolTip(
            "Method: the exact flow (two-variable reduction, any m) or discrete "
            "gradient descent W ← W + η[(1-‖W‖²)W - λ sign W] with the zero rule. "
            "Switching continues from the current W(t)."
        )
        form.addRow("method", self.method)
        self.method.activated.connect(lambda _i: self.changed.emit({"method": self.method.currentData()}))

        self.eta = Field(
            "eta",
            _checked("eta", parse_float),
            setting_tip(
                NOTE_SETTINGS["eta"],
                "η: gradient-descent step",
                "Stable near balance for η < 1; simulated time t = η·step.",
            ),
        )
        form.addRow("η (GD step)", self.eta)
        self.eta.accepted.connect(lambda v: self.changed.emit({"eta": v}))

        self.speed_slider = LogSlider(SPEED_MIN, SPEED_MAX)
        self.speed_slider.setObjectName("speed_slider")
        self.speed_slider.setToolTip(
            "Simulation speed: simulated time per second of wall time (log scale 0.01 … 1e6). Applies live."
        )
        self.speed_label = QtWidgets.QLabel()
        self.fastest = QtWidgets.QCheckBox("as fast as possible")
        self.fastest.setObjectName("fastest")
        self.fastest.setToolTip("Run flat out, ignoring the speed slider")
        speed_box = QtWidgets.QVBoxLayout()
        speed_row = QtWidgets.QHBoxLayout()
        speed_row.addWidget(self.speed_slider, 1)
        speed_row.addWidget(self.speed_label)
        speed_box.addLayout(speed_row)
        speed_box.addWidget(self.fastest)
        form.addRow("speed", speed_box)
        self._speed = 1.0  # the speed in force (the slider's position only approximates it)
        self.speed_slider.valueChangedLog.connect(self._speed_from_slider)
        self.fastest.toggled.connect(self._speed_changed)

        self.stop_kind = QtWidgets.QComboBox()
        self.stop_kind.setObjectName("stop_kind")
        self.stop_kind.addItem("when one weight is left", "one")
        self.stop_kind.addItem("at t_end", "t_end")
        self.stop_kind.setToolTip("Stop condition: when m' = 1, or at the simulated time t_end")
        self.t_end = Field(
            "t_end",
            _checked("t_end", parse_float),
            setting_tip(NOTE_SETTINGS["t_end"], "t_end: simulated time at which to stop"),
        )
        self.t_end.edit.setPlaceholderText("simulated time")
        form.addRow("stop", self.stop_kind)
        form.addRow("t_end", self.t_end)
        self.stop_kind.activated.connect(self._stop_changed)
        self.t_end.accepted.connect(lambda v: self.changed.emit({"t_end": v}))

        self.m.accepted.connect(lambda v: self.changed.emit({"m": v}))
        self.sigma.accepted.connect(lambda v: self.changed.emit({"sigma": v}))
        self.show_params(params, speed)
        # rows 2 px closer: with the λ warm-up and schedule rows the dock was 35 px short at
        # 1366x768 (t_end scrolled away). The rows' own layouts keep the style's gap (they
        # inherit the form's spacing, -1 once its two spacings differ)
        gap = form.spacing()
        if gap > 2:
            for box in form.findChildren(QtWidgets.QLayout):
                box.setSpacing(gap)
            form.setVerticalSpacing(gap - 2)

    # --- reflecting the state --------------------------------------------------------
    def show_params(self, params: SimParams, speed: float | None = None) -> None:
        self.lam.set_text(exact_number_text(params.lam))
        if params.lam > 0:
            self.lam_slider.set_log_value(params.lam)
        self.show_schedule(params)
        self.m.set_text(str(params.m))
        self.sigma.set_text(exact_number_text(params.sigma))
        self.seed.set_text(str(params.seed))
        self.method.setCurrentIndex(0 if params.method == "exact" else 1)
        self.eta.set_text(exact_number_text(params.eta))
        self.t_end.set_text("" if params.t_end is None else exact_number_text(params.t_end))
        self.t_end.setEnabled(params.t_end is not None)
        self.stop_kind.setCurrentIndex(1 if params.t_end is not None else 0)
        self.init_kind.setCurrentIndex(1 if params.w0_path else 0)
        self.file_label.setText(params.w0_path or "")
        self.file_label.setVisible(bool(params.w0_path))  # (empty, it took a line's height)
        self.m.setEnabled(params.w0_path is None)
        self.sigma.setEnabled(params.w0_path is None)
        if speed is not None:
            self.fastest.blockSignals(True)
            self.fastest.setChecked(speed <= 0)
            self.fastest.blockSignals(False)
            if speed > 0:
                self._speed = speed
                self.speed_slider.set_log_value(speed)
            self._update_speed_label()

    def show_schedule(self, params: SimParams) -> None:
        """The warm-up and schedule fields for ``params.lam_schedule``: the field it was
        typed in keeps its text; else (a session, a preset) a warm-up's shape fills the
        warm-up field and any other schedule the schedule field; none empties both."""
        knots = params.lam_schedule
        fields = {"lam_warmup": self.lam_warmup, "lam_schedule": self.lam_schedule}
        texts = dict.fromkeys(fields, "")
        typed_first = sorted(fields, key=lambda name: name != self._schedule_typed)
        kept = next(
            (n for n in typed_first if knots and self._knots_of(n, fields[n].text(), params.lam) == knots),
            None,
        )
        if kept is not None:
            texts[kept] = fields[kept].text().strip()
        elif knots:
            t_warmup = warmup_time(knots, params.lam)
            if t_warmup is not None:
                texts["lam_warmup"] = exact_number_text(t_warmup)
            else:
                texts["lam_schedule"] = short_knots_text(knots)
        for name, field in fields.items():
            field.set_text(texts[name])  # (a refused text goes, with its message)

    @staticmethod
    def _knots_of(name: str, text: str, lam: float) -> Knots | None:
        """The knots a field's text gives (with λ ``lam`` for a warm-up), None if none."""
        try:
            if name == "lam_warmup":
                t_warmup = parse_warmup(text.strip())
                return warmup_knots(t_warmup, lam) if t_warmup > 0 else None
            return parse_schedule(text.strip()) or None
        except (InputError, ValueError):
            return None

    def show_lam_in_force(self, lam: float) -> None:
        """The λ a schedule has reached, in the λ field and on the slider, emitting nothing
        (left alone while the user types in the field, or drags the slider)."""
        text = exact_number_text(lam)
        busy = self.lam.edit.hasFocus() or self.lam_slider.isSliderDown() or not self.lam.error.isHidden()
        if busy or self.lam.text() == text:  # (a refused value keeps its message)
            return
        self.lam.set_text(text)
        self.lam_slider.set_log_value(max(lam, LAM_MIN))

    def current_speed(self) -> float:
        """The speed the run uses (0: as fast as possible); the label shows the same."""
        return 0.0 if self.fastest.isChecked() else self._speed

    def _update_speed_label(self) -> None:
        self.speed_label.setText("max" if self.fastest.isChecked() else f"{self.current_speed():.3g} t/s")
        self.speed_slider.setEnabled(not self.fastest.isChecked())

    # --- reacting --------------------------------------------------------------------
    @QtCore.Slot(float)
    def _lam_from_slider(self, lam: float) -> None:
        self.lam.set_text(exact_number_text(lam))
        self.changed.emit({"lam": lam})

    @QtCore.Slot(object)
    def _lam_from_field(self, lam: float) -> None:
        if lam > 0:
            self.lam_slider.set_log_value(lam)
        self.changed.emit({"lam": lam})

    def _schedule_from(self, name: str, value: object) -> None:
        self._schedule_typed = name
        self.scheduleChanged.emit(name, value)

    @QtCore.Slot(float)
    def _speed_from_slider(self, speed: float) -> None:
        self._speed = speed
        self._speed_changed()

    @QtCore.Slot()
    def _speed_changed(self, *_args) -> None:
        self._update_speed_label()
        self.speedChanged.emit(self.current_speed())

    @QtCore.Slot(int)
    def _stop_changed(self, _index: int) -> None:
        at_t_end = self.stop_kind.currentData() == "t_end"
        self.t_end.setEnabled(at_t_end)
        if at_t_end:
            if not self.t_end.text().strip():
                self.t_end.edit.setFocus()
                self.t_end.show_error("type the end time t_end, then Enter")
                return
            if self.t_end.commit():
                self.changed.emit({"t_end": parse_float(self.t_end.text())})
        else:
            self.changed.emit({"t_end": None})
        self.stopChanged.emit(not at_t_end)

    @QtCore.Slot(int)
    def _init_kind_chosen(self, index: int) -> None:
        if index == 1:
            self.loadFileRequested.emit()
        else:
            self.changed.emit({"w0_path": None})
