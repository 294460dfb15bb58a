"""The diagnostics' figures (figures/diagnostics.py) and lines: the rail share, the deaths
and the death forecast of a series, drawn from compare.csv's and deaths.csv's numbers,
their scripts redrawing them, the command's summary lines and the API's plot()."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from helpers import ENV, read_number_csv

from sparsity_gui import api
from sparsity_gui.__main__ import main as cli_main

torch = pytest.importorskip("torch")


def adam_series(tmp_path, l1=1.0, lr=2e-4, steps=300, spacing=20):
    """A matrix 3 x 12 trained by torch's Adam on the paper's loss, every `spacing` steps."""
    rng = np.random.default_rng(4)
    W = torch.tensor(rng.normal(0.0, 1 / np.sqrt(12), (3, 12)), requires_grad=True)
    opt = torch.optim.Adam([W], lr=lr)
    snaps, kept = [], []
    for step in range(steps + 1):
        if step % spacing == 0:
            snaps.append(W.detach().numpy().copy())
            kept.append(step)
        opt.zero_grad()
        G = W @ W.T
        d = torch.diagonal(G)
        loss = ((1 - d) ** 2).sum() + (torch.relu(G - torch.diag_embed(d)) ** 2).sum() + l1 * W.abs().sum()
        loss.backward()
        opt.step()
    path = tmp_path / "adam.npz"
    np.savez(path, W=np.stack(snaps), steps=np.array(kept))
    return path


def test_the_figures_hold_the_tables_numbers_and_their_scripts_redraw_them(tmp_path):
    path = adam_series(tmp_path)
    result = api.compare_checkpoints(path, l1=1.0, lr=2e-4, optimizer="adam", all_rows=True)
    out = result.save(tmp_path / "out", figures=True)
    header, table = read_number_csv(out / "compare.csv")
    col = {name: table[:, header.index(name)] for name in header}
    figures = out / "figures"
    for name in ("rail_share", "deaths", "death_forecast"):
        for ext in ("png", "svg", "pdf", "json", "py"):
            assert (figures / f"{name}.{ext}").stat().st_size > 0
    rail = json.loads((figures / "rail_share.json").read_text(encoding="utf-8"))
    got = np.array([np.nan if v is None else v for v in rail["rail_share"]])
    np.testing.assert_array_equal(got, col["rail_share"])
    assert rail["judged"] is True and rail["window_from"] == result.diagnostics.saturation_from
    deaths = json.loads((figures / "deaths.json").read_text(encoding="utf-8"))
    np.testing.assert_array_equal(deaths["dead_share"], col["dead_share"])
    np.testing.assert_array_equal(deaths["dead_share_forecast"], col["dead_share_forecast"])
    assert deaths["deaths_begin"] == result.deaths_begin
    forecast = json.loads((figures / "death_forecast.json").read_text(encoding="utf-8"))
    d_header, d_rows = read_number_csv(out / "deaths.csv")
    for key, column in (("forecast", "forecast_step"), ("observed", "observed_step")):
        drawn = np.array([np.nan if v is None else v for v in forecast[key]])
        np.testing.assert_array_equal(drawn, d_rows[:, d_header.index(column)])
    assert forecast["spearman"] == pytest.approx(result.forecast_spearman, rel=1e-15)
    png = (figures / "death_forecast.png").read_bytes()
    (figures / "death_forecast.png").unlink()
    redraw = subprocess.run(
        [sys.executable, "death_forecast.py"],
        cwd=figures,
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    assert redraw.returncode == 0, redraw.stderr
    assert (figures / "death_forecast.png").read_bytes() == png


def test_the_calibration_plot_draws_each_weight_at_its_forecast_and_observed_death(tmp_path):
    path = adam_series(tmp_path)
    result = api.compare_checkpoints(path, l1=1.0, lr=2e-4, optimizer="adam", all_rows=True)
    fig = result.plot("death_forecast")
    ax = fig.axes[0]
    both = np.isfinite(result.death_forecast) & np.isfinite(result.observed_deaths)
    assert both.sum() >= 5
    points = [line for line in ax.get_lines() if line.get_label().startswith("died in both")]
    assert len(points) == 1
    x, y = points[0].get_data()
    np.testing.assert_array_equal(x, result.death_forecast[both])
    np.testing.assert_array_equal(y, result.observed_deaths[both])
    assert "Spearman" in ax.get_title()
    with pytest.raises(ValueError, match="rail_share, deaths, death_forecast"):
        result.plot("nothing")


def test_the_command_says_the_verdict_the_deaths_and_the_forecast(tmp_path, capsys):
    path = adam_series(tmp_path)
    code = cli_main(
        ["checkpoints", str(path), "--l1", "1", "--lr", "2e-4", "--optimizer", "adam", "--all-rows",
         "--out", str(tmp_path / "out")]
    )  # fmt: skip
    assert code == 0
    said = capsys.readouterr()
    result = api.compare_checkpoints(path, l1=1.0, lr=2e-4, optimizer="adam", all_rows=True)
    lines = said.out.splitlines() + said.err.splitlines()
    assert result.saturation_verdict in lines
    assert any(line.startswith("deaths: ") and f"step {result.deaths_begin:,}" in line for line in lines)
    assert any(line.startswith("death forecast by the rail bound") for line in lines)
