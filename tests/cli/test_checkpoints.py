"""`sparsity-gui checkpoints`: series written here by our own torch training loops on the
paper's loss (torch is the oracle; the loss and the loops are written in this file), read
back as .pt state_dicts, safetensors files, one stacked .npz and SAELens' layout."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import ENV, cli, command_in_process, one_error_line

torch = pytest.importorskip("torch")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

N, M = 6, 10
L1, LR = 0.05, 0.01
STEPS = (0, 1, 10, 100, 500)


def paper_loss(W, l1):
    """sum_i (1 - |W_i|^2)^2 + sum_{i != j} ReLU(W_i . W_j)^2 + l1 |W|_1."""
    G = W @ W.T
    diag = torch.diagonal(G)
    off = G - torch.diag_embed(diag)
    return ((1 - diag) ** 2).sum() + (torch.relu(off) ** 2).sum() + l1 * W.abs().sum()


def w0_matrix(n=N, m=M, seed=3) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 1.0 / np.sqrt(m), (n, m))


def trajectory(w0, optimizer, last, *, l1=L1, lr=LR) -> np.ndarray:
    """W at every step from 0 to ``last`` under torch's optimizer, float64."""
    W = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    opt = {"sgd": torch.optim.SGD, "adamw": torch.optim.AdamW, "adam": torch.optim.Adam}[optimizer](
        [W], lr=lr
    )
    out = []
    for _ in range(last + 1):
        out.append(W.detach().numpy().copy())
        opt.zero_grad()
        paper_loss(W, l1).backward()
        opt.step()
    return np.array(out)


def train(w0, optimizer, steps, *, l1=L1, lr=LR) -> dict[int, np.ndarray]:
    """W at each of ``steps`` under torch's optimizer, float64."""
    path = trajectory(w0, optimizer, max(steps), l1=l1, lr=lr)
    return {step: path[step] for step in steps}


def zero_crossings(path: np.ndarray) -> np.ndarray:
    """Per weight, how many times it changes sign along ``path`` (steps by rows)."""
    signs = np.sign(path)
    return (signs[1:] != signs[:-1]).sum(axis=0)


def dead_at(path: np.ndarray, step: int) -> np.ndarray:
    """Which weights are dead at ``step`` of ``path`` (W at every step), judged by their
    motion and not by a tolerance: a dead weight has crossed zero by then and crosses it
    again later (it chatters around zero); a live one never crosses again."""
    return (zero_crossings(path[: step + 1]) > 0) & (zero_crossings(path[step:]) > 0)


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]


def run(argv, tmp_path, monkeypatch, capsys) -> tuple[int, str, str]:
    """The command in this process (the entry point's own process is tested by a bad
    series' case: its exit status and a stderr with no traceback)."""
    return command_in_process(argv, tmp_path, monkeypatch, capsys)


def write_pt_series(folder: Path, snaps: dict[int, np.ndarray]) -> Path:
    folder.mkdir()
    for step, W in snaps.items():
        torch.save(
            {"enc.weight": torch.tensor(W), "enc.bias": torch.zeros(W.shape[0])}, folder / f"ckpt-{step}.pt"
        )
    return folder


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_a_pt_series_meets_the_model_trained_from_its_first_snapshot(
    tmp_path, monkeypatch, capsys, optimizer
):
    path = trajectory(w0_matrix(), optimizer, max(STEPS) + 100)
    snaps = {step: path[step] for step in STEPS}
    series = write_pt_series(tmp_path / "series", snaps)
    out = tmp_path / "out"
    status, _, err = run(
        ["checkpoints", series, "--tensor", "enc.weight", "--all-rows", "--l1", L1, "--lr", LR,
         "--optimizer", optimizer, "--out", out], tmp_path, monkeypatch, capsys
    )  # fmt: skip
    assert status == 0, err
    table = rows(out / "compare.csv")
    assert [r["optimizer_step"] for r in table] == list(STEPS)
    for r in table:
        assert r["max_abs_diff"] <= 1e-10
        assert r["rel_diff_norm1"] <= 1e-10 and r["rel_diff_norm2"] <= 1e-10
        # measured values from the snapshot itself, by their definitions
        W = snaps[int(r["optimizer_step"])]
        assert r["norm1"] == pytest.approx(np.abs(W).sum(), rel=1e-14)
        assert r["norm2"] == pytest.approx(np.mean((W**2).sum(axis=1)), rel=1e-14)
        # the weights alive, by their motion (dead_at): a weight that never crosses zero
        # again always counts; once the run has settled (step 500: none on its way to zero),
        # exactly the live ones count (before, a weight about to die may be within the
        # tolerance a step or two early, or outside it while it overshoots)
        step = int(r["optimizer_step"])
        assert r["nonzero"] >= np.count_nonzero(zero_crossings(path[step:]) == 0)
        if step == max(STEPS):
            assert r["nonzero"] == N * M - np.count_nonzero(dead_at(path, step))
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert meta["series"]["snapshots"] == len(STEPS) and meta["series"]["pick"] == "matrix"
    tol = {"adamw": "0.02 (2 lr", "sgd": "0.001 (2 lr l1"}[optimizer]  # lr = 0.01, l1 = 0.05
    assert meta["zero_tolerance"].startswith(f"a weight counts as zero when |w| <= {tol}")
    assert meta["x_axis"] == "optimizer step"
    assert "what_the_curves_are" not in meta  # weights alone: the model is not said to differ


@pytest.mark.parametrize("optimizer, first, most", [("sgd", 1500, 54), ("adamw", 500, 30)])
def test_a_weight_chattering_across_zero_between_snapshots_counts_as_zero(
    tmp_path, monkeypatch, capsys, optimizer, first, most
):
    """64 snapshots one step apart once the run has settled: the dead weights cross zero
    between many of them (under SGD one in 54 of the 63 intervals or more, under AdamW in
    30), the live ones never. Every snapshot counts exactly the live ones, whichever side of
    zero the dead ones are on."""
    path = trajectory(w0_matrix(), optimizer, first + 163)
    window = path[first : first + 64]
    crossings = zero_crossings(window)
    assert crossings.max() >= most and np.count_nonzero(crossings) >= 10
    stacked = tmp_path / "chatter.npz"
    np.savez(stacked, W=window, steps=np.arange(first, first + 64))
    out = tmp_path / "out"
    argv = [
        "checkpoints",
        stacked,
        "--all-rows",
        "--l1",
        L1,
        "--lr",
        LR,
        "--optimizer",
        optimizer,
        "--out",
        out,
    ]
    status, _, err = command_in_process(argv, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    table = rows(out / "compare.csv")
    assert [r["optimizer_step"] for r in table] == list(range(first, first + 64))
    for r in table:
        dead = dead_at(path, int(r["optimizer_step"]))
        assert dead[crossings > 0].all()  # every weight chattering in the window is dead
        assert r["nonzero"] == N * M - np.count_nonzero(dead), r["optimizer_step"]


def test_safetensors_and_a_stacked_npz_give_the_same_table(tmp_path, monkeypatch, capsys):
    snaps = train(w0_matrix(seed=5), "adamw", STEPS)
    folder = tmp_path / "st"
    folder.mkdir()
    for step, W in snaps.items():
        safetensors_numpy.save_file({"W": W}, str(folder / f"step_{step:06d}.safetensors"))
    stacked = tmp_path / "series.npz"
    np.savez(stacked, W=np.stack([snaps[s] for s in STEPS]), steps=np.array(STEPS))
    tables = []
    for path in (folder, stacked):
        out = tmp_path / f"out-{path.name}"
        argv = [
            "checkpoints",
            path,
            "--all-rows",
            "--l1",
            L1,
            "--lr",
            LR,
            "--optimizer",
            "adamw",
            "--out",
            out,
        ]
        status, _, err = run(argv, tmp_path, monkeypatch, capsys)
        assert status == 0, err
        tables.append((out / "compare.csv").read_text(encoding="utf-8"))
        assert max(r["max_abs_diff"] for r in rows(out / "compare.csv")) <= 1e-10
    assert tables[0] == tables[1]


def test_one_row_by_plain_sgd_is_the_flow_off_by_order_lr(tmp_path, monkeypatch, capsys):
    """The note's exact flow from the first snapshot against one feature trained alone by
    torch's SGD: halving lr (and doubling the steps, the same t = 4 lr steps) halves the
    error."""
    w0 = w0_matrix(n=1, m=40, seed=11)
    l1, t_end = 0.02, 2.0
    errors = []
    for lr in (2e-3, 1e-3):
        last = round(t_end / (4 * lr))
        steps = tuple(round(last * k / 4) for k in range(5))
        snaps = train(w0, "sgd", steps, l1=l1, lr=lr)
        stacked = tmp_path / f"row-{lr}.npz"
        np.savez(stacked, W=np.stack([snaps[s][0] for s in steps]), steps=np.array(steps))
        out = tmp_path / f"out-{lr}"
        argv = ["checkpoints", stacked, "--l1", l1, "--lr", lr, "--optimizer", "sgd", "--out", out]
        status, _, err = run(argv, tmp_path, monkeypatch, capsys)
        assert status == 0, err
        table = rows(out / "compare.csv")
        assert [r["t"] for r in table] == pytest.approx([4 * lr * s for s in steps], rel=1e-12)
        assert max(r["max_abs_diff"] for r in table) <= 1e-10  # the model's own steps: exact
        errors.append(max(r["max_abs_diff_flow"] for r in table))
    assert 1.8 <= errors[0] / errors[1] <= 2.2, errors


def test_under_adam_the_flow_is_not_claimed(tmp_path, monkeypatch, capsys):
    w0 = w0_matrix(n=1, m=12, seed=2)
    snaps = train(w0, "adamw", (0, 5, 50))
    stacked = tmp_path / "row.npz"
    np.savez(stacked, W=np.stack([snaps[s][0] for s in (0, 5, 50)]), steps=np.array([0, 5, 50]))
    out = tmp_path / "out"
    argv = ["checkpoints", stacked, "--l1", L1, "--lr", LR, "--optimizer", "adamw", "--out", out]
    status, stdout, err = run(argv, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    assert "no time maps steps to the note's flow" in stdout
    table = rows(out / "compare.csv")
    assert all(np.isnan(r["t"]) and np.isnan(r["norm1_flow"]) for r in table)
    assert max(r["max_abs_diff"] for r in table) <= 1e-10


def test_a_saelens_folder_gives_the_chosen_latents_column(tmp_path, monkeypatch, capsys):
    d_in, d_sae, latent = 10, 24, 7
    rng = np.random.default_rng(4)
    root = tmp_path / "checkpoints"
    encoders = {}
    for tokens in (1024, 2048, 4096):
        folder = root / str(tokens)
        folder.mkdir(parents=True)
        W_enc = rng.normal(0, 0.3, (d_in, d_sae)).astype(np.float32)
        encoders[tokens] = W_enc
        tensors = {
            "W_enc": W_enc,
            "b_enc": np.zeros(d_sae, np.float32),
            "W_dec": W_enc.T.copy(),
            "b_dec": np.zeros(d_in, np.float32),
        }
        safetensors_numpy.save_file(tensors, str(folder / "sae_weights.safetensors"))
        cfg = {
            "d_in": d_in,
            "d_sae": d_sae,
            "architecture": "standard",
            "hook_name": "blocks.0.hook_resid_pre",
        }
        (folder / "cfg.json").write_text(json.dumps(cfg), encoding="utf-8")
    out = tmp_path / "out"
    argv = [
        "checkpoints",
        root,
        "--latent",
        latent,
        "--l1",
        L1,
        "--lr",
        LR,
        "--optimizer",
        "sgd",
        "--out",
        out,
    ]
    status, _, err = run(argv, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    table = rows(out / "compare.csv")
    assert [r["optimizer_step"] for r in table] == [1024, 2048, 4096]
    for r in table:
        column = encoders[int(r["optimizer_step"])][:, latent].astype(np.float64)
        assert r["norm1"] == pytest.approx(np.abs(column).sum(), rel=1e-12)
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert meta["series"]["layout"] == "saelens" and meta["series"]["index"] == latent


def _bad_series(tmp_path: Path, case: str) -> tuple[Path, list[str], str]:
    """(PATH, extra options, the file the error must name)."""
    d = tmp_path / "series"
    d.mkdir()
    W = w0_matrix()
    if case == "mixed shapes":
        np.save(d / "step_1.npy", W)
        np.save(d / "step_2.npy", W[:, :5])
        return d, ["--all-rows"], "step_2.npy"
    if case == "one step twice":
        np.save(d / "ckpt-100.npy", W)
        torch.save({"w": torch.tensor(W)}, d / "step_100.pt")
        return d, ["--all-rows"], "step_100.pt"
    if case == "no such tensor":
        torch.save({"enc.weight": torch.tensor(W)}, d / "ckpt-1.pt")
        torch.save({"dec.weight": torch.tensor(W)}, d / "ckpt-2.pt")
        return d, ["--all-rows", "--tensor", "enc.weight"], "ckpt-2.pt"
    if case == "steps out of order":
        path = tmp_path / "stacked.npz"
        np.savez(path, W=np.stack([W, W, W]), steps=np.array([0, 20, 10]))
        return path, ["--all-rows"], "stacked.npz"
    if case == "not a checkpoint":
        np.save(d / "step_1.npy", W)
        (d / "step_2.pt").write_bytes(b"this is not a checkpoint\n" * 3)
        return d, ["--all-rows"], "step_2.pt"
    if case == "no snapshots":
        (d / "notes.txt").write_text("nothing here\n", encoding="utf-8")
        return d, ["--all-rows"], "series"
    raise ValueError(case)


@pytest.mark.parametrize(
    "case",
    [
        "mixed shapes",
        "one step twice",
        "no such tensor",
        "steps out of order",
        "not a checkpoint",
        "no snapshots",
    ],
)
def test_a_bad_series_is_one_error_naming_the_file_and_nothing_written(tmp_path, monkeypatch, capsys, case):
    """In this process, but for one case in a real process: its exit status and a stderr
    with no traceback."""
    path, extra, named = _bad_series(tmp_path, case)
    out = tmp_path / "out"
    before = sorted(os.listdir(tmp_path))
    argv = ["checkpoints", path, *extra, "--l1", L1, "--lr", LR, "--optimizer", "sgd", "--out", out]
    if case == "one step twice":
        line = one_error_line(cli(argv))
    else:
        status, stdout, err = run(argv, tmp_path, monkeypatch, capsys)
        assert status == 2 and stdout == "" and len(err.splitlines()) == 1, err
        line = err.strip()
        assert line.startswith("error: ")
    assert named in line, line
    assert not out.exists() and sorted(os.listdir(tmp_path)) == before


def test_figures_hold_the_snapshots_and_their_scripts_redraw_them(tmp_path, monkeypatch, capsys):
    w0 = w0_matrix(n=1, m=16, seed=8)
    steps = (0, 40, 80, 120)
    snaps = train(w0, "sgd", steps)
    stacked = tmp_path / "row.npz"
    np.savez(stacked, W=np.stack([snaps[s][0] for s in steps]), steps=np.array(steps))
    out = tmp_path / "out"
    # PNGs alone at 50 dpi: the PNG is only compared with its script's redraw, at the same
    # dpi; the SVG's and PDF's promises are test_figure_contracts.py's, and this command's
    # default of all three test_diagnostics_figures.py's (the same files through the API)
    argv = ["checkpoints", stacked, "--l1", L1, "--lr", LR, "--optimizer", "sgd", "--figures", "--dpi", 50,
            "--formats", "png", "--out", out]  # fmt: skip
    status, _, err = run(argv, tmp_path, monkeypatch, capsys)
    assert status == 0, err
    table = rows(out / "compare.csv")
    figures = out / "figures"
    for measure in ("norm1", "norm2", "nonzero", "theta"):
        for ext in ("png", "json", "py"):
            assert (figures / f"{measure}.{ext}").stat().st_size > 0
        data = json.loads((figures / f"{measure}.json").read_text(encoding="utf-8"))
        assert data["step"] == [r["optimizer_step"] for r in table]
        measured = [np.nan if v is None else v for v in data["measured"]]  # JSON's null: NaN
        assert measured == pytest.approx([r[measure] for r in table], rel=1e-15, nan_ok=True)
        # the curves pass through the predictions at the snapshots
        at = [data["curve_step"].index(s) for s in data["step"]]
        pred = [np.nan if data["pred"][k] is None else data["pred"][k] for k in at]
        assert pred == pytest.approx([r[f"{measure}_pred"] for r in table], rel=1e-15, nan_ok=True)
    png = (figures / "norm1.png").read_bytes()
    (figures / "norm1.png").unlink()
    redraw = subprocess.run(
        [sys.executable, "norm1.py"], cwd=figures, capture_output=True, text=True, timeout=120, env=ENV
    )
    assert redraw.returncode == 0, redraw.stderr
    assert (figures / "norm1.png").read_bytes() == png


def test_help_names_the_command_and_its_choices(tmp_path, monkeypatch, capsys):
    status, stdout, _ = run(["checkpoints", "--help"], tmp_path, monkeypatch, capsys)
    assert status == 0
    for word in ("--all-rows", "--latent", "sgd", "adamw", "--zero-tol", "SAELens"):
        assert word in stdout


def test_the_api_is_the_command_table_files_and_figure(tmp_path, monkeypatch, capsys):
    """api.compare_checkpoints: the table of torch's AdamW run meets the trained model, and
    save() writes the command's compare.csv digit for digit, with the command line that
    writes them; plot() draws the snapshots as points over the curves."""
    from matplotlib.figure import Figure

    from sparsity_gui import api

    snaps = train(w0_matrix(seed=7), "adamw", STEPS)
    series = write_pt_series(tmp_path / "series", snaps)
    result = api.compare_checkpoints(
        series, tensor="enc.weight", all_rows=True, l1=L1, lr=LR, optimizer="adamw"
    )
    assert list(result.steps) == list(STEPS)
    assert result.max_abs_diff <= 1e-10 and result.max_abs_diff_flow is None and result.flow_note
    for step, r in zip(STEPS, result.table, strict=True):
        assert r[result.columns.index("norm1")] == pytest.approx(np.abs(snaps[step]).sum(), rel=1e-14)
    assert result.measures == ("norm1", "norm2", "nonzero", "polysemantic")

    saved = result.save(tmp_path / "api")
    meta = json.loads((saved / "run.json").read_text(encoding="utf-8"))
    line = meta["command_line"].split()
    assert line[:3] == ["sparsity-gui", "checkpoints", str(series)]
    status, _, err = run(
        [*line[1:-1], tmp_path / "cli"], tmp_path, monkeypatch, capsys
    )  # into another folder
    assert status == 0, err
    assert (saved / "compare.csv").read_bytes() == (tmp_path / "cli" / "compare.csv").read_bytes()

    fig = result.plot("nonzero")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    measured = next(line for line in ax.lines if line.get_linestyle() in ("None", ""))
    np.testing.assert_array_equal(measured.get_xdata(), np.array(STEPS, float))
    np.testing.assert_array_equal(measured.get_ydata(), result.column("nonzero"))
    with pytest.raises(ValueError, match="measure: must be one of"):
        result.plot("theta")
    with pytest.raises(TypeError, match="path must be"):
        api.compare_checkpoints(42, l1=L1, lr=LR, optimizer="sgd")
    with pytest.raises(ValueError, match="optimizer"):
        api.compare_checkpoints(series, tensor="enc.weight", all_rows=True, l1=L1, lr=LR, optimizer="rmsprop")


def test_a_series_whose_training_passes_the_work_limit_is_refused_as_interference_refuses_it(
    tmp_path, monkeypatch, capsys
):
    """Two snapshots 9e7 steps apart at 256 x 1024: 6e15 multiply-adds to train between them.
    `interference` refuses that run up front; `checkpoints` and compare_checkpoints too, in the
    same words, before any training (a row is checked as a 1 x m model)."""
    from helpers import assert_refused_in_process

    from sparsity_gui import api

    series = tmp_path / "series"
    series.mkdir()
    w = w0_matrix(256, 1024)
    for step in (0, 90_000_000):
        np.save(series / f"step_{step}.npy", w)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    from sparsity_gui.__main__ import main

    with pytest.raises(SystemExit):
        main(["interference", "--n", "256", "--m", "1024", "--steps", "90000000", "--out", "x"])
    words = capsys.readouterr().err.strip()
    assert words.startswith(
        "error: steps: 90000000 steps at n = 256, m = 1024 would need about 6.1e15 multiply-adds"
    )
    argv = ["checkpoints", str(series), "--l1", "1e-3", "--lr", "1e-3", "--optimizer", "adamw"]
    assert_refused_in_process([*argv, "--all-rows", "--out", "res"], words[len("error: ") :], out, capsys)
    with pytest.raises(ValueError) as info:
        api.compare_checkpoints(series, l1=1e-3, lr=1e-3, optimizer="adamw", all_rows=True)
    assert f"error: {info.value}" == words
    monkeypatch.setenv("SPARSITY_GUI_MAX_MULTIPLY_ADDS", "1e10")  # a row: 9e7 (1024 + 1024)
    assert_refused_in_process(
        [*argv, "--row", "0", "--out", "res"], "at n = 1, m = 1024 would need", out, capsys
    )
