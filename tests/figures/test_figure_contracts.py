"""The promises every scripted figure family keeps, one test per promise over the families
(a family: the figures one files function writes, from the known data its own tests draw):
each writes five files per figure, the script beside a figure redraws its PNG pixel for
pixel in a Python that cannot import sparsity_gui, the SVG keeps its text as text and
renders in librsvg like the PNG, and the PDF embeds its fonts.

They are promises about the figure layer's one savefig and script writer (figures/save.py),
so each family is checked on figures that together hold every drawing function of the
family once: a layout's script carries every panel it draws (the note's six, the
interference model's six), so the layout and the panel it leaves out stand for the rest.
What each figure draws, at each width and style, is tested with its family (note/,
interference/, test_figure_layer.py); every figure's script drawing from its JSON (each
text at least 6 pt) there too."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import svg_render

from sparsity_gui.figures.save import FORMATS
from tests.figures.figure_files import (
    assert_fonts_embedded,
    assert_same_pixels,
    needs_pdffonts,
    run_script_alone,
    svg_texts,
)

# a quarter of the export's 300 dpi pixels: an unequal pixel shows as well (the DPI asked
# is test_figure_layer.py's and test_run_figures_cli.py's)
DPI = 150


def svg_like_png_lines(svg: bytes, png: bytes, tmp_path, name: str) -> None:
    """Line art: svg_render's check over 8 px blocks (3 % of them may differ by 0.1)."""
    svg_render.check_renders_alike(svg, png, tmp_path, name)


def svg_like_png_text_heavy(svg: bytes, png: bytes, tmp_path, name: str) -> None:
    """The note's figures: up to 6 % of the 8 px blocks differing by more than 0.1 (not
    3 %): Agg and librsvg antialias the same text differently (3.5 % on the norm balance
    panel, all at labels)."""
    svg_render.check_plain(svg, name)
    ours = svg_render.gray(png)
    h, w = ours.shape
    theirs = svg_render.gray(svg_render.rsvg_png(svg, w, h, tmp_path, name))
    assert ours.mean() > 0.005, f"{name}: the PNG is blank"
    assert abs(theirs.mean() - ours.mean()) <= 0.15 * ours.mean(), name
    diff = np.abs(svg_render.blocks(ours) - svg_render.blocks(theirs))
    assert diff.mean() < 0.02, f"{name}: blocks differ by {diff.mean():.3f} on average"
    assert (diff > 0.1).mean() < 0.06, f"{name}: {(diff > 0.1).mean():.1%} of the blocks differ"


def svg_like_png_cells(svg: bytes, png: bytes, tmp_path, name: str) -> None:
    """Heatmaps and grids of cells: the cells meet in many edges, each placed a pixel apart
    by the two renderers; compared over 16 px blocks (the line-art check's 8 px flags every
    edge), with the ink within 5 %."""
    svg_render.check_plain(svg, name)
    agg = svg_render.gray(png)
    rs = svg_render.gray(svg_render.rsvg_png(svg, agg.shape[1], agg.shape[0], tmp_path, name))
    assert abs(rs.mean() - agg.mean()) <= 0.05 * agg.mean(), (name, rs.mean(), agg.mean())
    diff = np.abs(svg_render.blocks(agg, 16) - svg_render.blocks(rs, 16))
    assert diff.mean() < 0.02 and (diff > 0.1).mean() < 0.03, (name, diff.mean(), (diff > 0.1).mean())


@dataclass(frozen=True)
class Family:
    """The files of a family's figures (``write``), how each one's SVG is compared with its
    PNG, and texts its SVG must hold as text (or must not)."""

    write: Callable[[], dict[str, bytes]]
    svg_checks: dict[str, Callable]
    svg_holds: dict[str, tuple[str, ...]] = field(default_factory=dict)
    svg_lacks: dict[str, tuple[str, ...]] = field(default_factory=dict)


def layer_files() -> dict[str, bytes]:
    from sparsity_gui.figures.save import figure_files
    from sparsity_gui.figures.style import PAPER, SINGLE_COLUMN
    from tests.figures.test_figure_layer import decay_panel, known_data

    return figure_files("decay", decay_panel, known_data(), PAPER, (SINGLE_COLUMN, 2.6), dpi=DPI)


def note_files() -> dict[str, bytes]:
    """The layout (six of the seven panels drawn in one) and the phase plane it leaves out,
    of a run with live changes of λ and pinned runs."""
    from sparsity_gui.figures.note.figures import note_figure_files
    from tests.figures.note.test_note_figures import make_case

    *_rest, data = make_case()
    return note_figure_files(data, dpi=DPI, names=["phase_plane"])


def interference_files() -> dict[str, bytes]:
    """The layout (the window's six panels) and the Thresholds panel it leaves out, each as
    run_figure_files writes it."""
    from sparsity_gui.figures.interference import figures as fi
    from sparsity_gui.figures.scripted import figure_files, panel_size
    from tests.figures.interference.test_grid_figures import known_run, run_data_of

    data = run_data_of(known_run())
    panel, title = fi.PANELS["thresholds"]
    size = panel_size(None)
    files = figure_files(
        "thresholds", panel, data["thresholds"], None, size, DPI, FORMATS, title, fi.SCRIPT_FUNCTIONS
    )
    title = "The interference window's six panels"
    size = fi.layout_size(None)
    whole = fi.layout_data(data)
    files.update(
        figure_files("layout", fi.layout, whole, None, size, DPI, FORMATS, title, fi.SCRIPT_FUNCTIONS)
    )
    # the same JSON and script as run_figure_files writes (it draws every panel's files too;
    # asked for none, its scripts' FORMATS line says PNG and nothing else differs)
    written = fi.run_figure_files(data, dpi=DPI, formats=())
    for name in ("thresholds.json", "thresholds.py", "layout.json", "layout.py"):
        text = written[name].replace(b"\nFORMATS = ('png',)  #", f"\nFORMATS = {FORMATS!r}  #".encode())
        assert files[name] == text, name
    return files


def sweep_files() -> dict[str, bytes]:
    """A sweep over m cancelled after all its planned runs had finished."""
    from sparsity_gui.figures.interference.sweep import sweep_figure_files
    from tests.figures.interference.test_grid_figures import sweep_rows

    return sweep_figure_files(None, sweep_rows(), dpi=DPI, cancelled=True)


def scaling_files() -> dict[str, bytes]:
    """The first scaling figure (the others are the same function over another column)."""
    from sparsity_gui.figures.note.scaling import FIGURES, SCRIPT_FUNCTIONS, scaling_data, scaling_panel
    from sparsity_gui.figures.scripted import panels_files
    from tests.figures.interference.test_grid_figures import LAMS, M_VALUES, scaling_rows

    name = next(iter(FIGURES))
    data = scaling_data(scaling_rows(), name, M_VALUES, LAMS)
    return panels_files([(name, scaling_panel, data, FIGURES[name][3])], SCRIPT_FUNCTIONS, dpi=DPI)


def grid_files() -> dict[str, bytes]:
    """A sweep's grid: its curves and heatmap of the steps to sparsity, and its overlaps."""
    from sparsity_gui.figures.interference.grid import grid_figure_files, overlap_figure_files
    from tests.figures.interference.test_sweep_grid_figures import PLAN, ROWS

    files = grid_figure_files(PLAN, ROWS, "steps_to_sparse", dpi=DPI)
    files.update(overlap_figure_files(PLAN, ROWS, dpi=DPI))
    return files


def knee_files() -> dict[str, bytes]:
    from sparsity_gui.figures.interference.knee import knee_figure_files
    from tests.figures.interference.test_knee_figure import PLAN, ROWS

    return knee_figure_files(PLAN, ROWS, dpi=DPI)


FAMILIES = {
    "layer": Family(layer_files, {"decay": svg_like_png_lines}, svg_holds={"decay": ("pin 1",)}),
    "note": Family(note_files, {"layout": svg_like_png_text_heavy, "phase_plane": svg_like_png_text_heavy}),
    "interference": Family(
        interference_files,
        {"layout": svg_like_png_cells, "thresholds": svg_like_png_lines},
        svg_holds={"layout": ("polysemantic neurons", "pin 1: m = 16")},
    ),
    "sweep": Family(
        sweep_files, {"sweep": svg_like_png_lines}, svg_lacks={"sweep": ("cancelled: 13 of 13 runs",)}
    ),
    "scaling": Family(scaling_files, {"lam_t_one": svg_like_png_lines}),
    "grid": Family(
        grid_files,
        {"curves": svg_like_png_cells, "heatmap": svg_like_png_cells, "overlap": svg_like_png_cells},
        svg_holds={"heatmap": ("median steps to sparsity",)},
    ),
    "knee": Family(knee_files, {"knee": svg_like_png_lines}),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """``written(family)``: its folder (the files written as the commands write them) and
    its files; each family's files drawn once for the tests here."""
    made: dict[str, tuple] = {}

    def files_of(family: str):
        if family not in made:
            folder = tmp_path_factory.mktemp(family) / "figures"
            folder.mkdir()
            files = FAMILIES[family].write()
            for name, blob in files.items():
                (folder / name).write_bytes(blob)
            made[family] = (folder, files)
        return made[family]

    return files_of


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_figure_has_its_five_files_and_a_script_alone(written, family):
    _folder, files = written(family)
    names = FAMILIES[family].svg_checks
    assert set(files) == {f"{n}.{ext}" for n in names for ext in (*FORMATS, "json", "py")}
    for name in names:
        script = files[f"{name}.py"].decode()
        assert "sparsity_gui" not in script and "import numpy" in script, name
        assert json.loads(files[f"{name}.json"]), name


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_script_redraws_the_png_pixel_for_pixel(written, family):
    folder, files = written(family)
    for name in FAMILIES[family].svg_checks:
        assert_same_pixels(files[f"{name}.png"], run_script_alone(folder, name), name)


@svg_render.needs_rsvg
@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_svg_keeps_its_text_and_renders_like_the_png(written, family, tmp_path):
    _folder, files = written(family)
    spec = FAMILIES[family]
    for name, check in spec.svg_checks.items():
        svg = files[f"{name}.svg"]
        texts = " ".join(svg_texts(svg))
        assert texts.strip(), f"{name}: SVG without text elements"
        for text in spec.svg_holds.get(name, ()):
            assert text in texts, (name, text)
        for text in spec.svg_lacks.get(name, ()):
            assert text not in texts, (name, text)
        check(svg, files[f"{name}.png"], tmp_path, name)


@needs_pdffonts
@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_pdf_embeds_every_font(written, family):
    folder, _files = written(family)
    for name in FAMILIES[family].svg_checks:
        assert_fonts_embedded(folder / f"{name}.pdf")
