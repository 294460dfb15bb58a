"""The figure layer shares mathtext parses across renderers (figures/save.shared_mathtext).
A parse depends on the mathtext rcParams a style may set as well as on its text: figures drawn
under different mathtext settings in one process must each look as matplotlib alone draws them."""

from __future__ import annotations

import io
import subprocess
import sys

SCRIPT = """
import io, sys
import matplotlib
from matplotlib.figure import Figure
if sys.argv[1] == "shared":
    from sparsity_gui.figures.save import shared_mathtext
    shared_mathtext.active().__enter__()  # in force for the whole script

def png(default):
    with matplotlib.rc_context({"mathtext.default": default, "mathtext.fontset": "dejavusans"}):
        fig = Figure(figsize=(2, 1))
        fig.text(0.1, 0.4, r"$x_k + \\lambda w$", fontsize=14)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()

out = [png("it"), png("regular"), png("it")]
sys.stdout.buffer.write(b"".join(len(p).to_bytes(8, "big") + p for p in out))
"""


def _pngs(mode: str) -> list[bytes]:
    data = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, check=True, timeout=120
    ).stdout
    stream, out = io.BytesIO(data), []
    while header := stream.read(8):
        out.append(stream.read(int.from_bytes(header, "big")))
    return out


def test_shared_parses_follow_the_mathtext_settings():
    alone, shared = _pngs("plain"), _pngs("shared")
    assert alone[0] != alone[1], "the two settings draw differently"
    assert shared == alone, "each figure as matplotlib alone draws it"


def test_a_pdf_save_embeds_its_fonts_and_leaves_fonttools_as_it_was(tmp_path):
    """PDF subsets drop the OpenType layout tables only while the figure layer saves a PDF:
    fontTools' defaults are the same after, and the PDF still embeds every font."""
    import shutil

    from fontTools import subset
    from matplotlib.figure import Figure

    from sparsity_gui.figures.save import figure_bytes
    from sparsity_gui.figures.style import style_params

    before = list(subset.Options._drop_tables_default)
    fig = Figure(figsize=(2, 1))
    fig.text(0.1, 0.4, r"$\lambda\|W\|_1$ and text")
    pdf = figure_bytes(fig, "pdf", style_params("paper"))
    assert subset.Options._drop_tables_default == before
    if shutil.which("pdffonts") is None:
        return
    (tmp_path / "f.pdf").write_bytes(pdf)
    out = subprocess.run(["pdffonts", str(tmp_path / "f.pdf")], capture_output=True, text=True, check=True)
    rows = out.stdout.splitlines()[2:]
    assert rows and all(row.split()[-5] == "yes" for row in rows), out.stdout


def test_overlapping_pdf_saves_in_two_threads_leave_fonttools_as_it_was():
    """Two threads' PDF saves that overlap (one starts, the other starts, the first ends, then
    the second): the layout tables stay dropped while either is saving and fontTools' defaults
    are back once both have ended."""
    import threading

    from fontTools import subset

    from sparsity_gui.figures.save import PDF_UNUSED_FONT_TABLES, lean_pdf_fonts

    defaults = list(subset.Options._drop_tables_default)
    assert set(PDF_UNUSED_FONT_TABLES) - set(defaults), "the saves change something"
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with lean_pdf_fonts():
            first_in.set()
            assert second_in.wait(60)
        first_out.set()

    def second():
        assert first_in.wait(60)
        with lean_pdf_fonts():
            second_in.set()
            assert first_out.wait(60)
            seen["while the second saves"] = list(subset.Options._drop_tables_default)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    assert set(PDF_UNUSED_FONT_TABLES) <= set(seen["while the second saves"])
    assert subset.Options._drop_tables_default == defaults
