"""The note's window's part of File → Compare with checkpoints… (ui/checkpoints.py): one
row of the series (a row, a SAELens latent, or a vector) against the note's exact flow. The
fields are prefilled from the window's parameters (l1 = 4 λ, lr = η/4, plain SGD); the live
run starts from the first snapshot's row with λ = l1/4, the exact flow, t_end at the last
snapshot (t = 4 lr (step − step₀), or the fitted time per step), and runs to it in about
RUN_SECONDS."""

from __future__ import annotations

from sparsity_gui.core.checkpoints.series_pin import SeriesPin, note_request
from sparsity_gui.core.note.session import W0Source
from sparsity_gui.ui.checkpoints import CheckpointsControl
from sparsity_gui.ui.note.controls import SPEED_MAX, SPEED_MIN

RUN_SECONDS = 15.0


def note_checkpoints(win) -> CheckpointsControl:
    def prefill() -> dict:
        p = win.params
        return {"l1": f"{4.0 * p.lam:.6g}", "lr": f"{p.eta / 4.0:.6g}", "optimizer": "sgd"}

    def start(pin: SeriesPin) -> None:
        options, params = pin.options, pin.params
        speed = min(max(params.t_end / RUN_SECONDS, SPEED_MIN), SPEED_MAX)
        win.on_speed_changed(speed)
        index = options.row if options.row is not None else options.latent
        source = W0Source("file", options.path, pin.request.series.snapshots[0].tensor, index)
        if not win.playing:
            win.set_playing(True)
        win.start_run(params, pin.first, source=source, stop_at_one=False)
        win.controls.show_params(params, speed)

    return CheckpointsControl(
        win,
        picks=("row", "latent"),
        fit=True,
        prefill=prefill,
        request=lambda options: note_request(options, win.params),
        start=start,
        position=lambda snap: snap.t,
    )
