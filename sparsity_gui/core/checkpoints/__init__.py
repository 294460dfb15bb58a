"""A training run's snapshots against the theory (the `checkpoints` command, File → Compare
with checkpoints…): the comparison with the interference model trained from the first
snapshot and with the note's flow (compare.py), any trainer's diagnostics (diagnostics.py),
and a series pinned beside a window's live run (series_pin.py). The one part of core that
uses both models: it sits above core/note and core/interference, which never import it, as
they never import each other; core's root modules sit below the models (pyproject.toml's
import contracts). Qt-free."""
