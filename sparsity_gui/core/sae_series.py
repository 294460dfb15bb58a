"""Series written by the SAE libraries' trainers (core/series.py reads them), with each
snapshot's real optimizer step and the model the files say was trained. Qt-free.

SAELens (``cfg.json`` beside ``sae_weights.safetensors``; ``W_enc`` [d_in, d_sae], a latent
is a column): its trainer names each checkpoint folder by the *samples* seen
(``checkpoints/<id>/3904/``, ``final_19200/``), not by steps. A folder's step is the
optimizer's own update count in its ``trainer_state.pt`` (Adam keeps one per parameter);
without one, the samples divided by a batch size that cfg.json states; without either, the
folder's name, and the series says so. ``n_training_steps`` in ``trainer_state.pt`` is
one less than the updates in every checkpoint but the final one (SAETrainer saves them
before it advances the counter: tests/data/sae/README.md), so it is only cross-checked.
MultiSAETrainer writes ``<samples>/<sae_name>/``: one SAE is read, named by ``sae``.

dictionary_learning (``trainer_*/config.json``, ``trainer_*/checkpoints/ae_<step>.pt``;
``encoder.weight`` [d_sae, d_in], a latent is a row): ``ae_<step>.pt`` is saved before the
update of that step, so its name is the updates it has had; the final ``ae.pt`` is the last
snapshot when config.json gives the steps that ran.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from sparsity_gui.core.checks import read_json_file
from sparsity_gui.core.errors import InputError
from sparsity_gui.core.weights_files import list_arrays

FIELD = "checkpoints"
SAE_CONFIG = "cfg.json"
SAE_WEIGHTS = "sae_weights.safetensors"
SAE_TENSOR = "W_enc"
TRAINER_STATE = "trainer_state.pt"
DL_CONFIG = "config.json"
DL_TENSOR = "encoder.weight"
MAX_STEP = 2**63 - 1  # steps are int64 everywhere after this
MAX_CONFIG_BYTES = 1 << 20  # a cfg.json is a few hundred bytes
_SAELENS_NAME = re.compile(r"^(final_)?(\d+)$")
_DL_NAME = re.compile(r"^ae_(\d+)\.pt$")
# SAELens architectures with an L1 coefficient on the activations; the others have none
L1_ARCHITECTURES = ("standard", "gated")
# cfg.json keys of TopK's and JumpReLU's settings (SAELens' TopKTrainingSAEConfig and
# JumpReLUTrainingSAEConfig), kept in the series' model for the reference's mechanism
MECHANISM_KEYS = (
    "k",
    "l0_coefficient",
    "jumprelu_bandwidth",
    "jumprelu_init_threshold",
    "l0_warm_up_steps",
    "jumprelu_sparsity_loss_mode",
    "jumprelu_ste_to_input",
)
# a JumpReLU SAE's thresholds in its weights file: as they are (SAELens 6.54), or log theta
# (earlier versions trained and saved log_threshold)
THRESHOLD_TENSORS = ("threshold", "log_threshold")
# cfg.json keys a batch size has had (the runner's config, older versions')
BATCH_KEYS = ("train_batch_size_samples", "train_batch_size_tokens", "train_batch_size")


@dataclass
class SaeRun:
    """What a trainer's folder holds: (step, weights file, tensor) per snapshot, the layout,
    how the steps were found (``step_note``) and the model its files describe (``model``:
    library, architecture, l1_coefficient, ...)."""

    entries: list[tuple[int, Path, str]]
    layout: str  # "saelens" or "dictionary_learning"
    step_note: str
    model: dict = field(default_factory=dict)
    latent_is_row: bool = False  # dictionary_learning: a latent is a row of encoder.weight


def checked_step(value, where: str) -> int:
    """A step as an int, refused when it is not a whole number >= 0 within int64."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(FIELD, f"{where}: the step {value!r} is not a whole number")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise InputError(FIELD, f"{where}: the step {value!r} is not a whole number")
    step = int(value)
    if step < 0 or step > MAX_STEP:
        raise InputError(FIELD, f"{where}: the step {step:.4g} is outside 0 to 2^63 - 1")
    return step


def read_config(path: Path, what: str) -> dict:
    """A trainer's JSON config, bounded (size, nesting): InputError naming the file."""
    obj = read_json_file(path, FIELD, what, MAX_CONFIG_BYTES)
    if not isinstance(obj, dict):
        raise InputError(FIELD, f"{path}: not a {what} (not a JSON object)")
    return obj


# --- SAELens ---------------------------------------------------------------------------------
def is_saelens_folder(folder: Path) -> bool:
    return (folder / SAE_CONFIG).is_file() and (folder / SAE_WEIGHTS).is_file()


def _subfolders(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError as exc:
        raise InputError(FIELD, f"{folder}: cannot list it ({exc.strerror or exc})") from None


def saelens_run(folder: Path, sae: str | None) -> SaeRun | None:
    """SAELens' checkpoints in ``folder`` (None: not SAELens' layout). Refused with one line:
    a checkpoint folder not named by a number (``best/``), SAELens' ``checkpoints/`` folder
    itself (one run lies a level down), a MultiSAETrainer run without ``sae``."""
    if is_saelens_folder(folder):
        return None  # one snapshot: open_series says a comparison needs two
    subs = _subfolders(folder)
    direct = [p for p in subs if is_saelens_folder(p)]
    nested = [p for p in subs if not is_saelens_folder(p) and _has_sae_inside(p)]
    # MultiSAETrainer: <samples>/<sae_name>/; SAELens' checkpoints/ folder: <run id>/<samples>/
    multi = [p for p in nested if _SAELENS_NAME.match(p.name)]
    runs = [p for p in subs if not _SAELENS_NAME.match(p.name) and _holds_checkpoints(p)]
    if runs and not direct:
        listed = ", ".join(p.name for p in runs[:4]) + (", ..." if len(runs) > 4 else "")
        raise InputError(
            FIELD,
            f"{folder}: SAELens' checkpoints folder; each run lies one level down: point at one of "
            f"them ({listed})",
        )
    if not direct and not multi:
        return None
    if direct and multi:
        raise InputError(
            FIELD, f"{folder}: holds SAELens checkpoints of one SAE and of several; point at one run"
        )
    if multi:
        names = sorted({q.name for p in multi for q in _subfolders(p) if is_saelens_folder(q)})
        if sae is None:
            raise InputError(
                FIELD, f"{folder}: a MultiSAETrainer run of {len(names)} SAEs; name one with --sae NAME "
                f"({', '.join(names[:8])})",
            )  # fmt: skip
        if sae not in names:
            raise InputError(FIELD, f"{folder}: no SAE named {sae!r} (it holds {', '.join(names[:8])})")
        folders = [p / sae for p in multi if is_saelens_folder(p / sae)]
        named = multi
    else:
        if sae is not None:
            raise InputError(FIELD, f"{folder}: --sae NAME is for a MultiSAETrainer run; this holds one SAE")
        folders = direct
        named = direct
    for p in named:
        if not _SAELENS_NAME.match(p.name):
            raise InputError(
                FIELD,
                f"{p}: a SAELens checkpoint not named by its samples ({p.name!r}): its step is unknown; "
                "move it out of the series",
            )
    cfg = read_config(folders[0] / SAE_CONFIG, "SAELens configuration")
    batch = next((cfg[k] for k in BATCH_KEYS if isinstance(cfg.get(k), int) and cfg[k] > 0), None)
    entries = []
    sources = set()
    for p, name_folder in zip(folders, named, strict=True):
        read_config(p / SAE_CONFIG, "SAELens configuration")  # each one bounded, and JSON
        found = _SAELENS_NAME.match(name_folder.name)
        assert found is not None
        named_number = checked_step(int(found.group(2)), str(name_folder))
        state = p / TRAINER_STATE
        if state.is_file():
            step = _trainer_state_step(state)
            sources.add("state")
        elif batch is not None:
            if named_number % batch:
                raise InputError(
                    FIELD, f"{name_folder}: {named_number} samples is not whole batches of {batch}"
                )
            step = named_number // batch
            sources.add("batch")
        else:
            step = named_number
            sources.add("name")
        entries.append((step, p / SAE_WEIGHTS, SAE_TENSOR))
    notes = {
        "state": "each checkpoint's step is its optimizer's own update count (trainer_state.pt)",
        "batch": f"each checkpoint's step is its samples (the folder's name) / the batch size {batch} "
        "(cfg.json)",
        "name": "the folder names are taken as optimizer steps: no trainer_state.pt and no batch size in "
        "cfg.json (SAELens' own trainer names its folders by samples seen, not by steps)",
    }
    model = saelens_model(cfg, entries[0][1])
    return SaeRun(entries, "saelens", "; ".join(notes[s] for s in sorted(sources)), model)


def _has_sae_inside(folder: Path) -> bool:
    return any(is_saelens_folder(q) for q in _subfolders(folder))


def _holds_checkpoints(folder: Path) -> bool:
    """Whether ``folder`` is one SAELens run: sub-folders named by samples, each a
    checkpoint or a MultiSAETrainer's SAEs."""
    subs = _subfolders(folder)
    return any(_SAELENS_NAME.match(p.name) and (is_saelens_folder(p) or _has_sae_inside(p)) for p in subs)


def _trainer_state_step(path: Path) -> int:
    """The updates the weights beside ``path`` have had: Adam's own count (the same for
    every parameter), else ``n_training_steps`` (a state saved before any update)."""
    from sparsity_gui.core.torch_files import torch_numbers

    numbers = torch_numbers(path, FIELD)
    values = {float(v) for k, v in numbers.items() if k.startswith("optimizer.state.") and k.endswith("step")}
    if len(values) > 1:
        listed = ", ".join(f"{v:g}" for v in sorted(values)[:4])
        raise InputError(FIELD, f"{path}: its optimizer's parameters count different steps ({listed})")
    if values:
        return checked_step(values.pop(), str(path))
    if "n_training_steps" in numbers:
        return checked_step(numbers["n_training_steps"], f"{path} [n_training_steps]")
    raise InputError(FIELD, f"{path}: neither an optimizer's step count nor n_training_steps in it")


def saelens_model(cfg: dict, weights: Path | None = None) -> dict:
    """The model a SAELens cfg.json describes: its architecture and L1 coefficient; for a
    JumpReLU SAE, which threshold tensor its ``weights`` file holds (``threshold_tensor``)."""
    arch = cfg.get("architecture")
    found_meta = cfg.get("metadata")
    meta = found_meta if isinstance(found_meta, dict) else {}
    if not isinstance(arch, str):
        found = meta.get("training_architecture")
        arch = found if isinstance(found, str) else None
    model = {
        "library": "SAELens",
        "architecture": arch or "unknown",
        "l1_coefficient": _number(cfg.get("l1_coefficient")),
    }
    # the mechanism's settings the reference curves match (core/checkpoints/reference.py), as given
    for key in MECHANISM_KEYS:
        if key in cfg:
            model[key] = cfg[key]
    if model["architecture"] == "jumprelu" and weights is not None:
        _, arrays = list_arrays(weights, FIELD)
        model["threshold_tensor"] = next((a.name for a in arrays if a.name in THRESHOLD_TENSORS), None)
    return model


def _number(value) -> float | None:
    """A finite number from a config, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


# --- dictionary_learning ----------------------------------------------------------------------
def dictlearn_run(folder: Path) -> SaeRun | None:
    """dictionary_learning's ``trainer_*`` folder (or its ``checkpoints/``); None if
    ``folder`` is not one. A run of several trainers is refused pointing a level down."""
    if folder.name == "checkpoints" and (folder.parent / DL_CONFIG).is_file():
        folder = folder.parent
    checkpoints = folder / "checkpoints"
    if not ((folder / DL_CONFIG).is_file() and checkpoints.is_dir()):
        subs = _subfolders(folder)
        trainers = [p for p in subs if (p / DL_CONFIG).is_file() and (p / "checkpoints").is_dir()]
        if trainers:
            listed = ", ".join(p.name for p in trainers[:4]) + (", ..." if len(trainers) > 4 else "")
            raise InputError(
                FIELD, f"{folder}: a dictionary_learning run of trainers; point at one of them ({listed})"
            )
        return None
    files = sorted(p for p in checkpoints.iterdir() if p.is_file() and p.suffix == ".pt")
    if not files:
        return None
    cfg = read_config(folder / DL_CONFIG, "dictionary_learning configuration")
    found_trainer = cfg.get("trainer")
    trainer = found_trainer if isinstance(found_trainer, dict) else {}
    entries = []
    for p in files:
        found = _DL_NAME.match(p.name)
        if found is None:
            raise InputError(
                FIELD, f"{p}: not named ae_<step>.pt: its step is unknown; move it out of the series"
            )
        entries.append((checked_step(int(found.group(1)), str(p)), p, DL_TENSOR))
    note = "each checkpoint's step is in its name (ae_<step>.pt: the updates before it was saved)"
    final = folder / "ae.pt"
    steps = trainer.get("steps")
    if final.is_file():
        if isinstance(steps, int) and not isinstance(steps, bool):
            last = checked_step(steps, f"{folder / DL_CONFIG} [trainer.steps]")
            if last > max(e[0] for e in entries):
                entries.append((last, final, DL_TENSOR))
                note += f"; ae.pt is the final one, after the {last:,} steps config.json gives"
        else:
            note += "; ae.pt is left out: config.json does not say how many steps ran"
    model = {
        "library": "dictionary_learning",
        "architecture": str(trainer.get("dict_class", "unknown")),
        "trainer": str(trainer.get("trainer_class", "unknown")),
        "l1_coefficient": _number(trainer.get("l1_penalty")),
    }
    return SaeRun(entries, "dictionary_learning", note, model, latent_is_row=True)
