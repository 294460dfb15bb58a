"""The interference window's part of File → Compare with checkpoints… (ui/checkpoints.py):
the series' matrix (or one row: n = 1) against the model trained from its first snapshot
with the run's optimizer. The fields are prefilled from the window's parameters (l1, lr,
optimizer, weight decay); the live run starts from the first snapshot (W(0), step 0 = the
first snapshot's step) and trains to the last snapshot's step."""

from __future__ import annotations

from sparsity_gui.core.checkpoints.series_pin import SeriesPin, interference_request
from sparsity_gui.core.interference.initial import W0File
from sparsity_gui.ui.checkpoints import CheckpointsControl


def interference_checkpoints(win) -> CheckpointsControl:
    def prefill() -> dict:
        p = win.params
        return {
            "l1": f"{p.l1:.6g}",
            "lr": f"{p.lr:.6g}",
            "optimizer": p.optimizer,
            "weight_decay": "" if p.weight_decay is None else f"{p.weight_decay:.6g}",
        }

    def start(pin: SeriesPin) -> None:
        series = pin.request.series
        first = series.snapshots[0]
        source = {"source": "file", "path": pin.options.path, "tensor": first.tensor}
        source["series_step"] = first.step
        win.w0_file = W0File(pin.first, f"{pin.label}, its first snapshot (step {first.step:,})", source)
        if not win.playing:
            win.set_playing(True)
        win.start_run(pin.params, pin.first)

    return CheckpointsControl(
        win,
        picks=("matrix", "row", "latent"),
        fit=False,
        prefill=prefill,
        request=lambda options: interference_request(options, win.params),
        start=start,
        position=lambda snap: snap.step,
    )
